"""Capture methods (raw, gzip, PNG) and how auto mode chooses among them, the rolling
capture cost, and the apps over adb (Back, foreground, launch), without a wire: the
AdbDevice talks through its ShellDevice seam to the fake adbd's own shell (FakeShell)
running the simulated phone, with each command's cost set by the test."""

from __future__ import annotations

import shlex
import struct
import threading
import zlib
from collections.abc import Callable

import cv2
import numpy as np
import pytest

from agent.device.adb import AdbDevice
from agent.device.adb.apps import check_package, parse_resumed_activity, parse_window_focus
from agent.device.adb.capture import RollingCost, agreeing, frames_agree
from agent.device.base import KEYCODE_BACK
from agent.device.rawframe import encode_raw_screencap, gunzip_raw_screencap, parse_raw_screencap
from agent.errors import CaptureError, DeviceError
from agent.games.match3.sim import SimPhone
from agent.simphone.adbd.screen import ScreenBytes, gzip_bytes
from agent.simphone.adbd.shell import FakeShell, PhoneFacts
from agent.simphone.phone import SIM_PACKAGE

SIZE = (180, 320)
MARK = "; echo __PA_RC=$?"
GZIP_CMD = "screencap | gzip -1"


class Phone(SimPhone):
    def __init__(self, **kw) -> None:
        super().__init__(seed=5, size=SIZE, serial="sim-5", **kw)
        self.codes: list[int] = []
        self.launched: list[str] = []

    def on_key(self, code: int) -> None:
        self.codes.append(code)

    def on_launch(self) -> None:
        self.launched.append(self.package)


class Stream:
    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def recv(self, n: int) -> bytes:
        chunk = self._data[self._pos : self._pos + n]
        self._pos += len(chunk)
        return chunk

    def close(self) -> None:
        pass


class Wire:
    """A ShellDevice whose services run on the fake adbd's shell; `costs` (seconds a
    command line takes) move `now`, the device's timer; `rewrite` changes a reply."""

    def __init__(self, phone: Phone | None = None, facts: PhoneFacts | None = None) -> None:
        self.phone = phone or Phone()
        lock = threading.Lock()
        self.shell = FakeShell(self.phone, ScreenBytes(self.phone.screencap), facts or PhoneFacts(), lock,
                               sleep=lambda s: None)  # fmt: skip
        self.now = 0.0
        self.costs: dict[str, float] = {}
        self.rewrite: dict[str, Callable[[bytes], bytes]] = {}
        self.commands: list[str] = []
        self.replies: dict[str, str] = {}  # a command line answered with this text instead

    def open_transport(self) -> "Conn":
        return Conn(self)

    def serve(self, service: str) -> Stream:
        _, _, line = service.partition(":")
        base = line[: -len(MARK)] if line.endswith(MARK) else line
        self.commands.append(base)
        self.now += self.costs.get(base, 0.0)
        if base in self.replies:
            return Stream((self.replies[base] + ("__PA_RC=0\n" if base != line else "")).encode())
        got = bytearray()
        self.shell.run(line, lambda fd, data: got.extend(data))
        data = bytes(got)
        if base in self.rewrite:
            data = self.rewrite[base](data)
        return Stream(data)


class Conn:
    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.stream: Stream | None = None

    def send_command(self, cmd: str) -> None:
        self.service = cmd

    def check_okay(self) -> None:
        self.stream = self.wire.serve(self.service)

    def recv(self, n: int) -> bytes:
        assert self.stream is not None
        return self.stream.recv(n)

    def close(self) -> None:
        pass


def device(wire: Wire, capture: str = "auto") -> AdbDevice:
    return AdbDevice("SIM5", capture=capture, timeout_s=5.0, connect=lambda: wire, timer=lambda: wire.now)  # type: ignore[arg-type]


def swap_red_blue(raw: bytes) -> bytes:
    """A raw frame as a phone that sends BGRA but says RGBA would."""
    head = len(raw) - SIZE[0] * SIZE[1] * 4
    pixels = np.frombuffer(raw, np.uint8, offset=head).reshape(-1, 4)[:, [2, 1, 0, 3]]
    return raw[:head] + pixels.tobytes()


def shown(wire: Wire) -> np.ndarray:
    return wire.phone.screencap()


# --------------------------------------------------------------------------- the fake shell's gzip


