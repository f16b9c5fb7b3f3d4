"""The simulated phone's shell: the few commands adb clients send, answered like Android.

Command lines are split with `shlex` (the adb CLI single-quotes arguments, adbutils
joins them with double quotes), run in order across `;`, `&&` and `||`, with `$?`
expanding to the last exit status: adbutils appends `; echo X4EXIT:$?` to learn a
command's status over shell v1, and AdbDevice appends its own marker the same way.
Anything else answers as a phone's shell does: `<cmd>: not found`, exit status 127.

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
from dataclasses import dataclass
from typing import Callable

from agent.simphone.adbd.screen import ScreenBytes
from agent.simphone.phone import MAX_SWIPE_MS
from agent.device.base import Device
from agent.errors import GestureError

Out = Callable[[int, bytes], None]
# How `input swipe` waits for the finger to lift: returns early by raising when the
# host has gone (the stream's pause), or just sleeps (time.sleep).
Pause = Callable[[float], None]
STDOUT, STDERR = 1, 2
NOT_FOUND = 127
CANNOT_EXECUTE = 126
_OPERATORS = (";", "&&", "||")
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
# Commands a phone has that do nothing visible on the simulated game (no keys, no text field).
_INPUT_NO_OPS = ("keyevent", "text", "press", "roll", "keycombination")


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
        }

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
        status, op = 0, ";"
        for words, next_op in commands:
            if words and (op == ";" or (op == "&&") == (status == 0)):
                status = self._run_one([w.replace("$?", str(status)) for w in words], out, pause or self._sleep)
            op = next_op
        return status

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
        names = args or list(dumps)
        for name in names:
            text = dumps.get(name)
            out(STDOUT, encode(text if text is not None else f"Can't find service: {name}\n"))
        return 0

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


def _pixel(text: str) -> int:
    """A coordinate as Android's input takes it (a float), on the panel's pixel grid."""
    value = _java_float(text)
    if not math.isfinite(value):
        raise _Refused(f"Error: coordinate {text!r} is not a finite number")
    return int(round(value))
