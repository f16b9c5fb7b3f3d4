"""The adb layer without a phone: frame parsing, device choice, and AdbDevice on a fake.

The fake phone speaks the slice of adbutils AdbDevice uses (`open_transport()`, then a
service such as `shell:CMD` or `exec:CMD`); the fake adb *server* at the end checks the
real adbutils path against a silent phone. tests/integration/test_adb_integration.py puts the
project's own phone on the wire behind a real adb server.
"""

from __future__ import annotations

import io
import select
import socket
import struct
import subprocess
import threading
import time

import cv2
import numpy as np
import pytest
from adbutils import AdbDeviceInfo, AdbError, AdbTimeout
from adbutils.errors import AdbConnectionError

from agent.device import adb as adbmod
from agent.device.adb import calls as adbcalls
from agent.device.adb import server as adbserver
from agent.device.adb import wm as adbwm
from agent.device.adb import AdbDevice, AdbTarget, DeviceInfo, list_devices, select_serial
from agent.device.base import Device
from agent.device.rawframe import (
    check_frame,
    decode_png,
    encode_raw_screencap,
    parse_raw_screencap,
)
from agent.errors import (
    AdbServerError,
    CaptureError,
    DeviceError,
    DeviceOfflineError,
    DeviceTimeoutError,
    DeviceUnauthorizedError,
    GestureError,
    NoDeviceError,
    SeveralDevicesError,
)


def free_port() -> int:
    # Not imported from tests/conftest.py: with tests/reliability collected too, the
    # name `conftest` may be that folder's conftest instead.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


W, H = 60, 100  # a small portrait screen keeps the tests fast
MARK = "; echo __PA_RC=$?"


def make_frame(w: int = W, h: int = H, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


# --------------------------------------------------------------------------- rawframe


@pytest.mark.parametrize("with_colorspace, header", [(False, 12), (True, 16)])
def test_raw_round_trip(with_colorspace: bool, header: int) -> None:
    frame = make_frame()
    data = encode_raw_screencap(frame, with_colorspace=with_colorspace)
    assert len(data) == header + W * H * 4
    assert struct.unpack_from("<III", data) == (W, H, 1)
    for buf in (data, bytearray(data), memoryview(data)):
        out = parse_raw_screencap(buf, expect=(W, H))
        assert out.shape == (H, W, 3) and out.dtype == np.uint8
        np.testing.assert_array_equal(out, frame)


def test_raw_channel_order_is_rgba_on_the_wire_and_bgr_in_memory() -> None:
    red_bgr = np.zeros((2, 3, 3), np.uint8)
    red_bgr[..., 2] = 255
    data = encode_raw_screencap(red_bgr, with_colorspace=False)
    assert data[12:16] == bytes([255, 0, 0, 255])  # RGBA, opaque
    assert parse_raw_screencap(data)[0, 0].tolist() == [0, 0, 255]


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda d: b"", "no data"),
        (lambda d: d[:-1], "truncated"),
        (lambda d: d[: len(d) // 2], "truncated"),
        (lambda d: d[:8], "truncated"),
        (lambda d: d + b"\0" * 7, "trailing"),
        (lambda d: d[:8] + struct.pack("<I", 5) + d[12:], "pixel format 5"),
        (lambda d: struct.pack("<III", 0, H, 1) + d[12:], "impossible size"),
        (lambda d: b"Error: capture failed, display 0 not found\n", "did not return a frame"),
    ],
)
def test_raw_rejects_bad_data(mutate, reason: str) -> None:
    data = encode_raw_screencap(make_frame(), with_colorspace=True)
    with pytest.raises(CaptureError, match=reason) as info:
        parse_raw_screencap(mutate(data))
    assert info.value.hint


def test_raw_text_error_is_quoted_in_the_reason() -> None:
    with pytest.raises(CaptureError, match="display 0 not found"):
        parse_raw_screencap(b"Error: capture failed, display 0 not found\n")


def test_raw_rejects_wrong_size() -> None:
    data = encode_raw_screencap(make_frame(), with_colorspace=True)
    with pytest.raises(CaptureError, match=f"frame is {W}x{H}, expected 1080x2400"):
        parse_raw_screencap(data, expect=(1080, 2400))


def test_black_frame_parses_but_is_rejected() -> None:
    black = np.zeros((H, W, 3), np.uint8)
    frame = parse_raw_screencap(encode_raw_screencap(black))
    with pytest.raises(CaptureError, match="black"):
        check_frame(frame, (W, H))
    near_black = np.full((H, W, 3), 3, np.uint8)  # GPU noise is still black
    with pytest.raises(CaptureError, match="black"):
        check_frame(near_black, (W, H))


def test_check_frame_rejects_empty_shape_and_size() -> None:
    with pytest.raises(CaptureError, match="empty"):
        check_frame(np.zeros((0, 0, 3), np.uint8), None)
    with pytest.raises(CaptureError, match="empty"):
        check_frame(None, None)
    with pytest.raises(CaptureError, match="HxWx3"):
        check_frame(np.full((H, W), 200, np.uint8), None)
    with pytest.raises(CaptureError, match="rotate"):
        check_frame(make_frame(), (H, W))
    check_frame(make_frame(), (W, H))  # a good frame passes
    check_frame(make_frame(), None)


def test_png_rgba_decodes_to_bgr() -> None:
    from PIL import Image  # an encoder independent of OpenCV, as a phone would be

    img = Image.new("RGBA", (4, 2), (255, 0, 0, 255))  # red
    img.putpixel((1, 0), (0, 0, 255, 128))  # blue, half transparent
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    out = decode_png(buf.getvalue())
    assert out.shape == (2, 4, 3) and out.dtype == np.uint8
    assert out[0, 0].tolist() == [0, 0, 255]  # red in BGR
    assert out[0, 1].tolist() == [255, 0, 0]  # blue in BGR, alpha dropped


def test_png_gray_and_bgr_become_three_channels() -> None:
    gray = np.full((5, 7), 99, np.uint8)
    ok, png = cv2.imencode(".png", gray)
    out = decode_png(png.tobytes())
    assert out.shape == (5, 7, 3) and (out == 99).all()
    frame = make_frame()
    ok, png = cv2.imencode(".png", frame)
    np.testing.assert_array_equal(decode_png(png.tobytes()), frame)


def test_png_rejects_empty_and_garbage() -> None:
    with pytest.raises(CaptureError, match="no data"):
        decode_png(b"")
    with pytest.raises(CaptureError, match="not found"):
        decode_png(b"/system/bin/sh: screencap: not found\n")


def test_encoder_refuses_non_bgr() -> None:
    with pytest.raises(ValueError):
        encode_raw_screencap(np.zeros((4, 4), np.uint8))


# --------------------------------------------------------------------------- fakes


class FakeStream:
    """What adbutils' shell(stream=True) returns: recv until b'' then close."""

    def __init__(self, data: bytes, fail_with: BaseException | None = None, piece: int = 4096) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._fail_with = fail_with
        self._piece = piece  # the server hands out smaller pieces than asked for
        self.closed = False

    def recv(self, n: int) -> bytes:
        if self._pos >= len(self._data) and self._fail_with is not None:
            raise self._fail_with
        k = min(n, self._piece)
        chunk = self._data[self._pos : self._pos + k].tobytes()
        self._pos += len(chunk)
        return chunk

    def close(self) -> None:
        self.closed = True


class FakeConnection:
    """What adbutils' open_transport() returns: send a service, check OKAY, then recv."""

    def __init__(self, phone: "FakePhone") -> None:
        self.phone = phone
        self.service: str | None = None
        self.stream: FakeStream | None = None

    def send_command(self, cmd: str) -> None:
        self.service = cmd

    def check_okay(self) -> None:
        assert self.service is not None
        self.stream = self.phone.serve(self.service)

    def recv(self, n: int) -> bytes:
        assert self.stream is not None, "recv before the service was accepted"
        return self.stream.recv(n)

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()


