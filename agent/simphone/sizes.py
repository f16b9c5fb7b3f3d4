"""The screen sizes simulated phones come in, and parsing `--size WxH`."""

from __future__ import annotations

import re

SCREEN_SIZES: dict[str, tuple[int, int]] = {
    "1080x2400": (1080, 2400),  # a typical modern phone (20:9)
    "720x1280": (720, 1280),  # an older, small phone (16:9)
    "1080x1920": (1080, 1920),  # full HD (16:9)
    "1440x3200": (1440, 3200),  # a flagship at QHD+
    "1600x2560": (1600, 2560),  # a tablet (16:10)
}
DEFAULT_SIZE = SCREEN_SIZES["1080x2400"]


def parse_size(text: str) -> tuple[int, int]:
    """'1080x2400' -> (1080, 2400)."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"screen size must look like WIDTHxHEIGHT (e.g. 1080x2400), got {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (160 <= w <= 8192 and 160 <= h <= 8192):
        raise ValueError(f"screen size {w}x{h} is out of range: each side must be 160..8192 pixels")
    return w, h
