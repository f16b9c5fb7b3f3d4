"""Reading screenshot files into the BGR frames the rest of the agent works on."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

from agent.errors import AgentError


class ImageError(AgentError):
    """A screenshot file that is missing or cannot be decoded."""

    hint = "give a PNG, JPEG, BMP or WebP screenshot (e.g. `adb exec-out screencap -p > shot.png`)"


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """The image as an (H, W, 3) uint8 BGR array: grey images are expanded, alpha dropped."""
    path = Path(path)
    if not path.exists():
        raise ImageError(f"{path}: no such file")
    if path.is_dir():
        raise ImageError(f"{path}: is a folder, not an image")
    try:
        data = np.fromfile(path, dtype=np.uint8)  # (not cv2.imread: it cannot report why it failed)
    except OSError as exc:
        raise ImageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise ImageError(f"{path}: not an image this program can decode")
    return img