class FakePhone:
    """An adbutils-like device: answers the services AdbDevice opens."""

    def __init__(self, w: int = W, h: int = H, rotation: int = 0, override: tuple[int, int] | None = None) -> None:
        self.w, self.h, self.rotation, self.override = w, h, rotation, override
        self.frame = make_frame(*self._shown_size())
        self.raw_replies: list[bytes] = []  # consumed in order; then the real frame
        self.png_replies: list[bytes] = []
        self.input_reply = ""
        self.commands: list[str] = []  # command lines, without the service name
        self.services: list[str] = []  # "shell" or "exec", one per command
        self.hang_on: str | None = None  # a command prefix that never answers
        self.release = threading.Event()
        self.fail_open: list[BaseException] = []  # raised by shell() before anything runs
        self.cut_reply_on: str | None = None  # this command's reply breaks off (dying phone)
        self.now = 0.0  # what the device's timer reads: each command adds its cost
        self.costs: dict[str, float] = {}  # seconds a command takes, by command line

    def _shown_size(self) -> tuple[int, int]:
        w, h = self.override or (self.w, self.h)
        return (h, w) if self.rotation % 2 else (w, h)

    def open_transport(self) -> FakeConnection:
        return FakeConnection(self)

    def serve(self, service: str) -> FakeStream:
        kind, _, cmdargs = service.partition(":")
        assert kind in ("shell", "exec"), service
        self.services.append(kind)
        self.commands.append(cmdargs)
        if self.fail_open:
            raise self.fail_open.pop(0)
        if self.hang_on and cmdargs.startswith(self.hang_on):
            self.release.wait(30)
            raise EOFError("released")
        base, marked = (cmdargs[: -len(MARK)], True) if cmdargs.endswith(MARK) else (cmdargs, False)
        self.now += self.costs.get(base, 0.0)
        if self.cut_reply_on and base.startswith(self.cut_reply_on):
            return FakeStream(b"")
        if base == "screencap":
            return FakeStream(self.raw_replies.pop(0) if self.raw_replies else encode_raw_screencap(self.frame))
        if base == "screencap -p":
            return FakeStream(self.png_replies.pop(0) if self.png_replies else cv2.imencode(".png", self.frame)[1].tobytes())
        text = self._text(base)
        return FakeStream((text + ("__PA_RC=0\n" if marked else "")).encode())

    def _text(self, cmd: str) -> str:
        if cmd == "getprop ro.product.model":
            return "Pixel Fake\n"
        if cmd == "wm size":
            text = f"Physical size: {self.w}x{self.h}\n"
            if self.override:
                text += f"Override size: {self.override[0]}x{self.override[1]}\n"
            return text
        if cmd == "wm density":
            return "Physical density: 420\nOverride density: 360\n"
        if cmd == "dumpsys display":
            return (
                "DISPLAY MANAGER (dumpsys display)\n  mViewports=[DisplayViewport{type=INTERNAL, valid=true, "
                f"isActive=true, displayId=0, orientation={self.rotation}, deviceWidth={self.w}, "
                f"deviceHeight={self.h}}}]\n"
            )
        if cmd.startswith("input "):
            return self.input_reply
        return f"/system/bin/sh: {cmd.split()[0]}: not found\n"

    def bases(self, prefix: str = "") -> list[str]:
        """Commands as the phone ran them, without our exit-status marker."""
        out = [c[: -len(MARK)] if c.endswith(MARK) else c for c in self.commands]
        return [c for c in out if c.startswith(prefix)]


@pytest.fixture
def phone():
    fake = FakePhone()
    yield fake
    fake.release.set()  # let any hung worker thread finish


def connect_to(fake: FakePhone, calls: list[int] | None = None):
    def connect():
        if calls is not None:
            calls.append(1)
        return fake

    return connect


def make_device(fake: FakePhone, timeout_s: float = 2.0, **kw) -> AdbDevice:
    kw.setdefault("timer", lambda: fake.now)
    return AdbDevice("FAKE1", capture=kw.pop("capture", "auto"), timeout_s=timeout_s, connect=connect_to(fake), **kw)


# --------------------------------------------------------------------------- AdbDevice: facts


def test_facts_read_at_connect(phone: FakePhone) -> None:
    dev = make_device(phone)
    assert isinstance(dev, Device)
    assert dev.serial == "FAKE1"
    assert dev.model == "Pixel Fake"
    assert dev.screen_size() == (W, H)
    assert dev.density == 360  # the override wins
    assert dev.rotation == 0
    assert phone.bases() == ["getprop ro.product.model", "wm size", "wm density", "dumpsys display"]


def test_landscape_swaps_screen_size(phone: FakePhone) -> None:
    phone.rotation = 1
    phone.frame = make_frame(H, W)
    dev = make_device(phone)
    assert dev.resolution == (W, H)
    assert dev.screen_size() == (H, W)
    assert dev.screencap().shape == (W, H, 3)


