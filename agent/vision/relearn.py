"""A new level is a new board: finding the board again and keeping what was learned.

When a level ends the next one starts with another board: other rows and columns,
other holes and blockers, maybe another place on the screen, but the same tiles. The
profile's classes (their letters, kinds, roles and names) must carry over, so that the
same colour keeps its letter and the journal, the learned rules and the player's
state mean the same thing from level to level. So, on a frame of the new level:

1. the board is found as calibration finds it (`find_board_cells`: the grid, its holes,
   the cells caught moving, the cells grouped by look);
2. every cell is read with the old exemplars; a cell that matches an old class
   confidently is that class. Features see a cell's framing, so when many cells do not
   match, the box is moved by a few per cent of a cell to where the most do (the finder
   places each board on its own, and may be off the other way from calibration's);
3. the board is grown by the lines past its edges that hold a wall of one obstacle
   (the finder stops where cells stop looking like the board's tiles, so a new level's
   wall of a blocker never seen is left out), and cut by its outer lines with no tile
   in them (a margin of slots or background taken for cells);
4. a cell that matches nothing but was grouped with cells that did (one look, by the
   frame's own clustering) takes their class, and lends it an exemplar: the same tile
   seen under a slightly other light;
5. the rest are new looks: their groups of MIN_NEW_CELLS or more become new classes
   (the next free letters, in reading order; a lone cell stays unknown for
   agent.vision.grow, which checks that a look recurs). Where they lie decides blockers as calibration decides them (the
   game's hints: a new blocker look comes out a blocker); their colour is judged beside
   the colours the profile knows (agent.vision.newlooks): a rare look in one's hue
   territory is its special, a look of many hues colourless, a frequent look of its own
   hue a new colour. A new look of an old blocker's colour is a look of that blocker;
6. holes stay holes, and the holes and empty slots the old exemplars do not read as
   empty lend "." exemplars.

Everything else in the profile (settle, swipe, confidence, HUD, feature settings, and
any field added later) carries over: the profile is copied with `dataclasses.replace`.
A board that shares too little with the profile (fewer than MIN_KNOWN of its tiles
read as old classes) is not this game's board: another app, a menu of icons.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from agent.vision.calibrate import EXEMPLARS_PER_CLASS, EXEMPLARS_PER_EMPTY, FoundBoard, find_board_cells
from agent.vision.classify import (
    EMPTY_LABEL, NOISE_FLOOR, UNKNOWN_LABEL, Exemplar, Reading, classify, exemplars_from_labels, pairwise_distances,
)  # fmt: skip
from agent.vision.cluster import CLASS_NAMES, EMPTY_CONTRAST, Clustering, cluster_cells, symmetric_distances
from agent.vision.cover import unsettled_cells, unsettled_mask
from agent.vision.features import DEFAULT_INSET, DEFAULT_PATCH
from agent.vision.grid import BBox, bbox_to_frac
from agent.vision.grow import ClassGrower, relabel
from agent.vision.kinds import ANCHOR_MIN, ANCHOR_SHARE, kinds_of, split_mixed_colours
from agent.vision.locate import NoBoardError
from agent.vision.profile import GRID_MAX, GRID_MIN, GameProfile
from agent.vision.newlooks import judge
from agent.vision.roles import RoleHints, colour_name
from agent.vision.samples import CellSamples, sample_board

# Of the cells that hold tiles, at least this share must read as the profile's classes
# for a board to be this game's. A new level brings a new blocker or a new colour at
# most, a minority of its cells; another app's grid of icons shares nothing.
MIN_KNOWN = 0.4
# A board found within this share of a cell of the profile's box on every edge, with
# the same rows and columns, is where the profile says: the profile's box is kept, so
# the board finder's sub-pixel wobble does not change the profile, unless the box found
# reads more of its tiles with the profile's own exemplars (a profile's box calibrated
# a few per cent short of the pitch left its last row a tenth of a cell off, unread).
SAME_PLACE = 0.25
# A smaller board found inside the profile's box is a part of its board while this share
# of the profile's cells around it read as tiles (see _part_of_profiles).
PART_AROUND = 0.5
# A board whose cells the old exemplars read this well is taken where the finder put
# it; otherwise the box is moved by up to REGISTER_STEPS (shares of a cell, coarse then
# fine, each way) to where they read best.
WELL_READ = 0.98
REGISTER_STEPS = (0.05, 0.025)
# A line of cells past the board's edge is a wall of obstacles the finder left out when
# at least WALL_MIN of its cells are one unknown look (within the classifier's noise
# floor of each other) and the line past it differs from it by WALL_CONTRAST times that.
WALL_MIN = 3
WALL_CONTRAST = 3.0
# A cell that matches nothing takes the class of the cells it was grouped with when
# they outnumber it this many times and agree on one class.
OUTNUMBER = 2
# A new look needs this many cells on the board to become a class here. One cell of one
# frame may be anything (a piece mid-animation, a popup over a cell): it stays unknown,
# and agent.vision.grow learns it if it stays or comes back.
MIN_NEW_CELLS = 2
# Exemplars an old class may gather over later levels, and "." exemplars, in all: each
# level adds a few, and reading costs grow with them.
MAX_PER_CLASS = 3 * EXEMPLARS_PER_CLASS
MAX_EMPTY = 3 * EXEMPLARS_PER_EMPTY


@dataclass(frozen=True)
class Refound:
    """The board found again on a frame: the profile for it (the new box, rows, cols and
    frac; the old classes kept, new looks added as `new_classes`), whether it differs
    from the profile it was found with, and why, for the journal."""

    profile: GameProfile
    new_classes: tuple[str, ...]
    changed: bool
    reason: str


@dataclass(frozen=True)
class Miss:
    """No board of this game on the frame, and why."""

    reason: str


def refind_board(frame: np.ndarray, profile: GameProfile, hints: RoleHints | None = None) -> Refound | None:
    """The board on `frame` as a profile that keeps `profile`'s classes, or None when the
    frame shows no board of this game (a card, a dialog, another app). See `find_again`
    for the reason of a None."""
    out = find_again(frame, profile, hints)
    return out if isinstance(out, Refound) else None


def find_again(frame: np.ndarray, profile: GameProfile, hints: RoleHints | None = None) -> Refound | Miss:
    """`refind_board`, with the reason when there is no board."""
    try:
        found = find_board_cells(frame)
    except NoBoardError as exc:  # a covered board too: nothing is learned under a dialog
        return Miss(str(exc))
    h, w = frame.shape[:2]
    found, features, reading = _registered(frame, found, profile)
    found, features, reading = _extended(frame, found, features, reading, profile)
    board = found.board
    labels, lent, pending = _old_classes(found, reading)
    keep = _kept(labels, pending)
    if keep is not None:
        found, features, reading, labels, lent, pending = _trimmed(found, features, reading, labels, lent, pending, keep)
        board = found.board
    part = _part_of_profiles(frame, board.bbox, board.rows, board.cols, profile)
    if part is not None:
        return Miss(part)
    tiles = sum(v not in (EMPTY_LABEL, UNKNOWN_LABEL) for row in labels for v in row) + len(pending)
    known = tiles - len(pending)
    if tiles and known < MIN_KNOWN * tiles:
        return Miss(f"only {known} of the {tiles} tiles of the {board.rows}x{board.cols} board at {list(board.bbox)} "
                    "look like the profile's: not this game's board")  # fmt: skip
    same = same_place(profile, board.bbox, board.rows, board.cols) and not _reads_better(frame, board.bbox, reading, profile)
    bbox: BBox = profile.board_bbox if same else board.bbox
    at = replace(profile, rows=board.rows, cols=board.cols, board_bbox=bbox, board_frac=bbox_to_frac(bbox, w, h))
    fresh = _new_classes(found, labels, pending, profile)
    for (r, c), letter in fresh.items():
        labels[r][c] = letter
    new = tuple(sorted(set(fresh.values()), key=CLASS_NAMES.index))
    # what the old exemplars could not read lends exemplars: new looks, old looks under
    # another light, holes and empty slots
    teach = [[labels[r][c] if (r, c) in lent or (r, c) in fresh or _unread_empty(reading, labels, r, c) else UNKNOWN_LABEL
              for c in range(at.cols)] for r in range(at.rows)]  # fmt: skip
    added = exemplars_from_labels(features, teach, per_label=EXEMPLARS_PER_CLASS, per_empty=EXEMPLARS_PER_EMPTY)
    out = replace(at, exemplars=_merged(profile.exemplars, added, set(new)))
    back = out.read(frame) if out != profile else reading
    if new:
        # roles from the board as the new exemplars read it: a look's cells caught
        # "moving" by the finder (a blocker's texture can look lopsided) count too
        seen = [[v if v != UNKNOWN_LABEL else back.labels[r][c] for c, v in enumerate(row)] for r, row in enumerate(labels)]
        kinds, roles, names = _decide(found, seen, new, profile, hints)
        out = replace(out, kinds={**profile.kinds, **kinds}, roles={**profile.roles, **roles},
                      names={**profile.names, **names})  # fmt: skip
    if out == profile:
        return Refound(profile, (), False, f"the {profile.rows}x{profile.cols} board is where the profile says, "
                                           "and every look on it is known")  # fmt: skip
    return Refound(out, new, True, _reason(profile, out, new, len(lent), back, labels))


def _read_at(frame: np.ndarray, bbox: BBox, rows: int, cols: int, profile: GameProfile) -> tuple[np.ndarray, Reading]:
    features = sample_board(frame, bbox, rows, cols, profile.inset, profile.patch).features
    return features, classify(features, rows, cols, profile.exemplars, profile.min_confidence, profile.max_distance)


def _known(reading: Reading) -> int:
    return sum(v not in (EMPTY_LABEL, UNKNOWN_LABEL) for row in reading.labels for v in row)


def _registered(frame: np.ndarray, found: FoundBoard, profile: GameProfile) -> tuple[FoundBoard, np.ndarray, Reading]:
    """The board's box moved by the fraction of a cell that lets the old exemplars read
    the most cells, with the cells' features and reading there.

    Features see a cell's framing: a box found a few per cent of a cell off from where
    calibration found its own reads tiles as unknown. The finder places every board
    independently, so a new level's box may be off the other way."""
    b = found.board
    if (profile.inset, profile.patch) == (DEFAULT_INSET, DEFAULT_PATCH):
        features = found.cells.features
        reading = classify(features, b.rows, b.cols, profile.exemplars, profile.min_confidence, profile.max_distance)
    else:
        features, reading = _read_at(frame, b.bbox, b.rows, b.cols, profile)
    occupied = sum(not hole for hole in b.holes.ravel())
    if _known(reading) >= WELL_READ * occupied:
        return found, features, reading
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = b.bbox
    px, py = (x1 - x0) / b.cols, (y1 - y0) / b.rows
    best = (_known(reading), 0.0, 0, 0, features, reading)
    centre = (0, 0)
    for step in REGISTER_STEPS:
        cx, cy = centre
        for i in (-1, 0, 1):
            for j in (-1, 0, 1):
                dx, dy = int(round(cx + i * step * px)), int(round(cy + j * step * py))
                if (dx, dy) == (best[2], best[3]) or not (0 <= x0 + dx and x1 + dx <= w and 0 <= y0 + dy and y1 + dy <= h):
                    continue
                f, rd = _read_at(frame, (x0 + dx, y0 + dy, x1 + dx, y1 + dy), b.rows, b.cols, profile)
                cand = (_known(rd), -float(np.hypot(dx / px, dy / py)), dx, dy, f, rd)
                if cand[:2] > best[:2]:
                    best = cand
        centre = (best[2], best[3])
    _, _, dx, dy, features, reading = best
    if (dx, dy) == (0, 0):
        return found, features, reading
    board = replace(b, bbox=(x0 + dx, y0 + dy, x1 + dx, y1 + dy))
    return FoundBoard(board, found.cells, found.swapped, found.unsettled, found.clustering), features, reading


