"""The adb transport's messages, as the device side sends and receives them.

Every message is a 24-byte header of six little-endian u32 (command, arg0, arg1, data
length, data checksum, magic = command ^ 0xFFFFFFFF) followed by the data. From
protocol version 0x01000001 on, the data checksum is not checked and may be 0.
"""

from __future__ import annotations

import select
import socket
import struct
import time
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_WRTE = 0x45545257
A_CLSE = 0x45534C43
A_SYNC = 0x434E5953
A_STLS = 0x534C5453
NAMES = {A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY", A_WRTE: "WRTE", A_CLSE: "CLSE",
         A_SYNC: "SYNC", A_STLS: "STLS"}  # fmt: skip

VERSION_MIN = 0x01000000
VERSION_SKIP_CHECKSUM = 0x01000001
VERSION = VERSION_SKIP_CHECKSUM
# What adbd has offered since Android 9; the host takes the smaller of its own and ours.
MAX_PAYLOAD = 1 << 20
# AUTH arg0 values.
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3
TOKEN_SIZE = 20

_HEADER = struct.Struct("<6I")
HEADER_SIZE = _HEADER.size


class WireError(Exception):
    """The peer sent something that is not an adb message: the connection must close."""


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return NAMES.get(self.command, f"0x{self.command:08x}")

    def __repr__(self) -> str:
        return f"Message({self.name}, {self.arg0}, {self.arg1}, {len(self.data)} bytes)"


def checksum(data: bytes | bytearray | memoryview) -> int:
    """The sum of the data's bytes, as protocol versions before 0x01000001 require."""
    if not len(data):
        return 0
    return int(np.frombuffer(data, dtype=np.uint8).sum(dtype=np.uint64)) & 0xFFFFFFFF


def header(command: int, arg0: int, arg1: int, data: bytes | bytearray | memoryview, with_checksum: bool) -> bytes:
    return _HEADER.pack(
        command, arg0, arg1, len(data), checksum(data) if with_checksum else 0, command ^ 0xFFFFFFFF
    )


def parse_header(head: bytes, max_data: int) -> tuple[int, int, int, int]:
    """A whole 24-byte header -> (command, arg0, arg1, data length); WireError if it is not one."""
    command, arg0, arg1, length, _, magic = _HEADER.unpack(head)
    if magic != command ^ 0xFFFFFFFF:
        raise WireError(f"bad magic 0x{magic:08x} for command 0x{command:08x}")
    if length > max_data:
        raise WireError(f"{NAMES.get(command, hex(command))} carries {length} bytes, more than the {max_data} allowed")
    return command, arg0, arg1, length


def read_message(reader: BinaryIO, max_data: int) -> Message | None:
    """The next message, or None when the peer closed the connection between messages."""
    head = reader.read(HEADER_SIZE)
    if not head:
        return None
    if len(head) < HEADER_SIZE:
        raise WireError(f"connection closed inside a message header ({len(head)} of {HEADER_SIZE} bytes)")
    command, arg0, arg1, length = parse_header(head, max_data)
    data = reader.read(length) if length else b""
    if len(data) < length:
        raise WireError(f"connection closed inside a message's data ({len(data)} of {length} bytes)")
    return Message(command, arg0, arg1, data)


class Idle(WireError):
    """Nothing arrived, between messages, before the deadline."""


class Stalled(WireError):
    """A message began but did not arrive whole before the deadline."""


class DeadlineReader:
    """Reads messages from a socket with deadlines: how long the peer may stay silent
    between messages, and how long one message may take once its first byte is in.

    It waits with poll() rather than socket timeouts because the socket's writers run
    on other threads, and a socket timeout would bound their sendall() too.
    """

    def __init__(self, sock: socket.socket, max_data: int, chunk: int = 256 * 1024) -> None:
        self._sock = sock
        self._max_data = max_data
        self._chunk = chunk
        self._buf = bytearray()
        fd = sock.fileno()
        if fd < 0:
            raise OSError("the connection is already closed")
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)

    def next(self, idle_deadline: float | None, stall_s: float) -> Message | None:
        """The next message; None when the peer closed between messages. Raises Idle when
        no byte of a message arrived by idle_deadline (monotonic time; None: wait for
        ever), Stalled when a message took longer than stall_s after its first byte."""
        if not self._fill(1, idle_deadline):
            return None
        until = time.monotonic() + stall_s
        if idle_deadline is not None:
            until = min(until, max(idle_deadline, time.monotonic()))
        if not self._fill(HEADER_SIZE, until):
            raise WireError(f"connection closed inside a message header ({len(self._buf)} of {HEADER_SIZE} bytes)")
        command, arg0, arg1, length = parse_header(bytes(self._buf[:HEADER_SIZE]), self._max_data)
        if not self._fill(HEADER_SIZE + length, until):
            raise WireError(
                f"connection closed inside a message's data ({len(self._buf) - HEADER_SIZE} of {length} bytes)"
            )
        data = bytes(self._buf[HEADER_SIZE : HEADER_SIZE + length])
        del self._buf[: HEADER_SIZE + length]
        return Message(command, arg0, arg1, data)

    def _fill(self, n: int, deadline: float | None) -> bool:
        """At least n bytes buffered (True), or EOF first (False); raises at the deadline."""
        while len(self._buf) < n:
            wait_ms = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000) + 1)
            if not self._poll.poll(wait_ms):
                if deadline is not None and time.monotonic() >= deadline:
                    if not self._buf:
                        raise Idle("nothing arrived in time")
                    raise Stalled(f"a message stalled after {len(self._buf)} bytes of {_describe(self._buf, n)}")
                continue
            got = self._sock.recv(max(self._chunk, n - len(self._buf)))
            if not got:
                return False
            self._buf += got
        return True


def _describe(buf: bytearray, n: int) -> str:
    if len(buf) < HEADER_SIZE:
        return f"a {HEADER_SIZE}-byte header"
    return f"a {n}-byte message ({NAMES.get(_HEADER.unpack_from(buf)[0], 'unknown command')})"