def test_override_size_is_preferred_and_frames_are_scaled_to_it() -> None:
    fake = FakePhone(override=(W // 2, H // 2))
    fake.frame = make_frame(W, H)  # this Android captures at the panel's size
    dev = make_device(fake)
    assert dev.screen_size() == (W // 2, H // 2)
    assert dev.screencap().shape == (H // 2, W // 2, 3)


def test_unreadable_screen_size_is_an_error(phone: FakePhone, monkeypatch) -> None:
    monkeypatch.setattr(phone, "_text", lambda cmd: "Error: no display\n" if cmd == "wm size" else "x\n")
    with pytest.raises(DeviceError, match="screen size"):
        make_device(phone)


# --------------------------------------------------------------------------- AdbDevice: capture


# Auto mode's first screenshot times each method: two captures each (gzip is missing
# on this phone: its shell says `not found`), then the frame itself by the chosen one.
TIMING = ["screencap", "screencap", "screencap | gzip -1", "screencap -p", "screencap -p"]


def test_auto_capture_picks_raw_when_raw_works(phone: FakePhone) -> None:
    dev = make_device(phone)
    assert dev.capture_mode is None
    frame = dev.screencap()
    np.testing.assert_array_equal(frame, phone.frame)
    assert dev.capture_mode == "raw"
    dev.screencap()
    assert phone.bases("screencap") == TIMING + ["screencap", "screencap"]
    assert str(dev.capture_report()["gzip"]).startswith("not available")


@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x01\x02\x03", b"screencap: unknown option -- \n", struct.pack("<III", W, H, 5) + b"\0" * (W * H * 4)],
)
def test_auto_capture_falls_back_to_png_when_raw_is_garbage(phone: FakePhone, garbage: bytes) -> None:
    dev = make_device(phone)
    phone.raw_replies = [garbage]
    frame = dev.screencap()
    np.testing.assert_array_equal(frame, phone.frame)
    assert dev.capture_mode == "png"
    dev.screencap()  # remembered: no more raw trials
    assert phone.bases("screencap") == ["screencap", "screencap | gzip -1"] + ["screencap -p"] * 4


def test_black_frame_is_retried_then_rejected(phone: FakePhone) -> None:
    dev = make_device(phone, capture="raw")
    black = encode_raw_screencap(np.zeros((H, W, 3), np.uint8))
    phone.raw_replies = [black, black]
    with pytest.raises(CaptureError, match="black") as info:
        dev.screencap()
    assert phone.bases("screencap") == ["screencap", "screencap"]
    assert info.value.hint


def test_black_frame_retry_can_succeed(phone: FakePhone) -> None:
    dev = make_device(phone, capture="raw")
    phone.raw_replies = [encode_raw_screencap(np.zeros((H, W, 3), np.uint8))]
    np.testing.assert_array_equal(dev.screencap(), phone.frame)


def test_auto_mode_stays_undecided_when_both_paths_fail(phone: FakePhone) -> None:
    dev = make_device(phone)
    black = np.zeros((H, W, 3), np.uint8)
    phone.raw_replies = [encode_raw_screencap(black)]
    phone.png_replies = [cv2.imencode(".png", black)[1].tobytes()]
    with pytest.raises(CaptureError, match="raw: .*black.*png: .*black"):
        dev.screencap()
    assert dev.capture_mode is None


def test_raw_failure_falls_back_to_png_for_one_frame_in_auto_mode(phone: FakePhone) -> None:
    dev = make_device(phone)
    dev.screencap()
    phone.raw_replies = [encode_raw_screencap(phone.frame)[:-100]]  # truncated
    np.testing.assert_array_equal(dev.screencap(), phone.frame)
    assert dev.capture_mode == "raw"  # one bad frame does not change the path
    assert phone.bases("screencap") == TIMING + ["screencap", "screencap", "screencap -p"]


def test_png_mode_uses_only_png(phone: FakePhone) -> None:
    dev = make_device(phone, capture="png")
    np.testing.assert_array_equal(dev.screencap(), phone.frame)
    assert phone.bases("screencap") == ["screencap -p"]


def test_wrong_size_frame_is_rejected(phone: FakePhone) -> None:
    dev = make_device(phone, capture="raw")
    phone.raw_replies = [encode_raw_screencap(make_frame(H, W))] * 2  # the phone rotated
    with pytest.raises(CaptureError, match="rotate"):
        dev.screencap()


# --------------------------------------------------------------------------- AdbDevice: gestures


def test_tap_and_swipe_send_exact_input_commands(phone: FakePhone) -> None:
    dev = make_device(phone)
    dev.tap(5, 7)
    dev.tap(np.int64(59), np.int32(99))
    dev.swipe(1, 2, 30, 40, 250)
    dev.swipe(0, 0, 59, 99)
    assert phone.bases("input") == [
        "input tap 5 7",
        "input tap 59 99",
        "input swipe 1 2 30 40 250",
        "input swipe 0 0 59 99 200",
    ]
    assert all(c.endswith(MARK) for c in phone.commands if c.startswith("input"))


@pytest.mark.parametrize(
    "gesture",
    [
        lambda d: d.tap(5.0, 7),
        lambda d: d.tap(5, "7"),
        lambda d: d.tap(True, 7),
        lambda d: d.tap(W, 7),
        lambda d: d.tap(5, H),
        lambda d: d.tap(-1, 7),
        lambda d: d.swipe(1, 2, 3.5, 4),
        lambda d: d.swipe(1, 2, 3, H + 10),
        lambda d: d.swipe(1, 2, 3, 4, 1.5),
        lambda d: d.swipe(1, 2, 3, 4, -1),
        lambda d: d.swipe(1, 2, 3, 4, 10**6),
    ],
)
def test_bad_gesture_raises_without_sending(phone: FakePhone, gesture) -> None:
    dev = make_device(phone)
    sent = len(phone.commands)
    with pytest.raises(GestureError) as info:
        gesture(dev)
    assert len(phone.commands) == sent
    assert info.value.hint


def test_input_error_message_is_an_error(phone: FakePhone) -> None:
    dev = make_device(phone)
    phone.input_reply = "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS\n"
    with pytest.raises(DeviceError, match="INJECT_EVENTS") as info:
        dev.tap(1, 1)
    assert "MIUI" in info.value.hint


def test_hung_call_is_cut_off_at_the_timeout(phone: FakePhone) -> None:
    dev = make_device(phone, timeout_s=0.3)
    phone.hang_on = "input"
    start = time.monotonic()
    with pytest.raises(DeviceTimeoutError, match="input tap 1 2") as info:
        dev.tap(1, 2)
    elapsed = time.monotonic() - start
    assert 0.25 <= elapsed < 1.5
    assert info.value.hint and info.value.exit_code == 3


def test_hung_capture_is_cut_off_at_the_timeout(phone: FakePhone) -> None:
    dev = make_device(phone, timeout_s=0.3)
    phone.hang_on = "screencap"
    start = time.monotonic()
    with pytest.raises(DeviceTimeoutError):
        dev.screencap()
    assert time.monotonic() - start < 1.5


def test_swipe_bound_includes_its_duration(phone: FakePhone, monkeypatch) -> None:
    dev = make_device(phone, timeout_s=0.2)
    real_serve = phone.serve

    def slow_serve(service: str):
        if service.startswith("shell:input swipe"):
            time.sleep(0.4)  # a 400 ms swipe takes 400 ms
        return real_serve(service)

    monkeypatch.setattr(phone, "serve", slow_serve)
    dev.swipe(1, 2, 3, 4, 400)
    with pytest.raises(DeviceTimeoutError):
        dev.swipe(1, 2, 3, 4, 10)


# --------------------------------------------------------------------------- AdbDevice: faults


def test_transient_fault_reconnects_and_retries_once(phone: FakePhone) -> None:
    calls: list[int] = []
    dev = AdbDevice("FAKE1", timeout_s=2.0, connect=connect_to(phone, calls))
    assert len(calls) == 1
    phone.fail_open = [ConnectionResetError(104, "Connection reset by peer")]
    dev.tap(3, 4)
    assert len(calls) == 2  # looked the transport up again
    assert phone.bases("input") == ["input tap 3 4", "input tap 3 4"]  # the first never ran


def test_second_transient_fault_is_device_offline(phone: FakePhone) -> None:
    dev = make_device(phone)
    phone.fail_open = [EOFError(), EOFError()]
    with pytest.raises(DeviceOfflineError, match="stopped answering"):
        dev.screencap()


def test_gesture_cut_off_mid_command_is_not_repeated(phone: FakePhone) -> None:
    dev = make_device(phone)
    phone.cut_reply_on = "input"
    with pytest.raises(DeviceOfflineError, match="may or may not have happened"):
        dev.swipe(1, 2, 3, 4)
    assert phone.bases("input") == ["input swipe 1 2 3 4 200"]


def test_empty_reply_to_a_query_is_retried(phone: FakePhone) -> None:
    phone.cut_reply_on = "wm size"
    with pytest.raises(DeviceOfflineError, match="wm size"):
        make_device(phone)
    assert phone.bases("wm size") == ["wm size", "wm size"]


@pytest.mark.parametrize(
    "exc, cls, match",
    [
        (AdbError("device offline"), DeviceOfflineError, "offline"),
        (AdbError("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"), DeviceUnauthorizedError, "prompt"),
        (AdbError("device 'FAKE1' not found"), NoDeviceError, "FAKE1"),
        (AdbError("no device with transport id '7'"), NoDeviceError, "FAKE1"),
        (AdbTimeout("adb read timeout"), DeviceTimeoutError, "timed out"),
        (AdbConnectionError("connect to adb server failed: refused"), AdbServerError, "adb server"),
        (ConnectionRefusedError(111, "refused"), AdbServerError, "adb server"),
        (AdbError("something new"), DeviceError, "something new"),
    ],
)
def test_adbutils_errors_map_to_ours(phone: FakePhone, exc, cls, match: str) -> None:
    dev = make_device(phone)
    phone.fail_open = [exc, exc]
    with pytest.raises(cls, match=match) as info:
        dev.tap(1, 1)
    assert type(info.value) is cls or cls is DeviceError
    assert info.value.hint


def test_errors_from_connect_pass_through() -> None:
    def connect():
        raise DeviceUnauthorizedError("FAKE1 has not authorized this computer")

    with pytest.raises(DeviceUnauthorizedError):
        AdbDevice("FAKE1", timeout_s=1.0, connect=connect)


def test_capture_method_from_the_environment(phone: FakePhone, monkeypatch) -> None:
    monkeypatch.setenv("PUZZLE_AGENT_CAPTURE", "PNG")
    dev = AdbDevice("FAKE1", timeout_s=2.0, connect=connect_to(phone))
    assert dev.capture_mode == "png"
    dev.screencap()
    assert phone.bases("screencap") == ["screencap -p"]
    assert make_device(phone, capture="raw").capture_mode == "raw"  # an explicit choice wins
    monkeypatch.setenv("PUZZLE_AGENT_CAPTURE", "jpeg")
    with pytest.raises(DeviceError, match="PUZZLE_AGENT_CAPTURE='jpeg'") as info:
        AdbDevice("FAKE1", timeout_s=2.0, connect=connect_to(phone))
    assert "auto, raw, gzip or png" in info.value.hint


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        AdbDevice("X", capture="jpeg", connect=lambda: FakePhone())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        AdbDevice("X", timeout_s=0, connect=lambda: FakePhone())


# --------------------------------------------------------------------------- selection


class FakeClient:
    """The slice of adbutils.AdbClient that listing uses."""

    def __init__(self, rows: list[tuple[str, str]], phones: dict[str, FakePhone] | None = None) -> None:
        self.rows = [
            AdbDeviceInfo(serial=s, state=st, tags={"model": "Tag_Model", "transport_id": str(i + 1)})
            for i, (s, st) in enumerate(rows)
        ]
        self.phones = phones or {}
        self.devices_by: list[tuple] = []

    def list(self, extended: bool = False):
        assert extended, "listing must ask for transport ids (devices -l)"
        return list(self.rows)

    def device(self, serial=None, transport_id=None):
        self.devices_by.append((serial, transport_id))
        tid_to_serial = {r.transport_id: r.serial for r in self.rows}
        return self.phones[serial or tid_to_serial[transport_id]]


@pytest.fixture
def use_client(monkeypatch):
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)

    def install(client: FakeClient) -> FakeClient:
        monkeypatch.setattr(adbserver, "_open_client", lambda target, timeout_s: client)
        return client

    return install


def test_select_none(use_client) -> None:
    use_client(FakeClient([]))
    with pytest.raises(NoDeviceError, match=r"^no device: ") as info:
        select_serial(None, AdbTarget(port=5999))
    assert "127.0.0.1:5999" in str(info.value)
    assert "--sim" in info.value.hint


def test_select_the_only_one(use_client) -> None:
    use_client(FakeClient([("emulator-5554", "device")]))
    assert select_serial() == "emulator-5554"


def test_select_several(use_client) -> None:
    use_client(FakeClient([("A1", "device"), ("B2", "offline")]))
    with pytest.raises(SeveralDevicesError, match=r"A1 \(device\), B2 \(offline\)") as info:
        select_serial()
    assert "--serial" in info.value.hint


def test_select_from_env_and_flag(use_client, monkeypatch) -> None:
    use_client(FakeClient([("A1", "device"), ("B2", "device")]))
    monkeypatch.setenv("ANDROID_SERIAL", "B2")
    assert select_serial() == "B2"
    assert select_serial("A1") == "A1"  # --serial beats the environment


def test_select_offline(use_client) -> None:
    use_client(FakeClient([("A1", "device"), ("B2", "offline")]))
    with pytest.raises(DeviceOfflineError, match="B2 is offline") as info:
        select_serial("B2")
    assert "reconnect" in info.value.hint
    use_client(FakeClient([("B2", "offline")]))
    with pytest.raises(DeviceOfflineError):
        select_serial()


def test_select_unauthorized(use_client) -> None:
    use_client(FakeClient([("A1", "unauthorized")]))
    with pytest.raises(DeviceUnauthorizedError, match="accept") as info:
        select_serial("A1")
    assert "Allow USB debugging" in info.value.hint
    with pytest.raises(DeviceUnauthorizedError):
        select_serial()


def test_select_unknown_serial(use_client, monkeypatch) -> None:
    use_client(FakeClient([("A1", "device")]))
    with pytest.raises(NoDeviceError, match=r"'ZZZ'.*A1 \(device\)"):
        select_serial("ZZZ")
    monkeypatch.setenv("ANDROID_SERIAL", "YYY")
    with pytest.raises(NoDeviceError, match="'YYY' \\(from ANDROID_SERIAL\\)"):
        select_serial()


def test_select_no_permissions_and_recovery(use_client) -> None:
    use_client(FakeClient([("A1", "no")]))  # "no permissions (...)" split by adbutils
    with pytest.raises(DeviceError, match="permission") as info:
        select_serial()
    assert "udev" in info.value.hint
    use_client(FakeClient([("A1", "recovery")]))
    with pytest.raises(DeviceOfflineError, match="recovery"):
        select_serial()


def test_list_devices_reads_ready_phones_by_transport_id(use_client) -> None:
    good, hung = FakePhone(), FakePhone()
    hung.hang_on = "getprop"
    client = use_client(
        FakeClient(
            [("A1", "device"), ("B2", "offline"), ("C3", "unauthorized"), ("D4", "device")],
            phones={"A1": good, "D4": hung},
        )
    )
    try:
        start = time.monotonic()
        infos = list_devices(timeout_s=0.3)
        assert time.monotonic() - start < 1.5
    finally:
        hung.release.set()
    assert infos[0] == DeviceInfo("A1", "device", "Pixel Fake", (W, H), transport_id=1)
    assert infos[1] == DeviceInfo("B2", "offline", "Tag_Model", None, transport_id=2)
    assert infos[2].state == "unauthorized" and infos[2].resolution is None
    assert infos[3].serial == "D4" and infos[3].resolution is None  # did not answer in time
    assert (None, 1) in client.devices_by  # addressed by transport id
    assert good.bases() == ["getprop ro.product.model", "wm size"]


def test_list_devices_names_an_unreachable_server() -> None:
    port = free_port()
    # Not a local host, so no server is started: the error must name host:port.
    with pytest.raises(AdbServerError, match=f"127.0.0.2:{port}"):
        list_devices(AdbTarget("127.0.0.2", port))


def test_missing_adb_binary_is_a_server_error(monkeypatch) -> None:
    def no_adb() -> str:
        raise AdbError("No adb exe could be found. Install adb on your system")

    monkeypatch.setattr(adbserver.adbutils, "adb_path", no_adb)
    port = free_port()
    with pytest.raises(AdbServerError, match=f"127.0.0.1:{port}.*no adb binary"):
        list_devices(AdbTarget(port=port))


def test_target_reads_the_server_port_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "15123")
    assert AdbTarget().port == 15123 and AdbTarget().address == "127.0.0.1:15123"
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT")
    assert AdbTarget().port == 5037
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "adb")
    with pytest.raises(AdbServerError, match="ANDROID_ADB_SERVER_PORT"):
        AdbTarget()


