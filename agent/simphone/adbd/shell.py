"""The simulated phone's shell: the few commands adb clients send, answered like Android.

Command lines are split with `shlex` (the adb CLI single-quotes arguments, adbutils
joins them with double quotes), run in order across `;`, `&&` and `||`, with `$?`
expanding to the last exit status: adbutils appends `; echo X4EXIT:$?` to learn a
command's status over shell v1, and AdbDevice appends its own marker the same way.
One pipe is understood, into gzip (`screencap | gzip -1`, how a phone compresses its
frames before they cross the cable), and `sh -c LINE`. Anything else answers as a
phone's shell does: `<cmd>: not found`, exit status 127.

Besides the screen and touches, the phone's apps: `input keyevent` reaches the phone's
`back()` / `key(code)`, `monkey -p` and `am start -n` its `launch(package)`, and
`dumpsys window` / `dumpsys activity activities` show its `foreground()`, each printed
as Android prints it, when the phone has them (agent.device.base.AppControl).

Output goes to `out(fd, data)`: fd 1 is stdout, 2 is stderr; the service decides how
to frame them (merged for shell v1 and exec, separate packets for shell v2).

Whatever a host sends, a command answers with output and an exit status: garbage gets
an error line and a non-zero status, never an exception that would end the stream
without a word. Where Android is lenient and that is harmless (a tap off the screen,
a negative swipe duration) the phone is lenient too.
"""

from __future__ import annotations

import math
import re
import shlex
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Callable

from agent.simphone.adbd.screen import ScreenBytes, gzip_bytes
from agent.simphone.phone import MAX_SWIPE_MS
from agent.device.base import KEYCODE_BACK, Device
from agent.errors import GestureError

Out = Callable[[int, bytes], None]
# How `input swipe` waits for the finger to lift: returns early by raising when the
# host has gone (the stream's pause), or just sleeps (time.sleep).
Pause = Callable[[float], None]
STDOUT, STDERR = 1, 2
NOT_FOUND = 127
CANNOT_EXECUTE = 126
_OPERATORS = (";", "&&", "||", "|")
# `sh -c 'sh -c ...'` nests; a phone's shell would go on until memory ran out.
_MAX_SH_DEPTH = 8
# gzip's flags that change nothing on a pipe (-c: to stdout, -n: no name, -f: force).
_GZIP_FLAGS = re.compile(r"-[cnf1-9]+")
_GZIP_DEFAULT_LEVEL = 6
# The few KEYCODE_ names scripts send; `input keyevent` takes the number for any other.
_KEYCODES = {"HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
             "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "ENTER": 66,
             "DEL": 67, "MENU": 82, "ESCAPE": 111, "WAKEUP": 224, "SLEEP": 223, "APP_SWITCH": 187}  # fmt: skip
_LAUNCHER = "android.intent.category.LAUNCHER"
# The activity every simulated app is said to run (what dumpsys and resolve-activity print).
MAIN_ACTIVITY = ".MainActivity"
# `input swipe` without a duration, or with a negative one: what Android's input uses.
DEFAULT_SWIPE_MS = 300
# Linux refuses one exec argument longer than this (MAX_ARG_STRLEN), so a phone's
# `sh -c LINE` fails with "Argument list too long" beyond it.
MAX_COMMAND_BYTES = 128 * 1024
# What Java's Float.parseFloat and Integer.parseInt accept (no hex floats: nobody sends them).
_JAVA_FLOAT = re.compile(r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)")
_JAVA_INT = re.compile(r"[+-]?\d+")
_INT_MAX = 2**31 - 1
_INPUT_SOURCES = ("touchscreen", "touchpad", "touchnavigation", "stylus", "mouse", "trackball", "dpad", "keyboard",
                  "gamepad", "joystick")  # fmt: skip
# Commands a phone has that do nothing visible on the simulated game (no text field).
_INPUT_NO_OPS = ("text", "press", "roll", "keycombination")


