"""Apps on a phone over adb: which one is in front, and the text of the commands that
start one, parsed as Android prints them (Android 9 to 14 forms).

Package names are checked here before they reach a shell line, and quoted all the same.
"""

from __future__ import annotations

import re
import shlex

from agent.errors import DeviceError

# What Android accepts as an application id: two or more segments, each starting with
# a letter, then letters, digits or underscores.
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+")
# Longer than any package a store accepts; a line this long is a mistake, not a name.
MAX_PACKAGE_LEN = 255
# A component as `cmd package resolve-activity --brief` prints it: pkg/.Activity or pkg/pkg.Activity.
_COMPONENT = re.compile(
    r"(" + _PACKAGE.pattern + r")/(\.?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)"
)
_PACKAGE_HINT = "give the app's package name, e.g. com.example.game (`adb shell pm list packages` lists them)"


def check_package(package: str) -> str:
    """The package name, or a DeviceError when it is not one (so no text of the user's
    reaches a shell unless it is a package name)."""
    if not isinstance(package, str) or len(package) > MAX_PACKAGE_LEN or not _PACKAGE.fullmatch(package):
        shown = package[:80] if isinstance(package, str) else package
        raise DeviceError(f"{shown!r} is not an Android package name", hint=_PACKAGE_HINT)
    return package


def monkey_command(package: str) -> str:
    # One launcher intent, as tapping the app's icon sends: starts it, or brings it back.
    return f"monkey -p {shlex.quote(check_package(package))} -c android.intent.category.LAUNCHER 1"


def resolve_command(package: str) -> str:
    return (
        "cmd package resolve-activity --brief -a android.intent.action.MAIN "
        f"-c android.intent.category.LAUNCHER {shlex.quote(check_package(package))}"
    )


def am_start_command(component: str) -> str:
    return f"am start -n {shlex.quote(component)}"


def monkey_started(status: int, said: str) -> bool:
    """Did `monkey -p PKG ... 1` send its intent? It prints `Events injected: 1` when it
    did, and `** No activities found to run, monkey aborted.` (non-zero status) when the
    package is missing or has no launcher activity."""
    return status == 0 and "aborted" not in said and "Events injected: 1" in said


def resolved_component(package: str, said: str) -> str | None:
    """The launcher activity from `cmd package resolve-activity --brief`: its last line,
    `pkg/.Activity`, when it names this package; None for `No activity found`."""
    for line in reversed(said.splitlines()):
        m = _COMPONENT.fullmatch(line.strip())
        if m and m.group(1) == package:
            return m.group(0)
    return None


def am_started(status: int, said: str) -> bool:
    # `am start` prints `Error: ...` (and on old versions exits 0 all the same).
    return status == 0 and "Error" not in said and "Exception" not in said


# --------------------------------------------------------------------------- which app is in front

_RECORD = r"(?:u\d+\s+)?(" + _PACKAGE.pattern + r")/"
# In order of trust: the window with input focus names the app the user sees (an ad
# activity inside a game is the game's package); the focused app stands in when the
# focus is a system window (a notification shade, a popup) or null mid-transition.
_WINDOW_PATTERNS = (
    re.compile(r"mCurrentFocus=Window\{[0-9a-f]+\s+" + _RECORD),
    re.compile(r"mFocusedApp=.*?ActivityRecord\{[0-9a-f]+\s+" + _RECORD),
    # Android 9: mFocusedApp=AppWindowToken{... token=Token{... ActivityRecord{...}}}, on one line.
    re.compile(r"mFocusedApp=AppWindowToken\{.*?\s" + _RECORD),
)
# `dumpsys activity activities`: Android 9 mResumedActivity, 10-11 ResumedActivity, 12+ topResumedActivity.
_ACTIVITY_PATTERNS = (
    re.compile(r"topResumedActivity=ActivityRecord\{[0-9a-f]+\s+" + _RECORD),
    re.compile(r"\bmResumedActivity:\s*ActivityRecord\{[0-9a-f]+\s+" + _RECORD),
    re.compile(r"\bResumedActivity:\s*ActivityRecord\{[0-9a-f]+\s+" + _RECORD),
)


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return None


def parse_window_focus(text: str) -> str | None:
    """The package in front from `dumpsys window` (or `dumpsys window windows`); None
    when neither the focused window nor the focused app names one."""
    return _first(_WINDOW_PATTERNS, text)


def parse_resumed_activity(text: str) -> str | None:
    """The package of the resumed activity from `dumpsys activity activities`."""
    return _first(_ACTIVITY_PATTERNS, text)