# --------------------------------------------------------------------------- the real adbutils path


class FakeAdbServer:
    """An adb *server* (not adbd) that lists one phone, "FAKE9", with transport id 9.

    With a FakePhone behind it, shell services are answered from the fake; without one
    the phone accepts the transport and then never answers: the hung-phone case where
    adbutils would wait 600 s in the transport open.
    """

    def __init__(self, phone: FakePhone | None = None) -> None:
        self.phone = phone
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests: list[str] = []
        self.clients: list[socket.socket] = []
        self.client_closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.clients.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> str | None:
        head = conn.recv(4)
        if len(head) < 4:
            return None
        n = int(head, 16)
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data.decode()

    def _handle(self, conn: socket.socket) -> None:
        try:
            while (req := self._read_request(conn)) is not None:
                self.requests.append(req)
                if req == "host:devices-l":
                    body = b"FAKE9\tdevice product:x model:Fake device:x transport_id:9\n"
                    conn.sendall(b"OKAY" + b"%04x" % len(body) + body)
                    return
                if req.startswith("host:transport-id:"):
                    conn.sendall(b"OKAY")
                    continue
                if self.phone is not None and req.startswith(("shell:", "exec:")):
                    stream = self.phone.serve(req)
                    conn.sendall(b"OKAY")
                    while chunk := stream.recv(1 << 16):
                        conn.sendall(chunk)
                    conn.close()
                    return
                if not conn.recv(1):  # silent phone: wait for the client to give up
                    self.client_closed.set()
                return
        except OSError:
            self.client_closed.set()

    def close(self) -> None:
        self.sock.close()
        for c in self.clients:
            c.close()


def test_real_adbutils_path_captures_and_taps() -> None:
    phone = FakePhone()
    server = FakeAdbServer(phone)
    try:
        dev = AdbDevice("FAKE9", AdbTarget(port=server.port), timeout_s=2.0)
        assert dev.model == "Pixel Fake" and dev.screen_size() == (W, H)
        np.testing.assert_array_equal(dev.screencap(), phone.frame)
        assert dev.capture_mode == "raw"
        dev.tap(10, 20)
        assert phone.bases("input") == ["input tap 10 20"]
        # Addressed by transport id, never by serial (no host-serial / tport requests).
        assert "host:transport-id:9" in server.requests
        assert not any("serial" in r for r in server.requests)
    finally:
        server.close()


def test_real_adbutils_hung_phone_is_cut_off_and_its_socket_closed() -> None:
    server = FakeAdbServer()
    try:
        start = time.monotonic()
        with pytest.raises(DeviceTimeoutError, match="getprop"):
            AdbDevice("FAKE9", AdbTarget(port=server.port), timeout_s=0.5)
        assert time.monotonic() - start < 2.0
        assert "host:transport-id:9" in server.requests  # addressed by transport id
        assert any(r.startswith("shell:getprop ro.product.model") for r in server.requests)
        # The abandoned call's socket is shut at the deadline, not left for 600 s.
        assert server.client_closed.wait(2.0)
    finally:
        server.close()