@pytest.mark.parametrize("line", [GZIP_CMD, "screencap | gzip -c -1", "screencap | gzip", "sh -c 'screencap | gzip -1'"])
def test_gzip_pipe_round_trip_through_the_fake_shell(line: str) -> None:
    wire = Wire()
    got = bytearray()
    assert wire.shell.run(line, lambda fd, data: got.extend(data)) == 0
    assert got[:2] == b"\x1f\x8b"
    raw = zlib.decompress(bytes(got), 16 + zlib.MAX_WBITS)
    assert raw == encode_raw_screencap(shown(wire))
    np.testing.assert_array_equal(parse_raw_screencap(gunzip_raw_screencap(got, {SIZE})), shown(wire))


def test_other_pipes_are_still_refused() -> None:
    wire = Wire()
    err = bytearray()
    assert wire.shell.run("getprop | grep model", lambda fd, data: err.extend(data)) == 1
    assert b"only into gzip" in err


def test_a_phone_without_gzip_says_not_found_and_auto_does_without() -> None:
    wire = Wire(facts=PhoneFacts(gzip=False))
    said = bytearray()
    assert wire.shell.run(GZIP_CMD, lambda fd, data: said.extend(data)) == 127
    assert said == b"/system/bin/sh: gzip: not found\n"
    dev = device(wire)
    wire.costs = {"screencap": 0.05, "screencap -p": 0.2}
    np.testing.assert_array_equal(dev.screencap(), shown(wire))
    assert dev.capture_mode == "raw"
    assert str(dev.capture_report()["gzip"]).startswith("not available: ") and "gzip: not found" in str(
        dev.capture_report()["gzip"]
    )


def test_latency_waits_after_the_frame_is_grabbed() -> None:
    events: list[str] = []
    frame = np.full((SIZE[1], SIZE[0], 3), 90, np.uint8)

    def grab() -> np.ndarray:
        events.append("grab")
        return frame

    screen = ScreenBytes(grab, latency_ms=250, sleep=lambda s: events.append(f"sleep {s:g}"))
    shell = FakeShell(Phone(), screen, PhoneFacts(), threading.Lock(), sleep=lambda s: None)
    for line in ("screencap", "screencap -p", GZIP_CMD):
        events.clear()
        shell.run(line, lambda fd, data: None)
        assert events == ["grab", "sleep 0.25"], line
    with pytest.raises(ValueError):
        ScreenBytes(grab, latency_ms=-1)


# --------------------------------------------------------------------------- inflating, bounded


def test_gzip_bomb_is_refused_without_inflating_it() -> None:
    header = struct.pack("<IIII", SIZE[0], SIZE[1], 1, 1)
    # Valid header, then 200 MB of zeros: about 200 KB compressed.
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = packer.compress(header) + b"".join(packer.compress(bytes(1 << 20)) for _ in range(200)) + packer.flush()
    assert len(bomb) < 1 << 20
    with pytest.raises(CaptureError, match="inflates past .* gzip bomb"):
        gunzip_raw_screencap(bomb, {SIZE})
    # A header claiming a screen the phone does not have is refused at its 16 bytes.
    with pytest.raises(CaptureError, match="phone's screen is"):
        gunzip_raw_screencap(gzip_bytes(struct.pack("<IIII", 8000, 8000, 1, 1) + bytes(64)), {SIZE})


@pytest.mark.parametrize(
    "data, says",
    [
        (b"", "no data"),
        (b"/system/bin/sh: gzip: not found\n", "did not return gzip data"),
        (gzip_bytes(encode_raw_screencap(np.random.default_rng(2).integers(0, 256, (SIZE[1], SIZE[0], 3), np.uint8)))[:400],
         "truncated"),
        (b"\x1f\x8b" + bytes(30), "broken gzip"),
        (gzip_bytes(encode_raw_screencap(np.full((SIZE[1], SIZE[0], 3), 50, np.uint8))) + b"junk", "after the end"),
    ],
)
def test_broken_gzip_replies_are_capture_errors(data: bytes, says: str) -> None:
    with pytest.raises(CaptureError, match=says):
        gunzip_raw_screencap(data, {SIZE})