def _edge_cells(frame: np.ndarray, bbox: BBox, rows: int, cols: int, side: str) -> tuple[BBox, int, int] | None:
    """The box of the row or column of cells just past one side of the board, if it is
    on the frame: (box, rows, cols)."""
    x0, y0, x1, y1 = bbox
    px, py = (x1 - x0) / cols, (y1 - y0) / rows
    h, w = frame.shape[:2]
    box = {"top": (x0, int(round(y0 - py)), x1, y0), "bottom": (x0, y1, x1, int(round(y1 + py))),
           "left": (int(round(x0 - px)), y0, x0, y1), "right": (x1, y0, int(round(x1 + px)), y1)}[side]  # fmt: skip
    if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
        return None
    return box, (1 if side in ("top", "bottom") else rows), (cols if side in ("top", "bottom") else 1)


def _line(frame: np.ndarray, box: BBox, rows: int, cols: int, profile: GameProfile) -> tuple[CellSamples, np.ndarray]:
    cells = sample_board(frame, box, rows, cols)
    same = (profile.inset, profile.patch) == (DEFAULT_INSET, DEFAULT_PATCH)
    return cells, cells.features if same else sample_board(frame, box, rows, cols, profile.inset, profile.patch).features


def _along(lab: np.ndarray, horizontal: bool) -> np.ndarray:
    """How much each cell's middle varies along the line (n, s, s, 3) -> (n,). A panel's
    rim or a band of background past the board is the same all along the line; a piece
    in a cell is not."""
    s = lab.shape[1]
    a = s // 5
    inner = lab[:, a : s - a, a : s - a]
    return np.asarray(np.sqrt(inner.var(axis=2 if horizontal else 1).sum(axis=-1)).mean(axis=1))