def test_bounded_client_caps_adbutils_600s_default() -> None:
    server = FakeAdbServer()
    try:
        client = adbserver._BoundedClient(AdbTarget(port=server.port), timeout_s=0.7)
        conn = client.make_connection(timeout=600)
        try:
            assert 0 < conn.conn.gettimeout() <= 0.7
        finally:
            conn.close()

        # Inside a bounded call the socket gets the call's time left: a long swipe may
        # outlast timeout_s, and its reply must not be cut at timeout_s.
        def timeout_in_call() -> float:
            c = client.make_connection(timeout=600)
            try:
                return c.conn.gettimeout()
            finally:
                c.close()

        got = adbcalls._bounded(timeout_in_call, time.monotonic() + 3.0)
        assert 2.0 < got <= 3.0
    finally:
        server.close()


# --------------------------------------------------------------------------- integration


@pytest.mark.integration
def test_private_adb_server_lists_no_devices(private_adb_port) -> None:
    exe, port = private_adb_port
    subprocess.run([exe, "-P", str(port), "start-server"], capture_output=True, timeout=30, check=True)
    assert list_devices() == []
    with pytest.raises(NoDeviceError, match=f"no device: .*127.0.0.1:{port}"):
        select_serial()


@pytest.mark.integration
def test_list_devices_starts_a_server_when_none_answers(private_adb_port) -> None:
    exe, port = private_adb_port
    assert not adbserver._server_answers(AdbTarget())
    assert list_devices() == []
    assert adbserver._server_answers(AdbTarget())


# --------------------------------------------------------------------------- exec vs shell, network phones


def test_frames_come_through_exec_and_text_through_shell(phone: FakePhone) -> None:
    dev = make_device(phone)
    dev.screencap()
    dev.tap(1, 1)
    kinds = dict(zip(phone.bases(), phone.services))
    assert kinds["screencap"] == "exec"  # binary-safe on phones whose shell: is a terminal
    assert kinds["getprop ro.product.model"] == "shell" and kinds["input tap 1 1"] == "shell"


@pytest.mark.parametrize(
    "serial, tcp",
    [("127.0.0.1:5555", True), ("192.168.1.20:40123", True), ("phone.lan:5555", True), ("[::1]:5555", True),
     ("emulator-5554", False), ("R58N12ABCDE", False), ("adb-R58N-abc._adb-tls-connect._tcp", False),
     ("127.0.0.1", False), ("host:port", False)],
)  # fmt: skip
def test_network_serials_are_told_apart(serial: str, tcp: bool) -> None:
    assert adbmod.is_tcp_serial(serial) is tcp


class ConnectingClient(FakeClient):
    """A client whose server answers `adb connect` like adb does (exit 0, words only)."""

    def __init__(self, rows, phones=None, reachable: dict[str, str] | None = None) -> None:
        super().__init__(rows, phones)
        self.reachable = reachable or {}  # serial -> state it comes back in
        self.calls: list[tuple[str, str]] = []

    def connect(self, addr: str, timeout: float | None = None) -> str:
        self.calls.append(("connect", addr))
        if addr not in self.reachable:
            return f"failed to connect to '{addr}': Connection refused"
        if any(r.serial == addr for r in self.rows):
            return f"already connected to {addr}"
        tid = str(len(self.rows) + 1)
        self.rows.append(AdbDeviceInfo(serial=addr, state=self.reachable[addr], tags={"transport_id": tid}))
        return f"connected to {addr}"

    def disconnect(self, addr: str, raise_error: bool = False) -> str:
        self.calls.append(("disconnect", addr))
        self.rows = [r for r in self.rows if r.serial != addr]
        return f"disconnected {addr}"


def test_select_connects_a_network_phone_that_is_not_listed(use_client) -> None:
    client = use_client(ConnectingClient([], reachable={"127.0.0.1:5555": "device"}))
    assert select_serial("127.0.0.1:5555") == "127.0.0.1:5555"
    assert client.calls == [("connect", "127.0.0.1:5555")]


def test_select_network_phone_that_does_not_answer(use_client) -> None:
    client = use_client(ConnectingClient([("A1", "device")]))
    with pytest.raises(NoDeviceError, match="Connection refused") as info:
        select_serial("127.0.0.1:5999")
    assert "listening" in info.value.hint
    assert client.calls == [("connect", "127.0.0.1:5999")]
    with pytest.raises(NoDeviceError):
        select_serial("R58N000")  # a USB serial is never `adb connect`ed
    assert len(client.calls) == 1


def test_select_network_phone_that_came_back_unauthorized(use_client) -> None:
    use_client(ConnectingClient([("10.0.0.5:5555", "offline")], reachable={"10.0.0.5:5555": "unauthorized"}))
    with pytest.raises(DeviceUnauthorizedError):
        select_serial("10.0.0.5:5555")


def test_offline_network_phone_is_reconnected_mid_run(use_client) -> None:
    fake = FakePhone()
    serial = "127.0.0.1:5555"
    client = use_client(ConnectingClient([(serial, "device")], phones={serial: fake}, reachable={serial: "device"}))
    dev = AdbDevice(serial, timeout_s=2.0)
    client.rows[0] = AdbDeviceInfo(serial=serial, state="offline", tags={"transport_id": "1"})
    fake.fail_open = [AdbError("device offline")]  # the server lost it; it is back on the network
    np.testing.assert_array_equal(dev.screencap(), fake.frame)
    assert client.calls == [("disconnect", serial), ("connect", serial)]


def test_network_phone_that_stays_away_is_offline_with_what_adb_said(use_client) -> None:
    fake = FakePhone()
    serial = "127.0.0.1:5555"
    client = use_client(ConnectingClient([(serial, "device")], phones={serial: fake}))
    dev = AdbDevice(serial, timeout_s=2.0)
    client.rows[0] = AdbDeviceInfo(serial=serial, state="offline", tags={"transport_id": "1"})
    fake.fail_open = [AdbError("device offline")]
    with pytest.raises(DeviceOfflineError, match="Connection refused") as info:
        dev.tap(1, 1)
    assert "listening" in info.value.hint
    assert fake.bases("input") == ["input tap 1 1"]  # refused at the open, and not sent again


def test_connect_tcp_reports_what_went_wrong(use_client) -> None:
    use_client(ConnectingClient([], reachable={"127.0.0.1:5555": "device", "127.0.0.1:5556": "unauthorized"}))
    assert adbmod.connect_tcp("127.0.0.1:5555") == "connected to 127.0.0.1:5555"
    assert adbmod.connect_tcp("127.0.0.1:5555") == "already connected to 127.0.0.1:5555"
    with pytest.raises(DeviceUnauthorizedError):
        adbmod.connect_tcp("127.0.0.1:5556")
    with pytest.raises(DeviceOfflineError, match="cannot connect to 127.0.0.1:5557: failed to connect"):
        adbmod.connect_tcp("127.0.0.1:5557")
    with pytest.raises(DeviceError, match="not HOST:PORT"):
        adbmod.connect_tcp("R58N000")


def test_real_adbutils_path_reads_a_png_bigger_than_its_size_hint() -> None:
    phone = FakePhone()  # random pixels: the PNG is far above half a byte a pixel
    server = FakeAdbServer(phone)
    try:
        dev = AdbDevice("FAKE9", AdbTarget(port=server.port), capture="png", timeout_s=2.0)
        np.testing.assert_array_equal(dev.screencap(), phone.frame)
        assert "exec:screencap -p" in server.requests
    finally:
        server.close()


# --------------------------------------------------------------------------- the fake phone's parts

from agent.simphone.adbd import AdbdServer  # noqa: E402
from agent.simphone.adbd import wire  # noqa: E402
from agent.simphone.adbd.screen import ScreenBytes  # noqa: E402
from agent.simphone.adbd.shell import FakeShell, PhoneFacts, split_commands  # noqa: E402
from agent.games.match3.sim import SimPhone  # noqa: E402

SIM = (240, 400)


