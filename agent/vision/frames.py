"""Calibration from several frames of one board, taken a few seconds apart.

One frame of a live game shows each colour in whatever looks it happens to be in: a
special that is on screen in one frame is missing from another, a gem caught glowing
in one is plain in the next. Learning from several frames of the same board gives every
look more cells, so a rare look becomes a class with exemplars instead of a reading of
"?" later, and a look caught mid-animation in one frame is outvoted by the others.

The first frame finds the board (and refuses a covered one, see agent.vision.cover);
every frame must show the board at the same place, since the profile stores one box.
The cells of all frames are then clustered together, as one tall board of
frames x rows rows (cells of different frames are compared like any two cells), and the
classes, kinds, roles and exemplars come from all of them. The profile reads the first
frame back, as with one frame.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from agent.vision.calibrate import SWIPE_MS, Calibration, calibrate_frame, find_board_cells, learn
from agent.vision.samples import CellSamples, sample_board
from agent.vision.cluster import cluster_cells, symmetric_distances
from agent.vision.cover import check_not_covered, unsettled_cells, unsettled_mask
from agent.vision.locate import NoBoardError
from agent.vision.roles import RoleHints
from agent.vision.settle import SettleSettings

MAX_FRAMES = 20


def _stack(parts: Sequence[CellSamples]) -> CellSamples:
    return CellSamples(
        np.concatenate([p.features for p in parts]),
        np.concatenate([p.contrast for p in parts]),
        np.concatenate([p.lab for p in parts]),
        parts[0].margin,
    )


def calibrate_frames(
    frames: Sequence[np.ndarray],
    game: str = "match3",
    *,
    swipe_ms: int = SWIPE_MS,
    settle: SettleSettings | None = None,
    min_confidence: float = 0.5,
    hints: RoleHints | None = None,
) -> Calibration:
    """Calibrate `game` from several full-screen BGR frames of one board (one frame is
    `calibrate_frame`). Raises NoBoardError when the first frame has no board, when a
    later frame is of another size or covered, and ValueError for no frames or more than
    MAX_FRAMES."""
    if not frames:
        raise ValueError("no frames to calibrate from")
    if len(frames) > MAX_FRAMES:
        raise ValueError(f"at most {MAX_FRAMES} frames, got {len(frames)}")
    start = time.perf_counter()
    if len(frames) == 1:
        return calibrate_frame(frames[0], game, swipe_ms=swipe_ms, settle=settle, min_confidence=min_confidence,
                               hints=hints)  # fmt: skip
    first = find_board_cells(frames[0])  # the board, and the first frame's cells
    board = first.board
    h, w = frames[0].shape[:2]
    cells, swapped = [first.cells], [first.swapped]
    unknown = [unsettled_mask(first.unsettled, board.rows, board.cols)]
    for i, frame in enumerate(frames[1:], start=2):
        if frame.shape[:2] != (h, w):
            raise NoBoardError(
                f"frame {i} is {frame.shape[1]}x{frame.shape[0]}, the first {w}x{h}: not the same screen",
                hint="take every frame of one screen, with the phone held the same way",
            )
        check_not_covered(frame, board)
        cs = sample_board(frame, board.bbox, board.rows, board.cols)
        cells.append(cs)
        swapped.append(sample_board(frame[..., ::-1], board.bbox, board.rows, board.cols))
        unknown.append(unsettled_mask(unsettled_cells(cs, board.rows, board.cols, board.holes), board.rows, board.cols))
    n = len(frames)
    all_cells, all_swapped = _stack(cells), _stack(swapped)
    holes = None if board.holes is None else np.tile(np.asarray(board.holes, bool), (n, 1))
    dist = symmetric_distances(all_cells.features, all_swapped.features)
    try:
        clustering = cluster_cells(
            dist, n * board.rows, board.cols, all_cells.contrast, holes=holes,
            views=(all_cells.lab, all_swapped.lab), margin=all_cells.margin, unknown=np.concatenate(unknown),
        )  # fmt: skip
    except ValueError as exc:
        raise NoBoardError(f"the {n} frames together do not look like one game board: {exc}",
                           hint="take the frames of one board, a few seconds apart, with nothing over it") from None  # fmt: skip
    return learn(frames[0], game, board, clustering, all_cells, all_swapped, first.cells.features, first.unsettled,
                 start, swipe_ms=swipe_ms, settle=settle, min_confidence=min_confidence, hints=hints)  # fmt: skip


__all__ = ["MAX_FRAMES", "calibrate_frames"]
