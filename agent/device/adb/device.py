"""One phone over adb (`AdbDevice`), driven within a time bound, and the choice of how
it captures the screen.

Screenshots go through the `exec:` service, text commands through `shell:`: phones
before Android 7 run `shell:` on a terminal that turns every \n of a binary frame into
\r\n, while `exec:` hands the bytes over untouched on every version.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from typing import Literal, TypeVar

import cv2
import numpy as np
from adbutils import AdbError

from agent.device.adb.calls import (
    ReplySize,
    ReplyTooLarge,
    ShellDevice,
    _bounded,
    _CallTimeout,
    _MidCommand,
    _read_service,
    _sh,
)
from agent.device.adb.devices import _connect_by_transport
from agent.device.adb.faults import _RETRY_KINDS, _classify, _map_error
from agent.device.adb.server import AdbTarget
from agent.device.adb.wm import _parse_density, _parse_rotation, _parse_wm_sizes
from agent.device.base import check_point
from agent.device.rawframe import (
    PNG_HEAD,
    RAW_HEAD,
    check_frame,
    decode_png,
    parse_raw_screencap,
    png_reply_size,
    raw_reply_size,
)
from agent.errors import AgentError, CaptureError, DeviceError, DeviceTimeoutError, GestureError

T = TypeVar("T")
CaptureMode = Literal["auto", "raw", "png"]

# Long enough for the server to notice a replugged transport, short next to a move.
RECONNECT_PAUSE_S = 0.2
MAX_SWIPE_MS = 60_000

_INPUT_HINT = (
    "the phone refused the input event: unlock the screen; on Xiaomi/MIUI also enable "
    "'USB debugging (Security settings)' in developer options"
)


class AdbDevice:
    """One phone over adb, implementing agent.device.base.Device.

    screencap, tap and swipe each finish within timeout_s (a swipe: plus its duration),
    retries and fallbacks included; connecting reads four facts, each within timeout_s.
    `connect` returns an adbutils-like device (see ShellDevice); it is called
    at the first command and again after a transient fault. Not thread-safe: drive a
    phone from one thread.

    `capture` None means the environment's PUZZLE_AGENT_CAPTURE (auto, raw or png),
    else auto: the override for a phone whose raw frames are wrong in a way no check
    can see, without a new option on every command that drives a phone.
    """

    def __init__(
        self,
        serial: str,
        target: AdbTarget | None = None,
        capture: CaptureMode | None = None,
        timeout_s: float = 10.0,
        *,
        connect: Callable[[], ShellDevice] | None = None,
    ) -> None:
        if capture is None:
            capture = _env_capture()
        if capture not in ("auto", "raw", "png"):
            raise ValueError(f"capture must be 'auto', 'raw' or 'png', not {capture!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, not {timeout_s!r}")
        self._serial = serial
        self._target = target or AdbTarget()
        self._capture = capture
        # auto decides at the first good frame; until then None.
        self._mode: Literal["raw", "png"] | None = None if capture == "auto" else capture
        self.timeout_s = timeout_s
        self._connect = connect or partial(_connect_by_transport, serial, self._target, timeout_s)
        self._dev: ShellDevice | None = None
        self._read_facts()

    # ----- facts, read once

    def _read_facts(self) -> None:
        _, model = self._text("getprop ro.product.model")
        self._model = model or self._serial
        _, size_text = self._text("wm size")
        try:
            physical, override = _parse_wm_sizes(size_text)
        except DeviceError as exc:
            raise DeviceError(f"{self._serial}: {exc}", hint=exc.hint) from None
        size = override or physical
        if size is None:
            raise DeviceError(
                f"{self._serial}: cannot read the screen size; `wm size` said {size_text!r}",
                hint="unlock the phone and check `adb shell wm size`",
            )
        self._physical: tuple[int, int] = physical or size
        self._resolution: tuple[int, int] = size
        self._density = _parse_density(self._text("wm density")[1])
        rotation = _parse_rotation(self._text("dumpsys display")[1])
        if rotation is None:
            rotation = _parse_rotation(self._text("dumpsys input")[1])
        # Unknown rotation: assume portrait; a landscape frame is then refused with a
        # message that says so rather than tapping in the wrong place.
        self._rotation = rotation or 0

    @property
    def serial(self) -> str:
        return self._serial

    @property
    def model(self) -> str:
        return self._model

    @property
    def resolution(self) -> tuple[int, int]:
        """(width, height) from `wm size` (override if set), natural orientation."""
        return self._resolution

    @property
    def density(self) -> int | None:
        return self._density

    @property
    def rotation(self) -> int:
        """0-3, quarter turns from the natural orientation, as read at connect."""
        return self._rotation

    @property
    def capture_mode(self) -> Literal["raw", "png"] | None:
        """The capture path in use; None until auto mode has seen a good frame."""
        return self._mode

    def screen_size(self) -> tuple[int, int]:
        w, h = self._resolution
        return (h, w) if self._rotation % 2 else (w, h)

    def __repr__(self) -> str:
        return f"AdbDevice({self._serial!r}, model={self._model!r}, size={self.screen_size()})"

    # ----- the one way every command goes out

    def _run(self, what: str, op: Callable[[ShellDevice], T], deadline: float, idempotent: bool = True) -> T:
        """op(device) within the deadline; one retry after a reconnect on a transient fault.

        Commands that change the phone (gestures) are retried only when they never
        reached it: repeating a swipe that did happen would make a second move.
        """
        for attempt in (1, 2):
            dev = self._dev

            def work(dev: ShellDevice | None = dev) -> tuple[ShellDevice, T]:
                d = dev if dev is not None else self._connect()
                return d, op(d)

            try:
                self._dev, result = _bounded(work, deadline)
                return result
            except _CallTimeout:
                self._dev = None
                raise DeviceTimeoutError(f"{self._serial}: {what} got no answer within {self.timeout_s:g} s") from None
            except ReplyTooLarge as exc:
                self._dev = None  # what is left of that reply is still on its way
                raise DeviceError(f"{self._serial}: {exc}", hint=exc.hint) from None
            except AgentError:
                raise
            except (AdbError, OSError, EOFError, _MidCommand) as exc:
                kind = _classify(exc)
                may_retry = idempotent or not isinstance(exc, _MidCommand)
                if kind in _RETRY_KINDS and attempt == 1 and may_retry and time.monotonic() < deadline:
                    self._dev = None  # the next attempt looks the transport up again
                    time.sleep(max(0.0, min(RECONNECT_PAUSE_S, deadline - time.monotonic())))
                    continue
                raise _map_error(
                    kind, exc, what, idempotent, serial=self._serial, server=self._target.address
                ) from exc
        raise AssertionError("unreachable")

    def _text(self, cmd: str) -> tuple[int, str]:
        return self._run(f"`{cmd}`", lambda d: _sh(d, cmd), time.monotonic() + self.timeout_s)

    # ----- capture

    def screencap(self) -> np.ndarray:
        """A validated (H, W, 3) BGR frame of the current screen, within timeout_s."""
        deadline = time.monotonic() + self.timeout_s
        if self._mode is None or (self._mode == "raw" and self._capture == "auto"):
            plan = ("raw", "png")  # auto: raw is faster, png is the fallback
        else:
            plan = (self._mode, self._mode)
        reasons = []
        for mode in plan:
            cmd = _CAPTURE_CMD[mode]
            read = partial(_read_frame, service=f"exec:{cmd}", size=self._frame_reply(mode))
            try:
                data = self._run(f"`{cmd}`", read, deadline)
                frame = parse_raw_screencap(data) if mode == "raw" else decode_png(data)
            except CaptureError as exc:
                reasons.append(f"{mode}: {exc}")
                continue
            try:
                frame = self._to_screen_pixels(frame)
                check_frame(frame, self.screen_size())
            except CaptureError as exc:
                # A black or wrong-size frame says nothing about the path, so auto mode
                # keeps undecided unless raw produced no frame at all.
                reasons.append(f"{mode}: {exc}")
                continue
            if self._mode is None:
                self._mode = "raw" if mode == "raw" or not reasons else "png"
            return frame
        raise CaptureError(f"{self._serial}: no valid screenshot ({'; '.join(reasons)})")

    def _frame_reply(self, mode: str) -> ReplySize:
        """How big a frame may be: its header decides, once it agrees with `wm size`."""
        sizes = {self._resolution, self._physical}  # some phones capture at the panel's size
        allowed = frozenset(sizes | {(h, w) for w, h in sizes})  # either orientation
        if mode == "raw":
            return ReplySize(head=RAW_HEAD, sized=partial(raw_reply_size, allowed=allowed))
        return ReplySize(head=PNG_HEAD, sized=partial(png_reply_size, allowed=allowed))

    def _to_screen_pixels(self, frame: np.ndarray) -> np.ndarray:
        # With `wm size` overridden some Android versions still capture at the panel's
        # size; scale to the override so frame pixels stay tap coordinates.
        h, w = frame.shape[:2]
        size = self.screen_size()
        pw, ph = self._physical
        physical = (ph, pw) if self._rotation % 2 else (pw, ph)
        if (w, h) != size and (w, h) == physical:
            return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
        return frame

    # ----- gestures

    def tap(self, x: int, y: int) -> None:
        self._check_point(x, y)
        self._input(f"input tap {int(x)} {int(y)}", time.monotonic() + self.timeout_s)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        self._check_point(x1, y1)
        self._check_point(x2, y2)
        if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, np.integer)):
            raise GestureError(f"swipe duration must be an integer of milliseconds, got {duration_ms!r}")
        if not 0 <= duration_ms <= MAX_SWIPE_MS:
            raise GestureError(f"swipe duration {duration_ms} ms is outside 0..{MAX_SWIPE_MS}")
        cmd = f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}"
        # `input swipe` returns only after the swipe, so its duration adds to the bound.
        self._input(cmd, time.monotonic() + self.timeout_s + duration_ms / 1000)

    def _check_point(self, x: int, y: int) -> None:
        if isinstance(x, bool) or isinstance(y, bool):  # bool is an int to isinstance
            raise GestureError(f"gesture coordinates must be integers, got ({x!r}, {y!r})")
        check_point(self.screen_size(), x, y)

    def _input(self, cmd: str, deadline: float) -> None:
        status, said = self._run(f"`{cmd}`", lambda d: _sh(d, cmd), deadline, idempotent=False)
        if said or status != 0:
            raise DeviceError(f"{self._serial}: `{cmd}` failed: {said or f'exit status {status}'}", hint=_INPUT_HINT)


_CAPTURE_CMD = {"raw": "screencap", "png": "screencap -p"}


def _read_frame(dev: ShellDevice, service: str, size: ReplySize) -> bytearray:
    try:
        return _read_service(dev, service, size)
    except ReplyTooLarge as exc:
        # A path that failed, not the phone: auto mode may still try the other one.
        raise CaptureError(str(exc)) from None


CAPTURE_ENV = "PUZZLE_AGENT_CAPTURE"


def _env_capture() -> CaptureMode:
    value = os.environ.get(CAPTURE_ENV, "").strip().lower() or "auto"
    if value not in ("auto", "raw", "png"):
        raise DeviceError(
            f"{CAPTURE_ENV}={value!r} is not a capture method",
            hint=f"set {CAPTURE_ENV} to auto, raw or png (or unset it)",
        )
    return value  # type: ignore[return-value]