def test_wire_round_trip_and_refusals() -> None:
    data = b"host::features=shell_v2"
    packet = wire.header(wire.A_CNXN, wire.VERSION, 4096, data, with_checksum=True) + data
    msg = wire.read_message(io.BytesIO(packet), 1 << 20)
    assert (msg.command, msg.arg0, msg.arg1, msg.data) == (wire.A_CNXN, wire.VERSION, 4096, data)
    assert struct.unpack_from("<6I", packet)[4] == sum(data)
    assert wire.read_message(io.BytesIO(b""), 100) is None  # closed between messages
    bad_magic = packet[:20] + b"\0\0\0\0" + packet[24:]
    for broken, reason in [(bad_magic, "magic"), (packet[:10], "header"), (packet[:-3], "data"),
                           (packet, "more than")]:  # fmt: skip
        with pytest.raises(wire.WireError, match=reason):
            wire.read_message(io.BytesIO(broken), 1 << 20 if reason != "more than" else 8)


@pytest.mark.parametrize(
    "line, commands",
    [
        ("wm size", [(["wm", "size"], ";")]),
        ("screencap -p; echo X4EXIT:$?", [(["screencap", "-p"], ";"), (["echo", "X4EXIT:$?"], ";")]),
        ("echo 'a b' \"c;d\"&&x||y", [(["echo", "a b", "c;d"], "&&"), (["x"], "||"), (["y"], ";")]),
    ],
)
def test_shell_splits_command_lines(line: str, commands) -> None:
    assert split_commands(line) == commands


def test_shell_refuses_pipes() -> None:
    with pytest.raises(ValueError, match="pipes"):
        split_commands("getprop | grep model")


class Captured:
    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()

    def __call__(self, fd: int, data: bytes) -> None:
        (self.stdout if fd == 1 else self.stderr).extend(data)


@pytest.fixture
def sim_shell():
    phone = SimPhone(seed=2, size=SIM)
    lock = threading.Lock()
    slept: list[float] = []
    shell = FakeShell(phone, ScreenBytes(phone.screencap), PhoneFacts(density=320), lock, sleep=slept.append)

    def run(line: str) -> tuple[int, str, str, bytes]:
        out = Captured()
        status = shell.run(line, out)
        return status, out.stdout.decode("utf-8", "replace"), out.stderr.decode(), bytes(out.stdout)

    run.phone, run.slept = phone, slept  # type: ignore[attr-defined]
    return run


def test_shell_runs_lists_with_exit_statuses(sim_shell) -> None:
    assert sim_shell("echo a; frob; echo $?")[:3] == (0, "a\n127\n", "/system/bin/sh: frob: not found\n")
    assert sim_shell("frob || echo fallback; frob && echo never")[:2] == (127, "fallback\n")
    assert sim_shell("echo -n x; echo 'y  z'")[:2] == (0, "xy  z\n")
    assert sim_shell("echo 'open")[0] == 1  # a syntax error, as sh says


def test_shell_answers_getprop_wm_and_dumpsys(sim_shell) -> None:
    assert sim_shell("getprop ro.product.model")[1] == "puzzle-sim\n"
    assert sim_shell("getprop no.such.prop")[1] == "\n"
    assert sim_shell("getprop no.such.prop dflt")[1] == "dflt\n"
    assert "[ro.sf.lcd_density]: [320]\n" in sim_shell("getprop")[1]
    assert sim_shell("wm size")[1] == f"Physical size: {SIM[0]}x{SIM[1]}\n"
    assert sim_shell("wm density")[1] == "Physical density: 320\n"
    assert sim_shell("wm overscan")[0] == 1
    display = sim_shell("dumpsys display")[1]
    assert adbwm._parse_rotation(display) == 0
    from adbutils.shell import _DISPLAY_RE  # what adbutils' window_size() parses

    m = next(_DISPLAY_RE.match(line) for line in display.splitlines() if _DISPLAY_RE.match(line))
    assert (m["orientation"], m["width"], m["height"]) == ("0", str(SIM[0]), str(SIM[1]))
    assert "SurfaceOrientation: 0" in sim_shell("dumpsys input")[1]
    assert sim_shell("dumpsys battery")[1] == "Can't find service: battery\n"


def test_shell_screencap_prints_the_phone_frame(sim_shell) -> None:
    frame = sim_shell.phone.screencap()
    status, _, _, raw = sim_shell("screencap")
    assert status == 0
    np.testing.assert_array_equal(parse_raw_screencap(raw, expect=SIM), frame)
    status, _, _, png = sim_shell("screencap -p -d 0")
    assert status == 0 and png.startswith(b"\x89PNG")
    np.testing.assert_array_equal(decode_png(png), frame)
    assert sim_shell("screencap -x")[0] == 1 and "usage" in sim_shell("screencap -x")[2]
    assert sim_shell("screencap /sdcard/s.png")[0] == 1
    assert sim_shell("screencap -d 3")[0] == 1


def test_shell_input_reaches_the_phone(sim_shell) -> None:
    assert sim_shell("input tap 10 20")[0] == 0
    assert sim_shell("input touchscreen swipe 1 2 30.6 40 150")[0] == 0
    assert sim_shell("input swipe 5 6 7 8")[0] == 0
    assert sim_shell("input tap 5000 5")[0] == 0  # off the screen: dropped, as a phone does
    assert sim_shell("input keyevent 3")[0] == 0
    log = [(g.kind, g.points, g.duration_ms) for g in sim_shell.phone.gesture_log]
    assert log == [("tap", (10, 20), 0), ("swipe", (1, 2, 31, 40), 150), ("swipe", (5, 6, 7, 8), 300)]
    assert sim_shell.slept == [0.15, 0.3]  # `input swipe` returns when the finger lifts
    status, _, err, _ = sim_shell("input tap x 1")
    assert status == 1 and "NumberFormatException" in err
    assert sim_shell("input tap 1")[0] == 1 and sim_shell("input fly 1 2")[0] == 1 and sim_shell("input")[0] == 1
    assert len(sim_shell.phone.gesture_log) == 3


def test_screen_bytes_encode_each_distinct_frame_once() -> None:
    frames = [make_frame(seed=1), make_frame(seed=1), make_frame(seed=2), make_frame(seed=1)]
    screen = ScreenBytes(lambda: frames.pop(0), keep=2)
    first = screen.raw()
    assert screen.raw() is first  # an equal frame: the cached bytes, not a new encoding
    second = screen.raw()
    assert second is not first
    np.testing.assert_array_equal(parse_raw_screencap(second), make_frame(seed=2))
    assert screen.raw() is first  # still kept (keep=2)
    assert (screen.hits, screen.misses) == (2, 2)


