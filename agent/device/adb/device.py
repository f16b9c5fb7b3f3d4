"""One phone over adb (`AdbDevice`), driven within a time bound: the screen (captured
by the method that is fastest on this phone, see `capture`), gestures, and the apps
(Back, which app is in front, launching one, see `apps`).

Screenshots go through the `exec:` service, text commands through `shell:`: phones
before Android 7 run `shell:` on a terminal that turns every \n of a binary frame into
\r\n, while `exec:` hands the bytes over untouched on every version.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import cv2
import numpy as np
from adbutils import AdbError

from agent.device.adb.apps import (
    am_start_command,
    am_started,
    check_package,
    monkey_command,
    monkey_started,
    parse_resumed_activity,
    parse_window_focus,
    resolve_command,
    resolved_component,
)
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
from agent.device.adb.capture import (
    CAPTURE_METHODS,
    CAPTURE_MODES,
    METHODS,
    CaptureMode,
    Method,
    RollingCost,
    agreeing,
    colours_agree,
    frames_agree,
    missing_tool,
)
from agent.device.adb.devices import _connect_by_transport
from agent.device.adb.faults import _RETRY_KINDS, _classify, _map_error
from agent.device.adb.server import AdbTarget
from agent.device.adb.wm import _parse_density, _parse_rotation, _parse_wm_sizes
from agent.device.base import KEYCODE_BACK, check_point
from agent.device.rawframe import check_frame
from agent.errors import AgentError, CaptureError, DeviceError, DeviceTimeoutError, GestureError

T = TypeVar("T")
__all__ = ["AdbDevice", "CAPTURE_ENV", "CaptureMode", "MAX_SWIPE_MS", "Method", "RECONNECT_PAUSE_S"]

# Long enough for the server to notice a replugged transport, short next to a move.
RECONNECT_PAUSE_S = 0.2
MAX_SWIPE_MS = 60_000
# Frames in a row the chosen capture method must fail (another working) before auto
# mode changes method: one bad frame says little, three say the method broke.
_SWITCH_AFTER = 3
# What choose_capture counts as equally fast: the spread of one timed capture (measured
# through the served phone: +-10% between runs at 250 ms of latency).
_TIE_SHARE = 0.10
_TIE_MS = 5.0
# Android's key codes end near 300 (KEYCODE_MACRO_4 is 316 in Android 14); room for more.
_MAX_KEYCODE = 1000

_INPUT_HINT = (
    "the phone refused the input event: unlock the screen; on Xiaomi/MIUI also enable "
    "'USB debugging (Security settings)' in developer options"
)


class AdbDevice:
    """One phone over adb, implementing agent.device.base.Device and AppControl.

    screencap, tap and swipe each finish within timeout_s (a swipe: plus its duration),
    retries and fallbacks included; connecting reads four facts, each within timeout_s.
    `connect` returns an adbutils-like device (see ShellDevice); it is called
    at the first command and again after a transient fault. Not thread-safe: drive a
    phone from one thread.

    `capture` None means the environment's PUZZLE_AGENT_CAPTURE (auto, raw, gzip or
    png), else auto: the override for a phone whose frames are wrong in a way no check
    can see, without a new option on every command that drives a phone. Auto times the
    methods at the first screenshot (`choose_capture`).
    """

    def __init__(
        self,
        serial: str,
        target: AdbTarget | None = None,
        capture: CaptureMode | None = None,
        timeout_s: float = 10.0,
        *,
        connect: Callable[[], ShellDevice] | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        if capture is None:
            capture = _env_capture()
        if capture not in CAPTURE_MODES:
            raise ValueError(f"capture must be one of {', '.join(CAPTURE_MODES)}, not {capture!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, not {timeout_s!r}")
        self._serial = serial
        self._target = target or AdbTarget()
        self._capture = capture
        # auto decides at the first screenshot; until then None.
        self._mode: Method | None = None if capture == "auto" else capture
        self._order: list[Method] = []  # the correct methods, fastest first (auto's fallbacks)
        self._report: dict[str, float | str] = {}
        self._misses = 0  # frames in a row the chosen method failed
        self._cost = RollingCost()
        self._timer: Callable[[], float] = timer
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

    # Each call opens its own connection to the adb server, so captures may overlap (the
    # play loop keeps two in flight on a slow phone: agent.play.pipeline).
    concurrent_captures = True

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
    def capture_mode(self) -> Method | None:
        """The capture method in use; None until auto mode has chosen one."""
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

    @property
    def capture_ms(self) -> float:
        """What a screenshot costs now, in ms: a weighted mean of the last ones (recent
        frames weigh most), 0.0 before the first. For timeouts and the journal."""
        return self._cost.ms

    def capture_report(self) -> dict[str, float | str]:
        """What choose_capture measured: per method, the ms of its timed capture, or why
        it cannot be used. Empty until it has run."""
        return dict(self._report)

    def screencap(self) -> np.ndarray:
        """A validated (H, W, 3) BGR frame of the current screen, within timeout_s
        (in auto mode the first call times every method first, see choose_capture)."""
        if self._mode is None:
            self.choose_capture()
        start = self._timer()
        frame = self._capture_now(self._deadline())
        self._cost.add((self._timer() - start) * 1000.0)
        return frame

    def choose_capture(self) -> Method:
        """Time every capture method on this phone and return the fastest correct one;
        auto mode then uses it (a forced mode keeps its method: this only measures).

        Each method captures twice and the second is timed: the first pays for what
        happens once (a connection, the phone's encoder waking up). A method is correct
        when it produced a valid frame that agrees with the other methods' frames
        (`agreeing`); a phone without gzip simply lacks that method. Raises CaptureError
        when no method gave a correct frame (a black or locked screen: auto mode stays
        undecided and tries again at the next screenshot), DeviceTimeoutError when the
        phone does not answer within timeout_s.
        """
        frames: dict[Method, np.ndarray] = {}
        costs: dict[Method, float] = {}
        failed: dict[Method, str] = {}
        for method in METHODS:
            try:
                self._grab(method, self._deadline())
                start = self._timer()
                frames[method] = self._grab(method, self._deadline())
                costs[method] = (self._timer() - start) * 1000.0
            except CaptureError as exc:
                reason = _reason(exc, self._serial)
                failed[method] = f"not available: {reason}" if missing_tool(reason) else reason
        right = agreeing(frames)
        if len(frames) > len(right):
            # The screen may have moved between the methods' captures: one more frame
            # each, back to back, before calling a method wrong.
            again: dict[Method, np.ndarray] = {}
            for method in frames:
                try:
                    again[method] = self._grab(method, self._deadline())
                except CaptureError:
                    pass
            if len(again) > 1:
                right |= agreeing(again)
            if any(not frames_agree(frames[m], again[m]) for m in again):
                # A method's own frames differ: the screen never holds still, and only
                # the average colour can still tell a wrong pixel format.
                right |= agreeing(frames, colours_agree)
        report: dict[str, float | str] = {}
        for method in METHODS:
            if method in failed:
                report[method] = failed[method]
            elif method in right:
                report[method] = round(costs[method], 1)
            else:
                others = " and ".join(sorted(right))
                report[method] = f"wrong: its frame differs from what {others} show (a pixel format read wrong?)"
        self._report = report
        if not right:
            said = "; ".join(f"{m}: {why}" for m, why in report.items())
            raise CaptureError(f"{self._serial}: no valid screenshot ({said})")
        by_cost = sorted(right, key=lambda m: (costs[m], METHODS.index(m)))
        # One timed capture each is noisy: costs within the band are a tie, and a tie goes
        # to the method cheapest for this computer to decode (raw, then gzip, then PNG).
        band = max(_TIE_SHARE * costs[by_cost[0]], _TIE_MS)
        pick = next(m for m in METHODS if m in right and costs[m] <= costs[by_cost[0]] + band)
        self._order = [pick] + [m for m in by_cost if m != pick]
        if self._capture == "auto":
            self._mode = self._order[0]
            self._misses = 0
        if not self._cost.count:
            self._cost.add(costs[self._order[0]])  # a first estimate before play starts
        return self._order[0]

    def _capture_now(self, deadline: float) -> np.ndarray:
        mode = self._mode
        assert mode is not None
        # Auto mode falls back, for one frame, on the other correct methods, fastest
        # first; a forced method gets a second try (a black frame is often a moment's).
        plan = [mode] + [m for m in self._order if m != mode] if self._capture == "auto" else []
        if len(plan) < 2:
            plan = [mode, mode]
        reasons = []
        for method in plan:
            try:
                frame = self._grab(method, deadline)
            except CaptureError as exc:
                reasons.append(f"{method}: {_reason(exc, self._serial)}")
                continue
            self._note_success(method)
            return frame
        raise CaptureError(f"{self._serial}: no valid screenshot ({'; '.join(reasons)})")

    def _note_success(self, method: Method) -> None:
        if method == self._mode:
            self._misses = 0
            return
        # The chosen method failed and another worked; a method that keeps failing (the
        # phone lost gzip, a new Android broke raw) gives way to the one that works.
        self._misses += 1
        if self._misses >= _SWITCH_AFTER:
            self._mode, self._misses = method, 0

    def _grab(self, method: Method, deadline: float) -> np.ndarray:
        """One frame by `method`, decoded and validated (CaptureError when it is not one)."""
        spec = CAPTURE_METHODS[method]
        allowed = self._allowed_sizes()
        read = partial(_read_frame, service=f"exec:{spec.command}", size=spec.reply(allowed))
        data = self._run(f"`{spec.command}`", read, deadline)
        frame = self._to_screen_pixels(spec.decode(data, allowed))
        check_frame(frame, self.screen_size())
        return frame

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

    def _deadline(self) -> float:
        return time.monotonic() + self.timeout_s

    def _allowed_sizes(self) -> frozenset[tuple[int, int]]:
        """The sizes a frame may have: `wm size`'s, either way up (some phones capture at
        the panel's size when `wm size` is overridden)."""
        sizes = {self._resolution, self._physical}
        return frozenset(sizes | {(h, w) for w, h in sizes})

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

    # ----- apps (agent.device.base.AppControl)

    def back(self) -> None:
        """Press Back (`input keyevent 4`)."""
        self.key(KEYCODE_BACK)

    def key(self, code: int) -> None:
        """Send one key event (an Android KEYCODE_* number)."""
        if isinstance(code, bool) or not isinstance(code, (int, np.integer)) or not 0 <= code <= _MAX_KEYCODE:
            raise GestureError(f"a key code is an integer 0..{_MAX_KEYCODE}, not {code!r}")
        self._input(f"input keyevent {int(code)}", time.monotonic() + self.timeout_s)

    def foreground(self) -> str | None:
        """The package of the app in front: the focused window or app in `dumpsys
        window`, else the resumed activity in `dumpsys activity activities` (where newer
        Android versions say it); None when neither names one (a transition, the screen
        off). Each query is bounded by timeout_s."""
        _, said = self._text("dumpsys window")
        found = parse_window_focus(said)
        if found is None:
            _, said = self._text("dumpsys activity activities")
            found = parse_resumed_activity(said)
        return found

    def launch(self, package: str) -> None:
        """Start `package`, or bring it to the front, as its launcher icon does: `monkey`
        sends the launcher intent; a phone whose monkey fails (some vendors strip it)
        gets `am start` of the activity `cmd package resolve-activity` names. A package
        that is not installed is a DeviceError saying so."""
        check_package(package)
        status, said = self._text(monkey_command(package))
        if monkey_started(status, said):
            return
        _, resolved = self._text(resolve_command(package))
        component = resolved_component(package, resolved)
        if component is None:
            raise DeviceError(
                f"{self._serial}: cannot start {package}: it is not installed, or has no launcher activity "
                f"(monkey said {_last_line(said)!r})",
                hint=f"check the package name with `adb shell pm list packages {package.rsplit('.', 1)[-1]}`, "
                "and install the game on the phone",
            )
        status, started = self._text(am_start_command(component))
        if not am_started(status, started):
            raise DeviceError(
                f"{self._serial}: `am start -n {component}` failed: {_last_line(started) or f'exit status {status}'}",
                hint="unlock the phone and start the game by hand once (some phones ask before an app starts)",
            )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _reason(exc: CaptureError, serial: str) -> str:
    said = str(exc)
    return said[len(serial) + 2 :] if said.startswith(f"{serial}: ") else said


def _read_frame(dev: ShellDevice, service: str, size: ReplySize) -> bytearray:
    try:
        return _read_service(dev, service, size)
    except ReplyTooLarge as exc:
        # A path that failed, not the phone: auto mode may still try the other one.
        raise CaptureError(str(exc)) from None


CAPTURE_ENV = "PUZZLE_AGENT_CAPTURE"


def _env_capture() -> CaptureMode:
    value = os.environ.get(CAPTURE_ENV, "").strip().lower() or "auto"
    if value not in CAPTURE_MODES:
        raise DeviceError(
            f"{CAPTURE_ENV}={value!r} is not a capture method",
            hint=f"set {CAPTURE_ENV} to {', '.join(CAPTURE_MODES[:-1])} or {CAPTURE_MODES[-1]} (or unset it)",
        )
    return value
