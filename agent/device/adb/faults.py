"""What went wrong in a call to a phone: adbutils' and the socket's exceptions sorted
into kinds, the kinds worth a retry, and each kind mapped onto agent.errors."""

from __future__ import annotations

from adbutils import AdbError, AdbTimeout
from adbutils.errors import AdbConnectionError

from agent.device.adb.calls import _MidCommand
from agent.errors import (
    AdbServerError,
    DeviceError,
    DeviceOfflineError,
    DeviceTimeoutError,
    DeviceUnauthorizedError,
    NoDeviceError,
)

# Worth one more try after looking the transport up again: a replugged phone has a new
# transport id, and a network phone the server marked offline may take `adb connect`.
_RETRY_KINDS = ("transient", "gone", "offline")


def _classify(exc: BaseException) -> str:
    """timeout, server, unauthorized, offline, gone, transient or adb (anything else adb said)."""
    cause = exc.cause if isinstance(exc, _MidCommand) else exc
    if isinstance(cause, (AdbTimeout, TimeoutError)):
        return "timeout"
    if isinstance(cause, (AdbConnectionError, ConnectionRefusedError)):
        return "server"
    if isinstance(cause, AdbError):
        msg = str(cause).lower()
        if "unauthorized" in msg:
            return "unauthorized"
        if "offline" in msg:
            return "offline"
        if "not found" in msg or "no device with transport id" in msg:
            # A replugged phone gets a new transport id: worth one fresh look-up.
            return "gone"
        if "closed" in msg or "authorizing" in msg or "connecting" in msg:
            return "transient"
        return "adb"
    return "transient"  # EOFError, connection reset, broken pipe, an aborted socket


def _map_error(
    kind: str, exc: BaseException, what: str, idempotent: bool, *, serial: str, server: str
) -> DeviceError:
    """The agent error for a fault of `kind` during `what` on phone `serial`, served by
    the adb server at address `server`."""
    cause = exc.cause if isinstance(exc, _MidCommand) else exc
    if kind == "timeout":
        return DeviceTimeoutError(f"{serial}: {what} timed out ({cause})")
    if kind == "server":
        return AdbServerError(f"lost the adb server at {server} during {what}: {cause}")
    if kind == "unauthorized":
        return DeviceUnauthorizedError(f"{serial} is unauthorized: accept the USB debugging prompt on the phone")
    if kind == "offline":
        return DeviceOfflineError(f"{serial} is offline")
    if kind == "transient":
        maybe = "" if idempotent or not isinstance(exc, _MidCommand) else "; it may or may not have happened"
        return DeviceOfflineError(f"{serial} stopped answering during {what} ({cause}){maybe}")
    if kind == "gone":
        return NoDeviceError(f"device {serial!r} not found (unplugged?)")
    return DeviceError(f"{serial}: {what} failed: adb said {cause}", hint=DeviceOfflineError.hint)
