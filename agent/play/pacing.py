"""Timing fitted to the phone: what a capture costs, and a board read once it is at rest.

A phone whose screencap takes 300-800 ms cannot be polled like the simulator's instant
screenshots: the loop measures every capture (by its clock, so a simulated phone's
latency counts too) and scales its waits to a rolling capture cost.

At rest means every cell's kind is stable, not every pixel: a hint that wiggles one
tile, a sparkle on a special or a glowing tile never stops moving, yet the board is
still. Two reads in a row must agree on every cell, and the cells whose pixels moved
between them must be few and read with confidence; a board where more moved (tiles
falling, a fade) is not at rest, whatever its reads say.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

import numpy as np

from agent.device.clock import Clock
from agent.games.base import BoardRead, BoardT
from agent.play.pipeline import PIPELINE_FROM_S, CapturePipeline
from agent.vision.settle import STILL_SHARE, SettleSettings, board_small, cell_diff, changed_share

# Captures the rolling cost is the median of: enough to ride out one slow frame.
COST_WINDOW = 9
# Cells that may move between two reads of a board at rest (a hint shows on one or two
# tiles): with more moving the board is animating.
MAX_MOVING_CELLS = 2


class CaptureMeter:
    """Every capture timed by the loop's clock; `cost_s` is the rolling median.

    With `overlap` (a device whose calls may overlap, on a real clock), once captures
    prove slow two are kept in flight (agent.play.pipeline); a phone that serialises
    them goes back to one at a time."""

    def __init__(self, capture: Callable[[], np.ndarray], clock: Clock, overlap: bool = False,
                 on_capture: Callable[[np.ndarray, int], None] | None = None) -> None:  # fmt: skip
        self._capture, self._clock, self._overlap = capture, clock, overlap
        self._on_capture = on_capture  # told of every frame (a live view), on this thread
        self._recent: deque[float] = deque(maxlen=COST_WINDOW)
        self._pipe: CapturePipeline | None = None
        self.count = 0
        self.started_at = 0.0  # clock time the last capture began (what its frame shows, at the latest)

    def __call__(self) -> np.ndarray:
        if self._pipe is not None:
            t0, frame, took = self._pipe.next()
            if self._pipe.serialised:
                self.close()
                self._overlap = False  # the phone takes one at a time: so be it
        else:
            t0 = self._clock.now()
            frame = self._capture()
            took = max(0.0, self._clock.now() - t0)
        self.started_at = t0
        self._recent.append(took)
        self.count += 1
        if self._on_capture is not None:
            self._on_capture(frame, self.count)
        if self._overlap and self._pipe is None and len(self._recent) >= 3 and self.cost_s >= PIPELINE_FROM_S:
            self._pipe = CapturePipeline(self._capture, self._clock, self.cost_s)
        return frame

    @property
    def overlapping(self) -> bool:
        return self._pipe is not None

    @property
    def cost_s(self) -> float:
        return statistics.median(self._recent) if self._recent else 0.0

    def close(self) -> None:
        if self._pipe is not None:
            self._pipe.close()
            self._pipe = None


@dataclass(frozen=True)
class Timeouts:
    """The loop's waits, each at least its configured floor and scaled with the capture cost."""

    change_s: float  # a move must show on screen within this
    settle_s: float  # a board must come to rest within this
    unreadable_s: float  # a screen nothing can be done with, this long, stops the run
    poll_s: float  # the pause between two captures (a slow capture is its own pause)

    @classmethod
    def fitted(cls, cost_s: float, settle: SettleSettings, change_floor_s: float, unreadable_floor_s: float,
               swipe_s: float) -> "Timeouts":  # fmt: skip
        return cls(
            change_s=max(change_floor_s, swipe_s + 4 * cost_s),
            settle_s=max(settle.timeout_s, 12 * cost_s),
            unreadable_s=max(unreadable_floor_s, 12 * cost_s),
            poll_s=max(0.0, settle.poll_ms / 1000.0 - cost_s),
        )


