"""Stopping on a signal as cleanly as on Ctrl-C, the same in every process and layer.

`stop_on_signals()` turns SIGINT, SIGTERM and SIGHUP into `Interrupted`, a
KeyboardInterrupt that carries the signal, so every place that already stops cleanly on
Ctrl-C (the play loop, the farm, `agent sim serve`) stops cleanly on the others too, and
the process exits 128 + the signal afterwards (130, 143, 129), as a shell reports it.

Only one signal is raised: later ones are recorded, never raised, so the clean stop they
interrupt (a farm waiting for its workers, a summary being written) runs to its end;
code that waits polls `escalated()` to cut its waiting short instead. `deferred()` marks
a write that must not be cut in two (a stop line, a summary): a signal that arrives
inside is raised when it ends; `allowed()` reopens a region inside (the play loop stops
at once, however its caller defers).

Signals reach only the main thread, so only it defers; elsewhere both are no-ops.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_REASONS: dict[int, str] = {
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGTERM: "stopped by SIGTERM",
    signal.SIGHUP: "stopped by SIGHUP (the terminal closed)",
}


class Interrupted(KeyboardInterrupt):
    """A stop signal, on the same path as Ctrl-C."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        return reason(self.signum)


def signal_of(exc: BaseException) -> int:
    """The signal behind a KeyboardInterrupt (a plain one is Ctrl-C)."""
    return int(getattr(exc, "signum", signal.SIGINT))


def name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def number(signal_name: str) -> int:
    """The signal a name (as `name` writes it) stands for; SIGINT for anything else."""
    try:
        return int(signal.Signals[signal_name])
    except KeyError:
        return signal.SIGINT


def reason(signum: int) -> str:
    return _REASONS.get(signum, f"stopped by {name(signum)}")


def exit_code(signum: int) -> int:
    """The exit status after a clean stop on `signum`, as a shell reports a signal."""
    return 128 + signum


@dataclass
class StopState:
    """What this process has been sent so far."""

    received: list[int] = field(default_factory=list)
    raised: bool = False  # one Interrupted has been raised (or is pending)
    pending: int | None = None  # a signal that came inside `deferred()`, raised at its end
    redelivering: int | None = None  # a stop that was swallowed, sent again: not a second signal

    @property
    def signum(self) -> int | None:
        """The first stop signal, if any came."""
        return self.received[0] if self.received else None

    @property
    def escalated(self) -> bool:
        """A second signal came: stop waiting, end what is left."""
        return len(self.received) >= 2


_state: StopState | None = None
_modes: list[bool] = []  # innermost last: True inside deferred(), False inside allowed()


def current() -> StopState | None:
    return _state


def escalated() -> bool:
    return _state is not None and _state.escalated


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise(state: StopState, signum: int) -> None:
    state.raised, state.pending = True, None
    raise Interrupted(signum)


def _send_again(state: StopState, signum: int) -> None:
    # Only while the same stop is still owed: once the block has ended, the signal's
    # default action would kill the process.
    if _state is state and state.redelivering == signum:
        os.kill(os.getpid(), signum)


@contextmanager
def stop_on_signals(request: Callable[[], None] | None = None, graceful: tuple[int, ...] = ()) -> Iterator[StopState]:
    """Within: the first stop signal raises `Interrupted`; later ones are recorded. With
    `request`, a first signal in `graceful` calls it instead (stop after the current
    step) and the next signal raises. Re-entrant: inside another, it is that one."""
    global _state
    if _state is not None or not _main_thread():
        yield _state if _state is not None else StopState()
        return
    state = _state = StopState()

    def handle(signum: int, frame: FrameType | None) -> None:
        redelivered = state.redelivering == signum
        if redelivered:
            state.redelivering = None  # the same stop again, not a second signal
        else:
            state.received.append(signum)
        first = len(state.received) == 1 and not redelivered
        if state.raised:
            return  # recorded: `escalated()` tells whoever is waiting
        if first and request is not None and signum in graceful:
            request()
            return
        if _modes and _modes[-1]:
            state.raised, state.pending = True, signum
            return
        _raise(state, signum)

    old_hook = sys.unraisablehook

    def swallowed(unraisable: object) -> None:
        # A stop raised where Python cannot raise (a weakref callback, an import lock's
        # clean-up) is printed and dropped: it would leave the run going for ever. It is
        # sent again, in a moment, to land in ordinary code.
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, Interrupted) and _state is state and not state.pending:
            state.raised, state.redelivering = False, exc.signum
            threading.Timer(0.05, _send_again, (state, exc.signum)).start()
            return
        old_hook(unraisable)  # type: ignore[arg-type]

    previous = {s: signal.signal(s, handle) for s in STOP_SIGNALS}
    sys.unraisablehook = swallowed
    try:
        yield state
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
        sys.unraisablehook = old_hook
        _state = None


@contextmanager
def deferred() -> Iterator[None]:
    """A stop signal inside waits until the block ends, then is raised."""
    if not _main_thread():
        yield
        return
    _modes.append(True)
    try:
        yield
    finally:
        _modes.pop()
    _raise_pending()


@contextmanager
def allowed() -> Iterator[None]:
    """A stop signal inside is raised at once, even within `deferred()`; one that was
    waiting is raised on entry."""
    if not _main_thread():
        yield
        return
    _raise_pending(entering=True)
    _modes.append(False)
    try:
        yield
    finally:
        _modes.pop()


def _raise_pending(entering: bool = False) -> None:
    state = _state
    if state is None or state.pending is None:
        return
    if entering or not (_modes and _modes[-1]):
        _raise(state, state.pending)
