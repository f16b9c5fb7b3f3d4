"""A simulated phone served on a TCP port as the device side of adb.

The real adb server connects to it after `adb connect 127.0.0.1:PORT` and then talks to
it exactly as to a phone with wireless debugging on: adbutils, the adb CLI and the
agent's AdbDevice all go through it unchanged.

What a host can hold is bounded (`Limits`): connections at once (extra ones are closed
at once), streams per connection, how long a connection may take to say CNXN, and how
long one message may take to arrive. An adb server that did the handshake may keep its
connection open and silent between commands for minutes, as it does with a real phone,
so by default such a connection has no idle limit: the connection cap bounds them.
"""

from __future__ import annotations

import logging
import socket
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from agent.simphone.adbd.screen import ScreenBytes
from agent.simphone.adbd.shell import FakeShell, PhoneFacts
from agent.simphone.adbd.transport import Transport
from agent.device.base import Device

# shell_v2 makes `adb shell` report exit codes; cmd is what every phone since 7 has.
# Not offered: delayed_ack (other OKAY semantics) and TLS.
DEFAULT_FEATURES = ("shell_v2", "cmd")
# How often the accept loop looks at the stop flag.
_ACCEPT_POLL_S = 0.25
_BACKLOG = 64
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """What one served phone lets its hosts hold."""

    # A phone has one adb server connected, a few while servers are restarted or tests
    # run in parallel; beyond that it is a flood.
    max_connections: int = 16
    # adb runs one stream per command; a farm worker has one or two open at a time.
    max_streams: int = 64
    # An adb server sends CNXN the moment it connects.
    handshake_timeout_s: float = 10.0
    # Once a message's first byte is in, the rest: even a slow network moves 1 MiB in it.
    stall_timeout_s: float = 20.0
    # Silence allowed between messages after the handshake; None: any (what adb needs).
    idle_timeout_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_streams"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)!r}")
        for name in ("handshake_timeout_s", "stall_timeout_s", "idle_timeout_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")


class AdbdServer:
    """Serve `phone` on host:port (port 0: any free port). Use as a context manager, or
    `start()` and `stop()`.

    `unauthorized` makes the phone refuse every key, as a phone whose user never
    accepted the prompt does; `freeze()` makes it stop answering (a hung phone) until
    `thaw()`. `limits` bounds what hosts may hold (see Limits). `latency_ms` is how long
    every screenshot takes beyond its encoding, as on a slow phone (see ScreenBytes);
    `serial_captures` makes it serve one screenshot at a time.
    """

    def __init__(
        self,
        phone: Device,
        port: int = 0,
        host: str = "127.0.0.1",
        facts: PhoneFacts | None = None,
        unauthorized: bool = False,
        features: tuple[str, ...] = DEFAULT_FEATURES,
        on_event: Callable[[str], None] | None = None,
        limits: Limits | None = None,
        latency_ms: float = 0,
        serial_captures: bool = False,
    ) -> None:
        self.phone = phone
        self.limits = limits or Limits()
        self.facts = facts or _facts_for(phone)
        self.unauthorized = unauthorized
        self.frozen = False
        self.lock = threading.Lock()  # the phone is one object; streams run in parallel
        self.screen = ScreenBytes(self._grab, latency_ms=latency_ms, serial=serial_captures)
        self.shell = FakeShell(phone, self.screen, self.facts, self.lock)
        self.banner = (
            f"device::ro.product.name={self.facts.product};ro.product.model={self.facts.model};"
            f"ro.product.device={self.facts.device};features={','.join(features)}"
        ).encode()
        self.commands = 0  # shell commands run, for the serve command's status line
        self._host = host
        self._port = port
        self._on_event = on_event
        self._listener: socket.socket | None = None
        self._transports: set[Transport] = set()
        self._threads: list[threading.Thread] = []  # one reader per connection
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._accept_thread: threading.Thread | None = None
        self.refused = 0  # connections closed because max_connections were open
        self._refusing = False

    # ----- life cycle

    def start(self) -> "AdbdServer":
        """Bind and start accepting; raises OSError when the port is taken."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A phone restarted on its port must not wait for the old connections' TIME_WAIT.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self._host, self._port))
            listener.listen(_BACKLOG)
        except OSError:
            listener.close()
            raise
        listener.settimeout(_ACCEPT_POLL_S)
        self._listener = listener
        self._port = listener.getsockname()[1]
        self._stopped.clear()
        self._accept_thread = threading.Thread(target=self._accept, name=f"adbd-{self._port}", daemon=True)
        self._accept_thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting and drop every connection, as a phone that was switched off."""
        self._stopped.set()
        if self._accept_thread is not None:
            self._accept_thread.join(5)
            self._accept_thread = None
        with self._lock:
            transports = list(self._transports)
        for transport in transports:
            transport.shutdown()
        self.screen.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until stop() (True) or the timeout (False)."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> "AdbdServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- what tests and the CLI look at

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        """host:port, which is also the phone's serial once adb has connected to it."""
        return f"{self._host}:{self._port}"

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._transports)

    def freeze(self) -> None:
        self.frozen = True

    def thaw(self) -> None:
        self.frozen = False

    # ----- called by transports

    def note(self, event: str) -> None:
        if self._on_event is not None:
            self._on_event(event)

    def count_command(self) -> None:
        with self._lock:
            self.commands += 1

    def connection_threads(self) -> int:
        """This server's connection threads still alive (a name may be shared with a server
        that had the same port before)."""
        with self._lock:
            return sum(t.is_alive() for t in self._threads)

    def forget(self, transport: Transport) -> None:
        with self._lock:
            self._transports.discard(transport)

    # ----- internals

    def _admit(self, sock: socket.socket) -> bool:
        """False (and the socket closed) when max_connections are already open; said
        once per flood, not once per connection."""
        with self._lock:
            full = len(self._transports) >= self.limits.max_connections
            first = full and not self._refusing
            self._refusing = full
            if full:
                self.refused += 1
        if full:
            _closed_at_once(sock)
        if first:
            what = f"{self.limits.max_connections} connections are open: refusing more until one closes"
            log.warning("%s: %s", self.address, what)
            self.note(what)
        return not full

    def _grab(self) -> np.ndarray:
        with self.lock:
            return self.phone.screencap()

    def _accept(self) -> None:
        listener = self._listener
        assert listener is not None
        try:
            while not self._stopped.is_set():
                try:
                    sock, _ = listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not self._admit(sock):
                    continue
                sock.settimeout(None)
                # Headers are small writes between big ones: never let Nagle hold them back.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                transport = Transport(sock, self)
                thread = threading.Thread(target=transport.run, name=f"adbd-{self._port}-conn", daemon=True)
                with self._lock:
                    self._transports.add(transport)
                    self._threads = [t for t in self._threads if t.is_alive()] + [thread]
                thread.start()
        finally:
            listener.close()


def _closed_at_once(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def _facts_for(phone: Device) -> PhoneFacts:
    product = "".join(ch if ch.isalnum() else "_" for ch in phone.model.lower())
    return PhoneFacts(model=phone.model, product=product, device=product, serial=phone.serial)