@dataclass(frozen=True, eq=False)
class RestingRead(Generic[BoardT]):
    """The outcome of waiting for a board at rest: the last frame and its read."""

    frame: np.ndarray
    read: BoardRead[BoardT] | None  # None: the frame could not be read at all (no board box on it)
    still: bool  # the board came to rest (for a read that is not playable: its pixels stopped)
    waited_s: float
    captures: int
    moving: np.ndarray  # (rows, cols) bool: cells whose pixels moved between the last two frames (a hint)

    @property
    def moving_cells(self) -> int:
        return int(self.moving.sum())


class Motion:
    """Which cells moved from one capture to the next; each frame is downsampled once."""

    def __init__(self, bbox: tuple[int, int, int, int], rows: int, cols: int, threshold: float) -> None:
        self.bbox, self.rows, self.cols, self.threshold = bbox, rows, cols, threshold
        self._last: tuple[int, np.ndarray] | None = None  # (id of the frame, its small copy)

    def _small(self, frame: np.ndarray) -> np.ndarray:
        if self._last is not None and self._last[0] == id(frame):
            return self._last[1]
        small = board_small(frame, self.bbox, self.rows, self.cols)
        self._last = (id(frame), small)
        return small

    def between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(rows, cols) bool: the cells whose pixels changed from frame a to frame b."""
        if a.shape != b.shape:
            return np.ones((self.rows, self.cols), dtype=bool)
        sa = self._small(a)
        sb = self._small(b)  # kept: the next comparison starts from it
        return cell_diff(sa, sb, self.rows, self.cols) > self.threshold


# Every 4th pixel each way: a screen's change shows as well, at a sixteenth of the cost
# (a full 1080x2400 comparison takes ~100 ms).
_SCREEN_STRIDE = 4


def screen_still(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether next to nothing on the whole screen changed (agent.vision.settle's measure)."""
    if a.shape != b.shape:
        return False
    return changed_share(a[::_SCREEN_STRIDE, ::_SCREEN_STRIDE], b[::_SCREEN_STRIDE, ::_SCREEN_STRIDE]) < STILL_SHARE


def same_kinds(a: BoardRead[BoardT], b: BoardRead[BoardT]) -> bool:
    return a.text == b.text and a.reading.labels == b.reading.labels


def at_rest_between(prev: BoardRead[BoardT], cur: BoardRead[BoardT], moved: np.ndarray, min_confidence: float) -> int:
    """Whether two consecutive reads show one board at rest (see the module docstring):
    0 no; 1 yes; 2 yes if the next pair agrees too (a cell that moves and is read with
    doubt may be a hint's wiggle or a piece still falling: one more capture tells). One cell
    read unknown in one read and a kind in the other, or moving and read as two looks (a
    hint's glow pulsing over its tile), is such doubt too, not a board that moves."""
    if not same_kinds(prev, cur):
        if _differ_by_doubt(prev, cur, moved):
            return 2 if cur.playable else 0
        return 0
    n = int(moved.sum())
    if n == 0:
        return 1
    if n > MAX_MOVING_CELLS or not cur.playable:
        return 0
    labels = cur.reading.labels
    conf = cur.reading.confidence
    sure = all(labels[r][c] != "?" and float(conf[r, c]) >= min_confidence for r, c in np.argwhere(moved).tolist())
    return 1 if sure else 2


def _differ_by_doubt(a: BoardRead[BoardT], b: BoardRead[BoardT], moved: np.ndarray) -> bool:
    """Whether two reads differ only in one cell, which one of them reads unknown or whose
    pixels moved (a glow pulsing over a tile can pass for a look of its own). A swap moves
    two: the tiles of a move are never taken for a hint."""
    la, lb = a.reading.labels, b.reading.labels
    if len(la) != len(lb) or any(len(x) != len(y) for x, y in zip(la, lb)):
        return False
    differ = [(r, c) for r, (ra, rb) in enumerate(zip(la, lb)) for c, (u, v) in enumerate(zip(ra, rb)) if u != v]
    if len(differ) != 1:
        return False
    (r, c), = differ
    inside = r < moved.shape[0] and c < moved.shape[1]
    return "?" in (la[r][c], lb[r][c]) or (inside and bool(moved[r, c]))