def _board_like(frame: np.ndarray, box: BBox, rows: int, cols: int, beyond: tuple[BBox, int, int] | None,
                profile: GameProfile) -> bool:  # fmt: skip
    """Whether a line of cells past the board is part of it: every cell holds something
    (not a flat, neutral slot or background) and is a known look, or one look shared by
    the line's unknown cells (a wall of one obstacle) that varies along the line (a
    panel's rim does not) and that the line past it does not continue (a wall ends at
    the board's edge; a textured background goes on)."""
    cells, features = _line(frame, box, rows, cols, profile)
    if (cells.contrast < EMPTY_CONTRAST).any():
        return False
    reading = classify(features, rows, cols, profile.exemplars, profile.min_confidence, profile.max_distance)
    flat = [v for row in reading.labels for v in row]
    if EMPTY_LABEL in flat:
        return False
    unknown = [i for i, v in enumerate(flat) if v == UNKNOWN_LABEL]
    if not unknown:
        return True
    if len(unknown) < WALL_MIN:
        return False
    inside = pairwise_distances(features[unknown], features[unknown])
    if inside.max() > NOISE_FLOOR or float(np.median(_along(cells.lab[unknown], rows == 1))) < EMPTY_CONTRAST:
        return False
    if beyond is None:
        return True
    _, past = _line(frame, *beyond, profile)
    across = np.sqrt(((features[unknown] - past[unknown]).astype(np.float64) ** 2).mean(axis=1))
    return bool(np.median(across) > WALL_CONTRAST * max(float(inside.max()), 1.0) and np.median(across) > NOISE_FLOOR)