@dataclass(frozen=True)
class PhoneFacts:
    """What the served phone says about itself (banner, getprop, wm, dumpsys)."""

    model: str = "puzzle-sim"
    product: str = "puzzle_sim"
    device: str = "puzzle_sim"
    manufacturer: str = "puzzle-agent"
    serial: str = "sim-0"
    density: int = 420
    sdk: int = 34
    release: str = "14"
    # Whether the phone's toybox has gzip (`screencap | gzip` then works); some builds lack it.
    gzip: bool = True

    def props(self) -> dict[str, str]:
        return {
            "ro.product.model": self.model,
            "ro.product.name": self.product,
            "ro.product.device": self.device,
            "ro.product.brand": self.manufacturer,
            "ro.product.manufacturer": self.manufacturer,
            "ro.product.cpu.abi": "x86_64",
            "ro.serialno": self.serial,
            "ro.build.version.sdk": str(self.sdk),
            "ro.build.version.release": self.release,
            "ro.sf.lcd_density": str(self.density),
            "sys.boot_completed": "1",
        }


def split_commands(line: str) -> list[tuple[list[str], str]]:
    """'a b; c && d' -> [(['a', 'b'], ';'), (['c'], '&&'), (['d'], ';')]: each command
    with the operator that follows it. Raises ValueError for what the shell cannot run."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    commands: list[tuple[list[str], str]] = []
    words: list[str] = []
    for token in lexer:
        if token and set(token) <= set(";&|"):
            if token not in _OPERATORS:
                raise ValueError(f"'{token}' (pipes and background jobs) is not supported by the simulated phone")
            commands.append((words, token))
            words = []
        else:
            words.append(token)
    commands.append((words, ";"))
    for i, (words, op) in enumerate(commands):
        if op != "|":
            continue
        after, then = commands[i + 1]
        if not words or not after:
            raise ValueError("a pipe needs a command on each side")
        if after[0] != "gzip" or then == "|":
            raise ValueError("pipes are supported by the simulated phone only into gzip (`screencap | gzip -1`)")
    return commands


def encode(text: str) -> bytes:
    """Text as the phone prints it: bytes that arrived as non-UTF-8 go back out as they came."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte stands for
        return text.encode("utf-8", "replace")


class _Refused(Exception):
    """An argument the command cannot take: its message is the command's error line."""


def _java_float(text: str) -> float:
    if not _JAVA_FLOAT.fullmatch(text.strip()):
        raise _Refused(f'java.lang.NumberFormatException: For input string: "{text}"')
    return float(text.strip().rstrip("fFdD").replace("Infinity", "inf"))


def _java_int(text: str) -> int:
    # The length first: int() of a few thousand digits is refused by Python itself.
    if not (_JAVA_INT.fullmatch(text) and len(text) <= 11 and -_INT_MAX - 1 <= int(text) <= _INT_MAX):
        raise _Refused(f'java.lang.NumberFormatException: For input string: "{text}"')
    return int(text)


