"""Waiting for the board to stop moving before it is read.

After a swap the game animates: tiles fall, explode, cascade. Reading mid-animation gives
half-drawn tiles, so the agent polls screenshots until the board area stays still.
Only the board is compared (a HUD timer or an animated background elsewhere must not
keep us waiting), cell by cell (one tile still falling is enough to wait; a global
average would hide it), on a downsampled copy (fast, and JPEG noise averages out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, cast

import cv2
import numpy as np

from agent.errors import ProfileError
from agent.vision.grid import BBox, check_bbox

_DIFF_SAMPLE = 8  # pixels per cell side when comparing: enough to see a tile move


class Clock(Protocol):
    """What settling needs of a clock; agent.device.clock provides real and fake ones."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class SettleSettings:
    """poll_ms between captures; a cell is still when its mean absolute difference
    (0..255 grey levels, averaged over channels) is under threshold; still_frames
    consecutive still captures end the wait; timeout_s gives up."""

    poll_ms: int = 40
    threshold: float = 4.0
    still_frames: int = 2
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.poll_ms < 0 or self.threshold <= 0 or self.still_frames < 1 or self.timeout_s <= 0:
            raise ValueError(f"invalid settle settings {self}")


@dataclass(frozen=True, eq=False)
class Settled:
    """The outcome of a wait: the last frame, how long it took and whether it was still."""

    frame: np.ndarray
    waited_s: float
    captures: int
    still: bool


def _board_small(frame: np.ndarray, bbox: BBox, rows: int, cols: int) -> np.ndarray:
    x0, y0, x1, y1 = check_bbox(bbox, rows, cols)
    h, w = frame.shape[:2]
    if frame.ndim != 3 or x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        raise ValueError(f"board bbox {tuple(bbox)} is outside the frame of shape {frame.shape}")
    size = (cols * _DIFF_SAMPLE, rows * _DIFF_SAMPLE)
    # INTER_LINEAR, not INTER_AREA: it only reads a few pixels per sample, which is
    # ~50x faster on a full-size board, and motion still shows as a large change.
    blurred = cv2.resize(frame[y0:y1, x0:x1], (size[0] * 2, size[1] * 2), interpolation=cv2.INTER_LINEAR)
    return cv2.resize(blurred, size, interpolation=cv2.INTER_AREA)


def _cell_diff(a_small: np.ndarray, b_small: np.ndarray, rows: int, cols: int) -> np.ndarray:
    d = cv2.absdiff(a_small, b_small).astype(np.float32)
    return cast(np.ndarray, d.reshape(rows, _DIFF_SAMPLE, cols, _DIFF_SAMPLE, -1).mean(axis=(1, 3, 4)))


def board_small(frame: np.ndarray, bbox: BBox, rows: int, cols: int) -> np.ndarray:
    """The board area downsampled as the comparisons take it (compare two with cell_diff)."""
    return _board_small(frame, bbox, rows, cols)


