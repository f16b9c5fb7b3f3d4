"""The ways a phone can send its screen, how to tell which of them are right, and what a
screenshot costs.

Three methods, each one `exec:` command and one decoder:
- raw: `screencap`, 4 bytes a pixel (9.6 MB at 1080x2400), nothing to encode or decode;
- gzip: `screencap | gzip -1`, the raw frame compressed on the phone (fast to inflate);
- png: `screencap -p`, small, but the phone spends 300-800 ms encoding it.
Which is fastest depends on the phone's CPU and the link (USB 2, USB 3, Wi-Fi), so
auto mode times them all on the phone at hand (`AdbDevice.choose_capture`).

A method is right when its frames agree with the other methods' (`agreeing`): the three
decode independent encodings of the same screen, so one whose pixels differ from the
others' (a pixel format read wrong) is outvoted.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np

from agent.device.adb.calls import ReplySize
from agent.device.rawframe import (
    GZIP_HEAD,
    PNG_HEAD,
    RAW_HEAD,
    Buffer,
    decode_png,
    gunzip_raw_screencap,
    gzip_reply_size,
    parse_raw_screencap,
    png_reply_size,
    raw_reply_size,
)

Method = Literal["raw", "gzip", "png"]
CaptureMode = Literal["auto", "raw", "gzip", "png"]
METHODS: tuple[Method, ...] = ("raw", "gzip", "png")
CAPTURE_MODES: tuple[CaptureMode, ...] = ("auto", *METHODS)
Sizes = Collection[tuple[int, int]]


@dataclass(frozen=True)
class CaptureMethod:
    name: Method
    command: str  # run through `exec:`, which hands binary output over untouched
    reply: Callable[[Sizes], ReplySize]  # how big its reply may be, given the screen's sizes
    decode: Callable[[Buffer, Sizes], np.ndarray]  # reply -> BGR frame (CaptureError if it is not one)


def _decode_gzip(data: Buffer, allowed: Sizes) -> np.ndarray:
    return parse_raw_screencap(gunzip_raw_screencap(data, allowed))


CAPTURE_METHODS: Mapping[Method, CaptureMethod] = {
    "raw": CaptureMethod(
        "raw", "screencap",
        lambda allowed: ReplySize(head=RAW_HEAD, sized=partial(raw_reply_size, allowed=allowed)),
        lambda data, _: parse_raw_screencap(data),
    ),
    # Level 1: a phone's screen compresses 4x or more at it, in a fraction of what -p costs.
    "gzip": CaptureMethod(
        "gzip", "screencap | gzip -1",
        lambda allowed: ReplySize(head=GZIP_HEAD, sized=partial(gzip_reply_size, allowed=allowed)),
        _decode_gzip,
    ),
    "png": CaptureMethod(
        "png", "screencap -p",
        lambda allowed: ReplySize(head=PNG_HEAD, sized=partial(png_reply_size, allowed=allowed)),
        lambda data, _: decode_png(data),
    ),
}  # fmt: skip

# The shell's words for a tool the phone does not have (toybox builds without gzip).
_MISSING_TOOL = ("not found", "inaccessible or not found", "No such file")


def missing_tool(reason: str) -> bool:
    """True when a capture failed because the phone lacks the command, not the frame."""
    return any(words in reason for words in _MISSING_TOOL)


# --------------------------------------------------------------------------- agreement

# Every encoding here is lossless, so frames of one still screen are identical; the
# allowance is for a screen that moved between two captures (a wiggling tile, a
# blinking caret: a few percent of the pixels), while a pixel format read wrong (red and
# blue swapped, a stride off by a pixel) changes most of them.
_PIXEL_DIFF = 40  # 0-255 on the most different channel
_MOVED_SHARE = 0.05
# Comparing every 4th pixel both ways is 16x cheaper and sees any format error.
_STEP = 4
# When the screen moves faster than that (particles, a scrolling background), frames
# are compared by their average colour instead: motion moves pixels around but hardly
# changes it, while swapped channels on any colourful screen change it by tens of levels.
_MEAN_DIFF = 4.0


def frames_agree(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    sa, sb = a[::_STEP, ::_STEP].astype(np.int16), b[::_STEP, ::_STEP].astype(np.int16)
    moved = np.abs(sa - sb).max(axis=2) > _PIXEL_DIFF
    return float(moved.mean()) <= _MOVED_SHARE


def colours_agree(a: np.ndarray, b: np.ndarray) -> bool:
    """The looser test, for a moving screen: the same average colour, channel by channel."""
    if a.shape != b.shape:
        return False
    ma = a[::_STEP, ::_STEP].reshape(-1, 3).mean(axis=0)
    mb = b[::_STEP, ::_STEP].reshape(-1, 3).mean(axis=0)
    return float(np.abs(ma - mb).max()) <= _MEAN_DIFF


def agreeing(
    frames: Mapping[Method, np.ndarray], agree: Callable[[np.ndarray, np.ndarray], bool] = frames_agree
) -> set[Method]:
    """The methods whose frames are right: the largest group that agree with one another.

    A tie (two methods that disagree, nothing else to ask) goes to the group holding PNG:
    a PNG names its own pixel format, where a raw frame's bytes are taken on trust."""
    groups: list[set[Method]] = []
    for name, frame in frames.items():
        for group in groups:
            if all(agree(frame, frames[other]) for other in group):
                group.add(name)
                break
        else:
            groups.append({name})
    if not groups:
        return set()
    return max(groups, key=lambda g: (len(g), "png" in g))


# --------------------------------------------------------------------------- the rolling cost


class RollingCost:
    """An exponentially weighted mean of recent capture times, in ms: it follows a phone
    that slows down (heat, a busy game) within a few frames, and one slow frame (a GC
    pause) moves it by a quarter of the difference only."""

    def __init__(self, weight: float = 0.25) -> None:
        if not 0 < weight <= 1:
            raise ValueError(f"weight must be in (0, 1], not {weight!r}")
        self._weight = weight
        self._mean: float | None = None
        self.count = 0

    def add(self, ms: float) -> None:
        self.count += 1
        self._mean = ms if self._mean is None else self._mean + self._weight * (ms - self._mean)

    @property
    def ms(self) -> float:
        """The mean so far; 0.0 before any capture."""
        return self._mean if self._mean is not None else 0.0
