"""What the phone says about its screen: `wm size`, `wm density` and the rotation in
`dumpsys display` / `dumpsys input`, parsed from their text output."""

from __future__ import annotations

import re


def _parse_wm_sizes(text: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(physical, override) from `wm size`; either may be missing."""

    def find(label: str) -> tuple[int, int] | None:
        m = re.search(label + r" size:\s*(\d+)\s*x\s*(\d+)", text)
        return (int(m.group(1)), int(m.group(2))) if m else None

    return find("Physical"), find("Override")


def _parse_density(text: str) -> int | None:
    m = re.search(r"Override density:\s*(\d+)", text) or re.search(r"Physical density:\s*(\d+)", text)
    return int(m.group(1)) if m else None


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