def cell_diff(a_small: np.ndarray, b_small: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Per-cell mean absolute difference of two board_small()s, shape (rows, cols)."""
    return _cell_diff(a_small, b_small, rows, cols)


def board_diff(a: np.ndarray, b: np.ndarray, bbox: BBox, rows: int, cols: int) -> np.ndarray:
    """Per-cell mean absolute difference (grey levels) between two frames, shape (rows, cols)."""
    if a.shape != b.shape:
        raise ValueError(f"frames differ in shape: {a.shape} vs {b.shape}")
    return _cell_diff(_board_small(a, bbox, rows, cols), _board_small(b, bbox, rows, cols), rows, cols)


def wait_until_still(
    capture: Callable[[], np.ndarray],
    bbox: BBox,
    rows: int,
    cols: int,
    clock: Clock,
    settings: SettleSettings = SettleSettings(),
) -> Settled:
    """Capture until the board has been still for `still_frames` captures in a row.

    Each capture is compared with the first frame of the current still run rather than
    with the one just before, so a slow fade that changes a little per frame still
    counts as motion. `waited_s` runs from the call to the last capture, by `clock`.
    With the defaults the board must look the same on three captures 40 ms apart.
    """
    start = clock.now()
    frame = capture()
    captures = 1
    ref = _board_small(frame, bbox, rows, cols)
    still = 0
    while True:
        # the epsilon stops float rounding of large clock values from adding one more poll
        if clock.now() - start >= settings.timeout_s - 1e-6:
            return Settled(frame=frame, waited_s=clock.now() - start, captures=captures, still=False)
        clock.sleep(settings.poll_ms / 1000.0)
        frame = capture()
        captures += 1
        small = _board_small(frame, bbox, rows, cols)
        if small.shape == ref.shape and float(_cell_diff(ref, small, rows, cols).max()) < settings.threshold:
            still += 1
            if still >= settings.still_frames:
                return Settled(frame=frame, waited_s=clock.now() - start, captures=captures, still=True)
        else:
            ref, still = small, 0


def wait_for_change(
    capture: Callable[[], np.ndarray], before: np.ndarray, bbox: BBox, rows: int, cols: int, clock: Clock,
    settings: SettleSettings, timeout_s: float,
) -> bool:
    """Whether the board moved away from `before` within `timeout_s`. A phone takes a
    moment to act on a gesture: without this, two still frames of the old board taken
    before it reacts would pass for the result."""
    deadline = clock.now() + timeout_s
    while clock.now() < deadline:
        clock.sleep(settings.poll_ms / 1000.0)
        if float(board_diff(before, capture(), bbox, rows, cols).max()) > settings.threshold:
            return True
    return False


# A screen counts as still when, between two frames this far apart, under STILL_SHARE of
# its pixels changed by more than STILL_LEVELS (0-255): a board in motion changes far more
# (calibrating on it would learn half-drawn tiles), while an idle animation (a hint's glow
# on one tile, a clock) changes less and must not keep the screen from ever being still.
# A mean difference would let one bright pulsing hint outweigh a still board.
STILL_GAP_S = 0.25
STILL_LEVELS = 32
STILL_SHARE = 0.01
STILL_TIMEOUT_S = 10.0


def changed_share(a: np.ndarray, b: np.ndarray) -> float:
    """The share of pixels that changed by more than STILL_LEVELS in any channel."""
    diff = cv2.absdiff(a, b)
    if diff.ndim == 3:
        # np.maximum over the channels: a reduction over the last axis is ~10x slower
        diff = np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2]) if diff.shape[2] == 3 else diff.max(axis=2)
    return float(np.count_nonzero(diff > STILL_LEVELS)) / max(1, diff.size)


def same_around(before: np.ndarray, after: np.ndarray, point: tuple[int, int], share: float,
                region: tuple[int, int, int, int] | None = None) -> bool:
    """Whether `region` (by default the part of the screen around `point`) changed in under
    `share` of its pixels between two frames: a tap lands where it was aimed only on what
    has stopped."""
    if after.shape != before.shape:
        return False
    h, w = before.shape[:2]
    if region is None:
        r = max(8, min(w, h) // 12)
        region = (max(0, point[0] - r), max(0, point[1] - r), min(w, point[0] + r), min(h, point[1] + r))
    x0, y0, x1, y1 = region
    a, b = after[y0:y1, x0:x1], before[y0:y1, x0:x1]
    return a.size > 0 and changed_share(a, b) < share


def still_screen(capture: Callable[[], np.ndarray], clock: Clock, name: str,
                 timeout_s: float = STILL_TIMEOUT_S,
                 bbox: tuple[int, int, int, int] | None = None) -> np.ndarray:  # fmt: skip
    """A frame of a screen (or of its board's box `bbox`, whatever moves around it) that has
    stopped moving; a ProfileError after `timeout_s`."""
    frame = capture()
    waited = 0.0
    while waited < timeout_s:
        clock.sleep(STILL_GAP_S)
        waited += STILL_GAP_S
        nxt = capture()
        if nxt.shape == frame.shape:
            x0, y0, x1, y1 = bbox or (0, 0, nxt.shape[1], nxt.shape[0])
            a, b = nxt[y0:y1, x0:x1], frame[y0:y1, x0:x1]
            if a.size and changed_share(a, b) < STILL_SHARE:
                return nxt
        frame = nxt
    raise ProfileError(
        f"{name}: the {'board' if bbox else 'screen'} kept moving for {timeout_s:.0f} s, so it was not calibrated",
        hint=f"let the game settle (close any dialog), then run `agent calibrate --serial {name}` again",
    )
