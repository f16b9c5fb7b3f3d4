"""A stream the host opened on the phone, and the shell services that run on one.

Flow control as adbd does it: one WRTE in flight per stream (the next waits for the
host's OKAY), no WRTE larger than the transport's max payload, and small writes
coalesced so a big reply goes out in full-size packets (4 KiB packets made a raw frame
3.5x slower than 1 MiB ones).
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.simphone.adbd.shell import STDERR, FakeShell, encode
from agent.simphone.adbd.wire import A_CLSE, A_WRTE

if TYPE_CHECKING:
    from agent.simphone.adbd.transport import Transport

log = logging.getLogger(__name__)
# Shell protocol v2 packet ids.
V2_STDIN, V2_STDOUT, V2_STDERR, V2_EXIT, V2_CLOSE_STDIN, V2_WINDOW_SIZE = range(6)
_V2_HEADER = struct.Struct("<BI")


class StreamClosed(Exception):
    """The host closed the stream (or the connection went away)."""


class Stream:
    """The device's end of one stream: `write` and `close` run on the stream's worker;
    `on_okay` and `on_close` are called by the transport's reader."""

    def __init__(self, transport: "Transport", local_id: int, remote_id: int, max_data: int) -> None:
        self.local_id = local_id
        self.remote_id = remote_id
        self._transport = transport
        self._max = max_data
        self._pending = bytearray()
        self._cond = threading.Condition()
        self._in_flight = False
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def on_okay(self) -> None:
        with self._cond:
            self._in_flight = False
            self._cond.notify_all()

    def on_close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pause(self, seconds: float) -> None:
        """Wait `seconds` (a swipe holding the finger down); raises StreamClosed as soon as
        the host closes the stream or the connection goes, so no worker outlives its host."""
        until = time.monotonic() + seconds
        with self._cond:
            while not self._closed:
                left = until - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)
        raise StreamClosed()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        while len(view):
            if not self._pending and len(view) >= self._max:
                self._send(view[: self._max])  # big replies go out without a copy
                view = view[self._max :]
                continue
            room = self._max - len(self._pending)
            self._pending += view[:room]
            view = view[room:]
            if len(self._pending) == self._max:
                self._flush()

    def close(self) -> None:
        """Send what is left, wait for its OKAY, then CLSE (unless the host closed first)."""
        try:
            self._flush()
            with self._cond:
                self._wait_ready()
                self._closed = True
        except StreamClosed:
            return
        self._transport.send(A_CLSE, self.local_id, self.remote_id)

    def _flush(self) -> None:
        if self._pending:
            chunk, self._pending = self._pending, bytearray()
            self._send(chunk)

    def _wait_ready(self) -> None:
        """Until the last WRTE is acknowledged (call with the condition held)."""
        # A frozen phone (the tests' hung phone) stops sending but keeps the stream.
        while not self._closed and (self._in_flight or self._transport.frozen):
            self._cond.wait(0.1)
        if self._closed:
            raise StreamClosed()

    def _send(self, chunk: bytes | bytearray | memoryview) -> None:
        with self._cond:
            self._wait_ready()
            self._in_flight = True
        self._transport.send(A_WRTE, self.local_id, self.remote_id, chunk)


@dataclass(frozen=True)
class Service:
    """A shell service (`shell:`, `shell,v2,...:` or `exec:`): its command line, and
    whether its output is framed by the shell protocol v2."""

    command: str
    v2: bool


def parse_service(name: str) -> Service | None:
    """'shell,v2,TERM=xterm,raw:wm size' -> Service('wm size', v2=True); None when unknown.

    `exec:` and `shell:` differ on a phone only in whether a terminal is attached, and
    this phone never attaches one.
    """
    head, sep, command = name.partition(":")
    if not sep:
        return None
    if head == "exec":
        return Service(command, v2=False)
    args = head.split(",")
    if args[0] != "shell":
        return None
    return Service(command, v2="v2" in args[1:])


def run_service(service: Service, stream: Stream, shell: FakeShell) -> None:
    """The worker's whole job: run the command, frame its output, close the stream."""
    if service.v2:

        def out(fd: int, data: bytes) -> None:
            if len(data):
                stream.write(_V2_HEADER.pack(V2_STDOUT if fd != STDERR else V2_STDERR, len(data)))
                stream.write(data)

    else:

        def out(fd: int, data: bytes) -> None:
            stream.write(data)  # shell v1 and exec merge stdout and stderr, as adbd's raw mode does

    if service.command.strip():
        try:
            status = shell.run(service.command, out, pause=stream.pause)
        except (StreamClosed, OSError):
            raise  # the host went away: nobody to answer
        except Exception as exc:  # a bug in a command: say so, as a crashing phone tool would
            log.exception("command %r failed", service.command[:200])
            out(STDERR, encode(f"{service.command.split(' ', 1)[0][:100]}: the simulated phone failed: {exc!r}\n"))
            status = 1
    else:
        out(STDERR, b"the simulated phone has no interactive shell: give a command, e.g. `adb shell getprop`\n")
        status = 1
    if service.v2:
        stream.write(_V2_HEADER.pack(V2_EXIT, 1) + bytes([status & 0xFF]))
    stream.close()

