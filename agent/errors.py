"""The project's short error hierarchy.

Every expected failure is an `AgentError` carrying a `hint` that tells the user
how to fix it; the CLI prints `error: <message>` and the hint, and exits non-zero
without a traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class AgentError(Exception):
    """An expected failure, with a hint for the user."""

    hint: str = ""
    exit_code: int = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class NotationError(AgentError, ValueError):
    """Text that does not parse as a board (or another notation)."""

    hint = "check the board text: one line per row, letters A-H, '.' for empty"


class ProfileError(AgentError, ValueError):
    """A device profile that is missing, unreadable or invalid."""

    hint = "run `agent calibrate` to write a profile for this phone and game"


class DeviceError(AgentError):
    """Anything about reaching or driving a phone."""

    exit_code = 3


class NoDeviceError(DeviceError):
    hint = "plug in a phone with USB debugging on (check `adb devices`), or run `agent play --sim`"


class SeveralDevicesError(DeviceError):
    hint = "pick one with --serial SERIAL (or set ANDROID_SERIAL); `agent devices` lists them"


class DeviceUnauthorizedError(DeviceError):
    hint = "accept the 'Allow USB debugging?' prompt on the phone, then try again"


class DeviceOfflineError(DeviceError):
    hint = "reconnect the phone (replug USB, or `adb connect HOST:PORT` again) and retry"


class AdbServerError(DeviceError):
    """The adb server is not there, died, or refuses. Where no adb binary exists at all
    the raiser passes `install_hint` instead: restarting needs one."""

    hint = "restart the adb server: `adb kill-server`, then `adb start-server` (and check ANDROID_ADB_SERVER_PORT)"
    install_hint = "install adb (e.g. `apt-get install adb`, or `pip install adbutils`, which bundles it)"


class DeviceTimeoutError(DeviceError):
    hint = "the phone did not answer in time: unlock it, check the cable, or restart adb with `adb kill-server`"


class CaptureError(DeviceError):
    hint = "the screenshot was empty, black or the wrong size: unlock the screen and retry"


class GestureError(DeviceError, ValueError):
    hint = "gestures take integer pixel coordinates inside the screen"


class ReadError(AgentError):
    """The board could not be read with confidence, so the agent will not act."""

    exit_code = 4
    hint = "make sure the game board is visible and not covered, or recalibrate with `agent calibrate`"


class UsageError(AgentError, ValueError):
    """An option or argument the command cannot take: exit 2, as for any usage error."""

    exit_code = 2

    def __init__(self, option: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.option = option