class FakeShell:
    """Runs command lines against one phone. Thread-safe: gestures reach the phone under
    `lock`, and `screen` is expected to take the same lock to grab a frame."""

    def __init__(
        self,
        phone: Device,
        screen: ScreenBytes,
        facts: PhoneFacts,
        lock: threading.Lock,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._phone = phone
        self._screen = screen
        self._facts = facts
        self._lock = lock
        self._sleep = sleep
        self._commands: dict[str, Callable[[list[str], Out, Pause], int]] = {
            "echo": self._echo,
            "getprop": self._getprop,
            "wm": self._wm,
            "dumpsys": self._dumpsys,
            "screencap": self._screencap,
            "input": self._input,
            "sh": self._sh,
            "monkey": self._monkey,
            "am": self._am,
            "cmd": self._cmd,
            "pm": self._pm,
        }
        if facts.gzip:
            self._commands["gzip"] = self._gzip
        self._depth = threading.local()  # how deep in `sh -c` this thread is

    def run(self, line: str, out: Out, pause: Pause | None = None) -> int:
        """Run a command line; returns the exit status of the last command run.

        `pause` is how `input swipe` waits for its duration (default: the sleep given
        at construction)."""
        size = len(encode(line))
        if size > MAX_COMMAND_BYTES:
            out(STDERR, f"/system/bin/sh: the command line is {size} bytes, more than the {MAX_COMMAND_BYTES} a "
                        "phone's shell takes: Argument list too long\n".encode())  # fmt: skip
            return CANNOT_EXECUTE
        try:
            commands = split_commands(line)
        except ValueError as exc:
            out(STDERR, encode(f"/system/bin/sh: syntax error: {exc}\n"))
            return 1
        status, op, i = 0, ";", 0
        while i < len(commands):
            stages = [commands[i][0]]
            while commands[i][1] == "|":  # split_commands allows one, into gzip
                i += 1
                stages.append(commands[i][0])
            words, next_op = stages[0], commands[i][1]
            if words and (op == ";" or (op == "&&") == (status == 0)):
                expanded = [[w.replace("$?", str(status)) for w in stage] for stage in stages]
                if len(expanded) == 1:
                    status = self._run_one(expanded[0], out, pause or self._sleep)
                else:
                    status = self._pipe_into_gzip(expanded[0], expanded[1], out, pause or self._sleep)
            op = next_op
            i += 1
        return status

    def _pipe_into_gzip(self, left: list[str], gzip: list[str], out: Out, pause: Pause) -> int:
        if "gzip" not in self._commands:
            # The left side dies of SIGPIPE as soon as it writes: only the shell's word is seen.
            out(STDERR, b"/system/bin/sh: gzip: not found\n")
            return NOT_FOUND
        level = self._gzip_level(gzip[1:], out)
        if level is None:
            return 1
        if left == ["screencap"] and level == 1:
            out(STDOUT, self._screen.gzip_of(self._screen.raw()))  # cached per frame, as raw and PNG are
            return 0
        piped = bytearray()

        def into_pipe(fd: int, data: bytes) -> None:
            if fd == STDOUT:
                piped.extend(data)
            else:
                out(fd, data)

        self._run_one(left, into_pipe, pause)
        out(STDOUT, gzip_bytes(bytes(piped), level))
        return 0  # a pipeline's status is its last command's

    def _run_one(self, args: list[str], out: Out, pause: Pause) -> int:
        command = self._commands.get(args[0])
        if command is None:
            out(STDERR, encode(f"/system/bin/sh: {args[0]}: not found\n"))
            return NOT_FOUND
        try:
            return command(args[1:], out, pause)
        except _Refused as exc:
            out(STDERR, encode(f"{exc}\n"))
            return 1

    # ----- commands

    def _sh(self, args: list[str], out: Out, pause: Pause) -> int:
        if len(args) < 2 or args[0] != "-c":
            out(STDERR, b"/system/bin/sh: the simulated phone's sh runs only `sh -c COMMAND`\n")
            return 2
        depth = getattr(self._depth, "n", 0)
        if depth >= _MAX_SH_DEPTH:
            out(STDERR, f"/system/bin/sh: more than {_MAX_SH_DEPTH} nested `sh -c`\n".encode())
            return 2
        self._depth.n = depth + 1
        try:
            return self.run(args[1], out, pause)
        finally:
            self._depth.n = depth

    def _gzip_level(self, flags: list[str], out: Out) -> int | None:
        level = _GZIP_DEFAULT_LEVEL
        for flag in flags:
            if not _GZIP_FLAGS.fullmatch(flag):
                out(STDERR, encode(f"gzip: the simulated phone's gzip compresses stdin to stdout only, not {flag!r}\n"))
                return None
            digits = [c for c in flag if c.isdigit()]
            if digits:
                level = int(digits[-1])
        return level

    def _gzip(self, args: list[str], out: Out, _: Pause) -> int:
        level = self._gzip_level(args, out)
        if level is None:
            return 1
        out(STDOUT, gzip_bytes(b"", level))  # nothing comes on stdin from adb
        return 0

    def _echo(self, args: list[str], out: Out, _: Pause) -> int:
        newline = True
        if args[:1] == ["-n"]:
            args, newline = args[1:], False
        out(STDOUT, encode(" ".join(args) + ("\n" if newline else "")))
        return 0

    def _getprop(self, args: list[str], out: Out, _: Pause) -> int:
        props = self._facts.props()
        if not args:
            out(STDOUT, encode("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items()))))
        else:
            out(STDOUT, encode(props.get(args[0], args[1] if len(args) > 1 else "") + "\n"))
        return 0

    def _wm(self, args: list[str], out: Out, _: Pause) -> int:
        w, h = self._phone.screen_size()
        if args == ["size"]:
            out(STDOUT, f"Physical size: {w}x{h}\n".encode())
        elif args == ["density"]:
            out(STDOUT, f"Physical density: {self._facts.density}\n".encode())
        elif len(args) == 2 and args[0] == "size" and args[1] != "reset":
            return self._wm_resize(args[1], (w, h), out)
        elif args in (["size", "reset"], ["density", "reset"]):
            return 0  # nothing was overridden
        else:
            out(STDERR, encode(f"Error: the simulated phone's wm knows only `wm size` and `wm density`, not {args}\n"))
            return 1
        return 0

    def _wm_resize(self, size: str, current: tuple[int, int], out: Out) -> int:
        # Android's answers to a malformed size (exit status -1); a well-formed one it
        # would apply, which a simulated screen cannot.
        width, sep, height = size.partition("x")
        if not (sep and width and height):
            out(STDERR, encode(f"Error: bad size {size}\n"))
            return 255
        if not (_JAVA_INT.fullmatch(width) and _JAVA_INT.fullmatch(height)):
            out(STDERR, encode(f'Error: bad number java.lang.NumberFormatException: For input string: "{size}"\n'))
            return 255
        if (int(width), int(height)) == current:
            return 0
        out(STDERR, encode(f"Error: the simulated phone's screen is {current[0]}x{current[1]} and cannot be "
                           f"resized to {size}\n"))  # fmt: skip
        return 1
    def _dumpsys(self, args: list[str], out: Out, _: Pause) -> int:
        w, h = self._phone.screen_size()
        dumps = {
            "display": (
                "DISPLAY MANAGER (dumpsys display)\n"
                "  mSafeMode=false\n"
                "  mPendingTraversal=false\n"
                "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, "
                f"uniqueId='local:0', physicalPort=0, orientation=0, logicalFrame=Rect(0, 0 - {w}, {h}), "
                f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}]\n"
                "  Display 0:\n"
                f"    mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", displayId 0, real {w} x {h}, "
                f"rotation 0, density {self._facts.density}}}\n"
            ),
            "input": (
                "INPUT MANAGER (dumpsys input)\n\n"
                "Input Reader State:\n"
                "  Device 1: sim_touchscreen\n"
                f"    Viewport INTERNAL: displayId=0, orientation=0, deviceSize=[{w}, {h}]\n"
                "    SurfaceOrientation: 0\n"
            ),
        }
        dumps["window"] = self._dump_window()
        dumps["activity"] = self._dump_activities()
        # `dumpsys NAME ARGS...`: the arguments go to the service (`window windows`,
        # `activity activities`), which prints what it has; no name: every service.
        if not args:
            out(STDOUT, encode("".join(dumps.values())))
            return 0
        text = dumps.get(args[0])
        out(STDOUT, encode(text if text is not None else f"Can't find service: {args[0]}\n"))
        return 0

    # ----- apps

    def _app(self, name: str) -> Callable[..., object] | None:
        """The phone's AppControl method `name` (back, key, foreground, launch), if it has one."""
        method = getattr(self._phone, name, None)
        return method if callable(method) else None

    def _installed(self) -> set[str]:
        package = getattr(self._phone, "package", None)
        return {package} if isinstance(package, str) and self._app("launch") else set()

    def _in_front(self) -> str | None:
        foreground = self._app("foreground")
        if foreground is None:
            return None
        with self._lock:
            found = foreground()
        return found if isinstance(found, str) and found else None

    def _launch(self, package: str) -> None:
        launch = self._app("launch")
        assert launch is not None  # only installed packages are launched
        with self._lock:
            launch(package)

    def _dump_window(self) -> str:
        front = self._in_front()
        if front is None:
            focus = app = "null"
        else:
            token = zlib.crc32(front.encode()) & 0xFFFFFFF
            focus = f"Window{{{token:x} u0 {front}/{front}{MAIN_ACTIVITY}}}"
            app = f"ActivityRecord{{{token ^ 0x5A5A5A:x} u0 {front}/{MAIN_ACTIVITY} t12}}"
        # The tail of Android 10-14's `dumpsys window`, where the focus is.
        return (
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
            + (f"  Window #0 {focus}:\n    mDisplayId=0 rootTaskId=12 mSession=Session{{1f2e3d 4242:u0a10123}}\n"
               if front else "")
            + f"  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h890dp 420dpi nrml port}}\n"
            f"  mCurrentFocus={focus}\n"
            f"  mFocusedApp={app}\n"
        )

    def _dump_activities(self) -> str:
        front = self._in_front()
        text = "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n"
        if front is not None:
            token = (zlib.crc32(front.encode()) & 0xFFFFFFF) ^ 0x5A5A5A
            record = f"ActivityRecord{{{token:x} u0 {front}/{MAIN_ACTIVITY} t12}}"
            text += (
                f"  * Task{{3c4d5e #12 type=standard A=10123:{front} U=0 visible=true mode=fullscreen sz=1}}\n"
                f"    mResumedActivity: {record}\n"
                f"  ResumedActivity:{record}\n"
                f"  topResumedActivity={record}\n"
            )
        return text

    def _monkey(self, args: list[str], out: Out, _: Pause) -> int:
        packages = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-p"]
        lines = "".join(f"  bash arg: {a}\n" for a in args)
        out(STDOUT, encode(lines))
        if not args or not args[-1].isdigit():
            out(STDERR, b"** Error: Count not specified\nusage: monkey [-p ALLOWED_PACKAGE [-p ALLOWED_PACKAGE] ...] COUNT\n")
            return 1
        found = [p for p in packages if p in self._installed()] if packages else sorted(self._installed())
        if not found:
            out(STDOUT, b"** No activities found to run, monkey aborted.\n")
            return 1  # monkey exits non-zero when it has nothing to start
        if int(args[-1]) > 0:
            self._launch(found[0])
        out(STDOUT, encode(f"Events injected: {args[-1]}\n"
                           "## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n"))  # fmt: skip
        return 0

    def _component(self, package: str) -> str:
        return f"{package}/{MAIN_ACTIVITY}"

    def _am(self, args: list[str], out: Out, _: Pause) -> int:
        if not args or args[0] not in ("start", "start-activity"):
            out(STDERR, encode(f"Error: the simulated phone's am knows only `am start`, not {args[:1]}\n"))
            return 1
        rest = args[1:]
        component = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-n"), None)
        package = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-p"), None)
        if component is None and package is not None:
            component = self._component(package)  # the launcher activity of -p's package
        if component is None:
            out(STDERR, b"Error: the simulated phone's am start needs -n PACKAGE/ACTIVITY or -p PACKAGE\n")
            return 1
        out(STDOUT, encode(f"Starting: Intent {{ cmp={component} }}\n"))
        pkg, _slash, activity = component.partition("/")
        if pkg in self._installed() and activity in (MAIN_ACTIVITY, pkg + MAIN_ACTIVITY):
            self._launch(pkg)
            return 0
        out(STDERR, encode(f"Error type 3\nError: Activity class {{{component}}} does not exist.\n"))
        return 1

    def _cmd(self, args: list[str], out: Out, _: Pause) -> int:
        if args[:1] != ["package"]:
            out(STDERR, encode(f"cmd: Can't find service: {args[0] if args else ''}\n"))
            return 20
        return self._package_command(args[1:], out)

    def _pm(self, args: list[str], out: Out, _: Pause) -> int:
        return self._package_command(args, out)

    def _package_command(self, args: list[str], out: Out) -> int:
        if args[:1] == ["resolve-activity"]:
            words = [a for a in args[1:] if not a.startswith("-")]
            # Options with a value (-a ACTION, -c CATEGORY, --user N) leave it among the words.
            flags_with_value = {"-a", "-c", "--user", "-d", "-t"}
            values = {args[i + 2] for i, a in enumerate(args[1:-1]) if a in flags_with_value}
            names = [w for w in words if w not in values]
            package = names[-1] if names else ""
            if package in self._installed():
                out(STDOUT, encode("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n"
                                   f"{self._component(package)}\n"))  # fmt: skip
            else:
                out(STDOUT, b"No activity found\n")
            return 0
        if args[:2] == ["list", "packages"]:
            wanted = args[2] if len(args) > 2 and not args[2].startswith("-") else ""
            out(STDOUT, encode("".join(f"package:{p}\n" for p in sorted(self._installed()) if wanted in p)))
            return 0
        out(STDERR, encode(f"Error: the simulated phone's package manager knows only resolve-activity and list "
                           f"packages, not {args[:1]}\n"))  # fmt: skip
        return 1

    def _screencap(self, args: list[str], out: Out, _: Pause) -> int:
        png = False
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            if arg == "-p":
                png = True
            elif arg == "-d" and rest:
                display = rest.pop(0)
                if display != "0":
                    out(STDERR, encode(f"Display Id '{display}' is not valid.\n"))
                    return 1
            elif arg.startswith("-"):
                out(STDERR, b"usage: screencap [-hp] [-d display-id]\n")
                return 1 if arg != "-h" else 0
            else:
                out(STDERR, b"screencap: the simulated phone has no file system; print to stdout instead\n")
                return 1
        out(STDOUT, self._screen.png() if png else self._screen.raw())
        return 0

    def _input(self, args: list[str], out: Out, pause: Pause) -> int:
        if args and args[0] in _INPUT_SOURCES:
            args = args[1:]
        if args[:1] == ["-d"]:
            if len(args) < 2:
                raise _Refused("Error: -d needs a display id")
            if _java_int(args[1]) != 0:
                raise _Refused(f"Error: display {args[1]} does not exist (the simulated phone has only display 0)")
            args = args[2:]
        if not args:
            out(STDERR, b"Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n")
            return 1
        command, values = args[0], args[1:]
        if command == "keyevent":
            return self._keyevent(values, out)
        if command in _INPUT_NO_OPS:
            return 0
        if command not in ("tap", "swipe") or len(values) not in ((2,) if command == "tap" else (4, 5)):
            what = "Unknown command" if command not in ("tap", "swipe") else "Invalid arguments for command"
            out(STDERR, encode(f"Error: {what}: {command}\n"))
            return 1
        points = [_pixel(v) for v in values[:4]]
        duration_ms = _java_int(values[4]) if len(values) == 5 else DEFAULT_SWIPE_MS
        if duration_ms < 0:
            duration_ms = DEFAULT_SWIPE_MS  # as Android's input does
        if duration_ms > MAX_SWIPE_MS:
            # Refused before anything waits: a phone would hold the finger down that long.
            raise _Refused(f"Error: swipe duration {duration_ms} ms is longer than the simulated phone allows "
                           f"({MAX_SWIPE_MS} ms)")  # fmt: skip
        try:
            with self._lock:
                if command == "tap":
                    self._phone.tap(*points)
                else:
                    x1, y1, x2, y2 = points
                    self._phone.swipe(x1, y1, x2, y2, duration_ms)
        except GestureError:
            pass  # a phone drops touches outside its screen without a word
        if command == "swipe":
            # `input swipe` returns when the finger lifts; the game reacts meanwhile.
            pause(duration_ms / 1000)
        return 0


    def _keyevent(self, values: list[str], out: Out) -> int:
        codes = [v for v in values if v not in ("--longpress", "--doubletap")]
        if not codes:
            out(STDERR, b"Error: Invalid arguments for command: keyevent\n")
            return 1
        for value in codes:
            code = _keycode(value)
            back, key = self._app("back"), self._app("key")
            with self._lock:
                if code == KEYCODE_BACK and back is not None:
                    back()
                elif key is not None:
                    key(code)
                # A phone without keys of its own (a bare Device) ignores them.
        return 0


def _keycode(text: str) -> int:
    """A key as `input keyevent` takes it: a number, or a KEYCODE_ name."""
    if _JAVA_INT.fullmatch(text):
        return _java_int(text)
    name = text.upper().removeprefix("KEYCODE_")
    if name not in _KEYCODES:
        raise _Refused(f"Error: Unknown keycode: {text}")
    return _KEYCODES[name]


def _pixel(text: str) -> int:
    """A coordinate as Android's input takes it (a float), on the panel's pixel grid."""
    value = _java_float(text)
    if not math.isfinite(value):
        raise _Refused(f"Error: coordinate {text!r} is not a finite number")
    return int(round(value))
