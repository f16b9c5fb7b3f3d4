"""The served phone's screen as `screencap` prints it, encoded once per distinct frame.

A phone pays for its own screenshots; the simulated one would pay ~2 ms to render a
frame, ~2 ms to turn it into raw RGBA and ~75 ms to encode an RGBA PNG at 1080x2400.
The play loop and the benchmark mostly look at a screen that is not changing, so the
encoded bytes of the last few distinct frames are kept: a repeated frame costs only
its render and one comparison (~2 ms), and the benchmark measures the adb path rather
than OpenCV's PNG encoder. A changing screen still pays the full cost each frame.

All rendering and encoding runs on one long-lived thread, as a phone has one display
pipeline: the same render took ~25 ms on a fresh thread (OpenCV sets up its fonts per
thread, and a new thread's first big arrays fault their pages in) against ~1.5 ms on a
warm one, and every stream gets a thread of its own.

A real phone also takes its time: `latency_ms` is how long every screenshot waits
after the frame was grabbed and before it is answered (the frame is the one at the
start, as a phone's is), for raw, PNG and gzip alike; the wait happens on the asking
stream's thread, so screenshots from several hosts overlap as they do on a phone.
Some phones serve one screenshot at a time: with `serial`, a screenshot waits for the
one before it to be answered (its grab and its wait), so two askers take twice as long.

`screencap | gzip` is gzip of what `raw()` answers (`gzip_of`), kept for the last few
distinct raw replies, so the pipe costs a repeated frame nothing either.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Literal

import cv2
import numpy as np

from agent.device.rawframe import encode_raw_screencap

Format = Literal["raw", "png"]
# Phones send RGBA PNGs; level 1 is what fast encoders on phones trade size for speed at.
_PNG_PARAMS = [cv2.IMWRITE_PNG_COMPRESSION, 1]


def encode_png_rgba(frame_bgr: np.ndarray) -> bytes:
    """A BGR frame -> the RGBA PNG a phone's `screencap -p` prints."""
    ok, png = cv2.imencode(".png", cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2BGRA), _PNG_PARAMS)
    if not ok:  # pragma: no cover - OpenCV only fails on impossible images
        raise RuntimeError("PNG encoding failed")
    return png.tobytes()


def gzip_bytes(data: bytes, level: int = 1) -> bytes:
    """What `gzip -LEVEL` prints for `data` (one member, no file name, as from a pipe)."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@dataclass
class _Entry:
    frame: np.ndarray
    encoded: dict[str, bytes] = field(default_factory=dict)


class ScreenBytes:
    """`grab()` returns the phone's current frame; `raw()` / `png()` its encoded bytes,
    each answered `latency_ms` after the frame was grabbed (waited with `sleep`)."""

    def __init__(
        self,
        grab: Callable[[], np.ndarray],
        keep: int = 4,
        latency_ms: float = 0,
        sleep: Callable[[float], None] = time.sleep,
        serial: bool = False,
    ) -> None:
        if not (latency_ms >= 0 and latency_ms < float("inf")):
            raise ValueError(f"latency_ms must be a finite number >= 0, not {latency_ms!r}")
        self._grab = grab
        self._keep = keep
        self.latency_ms = float(latency_ms)
        self._sleep = sleep
        self.serial = bool(serial)
        self._serial_lock = threading.Lock()
        self._gzipped: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()  # id(raw) -> (raw, gzip)
        self._gzip_lock = threading.Lock()
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next_key = 0
        self._display: ThreadPoolExecutor | None = None
        self._display_lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def raw(self) -> bytes:
        return self._answer("raw")

    def png(self) -> bytes:
        return self._answer("png")

    def gzip_of(self, raw: bytes) -> bytes:
        """`gzip -1` of a raw reply (what `screencap | gzip -1` prints)."""
        with self._gzip_lock:
            cached = self._gzipped.get(id(raw))
            if cached is not None and cached[0] is raw:
                self._gzipped.move_to_end(id(raw))
                return cached[1]
        packed = gzip_bytes(raw)
        with self._gzip_lock:
            # The raw bytes are held with their gzip, so their id cannot be reused meanwhile.
            self._gzipped[id(raw)] = (raw, packed)
            while len(self._gzipped) > self._keep:
                self._gzipped.popitem(last=False)
        return packed

    def _answer(self, fmt: Format) -> bytes:
        if self.serial:
            with self._serial_lock:
                return self._answer_now(fmt)
        return self._answer_now(fmt)

    def _answer_now(self, fmt: Format) -> bytes:
        data = self._on_display(fmt)  # the frame is grabbed now, before the wait
        if self.latency_ms > 0:
            self._sleep(self.latency_ms / 1000.0)
        return data

    def close(self) -> None:
        """Let the display thread go (a later call starts a new one)."""
        with self._display_lock:
            display, self._display = self._display, None
        if display is not None:
            display.shutdown(wait=False)

    def _on_display(self, fmt: Format) -> bytes:
        with self._display_lock:
            if self._display is None:
                self._display = ThreadPoolExecutor(max_workers=1, thread_name_prefix="adbd-display")
            future = self._display.submit(self._encoded, fmt)
        return future.result()

    def _encoded(self, fmt: Format) -> bytes:
        # Only ever on the display thread, so the cache needs no lock.
        entry = self._find(self._grab())
        data = entry.encoded.get(fmt)
        if data is not None:
            self.hits += 1
            return data
        self.misses += 1
        data = encode_raw_screencap(entry.frame) if fmt == "raw" else encode_png_rgba(entry.frame)
        entry.encoded[fmt] = data
        return data

    def _find(self, frame: np.ndarray) -> _Entry:
        for key, entry in reversed(self._entries.items()):
            if entry.frame.shape == frame.shape and np.array_equal(entry.frame, frame):
                self._entries.move_to_end(key)
                return entry
        entry = _Entry(frame.copy())
        self._entries[self._next_key] = entry
        self._next_key += 1
        while len(self._entries) > self._keep:
            self._entries.popitem(last=False)
        return entry