def test_a_bomb_from_the_phone_costs_only_that_method() -> None:
    wire = Wire()
    header = struct.pack("<IIII", SIZE[0], SIZE[1], 1, 1)
    wire.rewrite[GZIP_CMD] = lambda _: gzip_bytes(header + bytes(SIZE[0] * SIZE[1] * 40))
    wire.costs = {GZIP_CMD: 0.01, "screencap": 0.1, "screencap -p": 0.2}
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "raw" and "gzip bomb" in str(dev.capture_report()["gzip"])


# --------------------------------------------------------------------------- auto mode's choice


def test_auto_chooses_the_fastest_method() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    dev = device(wire)
    assert dev.capture_mode is None and dev.capture_ms == 0.0
    np.testing.assert_array_equal(dev.screencap(), shown(wire))
    assert dev.capture_mode == "gzip"
    assert dev.capture_report() == {"raw": 120.0, "gzip": 45.0, "png": 300.0}
    # Two captures each (the second timed), then the frame itself.
    assert wire.commands[-7:] == ["screencap", "screencap", GZIP_CMD, GZIP_CMD, "screencap -p", "screencap -p",
                                  GZIP_CMD]  # fmt: skip


def test_near_equal_costs_go_to_the_cheapest_to_decode() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.290, GZIP_CMD: 0.280, "screencap -p": 0.275}  # within 10%: a tie
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "raw"
    wire = Wire()
    wire.costs = {"screencap": 0.290, GZIP_CMD: 0.250, "screencap -p": 0.275}  # gzip clearly faster
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "gzip"


def test_a_fast_method_with_a_wrong_frame_is_not_chosen() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    # gzip's frames come out with red and blue swapped: the fastest, and wrong.
    wire.rewrite[GZIP_CMD] = lambda data: gzip_bytes(swap_red_blue(zlib.decompress(data, 16 + zlib.MAX_WBITS)))
    dev = device(wire)
    np.testing.assert_array_equal(dev.screencap(), shown(wire))
    assert dev.capture_mode == "raw"
    report = dev.capture_report()
    assert report["raw"] == 120.0 and report["png"] == 300.0
    assert str(report["gzip"]).startswith("wrong")


def test_a_wrong_raw_frame_loses_to_png_even_when_only_two_methods_work() -> None:
    wire = Wire(facts=PhoneFacts(gzip=False))
    wire.costs = {"screencap": 0.05, "screencap -p": 0.4}
    wire.rewrite["screencap"] = swap_red_blue
    dev = device(wire)
    np.testing.assert_array_equal(dev.screencap(), shown(wire))
    assert dev.capture_mode == "png"
    assert str(dev.capture_report()["raw"]).startswith("wrong")


def moving(wire: Wire) -> None:
    """Every reply shows the screen's middle shifted a little further (a scrolling
    background): no two captures are alike, by any method."""
    shift = [0]

    def move(frame: np.ndarray) -> np.ndarray:
        shift[0] += 7
        frame = frame.copy()
        frame[60:260] = np.roll(frame[60:260], shift[0], axis=1)
        return frame

    def raw(data: bytes) -> bytes:
        return encode_raw_screencap(move(parse_raw_screencap(data)))

    wire.rewrite["screencap"] = raw
    wire.rewrite[GZIP_CMD] = lambda data: gzip_bytes(raw(zlib.decompress(data, 16 + zlib.MAX_WBITS)))
    wire.rewrite["screencap -p"] = lambda data: cv2.imencode(".png", move(cv2.imdecode(np.frombuffer(data, np.uint8),
                                                                                      cv2.IMREAD_COLOR)))[1].tobytes()  # fmt: skip


def test_a_screen_that_never_holds_still_does_not_make_methods_wrong() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    moving(wire)
    assert not frames_agree(parse_raw_screencap(wire.serve("exec:screencap").recv(1 << 30)),
                            parse_raw_screencap(wire.serve("exec:screencap").recv(1 << 30)))  # fmt: skip
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "gzip"
    assert dev.capture_report() == {"raw": 120.0, "gzip": 45.0, "png": 300.0}


def test_on_a_moving_screen_a_swapped_format_is_still_wrong() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    moving(wire)
    moved_gzip = wire.rewrite[GZIP_CMD]
    wire.rewrite[GZIP_CMD] = lambda data: gzip_bytes(swap_red_blue(zlib.decompress(moved_gzip(data), 16 + zlib.MAX_WBITS)))
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "raw"
    assert str(dev.capture_report()["gzip"]).startswith("wrong")