class WireHost:
    """The test playing the adb server's side of one connection to an AdbdServer."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)

    def read(self, n: int) -> bytes:
        """Exactly n bytes, fewer only at EOF (what read_message expects of a reader)."""
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"", version: int = wire.VERSION) -> None:
        self.sock.sendall(wire.header(command, arg0, arg1, data, with_checksum=True) + data)

    def recv(self, timeout: float = 5) -> wire.Message | None:
        self.sock.settimeout(timeout)
        return wire.read_message(self, 1 << 24)

    def silent(self, for_s: float = 0.3) -> bool:
        """Nothing arrives for for_s seconds."""
        readable, _, _ = select.select([self.sock], [], [], for_s)
        return not readable

    def handshake(self, maxdata: int = 1 << 20, version: int = wire.VERSION) -> wire.Message:
        self.send(wire.A_CNXN, version, maxdata, b"host::features=shell_v2,cmd")
        return self.recv()

    def open(self, local_id: int, service: str) -> wire.Message:
        self.send(wire.A_OPEN, local_id, 0, service.encode() + b"\0")
        return self.recv()

    def read_stream(self, local_id: int, max_seen: list[int] | None = None) -> bytes:
        """WRTE by WRTE, acknowledging each, until CLSE."""
        out = bytearray()
        while True:
            msg = self.recv()
            assert msg is not None and msg.arg1 == local_id
            if msg.command == wire.A_CLSE:
                return bytes(out)
            assert msg.command == wire.A_WRTE, msg
            if max_seen is not None:
                max_seen.append(len(msg.data))
            out += msg.data
            self.send(wire.A_OKAY, local_id, msg.arg0)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def wire_phone():
    server = AdbdServer(SimPhone(seed=4, size=SIM, serial="sim-4")).start()
    hosts: list[WireHost] = []

    def connect() -> WireHost:
        hosts.append(WireHost(server.port))
        return hosts[-1]

    yield server, connect
    for host in hosts:
        host.close()
    server.thaw()
    server.stop()


def test_wire_handshake_names_the_phone(wire_phone) -> None:
    server, connect = wire_phone
    reply = connect().handshake()
    assert (reply.command, reply.arg0, reply.arg1) == (wire.A_CNXN, wire.VERSION, wire.MAX_PAYLOAD)
    banner = reply.data.decode()
    assert banner.startswith("device::") and "ro.product.model=puzzle-sim" in banner
    assert "features=shell_v2,cmd" in banner


def test_wire_stream_respects_max_payload_and_one_packet_in_flight(wire_phone) -> None:
    server, connect = wire_phone
    host = connect()
    host.handshake(maxdata=4096)
    okay = host.open(7, "exec:screencap")
    assert (okay.command, okay.arg1) == (wire.A_OKAY, 7)
    first = host.recv()
    assert first.command == wire.A_WRTE and len(first.data) == 4096
    assert host.silent()  # nothing more until the host says OKAY
    host.send(wire.A_OKAY, 7, first.arg0)
    sizes: list[int] = []
    data = first.data + host.read_stream(7, sizes)
    sizes.insert(0, len(first.data))
    assert sizes[:-1] == [4096] * (len(sizes) - 1) and 0 < sizes[-1] <= 4096  # full packets, none too big
    np.testing.assert_array_equal(parse_raw_screencap(data, expect=SIM), server.phone.screencap())


def test_wire_shell_v1_and_v2_framing(wire_phone) -> None:
    _, connect = wire_phone
    host = connect()
    host.handshake()
    host.open(1, "shell:frob; echo X4EXIT:$?")
    assert host.read_stream(1) == b"/system/bin/sh: frob: not found\nX4EXIT:127\n"
    opened = host.open(2, "shell,v2,TERM=xterm,raw:echo hi; frob")
    host.send(wire.A_WRTE, 2, opened.arg0, bytes([4, 0, 0, 0, 0]))  # close-stdin, as adb sends
    packets = host.recv(), host.recv()
    okay = next(p for p in packets if p.command == wire.A_OKAY)  # every host WRTE is acknowledged
    assert okay.arg1 == 2
    data = next(p for p in packets if p.command == wire.A_WRTE).data
    host.send(wire.A_OKAY, 2, opened.arg0)
    data += host.read_stream(2)
    frames, at = [], 0
    while at < len(data):
        kind, n = struct.unpack_from("<BI", data, at)
        frames.append((kind, data[at + 5 : at + 5 + n]))
        at += 5 + n
    assert frames == [(1, b"hi\n"), (2, b"/system/bin/sh: frob: not found\n"), (3, bytes([127]))]


def test_wire_refuses_unknown_services_and_survives_a_broken_host(wire_phone) -> None:
    server, connect = wire_phone
    host = connect()
    host.handshake()
    refused = host.open(3, "sync:")
    assert (refused.command, refused.arg0, refused.arg1) == (wire.A_CLSE, 0, 3)
    host.sock.sendall(b"this is not an adb message at all")
    with _closed():
        assert host.recv() is None
    again = connect()
    assert again.handshake().command == wire.A_CNXN  # the phone still serves
    again.open(1, "shell:echo ok")
    assert again.read_stream(1) == b"ok\n"


class _closed:
    """The connection must end: a clean EOF or a reset both count."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        assert kind is None or issubclass(kind, (ConnectionError, wire.WireError)), exc
        return True


def test_wire_host_closing_a_stream_stops_its_writes(wire_phone) -> None:
    _, connect = wire_phone
    host = connect()
    host.handshake(maxdata=4096)
    host.open(5, "exec:screencap")
    first = host.recv()
    assert first.command == wire.A_WRTE
    host.send(wire.A_CLSE, 5, first.arg0)
    host.send(wire.A_OKAY, 5, first.arg0)  # a late OKAY must not restart it
    assert host.silent()
    host.open(6, "shell:echo still here")
    assert host.read_stream(6) == b"still here\n"


def test_wire_old_hosts_get_checksums(wire_phone) -> None:
    _, connect = wire_phone
    host = connect()
    reply = host.handshake(version=wire.VERSION_MIN)
    assert reply.command == wire.A_CNXN
    host.open(1, "shell:echo sum")
    command, _, _, length, check, _ = struct.unpack("<6I", host.read(24))
    assert (command, host.read(length)) == (wire.A_WRTE, b"sum\n")
    assert check == sum(b"sum\n")  # what hosts before 0x01000001 verify


def test_wire_unauthorized_phone_never_accepts_a_key(wire_phone) -> None:
    server, connect = wire_phone
    server.unauthorized = True
    host = connect()
    token = host.handshake()
    assert (token.command, token.arg0, len(token.data)) == (wire.A_AUTH, wire.AUTH_TOKEN, wire.TOKEN_SIZE)
    host.send(wire.A_AUTH, wire.AUTH_SIGNATURE, 0, b"s" * 256)
    again = host.recv()
    assert again.command == wire.A_AUTH and again.data != token.data  # a new token: key refused
    host.send(wire.A_AUTH, wire.AUTH_RSAPUBLICKEY, 0, b"key\0")
    host.send(wire.A_OPEN, 1, 0, b"shell:echo hi\0")
    assert host.silent()  # no prompt is ever accepted, nothing is served


def test_wire_frozen_phone_answers_nothing(wire_phone) -> None:
    server, connect = wire_phone
    host = connect()
    host.handshake()
    server.freeze()
    host.send(wire.A_OPEN, 1, 0, b"shell:echo hi\0")
    assert host.silent()
    server.thaw()
    host.open(2, "shell:echo back")
    assert host.read_stream(2) == b"back\n"


# --------------------------------------------------------------------------- numbers from the wire, bounded reads

from agent.device.adb.calls import ReplySize, ReplyTooLarge, _read_all, _sh  # noqa: E402
from agent.device.adb.faults import _map_error  # noqa: E402
from agent.device.rawframe import MAX_SIDE, png_reply_size, raw_reply_size  # noqa: E402
from agent.simphone.adbd import Limits  # noqa: E402
from agent.simphone.adbd.shell import MAX_COMMAND_BYTES  # noqa: E402


@pytest.mark.parametrize(
    "line, says",
    [
        ("input tap inf 1", "NumberFormatException"),
        ("input tap NaN 1", "not a finite number"),
        ("input tap Infinity 1", "not a finite number"),
        ("input tap 1e999 1", "not a finite number"),
        ("input swipe 1 1 2 2 99999999999", "NumberFormatException"),
        ("input swipe 1 1 2 2 60001", "60000 ms"),
        ("input swipe 1 1 2 2 7.5", "NumberFormatException"),
        ("input -d 1 tap 1 1", "display 1"),
        ("input -d", "display id"),
        ("wm size 0x0", "cannot be resized"),
        ("wm size x5", "bad size"),
    ],
)
def test_shell_input_and_wm_refuse_garbage_before_touching_or_sleeping(sim_shell, line: str, says: str) -> None:
    status, _, err, _ = sim_shell(line)
    assert status != 0 and says in err, (status, err)
    assert sim_shell.phone.gesture_count == 0 and sim_shell.slept == []


def test_shell_is_lenient_where_android_is(sim_shell) -> None:
    assert sim_shell("input tap 1e9 5")[0] == 0  # finite, off the screen: dropped
    assert sim_shell("input swipe 1 2 3 4 -7")[0] == 0 and sim_shell.slept == [0.3]  # Android's default
    assert sim_shell("input tap 2.5f 3")[0] == 0 and sim_shell.phone.gesture_log[-1].points == (2, 3)
    assert sim_shell(f"wm size {SIM[0]}x{SIM[1]}")[0] == 0 and sim_shell("wm size reset")[0] == 0


