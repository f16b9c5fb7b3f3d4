"""What the phone says about its screen: `wm size`, `wm density` and the rotation in
`dumpsys display` / `dumpsys input`, parsed from their text output.

Sizes are checked here, where they are read: a phone (or something posing as one) that
says 0x0 or 60000x60000 is refused with a DeviceError, before anything sizes a frame
buffer or a tap from it.
"""

from __future__ import annotations

import re

from agent.device.rawframe import MAX_SIDE, MIN_SIDE
from agent.errors import DeviceError

_SIZE_HINT = "check `adb shell wm size` on the phone; `adb shell wm size reset` clears a wrong override"
# Longer than any real number here; int() of thousands of digits is refused by Python.
_MAX_DIGITS = 6
# What a device profile accepts as a density (dpi).
_DENSITIES = range(1, 10_001)


def _parse_wm_sizes(text: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(physical, override) from `wm size`; either may be missing. A size no screen has
    (a side outside MIN_SIDE..MAX_SIDE pixels) is a DeviceError."""

    def find(label: str) -> tuple[int, int] | None:
        m = re.search(label + r" size:\s*(-?\d+)\s*x\s*(-?\d+)", text)
        if not m:
            return None
        w, h = m.group(1), m.group(2)
        if max(len(w), len(h)) > _MAX_DIGITS or not all(MIN_SIDE <= int(v) <= MAX_SIDE for v in (w, h)):
            shown = f"{w[:12]}{'...' if len(w) > 12 else ''}x{h[:12]}{'...' if len(h) > 12 else ''}"
            raise DeviceError(
                f"`wm size` says the {label.lower()} size is {shown}, which no screen has "
                f"(each side must be {MIN_SIDE}..{MAX_SIDE} pixels)",
                hint=_SIZE_HINT,
            )
        return int(w), int(h)

    return find("Physical"), find("Override")


def _parse_density(text: str) -> int | None:
    m = re.search(r"Override density:\s*(\d+)", text) or re.search(r"Physical density:\s*(\d+)", text)
    if not m or len(m.group(1)) > _MAX_DIGITS or int(m.group(1)) not in _DENSITIES:
        return None  # only reported (and written into profiles): unknown beats absurd
    return int(m.group(1))


_ROTATION_PATTERNS = (
    # The built-in screen's viewport first: external or virtual displays may differ.
    re.compile(r"DisplayViewport\{type=INTERNAL[^}]*?orientation=([0-3])\b"),
    re.compile(r"DisplayViewport\{[^}]*?valid=true[^}]*?orientation=([0-3])\b"),
    re.compile(r"(?<![A-Za-z])orientation=([0-3])\b"),
    re.compile(r"SurfaceOrientation:\s*([0-3])\b"),
)


def _parse_rotation(text: str) -> int | None:
    for pattern in _ROTATION_PATTERNS:
        m = pattern.search(text)
        if m:
            return int(m.group(1))
    return None