def test_frames_agree_despite_a_small_moving_part_but_not_a_swapped_format() -> None:
    frame = np.random.default_rng(1).integers(0, 256, (320, 180, 3), dtype=np.uint8)
    moved = frame.copy()
    moved[10:40, 10:40] = 255 - moved[10:40, 10:40]  # a wiggling tile: 1.6% of the screen
    assert frames_agree(frame, moved)
    assert not frames_agree(frame, frame[:, :, ::-1].copy())
    assert agreeing({"raw": frame, "gzip": frame[:, :, ::-1].copy(), "png": moved}) == {"raw", "png"}
    assert agreeing({"raw": frame, "png": frame[:, :, ::-1].copy()}) == {"png"}  # a tie goes to PNG


def test_forced_method_is_kept_and_choose_capture_only_measures() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    dev = device(wire, capture="png")
    assert dev.choose_capture() == "gzip"
    assert dev.capture_mode == "png"
    dev.screencap()
    assert wire.commands[-1] == "screencap -p"


def test_a_black_screen_leaves_auto_undecided() -> None:
    wire = Wire()
    black = encode_raw_screencap(np.zeros((SIZE[1], SIZE[0], 3), np.uint8))
    wire.rewrite = {"screencap": lambda _: black, GZIP_CMD: lambda _: gzip_bytes(black),
                    "screencap -p": lambda _: cv2.imencode(".png", np.zeros((SIZE[1], SIZE[0], 3), np.uint8))[1].tobytes()}  # fmt: skip
    dev = device(wire)
    with pytest.raises(CaptureError, match="raw: .*black.*gzip: .*black.*png: .*black"):
        dev.screencap()
    assert dev.capture_mode is None
    wire.rewrite = {}
    dev.screencap()  # the screen came on: chosen now
    assert dev.capture_mode == "raw"


def test_auto_falls_back_for_a_frame_and_switches_after_repeated_failures() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.120, GZIP_CMD: 0.045, "screencap -p": 0.300}
    dev = device(wire)
    dev.screencap()
    assert dev.capture_mode == "gzip"
    wire.rewrite[GZIP_CMD] = lambda _: b"/system/bin/sh: gzip: inaccessible or not found\n"
    for _ in range(2):
        np.testing.assert_array_equal(dev.screencap(), shown(wire))
        assert dev.capture_mode == "gzip"  # one bad frame says little
    dev.screencap()
    assert dev.capture_mode == "raw"  # the next fastest correct one
    assert wire.commands[-2:] == [GZIP_CMD, "screencap"]


# --------------------------------------------------------------------------- the rolling cost


def test_rolling_cost_follows_recent_captures() -> None:
    cost = RollingCost(weight=0.25)
    assert cost.ms == 0.0
    cost.add(100)
    assert cost.ms == 100
    cost.add(300)
    assert cost.ms == pytest.approx(150)
    for _ in range(40):
        cost.add(300)
    assert cost.ms == pytest.approx(300, abs=1)
    with pytest.raises(ValueError):
        RollingCost(weight=0)


def test_capture_ms_tracks_the_phone_slowing_down() -> None:
    wire = Wire()
    wire.costs = {"screencap": 0.040, GZIP_CMD: 0.100, "screencap -p": 0.300}
    dev = device(wire)
    dev.screencap()
    assert dev.capture_ms == pytest.approx(40)
    wire.costs["screencap"] = 0.400  # the phone got hot
    for _ in range(20):
        dev.screencap()
    assert dev.capture_ms == pytest.approx(400, rel=0.01)


# --------------------------------------------------------------------------- which app is in front