def test_shell_refuses_a_line_longer_than_a_phone_execs(sim_shell) -> None:
    status, _, err, _ = sim_shell("input tap 1 1;" * (MAX_COMMAND_BYTES // 14 + 1))
    assert status == 126 and "Argument list too long" in err
    assert sim_shell.phone.gesture_count == 0  # refused whole, not run in part


def test_shell_passes_non_utf8_bytes_through() -> None:
    phone = SimPhone(seed=2, size=SIM)
    shell = FakeShell(phone, ScreenBytes(phone.screencap), PhoneFacts(), threading.Lock())
    out = Captured()
    assert shell.run(b"echo \xff\xfe; \xc3".decode("utf-8", "surrogateescape"), out) == 127
    assert bytes(out.stdout) == b"\xff\xfe\n" and bytes(out.stderr) == b"/system/bin/sh: \xc3: not found\n"


def test_shell_pause_is_how_a_swipe_waits(sim_shell) -> None:
    waited: list[float] = []
    phone = SimPhone(seed=2, size=SIM)
    shell = FakeShell(phone, ScreenBytes(phone.screencap), PhoneFacts(), threading.Lock(), sleep=lambda s: None)
    assert shell.run("input swipe 1 1 5 5 250", Captured(), pause=waited.append) == 0
    assert waited == [0.25]


@pytest.mark.parametrize(
    "text, says",
    [
        ("Physical size: 0x0", "0x0"),
        ("Physical size: 60000x60000", "60000x60000"),
        ("Physical size: -1080x2400", "-1080x2400"),
        ("Physical size: 1080x2400\nOverride size: 1x1", "override size is 1x1"),
        ("Physical size: " + "9" * 6000 + "x5", "which no screen has"),
    ],
)
def test_wm_size_that_no_screen_has_is_a_device_error(text: str, says: str) -> None:
    with pytest.raises(DeviceError, match=says) as info:
        adbwm._parse_wm_sizes(text)
    assert "wm size" in info.value.hint


def test_wm_sizes_and_densities_that_are_real_parse() -> None:
    assert adbwm._parse_wm_sizes("Physical size: 1080x2400\nOverride size: 720x1600") == ((1080, 2400), (720, 1600))
    assert adbwm._parse_wm_sizes(f"Physical size: {MAX_SIDE}x16") == ((MAX_SIDE, 16), None)
    assert adbwm._parse_wm_sizes("Physical size: banana") == (None, None)
    assert adbwm._parse_density("Physical density: 420") == 420
    for text in ("Physical density: 0", "Physical density: 99999", "Physical density: " + "4" * 5000):
        assert adbwm._parse_density(text) is None


def test_screen_size_garbage_fails_the_connect_with_the_serial() -> None:
    fake = FakePhone(w=0, h=0)
    with pytest.raises(DeviceError, match="FAKE1: `wm size` says the physical size is 0x0"):
        make_device(fake)


@pytest.mark.parametrize("status, code", [("0", 0), ("127", 127), ("9" * 5000, -1), ("²", -1), ("-3", -1), ("", -1)])
def test_exit_status_garbage_is_not_parsed_as_a_number(status: str, code: int) -> None:
    class Said:
        def open_transport(self):
            return FakeConnection(self)  # type: ignore[arg-type]

        def serve(self, service: str) -> FakeStream:
            return FakeStream(f"out\n__PA_RC={status}\n".encode())

    assert _sh(Said(), "getprop x") == (code, "out")  # type: ignore[arg-type]


def test_read_all_stops_at_its_limit_and_sizes_from_a_checked_head() -> None:
    assert _read_all(FakeStream(b"x" * 100), ReplySize(hint=10, limit=100)) == b"x" * 100
    with pytest.raises(ReplyTooLarge, match="went on past 99 bytes"):
        _read_all(FakeStream(b"x" * 100), ReplySize(hint=10, limit=99), "shell:x")
    sized = ReplySize(head=4, sized=lambda head: (8, int(head)))
    assert _read_all(FakeStream(b"0008abcd"), sized) == b"0008abcd"
    assert _read_all(FakeStream(b"00"), sized) == b"00"  # shorter than the head: the parser says what it is
    with pytest.raises(ReplyTooLarge):
        _read_all(FakeStream(b"0006abcd"), sized)
    with pytest.raises(CaptureError, match="refused"):
        _read_all(FakeStream(b"0008abcd"), ReplySize(head=4, sized=lambda head: (_ for _ in ()).throw(CaptureError("refused"))))


def test_frame_heads_are_checked_against_the_cap_and_the_screen() -> None:
    raw = encode_raw_screencap(make_frame())
    assert raw_reply_size(raw[:12], {(W, H)}) == (len(raw), len(raw))
    with pytest.raises(CaptureError, match="60000x60000 frame, which no screen has"):
        raw_reply_size(struct.pack("<III", 60000, 60000, 1))
    with pytest.raises(CaptureError, match=f"but the phone's screen is {W}x{H}"):
        raw_reply_size(struct.pack("<III", 1000, 1000, 1), {(W, H)})
    assert raw_reply_size(b"Error: no display")[1] < 1 << 20  # text: a small allowance
    png = cv2.imencode(".png", make_frame())[1].tobytes()
    hint, most = png_reply_size(png[:24], {(W, H)})
    assert len(png) <= most < 1 << 21 and hint > 0
    with pytest.raises(CaptureError, match="9000x9000"):
        png_reply_size(png[:16] + struct.pack(">II", 9000, 9000))
    with pytest.raises(CaptureError, match="9000x9000"):
        decode_png(png[:16] + struct.pack(">II", 9000, 9000) + png[24:])  # refused before decoding


def test_a_capture_that_claims_more_than_the_screen_is_refused(phone: FakePhone) -> None:
    phone.raw_replies = [struct.pack("<IIII", 4000, 4000, 1, 1) + b"\0" * 100] * 2
    phone.png_replies = [b"\x89PNG\r\n\x1a\n" + b"\0\0\0\x0dIHDR" + struct.pack(">II", 60000, 60000)] * 2
    with pytest.raises(CaptureError, match="raw: the screencap header claims a 4000x4000 frame.*png: .*60000x60000"):
        make_device(phone).screencap()


def test_adb_server_hints_say_restart_unless_there_is_no_adb() -> None:
    lost = _map_error("server", ConnectionRefusedError(111, "refused"), "`wm size`", True, serial="S", server="h:1")
    assert isinstance(lost, AdbServerError) and "adb start-server" in lost.hint and "install" not in lost.hint
    assert "install adb" in AdbServerError.install_hint


def test_missing_adb_binary_hint_says_install(monkeypatch) -> None:
    def no_adb() -> str:
        raise AdbError("No adb exe could be found. Install adb on your system")

    monkeypatch.setattr(adbserver.adbutils, "adb_path", no_adb)
    with pytest.raises(AdbServerError) as info:
        list_devices(AdbTarget(port=free_port()))
    assert info.value.hint == AdbServerError.install_hint
    monkeypatch.setattr(adbserver.adbutils, "adb_path", lambda: "/nonexistent/adb")
    with pytest.raises(AdbServerError, match="/nonexistent/adb") as info:
        list_devices(AdbTarget(port=free_port()))
    assert "install adb" in info.value.hint


@pytest.mark.parametrize("bad", [{"max_connections": 0}, {"max_streams": -1}, {"handshake_timeout_s": 0},
                                 {"stall_timeout_s": float("nan")}, {"idle_timeout_s": -1.0}])  # fmt: skip
def test_adbd_limits_must_be_positive(bad) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Limits(**bad)


def test_deadline_reader_tells_idle_from_stalled() -> None:
    a, b = socket.socketpair()
    try:
        reader = wire.DeadlineReader(a, 1 << 20)
        with pytest.raises(wire.Idle):
            reader.next(time.monotonic() + 0.05, stall_s=5)
        packet = wire.header(wire.A_OKAY, 1, 2, b"", with_checksum=True)
        b.sendall(packet + packet[:10])
        assert reader.next(None, stall_s=5) == wire.Message(wire.A_OKAY, 1, 2)
        with pytest.raises(wire.Stalled, match="10 bytes of a 24-byte header"):
            reader.next(None, stall_s=0.05)
        b.close()
        with pytest.raises(wire.WireError, match="inside a message header"):
            reader.next(None, stall_s=5)
    finally:
        a.close()
        b.close()
