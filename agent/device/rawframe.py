"""Turning screencap bytes into frames, and refusing anything that is not a real frame.

Pure functions (no adb), so the capture path can be tested without a phone and the
future fake phone can produce byte-exact screencap output with `encode_raw_screencap`.
Frames are (H, W, 3) uint8 BGR everywhere in the project; sizes are (width, height).

Nothing here sizes memory from what a phone claims before checking the claim: a raw
header or a PNG's IHDR beyond `MAX_SIDE`, or at odds with the screen size the phone
reported, is refused before any buffer or image of that size exists
(`raw_reply_size`, `png_reply_size`, and `decode_png` itself).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection

import cv2
import numpy as np

from agent.errors import CaptureError

RGBA_8888 = 1
# The colour-space word newer screencap writes after the format; sRGB is what phones report.
COLORSPACE_SRGB = 1
_HEADER_SIZES = (12, 16)
RAW_HEAD = _HEADER_SIZES[0]
# Bigger than any phone or tablet panel (an 8K TV is 7680x4320): a side beyond it is a
# broken or hostile phone, and a frame that big would be 256 MiB.
MAX_SIDE = 8192
# Far below any screen (a smartwatch has 240 pixels or more a side), so tests may use
# small ones; 0 or a negative side is a phone that says nonsense.
MIN_SIDE = 16
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The signature, then the IHDR chunk's length and type, then its width and height.
PNG_HEAD = 24
# An error from screencap (text where the frame should be) is a line or two.
_TEXT_LIMIT = 64 * 1024
# Phone screenshots compress to well under a byte a pixel: a first buffer of this
# much per pixel rarely grows.
_PNG_BYTES_PER_PIXEL = 0.5
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
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
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
    """`screencap -p` output -> (H, W, 3) uint8 BGR.

    The size in the PNG's header is checked before decoding: a small file can claim a
    huge image, and the decoder would allocate all of it."""
    view = memoryview(data).cast("B")
    if len(view) == 0:
        raise CaptureError("screencap -p returned no data")
    if view[: len(PNG_SIGNATURE)].tobytes() != PNG_SIGNATURE:
        raise CaptureError(f"screencap -p did not return a PNG: {_snippet(view)}")
    if len(view) < PNG_HEAD:
        raise CaptureError(f"truncated PNG: only {len(view)} bytes, not even a header")
    png_reply_size(view[:PNG_HEAD].tobytes())  # refuses a claimed size beyond the cap
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


def raw_reply_size(head: bytes, allowed: Collection[tuple[int, int]] | None = None) -> tuple[int, int]:
    """(expected, most) bytes of a raw screencap reply, from its first RAW_HEAD bytes.

    Raises CaptureError when the header claims a frame beyond MAX_SIDE or, given
    `allowed` (the (width, height) sizes the phone's screen can have), one of another
    size. Text (an error from screencap) gets a small allowance, so its words can be
    quoted by parse_raw_screencap.
    """
    if _looks_like_text(memoryview(head)[:RAW_HEAD]):
        return 4096, _TEXT_LIMIT
    width, height, fmt = struct.unpack_from("<III", head, 0)
    _check_claim("screencap header", width, height, allowed)
    if fmt != RGBA_8888:
        raise CaptureError(f"unsupported screencap pixel format {fmt} (only RGBA_8888 = 1 is handled)")
    most = width * height * 4 + _HEADER_SIZES[-1]
    return most, most


def png_reply_size(head: bytes, allowed: Collection[tuple[int, int]] | None = None) -> tuple[int, int]:
    """(expected, most) bytes of a `screencap -p` reply, from its first PNG_HEAD bytes;
    refuses a size beyond MAX_SIDE or outside `allowed`, as raw_reply_size does."""
    if head[: len(PNG_SIGNATURE)] != PNG_SIGNATURE:
        return 4096, _TEXT_LIMIT  # not a PNG: decode_png says so, quoting it
    if len(head) < PNG_HEAD or head[12:16] != b"IHDR":
        raise CaptureError("screencap -p sent a PNG that does not start with its IHDR header")
    width, height = struct.unpack_from(">II", head, 16)
    _check_claim("PNG header", width, height, allowed)
    # The worst case: 16-bit RGBA stored uncompressed (8 bytes a pixel, a filter byte a
    # row, deflate's 5 bytes per 64 KiB block), plus room for chunks such as a colour profile.
    raw = height * (1 + width * 8)
    return int(width * height * _PNG_BYTES_PER_PIXEL) + 4096, raw + raw // 1000 + (1 << 20)


def _check_claim(what: str, width: int, height: int, allowed: Collection[tuple[int, int]] | None) -> None:
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise CaptureError(
            f"the {what} claims a {width}x{height} frame, which no screen has "
            f"(each side must be 1..{MAX_SIDE} pixels)"
        )
    if allowed is not None and (width, height) not in allowed:
        sizes = " or ".join(sorted({f"{w}x{h}" for w, h in allowed}))
        raise CaptureError(f"the {what} claims a {width}x{height} frame, but the phone's screen is {sizes}")


GZIP_MAGIC = b"\x1f\x8b"
# Enough of a `screencap | gzip` reply to tell gzip from the shell's error text.
GZIP_HEAD = len(GZIP_MAGIC)


def gzip_reply_size(head: bytes, allowed: Collection[tuple[int, int]] | None = None) -> tuple[int, int]:
    """(expected, most) bytes of a `screencap | gzip` reply, from its first GZIP_HEAD bytes.

    gzip says nothing of the size it holds, so the limit is the largest raw frame the
    phone's screen allows (`allowed`, else MAX_SIDE a side) stored without compression:
    deflate's worst case adds 5 bytes per 64 KiB block, gzip a header and trailer."""
    if head[:GZIP_HEAD] != GZIP_MAGIC:
        return 4096, _TEXT_LIMIT  # the shell's words (`gzip: not found`): quoted by the decoder
    sizes = allowed if allowed else [(MAX_SIDE, MAX_SIDE)]
    raw = max(w * h for w, h in sizes) * 4 + _HEADER_SIZES[-1]
    # Phone screens compress 4x or more at level 1: a first buffer of a quarter rarely grows.
    return raw // 4 + 4096, raw + raw // 1000 + 4096


def gunzip_raw_screencap(data: Buffer, allowed: Collection[tuple[int, int]] | None = None) -> bytes:
    """`screencap | gzip` output -> the raw screencap bytes it holds, inflated no further
    than the frame its header claims (which must be one of `allowed`, when given): a
    small reply that inflates without end (a gzip bomb) is refused, not unpacked."""
    view = memoryview(data).cast("B")
    if len(view) == 0:
        raise CaptureError("screencap | gzip returned no data")
    if view[:GZIP_HEAD].tobytes() != GZIP_MAGIC:
        # The shell's error (no gzip on this phone) or screencap's, in place of the stream.
        raise CaptureError(f"screencap | gzip did not return gzip data: {_snippet(view)}")
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing only
    try:
        head = inflate.decompress(view, RAW_HEAD)
        if len(head) < RAW_HEAD:
            if not inflate.eof:
                raise CaptureError(f"truncated gzip stream: {len(view)} bytes inflate to {len(head)}")
            return head  # a stream shorter than a header: parse_raw_screencap says what it is
        _, most = raw_reply_size(head, allowed)
        rest = inflate.decompress(inflate.unconsumed_tail, most + 1 - len(head))
    except zlib.error as exc:
        raise CaptureError(f"screencap | gzip sent a broken gzip stream ({exc})") from None
    size = len(head) + len(rest)
    if size > most:
        raise CaptureError(
            f"screencap | gzip inflates past {most} bytes, more than the frame its header claims "
            "(a gzip bomb, or not a screencap)"
        )
    if not inflate.eof:
        raise CaptureError(f"truncated gzip stream: {len(view)} bytes, cut off after {size} inflated")
    if inflate.unused_data:
        raise CaptureError(f"screencap | gzip sent {len(inflate.unused_data)} bytes after the end of its stream")
    return head + rest


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