def _found_at(frame: np.ndarray, found: FoundBoard, bbox: BBox, rows: int, cols: int, holes: np.ndarray) -> FoundBoard | None:
    """The board described afresh in another box, as find_board_cells describes it."""
    cells = sample_board(frame, bbox, rows, cols)
    swapped = sample_board(frame[..., ::-1], bbox, rows, cols)
    unsettled = unsettled_cells(cells, rows, cols, holes)
    try:
        clustering = cluster_cells(
            symmetric_distances(cells.features, swapped.features), rows, cols, cells.contrast, holes=holes,
            views=(cells.lab, swapped.lab), margin=cells.margin, unknown=unsettled_mask(unsettled, rows, cols),
        )  # fmt: skip
    except ValueError:
        return None
    board = replace(found.board, bbox=bbox, rows=rows, cols=cols, holes=holes, occupied=~holes)
    return FoundBoard(board, cells, swapped, unsettled, clustering)


def _extended(frame: np.ndarray, found: FoundBoard, features: np.ndarray, reading: Reading,
              profile: GameProfile) -> tuple[FoundBoard, np.ndarray, Reading]:  # fmt: skip
    """The board with the lines of cells past its edges that are part of it. The board
    finder stops where the cells stop looking like the board's tiles, so a wall of
    obstacles along an edge (a new level's, never seen) may be left out."""
    b = found.board
    bbox, rows, cols, holes = b.bbox, b.rows, b.cols, np.asarray(b.holes, bool)
    grown = False
    for side in ("top", "bottom", "left", "right"):
        while (rows if side in ("top", "bottom") else cols) < GRID_MAX:
            edge = _edge_cells(frame, bbox, rows, cols, side)
            if edge is None:
                break
            box, n, m = edge
            grown_box = (min(bbox[0], box[0]), min(bbox[1], box[1]), max(bbox[2], box[2]), max(bbox[3], box[3]))
            beyond = _edge_cells(frame, grown_box, rows + (n == 1), cols + (m == 1), side)
            if not _board_like(frame, box, n, m, beyond, profile):
                break
            bbox = grown_box
            if side in ("top", "bottom"):
                line = np.zeros((1, cols), bool)
                holes = np.vstack([line, holes] if side == "top" else [holes, line])
                rows += 1
            else:
                line = np.zeros((rows, 1), bool)
                holes = np.hstack([line, holes] if side == "left" else [holes, line])
                cols += 1
            grown = True
    if not grown:
        return found, features, reading
    again = _found_at(frame, found, bbox, rows, cols, holes)
    if again is None:
        return found, features, reading
    features, reading = _read_at(frame, bbox, rows, cols, profile)
    return again, features, reading


