"""Calls with a hard deadline, and reading a service's whole reply from the phone.

`_bounded` runs a call on a daemon thread and gives up at its deadline; `_read_service`
runs one adb service ("shell:CMD" or "exec:CMD") through the `ShellDevice` seam
(adbutils' `open_transport()`, or a fake in the unit tests) and reads it to the end,
never past the most its `ReplySize` allows: a phone that streams without end, or whose
frame header claims a huge size, costs an error, not the computer's memory.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from adbutils import AdbConnection, AdbError, AdbTimeout

from agent.errors import DeviceError

T = TypeVar("T")

# Big reads: 1 MiB recv calls measured 10x faster than adbutils' 4 KiB loop for a frame.
_RECV_CHUNK = 1 << 20
# Expected size of a text reply, to size the read buffer.
_TEXT_HINT = 4096
# The most a text reply may be: `dumpsys display` on a phone is ~100 KB.
TEXT_LIMIT = 8 << 20
# Appended to text commands so a reply cut short by a dying phone is told apart from an
# empty one (`input` prints nothing on success; adbutils returns '' when the phone dies).
_RC_MARK = "__PA_RC="


# --------------------------------------------------------------------------- deadlines
#
# Why a worker thread per call rather than socket timeouts alone: adbutils opens the
# transport with a 600 s socket timeout of its own, may run `adb start-server` (20 s)
# when a connect fails, and opens an extra connection per command when addressed by
# serial; socket timeouts bound each recv, not the whole call. A worker thread with a
# deadline bounds everything, including code we do not control. An abandoned worker
# would still hold a socket for up to 600 s, so our client also caps every socket's
# timeout at the time left and registers it, and the caller shuts those sockets at the
# deadline: the worker then fails at once instead of lingering.
# Daemon threads, not a ThreadPoolExecutor: the interpreter joins executor threads at
# exit, so one hung phone would keep the program alive.

_local = threading.local()


class _CallTimeout(Exception):
    """The deadline passed before the worker finished."""


class _Call(Generic[T]):
    """Run `fn` on a daemon thread; `wait()` returns its result or gives up at `deadline`."""

    def __init__(self, fn: Callable[[], T], deadline: float) -> None:
        self.deadline = deadline
        self._fn = fn
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cancelled = False
        self._result: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="adb-call", daemon=True).start()

    def _run(self) -> None:
        _local.call = self
        try:
            self._result = self._fn()
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread, which decides)
            self._error = exc
        finally:
            self._done.set()

    def adopt(self, sock: socket.socket) -> None:
        """Register a socket so the deadline can shut it (called on the worker thread)."""
        with self._lock:
            if not self._cancelled:
                self._sockets.append(sock)
                return
        sock.close()
        raise AdbTimeout("call abandoned at its deadline")

    def wait(self) -> T:
        try:
            done = self._done.wait(max(0.0, self.deadline - time.monotonic()))
        except BaseException:  # a stop signal (KeyboardInterrupt) while the call is in flight
            self._cancel()  # so its socket closes now, not when the phone next answers
            raise
        if not done:
            self._cancel()
            raise _CallTimeout()
        if self._error is not None:
            raise self._error
        return cast(T, self._result)  # set: the worker finished without an error

    def _cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in the worker
            except OSError:
                pass


def _bounded(fn: Callable[[], T], deadline: float) -> T:
    return _Call(fn, deadline).wait()


# --------------------------------------------------------------------------- services


class ServiceConnection(Protocol):
    """The slice of adbutils.AdbConnection this package uses."""

    def send_command(self, cmd: str) -> None: ...

    def check_okay(self) -> None: ...

    def recv(self, n: int) -> bytes: ...

    def close(self) -> None: ...


class ShellDevice(Protocol):
    """The slice of adbutils.AdbDevice this package uses: the seam for fakes."""

    def open_transport(self) -> ServiceConnection: ...


class _MidCommand(Exception):
    """The phone accepted the command, then the reply broke off: it may have run."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _open_service(dev: ShellDevice, service: str) -> ServiceConnection:
    conn = dev.open_transport()
    try:
        conn.send_command(service)
        conn.check_okay()
    except BaseException:
        _close_stream(conn, at_eof=False)
        raise
    return conn