ANDROID_9_WINDOW = """\
WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #5 Window{8c1d2e3 u0 com.king.candycrushsaga/com.king.candycrushsaga.CandyCrushSagaActivity}:
    mDisplayId=0 stackId=3 mSession=Session{4f0c9a1 12345:u0a10187} mClient=android.os.BinderProxy@1a2b3c4
  mCurrentFocus=Window{8c1d2e3 u0 com.king.candycrushsaga/com.king.candycrushsaga.CandyCrushSagaActivity}
  mFocusedApp=AppWindowToken{77e1c9f token=Token{5d3a8b2 ActivityRecord{3b9f0e1 u0 com.king.candycrushsaga/.CandyCrushSagaActivity t41}}}
"""
ANDROID_11_WINDOW = """\
  mGlobalConfiguration={1.0 310mcc260mnc [en_US] ldltr sw411dp w411dp h842dp 420dpi nrml long port finger -keyb/v/h -nav/h winConfig={ mBounds=Rect(0, 0 - 1080, 2340) mAppBounds=Rect(0, 66 - 1080, 2208) mWindowingMode=fullscreen mDisplayWindowingMode=fullscreen mActivityType=undefined mAlwaysOnTop=undefined mRotation=ROTATION_0} s.6}
  mHasPermanentDpad=false
  mTopFocusedDisplayId=0
  mCurrentFocus=Window{2d6e1f0 u0 com.example.puzzle/com.unity3d.player.UnityPlayerActivity}
  mFocusedApp=ActivityRecord{9a8b7c6 u0 com.example.puzzle/com.unity3d.player.UnityPlayerActivity t127}
"""
ANDROID_13_SHADE = """\
  mCurrentFocus=Window{5e4d3c2 u0 NotificationShade}
  mFocusedApp=ActivityRecord{1c2d3e4 u0 com.example.match/.MainActivity t88}
"""
ANDROID_14_POPUP = """\
  mCurrentFocus=Window{a1b2c3d u0 PopupWindow:8f7e6d5}
  mFocusedApp=ActivityRecord{6b5a4c3 u0 com.playrix.gardenscapes/com.playrix.gardenscapes.GameActivity t203}
"""
ANDROID_14_NULL = """\
  mCurrentFocus=null
  mFocusedApp=null
"""
ANDROID_14_ACTIVITIES = """\
ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)
Display #0 (activities from top to bottom):
  * Task{f1e2d3c #203 type=standard A=10234:com.playrix.gardenscapes U=0 visible=true visibleRequested=true mode=fullscreen translucent=false sz=1}
    topResumedActivity=ActivityRecord{6b5a4c3 u0 com.playrix.gardenscapes/com.playrix.gardenscapes.GameActivity t203}
"""
ANDROID_9_ACTIVITIES = """\
    mResumedActivity: ActivityRecord{3b9f0e1 u0 com.king.candycrushsaga/.CandyCrushSagaActivity t41}
  mFocusedStack=ActivityStack{4a5b6c7 stackId=3 type=standard mode=fullscreen visible=true translucent=false, 1 tasks}
"""
ANDROID_10_ACTIVITIES = """\
  ResumedActivity: ActivityRecord{9a8b7c6 u0 com.example.puzzle/com.unity3d.player.UnityPlayerActivity t127}
"""


@pytest.mark.parametrize(
    "text, package",
    [
        (ANDROID_9_WINDOW, "com.king.candycrushsaga"),
        (ANDROID_11_WINDOW, "com.example.puzzle"),
        (ANDROID_13_SHADE, "com.example.match"),  # the shade has the focus: the app under it
        (ANDROID_14_POPUP, "com.playrix.gardenscapes"),
        (ANDROID_14_NULL, None),
        ("", None),
    ],
)
def test_window_focus_parser(text: str, package: str | None) -> None:
    assert parse_window_focus(text) == package


@pytest.mark.parametrize(
    "text, package",
    [
        (ANDROID_14_ACTIVITIES, "com.playrix.gardenscapes"),
        (ANDROID_9_ACTIVITIES, "com.king.candycrushsaga"),
        (ANDROID_10_ACTIVITIES, "com.example.puzzle"),
        ("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n", None),
    ],
)
def test_resumed_activity_parser(text: str, package: str | None) -> None:
    assert parse_resumed_activity(text) == package


def test_foreground_asks_activities_when_the_window_says_nothing() -> None:
    wire = Wire()
    dev = device(wire)
    assert dev.foreground() == SIM_PACKAGE
    wire.replies["dumpsys window"] = ANDROID_14_NULL
    wire.replies["dumpsys activity activities"] = ANDROID_14_ACTIVITIES
    assert dev.foreground() == "com.playrix.gardenscapes"
    wire.replies["dumpsys activity activities"] = ""
    assert dev.foreground() is None


# --------------------------------------------------------------------------- Back and launch


def test_back_sends_keyevent_4() -> None:
    wire = Wire()
    device(wire).back()
    assert wire.commands[-1] == "input keyevent 4" and wire.phone.codes == [KEYCODE_BACK]