def _part_of_profiles(frame: np.ndarray, bbox: BBox, rows: int, cols: int, profile: GameProfile) -> str | None:
    """Why a smaller board found inside the profile's box is a part of the profile's
    board, not the next level's, or None: the profile's cells around it still read as its
    tiles (a diamond board's middle found alone mid-cascade was taken for a new 5x3 level,
    and the whole board was no board from then on). A smaller next level there shows what
    lies behind the board around it, which reads as no tile."""
    x0, y0, x1, y1 = profile.board_bbox
    px, py = (x1 - x0) / max(1, profile.cols), (y1 - y0) / max(1, profile.rows)
    bx0, by0, bx1, by1 = bbox
    inside = bx0 >= x0 - px / 2 and by0 >= y0 - py / 2 and bx1 <= x1 + px / 2 and by1 <= y1 + py / 2
    if not inside or rows * cols >= profile.rows * profile.cols:
        return None
    labels = profile.read(frame).labels
    around = [labels[r][c] for r in range(profile.rows) for c in range(profile.cols)
              if not (bx0 <= x0 + (c + 0.5) * px <= bx1 and by0 <= y0 + (r + 0.5) * py <= by1)]  # fmt: skip
    tiles = sum(v not in (EMPTY_LABEL, UNKNOWN_LABEL) for v in around)
    if not around or tiles < PART_AROUND * len(around):
        return None
    return (f"the {rows}x{cols} board found at {list(bbox)} is a part of the profile's {profile.rows}x{profile.cols} "
            f"board: {tiles} of its {len(around)} cells around it read as its tiles")


