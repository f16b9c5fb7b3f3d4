"""Turning screencap bytes into frames, and refusing anything that is not a real frame.

Pure functions (no adb), so the capture path can be tested without a phone and the
future fake phone can produce byte-exact screencap output with `encode_raw_screencap`.
Frames are (H, W, 3) uint8 BGR everywhere in the project; sizes are (width, height).
"""

from __future__ import annotations

import struct

import cv2
import numpy as np

from agent.errors import CaptureError

RGBA_8888 = 1
# The colour-space word newer screencap writes after the format; sRGB is what phones report.
COLORSPACE_SRGB = 1
_HEADER_SIZES = (12, 16)
# Bigger than any phone panel; a "width" beyond it means the bytes are not a header.
_MAX_SIDE = 16384
# adb hands back an all-zero buffer when capture fails (screen off, secure window),
# and near-zero noise on some GPUs, so "black" means the brightest pixel is still dark.
BLACK_MAX = 10

Buffer = bytes | bytearray | memoryview


def parse_raw_screencap(data: Buffer, expect: tuple[int, int] | None = None) -> np.ndarray:
    """Raw `screencap` output -> (H, W, 3) uint8 BGR.

    `expect` is (width, height); a frame of another size is rejected.
    """
    view = memoryview(data).cast("B")
    n = len(view)
    if n == 0:
        raise CaptureError("screencap returned no data")
    if _looks_like_text(view[:_HEADER_SIZES[0]]):
        # Errors from screencap (or the shell) arrive as text on the same stream.
        raise CaptureError(f"screencap did not return a frame: {_snippet(view)}")
    if n < _HEADER_SIZES[0]:
        raise CaptureError(f"truncated screencap: only {n} bytes, not even a header")
    width, height, fmt = struct.unpack_from("<III", view, 0)
    if not (0 < width <= _MAX_SIDE and 0 < height <= _MAX_SIDE):
        raise CaptureError(f"screencap header has an impossible size {width}x{height}")
    if fmt != RGBA_8888:
        raise CaptureError(f"unsupported screencap pixel format {fmt} (only RGBA_8888 = 1 is handled)")
    pixels = width * height * 4
    header = n - pixels
    if header < _HEADER_SIZES[-1] and header not in _HEADER_SIZES:
        # 13-15 bytes too: a 16-byte header frame that lost its last bytes.
        raise CaptureError(
            f"truncated screencap: {n} bytes for a {width}x{height} frame "
            f"(needs {pixels + _HEADER_SIZES[0]} or {pixels + _HEADER_SIZES[1]})"
        )
    if header not in _HEADER_SIZES:
        raise CaptureError(
            f"screencap has {header - _HEADER_SIZES[1]} unexpected trailing bytes after a {width}x{height} frame"
        )
    if expect is not None and (width, height) != tuple(expect):
        raise CaptureError(f"frame is {width}x{height}, expected {expect[0]}x{expect[1]}")
    rgba = np.frombuffer(view, dtype=np.uint8, count=pixels, offset=header).reshape(height, width, 4)
    return cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR)


def decode_png(data: Buffer) -> np.ndarray:
    """`screencap -p` output -> (H, W, 3) uint8 BGR."""
    view = memoryview(data).cast("B")
    if len(view) == 0:
        raise CaptureError("screencap -p returned no data")
    img: np.ndarray | None = cv2.imdecode(np.frombuffer(view, dtype=np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None or img.size == 0:
        raise CaptureError(f"screencap -p did not return a decodable PNG: {_snippet(view)}")
    if img.dtype == np.uint16:
        # 16-bit PNGs exist (HDR screens); the readers work on 8 bits.
        img = (img >> 8).astype(np.uint8)
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 4:
        # Phones send RGBA; OpenCV already decoded it as BGRA, so one conversion remains.
        return cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
    if img.shape[2] == 3:
        return img
    raise CaptureError(f"PNG has {img.shape[2]} channels, expected 3 or 4")


def check_frame(frame: np.ndarray | None, expect: tuple[int, int] | None) -> None:
    """Reject what adb returns when capture failed: nothing, the wrong size, or black.

    `expect` is (width, height), or None to skip the size check.
    """
    if frame is None or frame.size == 0:
        raise CaptureError("the frame is empty")
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise CaptureError(f"the frame is not an HxWx3 uint8 image (shape {frame.shape}, {frame.dtype})")
    h, w = frame.shape[:2]
    if expect is not None and (w, h) != tuple(expect):
        hint = " (did the phone rotate?)" if (h, w) == tuple(expect) else ""
        raise CaptureError(f"frame is {w}x{h}, expected {expect[0]}x{expect[1]}{hint}")
    if int(frame.max()) <= BLACK_MAX:
        raise CaptureError("the frame is all black (screen off, locked, or a protected window)")


def encode_raw_screencap(frame_bgr: np.ndarray, with_colorspace: bool = True) -> bytes:
    """A BGR frame -> the bytes `screencap` would print (for tests and the fake phone)."""
    if frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3 or frame_bgr.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 BGR frame, got {frame_bgr.shape} {frame_bgr.dtype}")
    h, w = frame_bgr.shape[:2]
    header = struct.pack("<III", w, h, RGBA_8888)
    if with_colorspace:
        header += struct.pack("<I", COLORSPACE_SRGB)
    rgba = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2RGBA)
    return header + rgba.tobytes()


def _looks_like_text(head: memoryview) -> bool:
    # A real header starts with a little-endian width, which always holds zero bytes.
    return all(b in b"\t\n\r" or 32 <= b < 127 for b in head.tobytes())


def _snippet(view: memoryview, limit: int = 120) -> str:
    text = view[:limit].tobytes().decode("utf-8", errors="replace").strip()
    return repr(text) if text else f"{len(view)} bytes"