@pytest.mark.parametrize(
    "name",
    ["", "game", "com..game", "1com.game", "com.game; reboot", "com.game$(reboot)", "com.game name", "com.-game",
     "com." + "a" * 300, "com.game\n"],
)  # fmt: skip
def test_launch_refuses_what_is_not_a_package_before_any_shell(name: str) -> None:
    wire = Wire()
    dev = device(wire)
    before = list(wire.commands)
    with pytest.raises(DeviceError, match="not an Android package name") as info:
        dev.launch(name)
    assert "com.example.game" in info.value.hint
    assert wire.commands == before


def test_package_names_android_accepts() -> None:
    for name in ("com.king.candycrushsaga", "com.Playrix.Game_2", "a.b"):
        assert check_package(name) == name


def test_launch_by_monkey() -> None:
    wire = Wire()
    wire.phone._foreground = "com.android.launcher3"
    dev = device(wire)
    dev.launch(SIM_PACKAGE)
    assert wire.commands[-1] == f"monkey -p {SIM_PACKAGE} -c android.intent.category.LAUNCHER 1"
    assert wire.phone.launched == [SIM_PACKAGE] and dev.foreground() == SIM_PACKAGE


def test_launch_falls_back_to_am_start_of_the_resolved_activity() -> None:
    wire = Wire()
    monkey = f"monkey -p {SIM_PACKAGE} -c android.intent.category.LAUNCHER 1"
    wire.replies[monkey] = "/system/bin/sh: monkey: not found"  # a vendor build without monkey
    dev = device(wire)
    dev.launch(SIM_PACKAGE)
    assert wire.commands[-2].startswith("cmd package resolve-activity --brief")
    assert wire.commands[-1] == f"am start -n {SIM_PACKAGE}/.MainActivity"
    assert wire.phone.launched == [SIM_PACKAGE]


def test_launch_of_a_missing_package_says_it_is_not_installed() -> None:
    wire = Wire()
    dev = device(wire)
    with pytest.raises(DeviceError, match="com.example.absent.*not installed") as info:
        dev.launch("com.example.absent")
    assert "pm list packages" in info.value.hint
    assert not wire.phone.launched
    assert not any(c.startswith("am start") for c in wire.commands)


# --------------------------------------------------------------------------- the fake shell's apps


def test_fake_shell_prints_apps_as_android_does() -> None:
    wire = Wire()

    def run(line: str) -> tuple[int, str]:
        got = bytearray()
        status = wire.shell.run(line, lambda fd, data: got.extend(data))
        return status, got.decode()

    assert run("input keyevent KEYCODE_BACK")[0] == 0 and run("input keyevent 3")[0] == 0
    assert wire.phone.codes == [4, 3]
    status, said = run("input keyevent KEYCODE_NOPE")
    assert status == 1 and "Unknown keycode" in said
    status, said = run("monkey -p com.nope -c android.intent.category.LAUNCHER 1")
    assert status != 0 and "** No activities found to run, monkey aborted." in said
    status, said = run(f"monkey -p {SIM_PACKAGE} -c android.intent.category.LAUNCHER 1")
    assert status == 0 and "Events injected: 1" in said and wire.phone.launched == [SIM_PACKAGE]
    status, said = run("am start -n com.nope/.Main")
    assert status != 0 and "does not exist" in said
    assert run(f"pm list packages {SIM_PACKAGE.split('.')[-1]}")[1] == f"package:{SIM_PACKAGE}\n"
    window = run("dumpsys window windows")[1]
    assert "  mCurrentFocus=Window{" in window and f" u0 {SIM_PACKAGE}/{SIM_PACKAGE}.MainActivity}}" in window
    assert parse_window_focus(window) == SIM_PACKAGE
    assert parse_resumed_activity(run("dumpsys activity activities")[1]) == SIM_PACKAGE
    assert run("dumpsys battery")[1] == "Can't find service: battery\n"
    line = "echo deep"
    for _ in range(3):
        line = "sh -c " + shlex.quote(line)
    assert run(line) == (0, "deep\n")
    for _ in range(6):  # 9 deep: beyond what the phone nests
        line = "sh -c " + shlex.quote(line)
    status, said = run(line)
    assert status == 2 and "nested" in said