def _reads_better(frame: np.ndarray, bbox: BBox, reading: Reading, profile: GameProfile) -> bool:
    """Whether the profile's exemplars read clearly more cells known in `bbox` (as
    `reading` says) than in the profile's own box of the same rows and columns: a cell or
    two is a tile mid-fall, not a better box."""
    if tuple(bbox) == tuple(profile.board_bbox):
        return False
    _, there = _read_at(frame, profile.board_bbox, profile.rows, profile.cols, profile)
    return _known(reading) >= _known(there) + max(2, profile.rows * profile.cols // 20)


def same_place(profile: GameProfile, bbox: BBox, rows: int, cols: int) -> bool:
    """Whether a board of `rows` x `cols` at `bbox` is the profile's: its grid, its box
    within SAME_PLACE of a cell each side."""
    if (rows, cols) != (profile.rows, profile.cols):
        return False
    x0, y0, x1, y1 = profile.board_bbox
    px, py = (x1 - x0) / cols, (y1 - y0) / rows
    return all(abs(a - b) <= SAME_PLACE * p for a, b, p in zip(bbox, profile.board_bbox, (px, py, px, py)))


def _old_classes(
    found: FoundBoard, reading: Reading
) -> tuple[list[list[str]], set[tuple[int, int]], dict[tuple[int, int], str]]:
    """(labels, lent, pending): every cell's old class, "." or "?" where known; the cells
    that take the class of their look's group; the cells left, with their group."""
    board, groups = found.board, found.clustering.labels
    labels = [[UNKNOWN_LABEL] * board.cols for _ in range(board.rows)]
    pending: dict[tuple[int, int], str] = {}
    for r in range(board.rows):
        for c in range(board.cols):
            got, group = reading.labels[r][c], groups[r][c]
            if board.holes[r, c]:
                labels[r][c] = EMPTY_LABEL
            elif (r, c) in found.unsettled:
                continue  # a piece caught moving is no look, old or new
            elif got != UNKNOWN_LABEL:
                labels[r][c] = got
            elif group in (EMPTY_LABEL, UNKNOWN_LABEL):
                labels[r][c] = group
            else:
                pending[(r, c)] = group
    lent: set[tuple[int, int]] = set()
    for group in sorted(set(pending.values())):
        cells = [p for p, g in pending.items() if g == group]
        read = [labels[r][c] for r in range(board.rows) for c in range(board.cols)
                if groups[r][c] == group and labels[r][c] not in (EMPTY_LABEL, UNKNOWN_LABEL)]  # fmt: skip
        if len(set(read)) == 1 and len(read) >= OUTNUMBER * len(cells):
            for r, c in cells:
                labels[r][c] = read[0]
                del pending[(r, c)]
                lent.add((r, c))
    return labels, lent, pending


def _kept(labels: list[list[str]], pending: dict[tuple[int, int], str]) -> tuple[int, int, int, int] | None:
    """The rows r0:r1 and columns c0:c1 left when the outer rows and columns with no
    tile in them are cut off, or None when there are none. The board finder may take a
    margin of slots or background for cells; a settled board has a tile in every outer
    row and column (a row of holes is outside the board by definition)."""
    rows, cols = len(labels), len(labels[0])

    def bare(cells: list[tuple[int, int]]) -> bool:
        return all(labels[r][c] == EMPTY_LABEL and (r, c) not in pending for r, c in cells)

    r0, r1, c0, c1 = 0, rows, 0, cols
    while r1 - r0 > GRID_MIN and bare([(r0, c) for c in range(c0, c1)]):
        r0 += 1
    while r1 - r0 > GRID_MIN and bare([(r1 - 1, c) for c in range(c0, c1)]):
        r1 -= 1
    while c1 - c0 > GRID_MIN and bare([(r, c0) for r in range(r0, r1)]):
        c0 += 1
    while c1 - c0 > GRID_MIN and bare([(r, c1 - 1) for r in range(r0, r1)]):
        c1 -= 1
    return None if (r0, r1, c0, c1) == (0, rows, 0, cols) else (r0, r1, c0, c1)


def _trimmed(
    found: FoundBoard, features: np.ndarray, reading: Reading, labels: list[list[str]], lent: set[tuple[int, int]],
    pending: dict[tuple[int, int], str], keep: tuple[int, int, int, int],
) -> tuple[FoundBoard, np.ndarray, Reading, list[list[str]], set[tuple[int, int]], dict[tuple[int, int], str]]:  # fmt: skip
    """Everything about the board cut to rows r0:r1 and columns c0:c1."""
    r0, r1, c0, c1 = keep
    b = found.board
    x0, y0, x1, y1 = b.bbox
    px, py = (x1 - x0) / b.cols, (y1 - y0) / b.rows
    bbox = (int(round(x0 + c0 * px)), int(round(y0 + r0 * py)), int(round(x0 + c1 * px)), int(round(y0 + r1 * py)))
    rows, cols = r1 - r0, c1 - c0
    idx = (np.arange(b.rows)[r0:r1, None] * b.cols + np.arange(b.cols)[None, c0:c1]).ravel()
    board = replace(b, bbox=bbox, rows=rows, cols=cols, occupied=b.occupied[r0:r1, c0:c1], holes=b.holes[r0:r1, c0:c1])

    def cells(cs: CellSamples) -> CellSamples:
        return CellSamples(cs.features[idx], cs.contrast[idx], cs.lab[idx], cs.margin)

    cl = found.clustering
    clustering = Clustering([row[c0:c1] for row in cl.labels[r0:r1]], cl.groups[r0:r1, c0:c1], cl.threshold)
    moved = {(r - r0, c - c0): why for (r, c), why in found.unsettled.items() if r0 <= r < r1 and c0 <= c < c1}

    def inside(p: tuple[int, int]) -> bool:
        return r0 <= p[0] < r1 and c0 <= p[1] < c1

    dist = None if reading.distance is None else reading.distance[r0:r1, c0:c1]
    return (
        FoundBoard(board, cells(found.cells), cells(found.swapped), moved, clustering),
        features[idx],
        Reading([row[c0:c1] for row in reading.labels[r0:r1]], reading.confidence[r0:r1, c0:c1], dist),
        [row[c0:c1] for row in labels[r0:r1]],
        {(r - r0, c - c0) for r, c in lent if inside((r, c))},
        {(r - r0, c - c0): g for (r, c), g in pending.items() if inside((r, c))},
    )


def _free_letters(profile: GameProfile) -> list[str]:
    used = set(profile.class_labels) | set(profile.kinds) | set(profile.roles) | set(profile.names)
    used |= set(profile.kinds.values())
    return [n for n in CLASS_NAMES if n not in used]


def _new_classes(found: FoundBoard, labels: list[list[str]], pending: dict[tuple[int, int], str],
                 profile: GameProfile) -> dict[tuple[int, int], str]:  # fmt: skip
    """The cells of new looks -> their new class letters: the frame's groups of them, a
    group of two colours split as calibration splits it, lettered in reading order; a
    group of fewer than MIN_NEW_CELLS cells stays unknown."""
    if not pending:
        return {}
    rows, cols = len(labels), len(labels[0])
    grid = [[pending.get((r, c), UNKNOWN_LABEL) for c in range(cols)] for r in range(rows)]
    split = split_mixed_colours(grid, (found.cells.lab, found.swapped.lab), found.cells.margin)
    sizes: dict[str, int] = {}
    for p in pending:
        sizes[split[p[0]][p[1]]] = sizes.get(split[p[0]][p[1]], 0) + 1
    free = iter(_free_letters(profile))
    letters: dict[str, str] = {}
    out: dict[tuple[int, int], str] = {}
    for r in range(rows):  # reading order
        for c in range(cols):
            if (r, c) not in pending:
                continue
            v = split[r][c]
            if sizes[v] < MIN_NEW_CELLS:
                continue  # one cell of one frame: ClassGrower learns it if it stays
            if v not in letters:
                letter = next(free, None)
                if letter is None:
                    return out  # no letters left: the rest stay unknown
                letters[v] = letter
            out[(r, c)] = letters[v]
    return out


def _decide(found: FoundBoard, labels: Sequence[Sequence[str]], new: tuple[str, ...], profile: GameProfile,
            hints: RoleHints | None) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:  # fmt: skip
    """Kinds, roles and names of the new classes. Where they lie, and whether they are
    frequent enough to be colours of their own, from the whole board as calibration
    reads it (agent.vision.kinds); their colour beside the colours the profile knows
    (agent.vision.newlooks). A look of an old blocker's colour is a look of that blocker."""
    if not new:
        return {}, {}, {}
    lab = found.cells.lab
    km = kinds_of(labels, (lab, found.swapped.lab), found.cells.margin, hints)
    counts: dict[str, int] = {}
    known: dict[str, list[np.ndarray]] = {}
    looks: dict[str, list[np.ndarray]] = {n: [] for n in new}
    cols = len(labels[0])
    for r, row in enumerate(labels):
        for c, v in enumerate(row):
            if v in (EMPTY_LABEL, UNKNOWN_LABEL):
                continue
            counts[v] = counts.get(v, 0) + 1
            if v in looks:
                looks[v].append(lab[r * cols + c])
            elif profile.role_of(v) not in ("hole", "layer", "colourless"):
                known.setdefault(profile.kinds.get(v, v), []).append(lab[r * cols + c])
    floor = max(ANCHOR_MIN, ANCHOR_SHARE * max(counts.values()))
    verdicts = judge(known, looks, {n for n in new if counts.get(n, 0) >= floor}, found.cells.margin)
    old_blockers = {profile.kinds.get(n, n) for n in profile.class_labels if profile.role_of(n) == "blocker"}
    kinds: dict[str, str] = {}
    roles: dict[str, str] = {}
    names: dict[str, str] = {}
    taken = set(profile.names.values())
    for n in new:
        got = verdicts.get(n)
        kind = got.kind if got is not None and got.joined else n
        if km.roles.get(n) == "blocker" or kind in old_blockers:
            role = "blocker"
        elif got is not None and got.joined:
            role = "special"
        elif got is not None and got.colourless:
            role = "colourless"
        else:
            role = "tile"  # a colour of its own, or a rare look of none: as calibration has it
        name = "multicolour special" if role == "colourless" else f"{colour_name(got.bgr if got else km.bgr[n])} {role}"
        if name in taken or name in names.values():
            name = f"{name} {n}"
        kinds[n], roles[n], names[n] = kind, role, name
    return kinds, roles, names


def _unread_empty(reading: Reading, labels: Sequence[Sequence[str]], r: int, c: int) -> bool:
    """A hole or empty slot the old exemplars did not read as one."""
    return labels[r][c] == EMPTY_LABEL and reading.labels[r][c] != EMPTY_LABEL


def _merged(old: list[Exemplar], added: list[Exemplar], new: set[str]) -> list[Exemplar]:
    """The old exemplars (in their order) and the added ones, within MAX_PER_CLASS in all
    for an old class, and at most MAX_EMPTY "." in all: the oldest holes go first, the
    newest are this level's."""
    have = set(old)
    out = list(old)
    extra: dict[str, int] = {}
    for e in old:
        extra[e.label] = extra.get(e.label, 0) + 1
    for e in added:
        if e in have:
            continue
        if e.label in new or e.label == EMPTY_LABEL:
            out.append(e)
        elif extra.get(e.label, 0) < MAX_PER_CLASS:
            extra[e.label] = extra.get(e.label, 0) + 1
            out.append(e)
    surplus = sum(e.label == EMPTY_LABEL for e in out) - MAX_EMPTY
    if surplus <= 0:
        return out
    drop = [i for i, e in enumerate(out) if e.label == EMPTY_LABEL][:surplus]
    return [e for i, e in enumerate(out) if i not in set(drop)]


def _reason(old: GameProfile, out: GameProfile, new: tuple[str, ...], lent: int, back: Reading,
            labels: Sequence[Sequence[str]]) -> str:  # fmt: skip
    parts = []
    if (out.rows, out.cols, out.board_bbox) != (old.rows, old.cols, old.board_bbox):
        parts.append(f"the board is now {out.rows}x{out.cols} at {list(out.board_bbox)} "
                     f"(was {old.rows}x{old.cols} at {list(old.board_bbox)})")  # fmt: skip
    else:
        parts.append(f"the {out.rows}x{out.cols} board is where the profile says")
    if new:
        parts.append(f"{len(new)} new class{'es' if len(new) > 1 else ''} "
                     + ", ".join(f"{n} ({out.names.get(n, out.role_of(n))})" for n in new))  # fmt: skip
    if lent:
        parts.append(f"{lent} cells of known looks lent exemplars")
    scored = [(r, c) for r, row in enumerate(labels) for c, v in enumerate(row) if v != UNKNOWN_LABEL]
    agree = sum(back.labels[r][c] == labels[r][c] for r, c in scored)
    parts.append(f"{agree} of {len(scored)} cells read back")
    return "; ".join(parts)


# ClassGrower and relabel (agent.vision.grow) are here too: the run learns with both
__all__ = ["ClassGrower", "MIN_KNOWN", "Miss", "Refound", "find_again", "refind_board", "relabel"]
