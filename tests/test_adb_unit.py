"""The adb layer without a phone: frame parsing, device choice, and AdbDevice on a fake.

The fake phone speaks the one method AdbDevice uses (`shell(cmd, stream=True)`); the
fake adb *server* at the end checks the real adbutils path against a silent phone.
The integration test needs only the adb binary (adbutils bundles one).
"""

from __future__ import annotations

import io
import os
import socket
import struct
import subprocess
import threading
import time

import cv2
import numpy as np
import pytest
from conftest import free_port
from adbutils import AdbDeviceInfo, AdbError, AdbTimeout
from adbutils.errors import AdbConnectionError

from agent.device import adb as adbmod
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


class FakePhone:
    """An adbutils-like device: answers the shell commands AdbDevice sends."""

    def __init__(self, w: int = W, h: int = H, rotation: int = 0, override: tuple[int, int] | None = None) -> None:
        self.w, self.h, self.rotation, self.override = w, h, rotation, override
        self.frame = make_frame(*self._shown_size())
        self.raw_replies: list[bytes] = []  # consumed in order; then the real frame
        self.png_replies: list[bytes] = []
        self.input_reply = ""
        self.commands: list[str] = []
        self.hang_on: str | None = None  # a command prefix that never answers
        self.release = threading.Event()
        self.fail_open: list[BaseException] = []  # raised by shell() before anything runs
        self.cut_reply_on: str | None = None  # this command's reply breaks off (dying phone)

    def _shown_size(self) -> tuple[int, int]:
        w, h = self.override or (self.w, self.h)
        return (h, w) if self.rotation % 2 else (w, h)

    def shell(self, cmdargs: str, stream: bool = False, timeout: float | None = None):
        assert stream is True, "AdbDevice must stream every command"
        self.commands.append(cmdargs)
        if self.fail_open:
            raise self.fail_open.pop(0)
        if self.hang_on and cmdargs.startswith(self.hang_on):
            self.release.wait(30)
            raise EOFError("released")
        base, marked = (cmdargs[: -len(MARK)], True) if cmdargs.endswith(MARK) else (cmdargs, False)
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


def test_auto_capture_picks_raw_when_raw_works(phone: FakePhone) -> None:
    dev = make_device(phone)
    assert dev.capture_mode is None
    frame = dev.screencap()
    np.testing.assert_array_equal(frame, phone.frame)
    assert dev.capture_mode == "raw"
    dev.screencap()
    assert phone.bases("screencap") == ["screencap", "screencap"]


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
    assert phone.bases("screencap") == ["screencap", "screencap -p", "screencap -p"]


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
    assert phone.bases("screencap") == ["screencap", "screencap", "screencap -p"]


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
    real_shell = phone.shell

    def slow_shell(cmd, stream=False, timeout=None):
        if cmd.startswith("input swipe"):
            time.sleep(0.4)  # a 400 ms swipe takes 400 ms
        return real_shell(cmd, stream=stream)

    monkeypatch.setattr(phone, "shell", slow_shell)
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
        monkeypatch.setattr(adbmod, "_open_client", lambda target, timeout_s: client)
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

    monkeypatch.setattr(adbmod.adbutils, "adb_path", no_adb)
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
                if self.phone is not None and req.startswith("shell:"):
                    stream = self.phone.shell(req[len("shell:") :], stream=True)
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
        client = adbmod._BoundedClient(AdbTarget(port=server.port), timeout_s=0.7)
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

        got = adbmod._bounded(timeout_in_call, time.monotonic() + 3.0)
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
    assert not adbmod._server_answers(AdbTarget())
    assert list_devices() == []
    assert adbmod._server_answers(AdbTarget())
