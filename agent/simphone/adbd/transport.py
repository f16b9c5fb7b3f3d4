"""One connection from an adb server to the phone: the handshake, then streams.

The reader thread parses messages and answers the cheap ones itself (OKAY for every
WRTE the host sends, stream bookkeeping); each opened stream runs its command on a
worker thread of its own, so a slow screenshot never blocks a tap on another stream.
Anything the host does wrong closes this connection, never the phone's server.

Every thread here ends when its host misbehaves: a connection that does not complete
the handshake in time, or whose message stalls half-sent, is dropped; a stream's
worker stops when its stream or connection closes; and the number of streams open at
once is capped. An adb server keeps its transport open and silent between commands
for as long as it likes, so a connection that did the handshake has no idle limit
unless the server was given one.
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import threading
import time
from typing import TYPE_CHECKING

from agent.simphone.adbd.streams import Service, Stream, StreamClosed, parse_service, run_service
from agent.simphone.adbd.wire import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_WRTE,
    AUTH_SIGNATURE,
    AUTH_TOKEN,
    MAX_PAYLOAD,
    TOKEN_SIZE,
    VERSION,
    VERSION_SKIP_CHECKSUM,
    DeadlineReader,
    Idle,
    Message,
    Stalled,
    WireError,
    header,
)

if TYPE_CHECKING:
    from agent.simphone.adbd.server import AdbdServer

log = logging.getLogger(__name__)
# Below this size a header and its data go out in one send (one copy is cheaper than
# a second system call); above it, the data is sent from where it lies.
_COALESCE = 64 * 1024


class Transport:
    def __init__(self, sock: socket.socket, server: "AdbdServer") -> None:
        self._sock = sock
        self._server = server
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._online = False
        self._version = VERSION
        self._max_data = MAX_PAYLOAD
        self._greeted = False  # the host sent CNXN: it speaks adb
        self._opened_at = time.monotonic()
        self._refused_streams = 0
        self.peer = "?"

    @property
    def frozen(self) -> bool:
        return self._server.frozen

    # ----- the reader thread

    def run(self) -> None:
        try:
            self.peer = "%s:%s" % self._sock.getpeername()[:2]
        except OSError:
            pass
        limits = self._server.limits
        try:
            reader = DeadlineReader(self._sock, MAX_PAYLOAD)
            while (msg := reader.next(self._idle_deadline(), limits.stall_timeout_s)) is not None:
                self._handle(msg)
        except Idle:
            if self._greeted:
                log.info("dropping the connection from %s: idle for %g s", self.peer, limits.idle_timeout_s)
            else:
                log.info("dropping the connection from %s: no adb handshake within %g s", self.peer,
                         limits.handshake_timeout_s)  # fmt: skip
        except Stalled as exc:
            log.warning("dropping the connection from %s: %s within %g s", self.peer, exc, limits.stall_timeout_s)
        except WireError as exc:
            log.warning("dropping the connection from %s: %s", self.peer, exc)
        except OSError:
            pass  # the host went away, or the server is stopping
        except Exception:  # a bug here costs this connection, never the phone
            log.exception("dropping the connection from %s", self.peer)
        finally:
            self.shutdown()

    def _idle_deadline(self) -> float | None:
        """Until when the host may stay silent before its next message."""
        limits = self._server.limits
        if not self._greeted:
            return self._opened_at + limits.handshake_timeout_s
        if limits.idle_timeout_s is None:
            return None
        return time.monotonic() + limits.idle_timeout_s

    def _handle(self, msg: Message) -> None:
        cmd = msg.command
        if cmd == A_CNXN:
            self._greeted = True
            self._connect(msg)
        elif cmd == A_AUTH:
            # An unauthorized phone answers every signature with a new token, as adbd
            # does for a key it does not know, and never accepts the public key: the
            # user would have to tap "Allow" on the phone.
            if self._server.unauthorized and msg.arg0 == AUTH_SIGNATURE:
                self._send_token()
        elif not self._online:
            return  # nothing but the handshake counts before it is done
        elif cmd == A_OPEN:
            self._open(msg)
        elif cmd == A_OKAY:
            stream = self._stream(msg.arg1)
            if stream is not None:
                stream.on_okay()
        elif cmd == A_WRTE:
            # Stdin and shell v2 window-size packets: acknowledged, otherwise unused.
            if self._stream(msg.arg1) is not None:
                self.send(A_OKAY, msg.arg1, msg.arg0)
        elif cmd == A_CLSE:
            with self._streams_lock:
                stream = self._streams.pop(msg.arg1, None)
            if stream is not None:
                stream.on_close()
        # Anything else (SYNC, STLS, unknown commands) is ignored, as adbd does.

    def _connect(self, msg: Message) -> None:
        self._version = min(msg.arg0, VERSION)
        self._max_data = max(1, min(msg.arg1, MAX_PAYLOAD))
        if self._server.unauthorized:
            self._send_token()
            return
        self.send(A_CNXN, VERSION, MAX_PAYLOAD, self._server.banner)
        self._online = True
        self._server.note(f"adb server at {self.peer} connected")

    def _send_token(self) -> None:
        self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(TOKEN_SIZE))

    def _open(self, msg: Message) -> None:
        if self.frozen:
            return  # a hung phone: the host waits for an answer that never comes
        # adbd reads a service name up to its first NUL, as a C string; bytes that are
        # not UTF-8 reach the command as they came (echo prints them back).
        name = msg.data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        service = parse_service(name)
        if service is None:
            self.send(A_CLSE, 0, msg.arg0)  # how adbd refuses a service it does not have
            return
        local_id = next(self._ids)
        stream = Stream(self, local_id, msg.arg0, self._max_data)
        with self._streams_lock:
            full = len(self._streams) >= self._server.limits.max_streams
            if not full:
                self._streams[local_id] = stream
        if full:
            # Refused as an unknown service is: the host's command fails, the rest go on.
            if self._refused_streams == 0:
                log.warning("%s opened more than %d streams at once: refusing the extra ones", self.peer,
                            self._server.limits.max_streams)  # fmt: skip
            self._refused_streams += 1
            self.send(A_CLSE, 0, msg.arg0)
            return
        self.send(A_OKAY, local_id, msg.arg0)
        name = name[:20].encode("utf-8", "replace").decode()  # a thread name must be printable text
        threading.Thread(target=self._work, args=(service, stream, name), name=f"adbd-{name}", daemon=True).start()

    def _stream(self, local_id: int) -> Stream | None:
        with self._streams_lock:
            return self._streams.get(local_id)

    # ----- stream workers

    def _work(self, service: Service, stream: Stream, name: str) -> None:
        try:
            self._server.count_command()
            run_service(service, stream, self._server.shell)
        except (StreamClosed, OSError):
            pass  # the host hung up: nothing left to tell it
        except Exception:  # a bug in the stream itself must not take the phone down
            log.exception("service %r failed", name)
            try:
                if not stream.closed:
                    self.send(A_CLSE, stream.local_id, stream.remote_id)
            except OSError:
                pass
        finally:
            with self._streams_lock:
                self._streams.pop(stream.local_id, None)

    # ----- sending

    def send(self, command: int, arg0: int, arg1: int, data: bytes | bytearray | memoryview = b"") -> None:
        head = header(command, arg0, arg1, data, with_checksum=self._version < VERSION_SKIP_CHECKSUM)
        with self._send_lock:
            if len(data) <= _COALESCE:
                self._send_all(head + bytes(data))
            else:
                self._send_all(head)
                self._send_all(data)

    def _send_all(self, data: bytes | bytearray | memoryview) -> None:
        """sendall() that gives up when the host takes nothing for stall_timeout_s: a host
        that stops reading would otherwise hold this thread (and the send lock) for ever."""
        view = memoryview(data).cast("B")
        stall_s = self._server.limits.stall_timeout_s
        while len(view):
            try:
                view = view[self._sock.send(view, socket.MSG_DONTWAIT) :]
                continue
            except BlockingIOError:
                pass
            fd = self._sock.fileno()
            if fd < 0:
                raise OSError("the connection is closed")
            ready = select.poll()
            ready.register(fd, select.POLLOUT)
            if not ready.poll(int(stall_s * 1000) + 1):
                log.warning("dropping the connection from %s: it took no data for %g s", self.peer, stall_s)
                self.shutdown()
                raise TimeoutError(f"{self.peer} stopped reading")

    def shutdown(self) -> None:
        """Close the connection and every stream on it (idempotent)."""
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream.on_close()
        if self._online:
            self._online = False
            self._server.note(f"adb server at {self.peer} disconnected")
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._server.forget(self)
