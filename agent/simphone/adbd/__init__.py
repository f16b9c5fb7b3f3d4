"""The simulated phone on the wire: a device-side adb endpoint (what adbd is on a phone).

`AdbdServer(phone).start()` listens on a loopback port; after `adb connect
127.0.0.1:PORT` the real adb server, the adb CLI, adbutils and the agent's AdbDevice
talk to it as to a phone. Modules: `wire` (message framing), `transport` (one adb
server's connection: handshake, streams), `streams` (flow control, shell v1/v2 and
exec services), `shell` (the commands), `screen` (screencap bytes, cached per frame),
`server` (the listener, and the `Limits` on what hosts may hold).
"""

from agent.simphone.adbd.server import DEFAULT_FEATURES, AdbdServer, Limits
from agent.simphone.adbd.shell import FakeShell, PhoneFacts

__all__ = ["AdbdServer", "DEFAULT_FEATURES", "FakeShell", "Limits", "PhoneFacts"]