class ReplyTooLarge(DeviceError):
    """The phone sent more than the reply can be: a broken or hostile phone."""

    hint = "this is not how a phone answers: check that the serial is a phone (or `agent sim serve`) and retry"

    def __init__(self, service: str, limit: int, began: bytes = b"") -> None:
        # What it began with says what it is (a warning printed before a frame, a loop).
        start = began[:60].decode("utf-8", "replace")
        shown = f" (it began {start!r})" if start.isprintable() and start.strip() else ""
        super().__init__(f"the answer to `{service}` went on past {limit} bytes, more than it can be{shown}")
        self.limit = limit


@dataclass(frozen=True)
class ReplySize:
    """How much of a reply to expect (`hint`, to size the first buffer) and accept at
    most (`limit`). With `sized`, the reply's first `head` bytes decide both instead
    (it may raise): a frame's header says how big the frame is, and is checked before
    a buffer that big exists."""

    hint: int = _TEXT_HINT
    limit: int = TEXT_LIMIT
    head: int = 0
    sized: Callable[[bytes], tuple[int, int]] | None = None


def _read_service(dev: ShellDevice, service: str, size: ReplySize = ReplySize()) -> bytearray:
    """Run a service ("shell:CMD" or "exec:CMD") and read its whole output."""
    stream = _open_service(dev, service)  # a failure here: the command never started
    at_eof = False
    try:
        data = _read_all(stream, size, service)
        at_eof = True
        return data
    except (AdbError, OSError, EOFError) as exc:
        raise _MidCommand(exc) from exc
    finally:
        _close_stream(stream, at_eof)


RecvInto = Callable[[memoryview], int]


def _receiver(stream: ServiceConnection) -> RecvInto:
    if isinstance(stream, AdbConnection):
        # From adbutils' socket straight into our buffer: no 1 MiB bytes object per call.
        return cast(RecvInto, stream.conn.recv_into)

    def recv_into(view: memoryview) -> int:
        chunk = stream.recv(min(len(view), _RECV_CHUNK))
        view[: len(chunk)] = chunk
        return len(chunk)

    return recv_into


def _read_all(stream: ServiceConnection, size: ReplySize, service: str = "?") -> bytearray:
    """Everything until EOF, in linear time (adbutils' own loop is quadratic), into one
    buffer sized for the expected reply and grown, by doubling, up to its limit."""
    recv_into = _receiver(stream)
    hint, limit, n = size.hint, size.limit, 0
    if size.sized is not None and size.head > 0:
        head = bytearray(size.head)
        while n < size.head:
            got = recv_into(memoryview(head)[n:])
            if not got:
                del head[n:]
                return head  # shorter than any header: the parser says what it is
            n += got
        hint, limit = size.sized(bytes(head))
        buf = bytearray(max(min(hint, limit), n) + 1)  # +1: the end is seen without growing
        buf[:n] = head
    else:
        buf = bytearray(min(hint, limit) + 1)
    while True:
        if n == len(buf):
            if n > limit:
                raise ReplyTooLarge(service, limit, bytes(buf[:60]))
            buf.extend(bytes(min(len(buf), limit + 1 - len(buf))))
        got = recv_into(memoryview(buf)[n:])
        if not got:
            break
        n += got
    if n > limit:
        raise ReplyTooLarge(service, limit, bytes(buf[:60]))
    del buf[n:]
    return buf


def _close_stream(stream: Any, at_eof: bool) -> None:
    if at_eof and isinstance(stream, AdbConnection):
        # AdbConnection.close() half-closes and sleeps 10 ms so unsent data can drain;
        # after EOF nothing is in flight, so closing the socket saves 10 ms per command.
        try:
            stream.conn.close()
            return
        except (AdbError, OSError):
            pass
    try:
        stream.close()
    except (AdbError, OSError):
        pass


def _sh(dev: ShellDevice, cmd: str) -> tuple[int, str]:
    """Run a text command: (exit status, output with surrounding whitespace stripped)."""
    out = _read_service(dev, f"shell:{cmd}; echo {_RC_MARK}$?").decode("utf-8", "replace")
    at = out.rfind(_RC_MARK)
    if at < 0:
        raise _MidCommand(EOFError(f"the reply to `{cmd}` broke off ({len(out)} bytes, no exit status)"))
    status = out[at + len(_RC_MARK) :].strip()
    # An exit status is 0..255; anything else is a garbled reply, not a number to parse.
    number = status.isascii() and status.isdigit() and len(status) <= 3
    return (int(status) if number else -1), out[:at].strip()
