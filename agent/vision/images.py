"""Reading screenshot files into the BGR frames the rest of the agent works on.

A file's pixel count is read from its header and checked before it is decoded: a PNG of
a few hundred KB can declare 20000 x 20000 pixels, 1.2 GB once decoded. So only the
formats whose headers are read here are taken: PNG, JPEG, BMP and WebP (screenshots are
one of these).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import cv2
import numpy as np

from agent.files import InputProblem, read_capped
from agent.errors import AgentError

# A 8K screen (7680 x 4320) is 33 million pixels; a frame is 3 bytes a pixel, and decoding
# may hold as much again.
MAX_PIXELS = 40_000_000
# What a screenshot file can reasonably weigh: an uncompressed BMP of MAX_PIXELS at 32 bits.
MAX_FILE_BYTES = 4 * MAX_PIXELS + 1024 * 1024
FORMATS = "PNG, JPEG, BMP or WebP"


class ImageError(AgentError):
    """A screenshot file that is missing, too big, or cannot be decoded."""

    hint = f"give a {FORMATS} screenshot (e.g. `adb exec-out screencap -p > shot.png`)"


class _Unsized(ValueError):
    """A header that does not say the image's size (truncated, or not an image)."""


def _png_size(data: bytes) -> tuple[int, int]:
    # The IHDR chunk comes first: length, b"IHDR", width, height (big-endian).
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise _Unsized("no IHDR chunk")
    return struct.unpack(">II", data[16:24])


# SOF markers give the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers without a length: TEM, RSTn, SOI, EOI.
_JPEG_BARE = frozenset([0x01, *range(0xD0, 0xDA)])


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise _Unsized(f"no marker at byte {i}")
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _JPEG_BARE:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _JPEG_SOF:
            if i + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            if height == 0:  # the height comes later, in a DNL marker: rare, and unsized here
                raise _Unsized("the frame header gives no height")
            return width, height
        if marker == 0xDA or length < 2:  # scan data before any frame header
            raise _Unsized("no frame header before the image data")
        i += 2 + length
    raise _Unsized("no frame header")


def _bmp_size(data: bytes) -> tuple[int, int]:
    if len(data) < 26:
        raise _Unsized("truncated header")
    (header,) = struct.unpack("<I", data[14:18])
    if header == 12:  # OS/2 BITMAPCOREHEADER: 16-bit sizes
        return struct.unpack("<HH", data[18:22])
    width, height = struct.unpack("<ii", data[18:26])
    return abs(width), abs(height)  # a negative height is a top-down bitmap


def _webp_size(data: bytes) -> tuple[int, int]:
    # RIFF chunks after b"WEBP": the canvas (VP8X) and each frame's bitstream (VP8, VP8L)
    # all have a size; the largest is what a decoder may allocate.
    sizes: list[tuple[int, int]] = []
    i = 12
    while i + 8 <= len(data):
        tag = data[i : i + 4]
        (length,) = struct.unpack("<I", data[i + 4 : i + 8])
        body = data[i + 8 : i + 8 + min(length, 30)]
        if tag == b"VP8X" and len(body) >= 10:
            sizes.append((1 + int.from_bytes(body[4:7], "little"), 1 + int.from_bytes(body[7:10], "little")))
        elif tag == b"VP8 " and len(body) >= 10:
            w, h = struct.unpack("<HH", body[6:10])
            sizes.append((w & 0x3FFF, h & 0x3FFF))
        elif tag == b"VP8L" and len(body) >= 5:
            bits = int.from_bytes(body[1:5], "little")
            sizes.append(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        i += 8 + length + (length & 1)
    if not sizes:
        raise _Unsized("no image chunk")
    return max(w for w, _ in sizes), max(h for _, h in sizes)


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) from the header, or None if the data is none of the formats
    read. Raises _Unsized when the format is known but its header does not give a size."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ("PNG", *_png_size(data))
    if data.startswith(b"\xff\xd8"):
        return ("JPEG", *_jpeg_size(data))
    if data.startswith(b"BM"):
        return ("BMP", *_bmp_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("WebP", *_webp_size(data))
    return None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, refusing folders and files bigger than any screenshot before
    reading them. Pipes are read (up to the limit): `--image <(adb exec-out screencap -p)`."""
    try:
        return read_capped(path, MAX_FILE_BYTES)
    except InputProblem as p:
        cap = f"at most {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        raise ImageError({
            "missing": f"{path}: no such file",
            "folder": f"{path}: is a folder, not an image",
            "too big": f"{path}: {'' if p.size is None else f'{p.size} bytes is '}bigger than any screenshot ({cap})",
        }.get(p.kind, f"{path}: cannot read it: {p.detail}")) from None


def _decode(data: bytes) -> np.ndarray | None:
    # OpenCV logs a damaged file's decoder error to stderr, as "[ERROR] ... error: ...":
    # the ImageError says it better, so its log is silenced for the call.
    logging = cv2.utils.logging
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT)
    try:
        return cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    finally:
        logging.setLogLevel(level)


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """The image as an (H, W, 3) uint8 BGR array: grey images are expanded, alpha dropped.
    An ImageError names the file and the problem: missing, a folder, empty, not one of
    the formats, truncated, or more than MAX_PIXELS."""
    path = Path(path)
    data = _read_bytes(path)  # (not cv2.imread: it cannot report why it failed)
    if not data:
        raise ImageError(f"{path}: the file is empty")
    try:
        sized = image_size(data)
    except (_Unsized, struct.error) as exc:
        raise ImageError(f"{path}: a damaged or truncated image header ({exc})") from None
    if sized is None:
        raise ImageError(f"{path}: not an image this program reads ({FORMATS})")
    kind, width, height = sized
    if width < 1 or height < 1:
        raise ImageError(f"{path}: the {kind} header gives a size of {width}x{height}")
    if width * height > MAX_PIXELS:
        raise ImageError(
            f"{path}: {width}x{height} is {width * height:,} pixels, more than any screen "
            f"(at most {MAX_PIXELS:,})",
            hint="give a screenshot at the phone's resolution (`adb exec-out screencap -p > shot.png`)",
        )
    img = _decode(data)
    if img is None:
        raise ImageError(f"{path}: a {kind} file that cannot be decoded (truncated or damaged?)")
    return img
