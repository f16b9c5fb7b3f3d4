"""How well calibration reads labelled screenshots: the measures, and the labelled sets.

A reader's class names mean nothing by themselves, so cells are scored under the best
one-to-one mapping of its classes to the label's names (Hungarian assignment on the
confusion counts): over-splitting one kind into two classes costs the smaller part,
merging two kinds costs the smaller kind. "." (no tile) maps only to ".", and "#" (a
blocker) only to "#": a blocker read as a colour is a misread board, whatever the
mapping; every other name (a colourless special "*" too) is a class like any. A cell the
label marks "?" (its author could not tell: a gem mid-fall, a score over it) is not
scored; a cell the reader calls "?" is scored and never right.

The labelled sets live in the project's shared folder (`../shared` beside the
repository, see `shared_dir`): `realshots/labels.json` (six games, hand-labelled) and
`realshots/bbb/` (20 Bejeweled Blitz board crops, labelled by colour by their author).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from agent.errors import AgentError
from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL

UNSCORED = UNKNOWN_LABEL  # in a truth label: a cell nobody could label
BLOCKER = "#"  # a cell of the board that holds an obstacle, not a tile
FIXED = (EMPTY_LABEL, BLOCKER)  # names that map only to themselves
Grid = Sequence[Sequence[str]]
Box = Sequence[int]


class LabelsError(AgentError):
    """A label file of a labelled set that does not parse."""

    hint = "fix the label file (its folder's README gives the format), or remove the shot"


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two [x0, y0, x1, y1] boxes (x1, y1 exclusive)."""
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / union if union > 0 else 0.0


@dataclass(frozen=True)
class CellScore:
    """Cells right out of cells scored; add scores to total them over shots."""

    right: int
    scored: int

    @property
    def share(self) -> float:
        return self.right / self.scored if self.scored else 1.0

    def __add__(self, other: CellScore) -> CellScore:
        return CellScore(self.right + other.right, self.scored + other.scored)


def cell_score(got: Grid, truth: Grid) -> CellScore:
    """Cells right under the best one-to-one mapping of `got`'s classes to `truth`'s names
    (both rows x cols; "." only to "." and "#" only to "#", truth "?" not scored, got "?"
    never right)."""
    pairs = _scored_pairs(got, truth)
    mapping = _mapping(pairs)
    return CellScore(sum(mapping.get(a) == b for a, b in pairs), len(pairs))


def best_mapping(got: Grid, truth: Grid) -> dict[str, str]:
    """The one-to-one mapping `cell_score` scores under: each of `got`'s names that is
    mapped to a name of `truth` ("." to ".", "#" to "#"; a class left out of the mapping
    is absent: it is wrong wherever it is)."""
    return _mapping(_scored_pairs(got, truth))


def _scored_pairs(got: Grid, truth: Grid) -> list[tuple[str, str]]:
    if [len(r) for r in got] != [len(r) for r in truth]:
        raise ValueError(f"grids differ: {len(got)} rows of {[len(r) for r in got]} vs {[len(r) for r in truth]}")
    return [(a, b) for ga, tb in zip(got, truth) for a, b in zip(ga, tb) if b != UNSCORED]


def _mapping(pairs: list[tuple[str, str]]) -> dict[str, str]:
    out = {v: v for v in FIXED if any(a == v and b == v for a, b in pairs)}
    tiles = [(a, b) for a, b in pairs if a not in (*FIXED, UNKNOWN_LABEL) and b not in FIXED]
    gc = sorted({a for a, _ in tiles})
    tc = sorted({b for _, b in tiles})
    if tiles:
        m = np.zeros((len(gc), len(tc)))
        gi, ti = {v: i for i, v in enumerate(gc)}, {v: i for i, v in enumerate(tc)}
        for a, b in tiles:
            m[gi[a], ti[b]] += 1
        for r, c in zip(*linear_sum_assignment(-m)):
            if m[r, c] > 0:
                out[gc[r]] = tc[c]
    return out


def cell_accuracy(got: Grid, truth: Grid) -> float:
    """Share of the scored cells right (see `cell_score`)."""
    return cell_score(got, truth).share


def class_count(grid: Grid) -> int:
    """Tile classes in a grid: every name but "." and "?"."""
    return len({v for row in grid for v in row} - {EMPTY_LABEL, UNKNOWN_LABEL})


# -- the labelled sets ------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledShot:
    """One labelled screenshot: where it is and what a reader should find on it."""

    set: str  # the set it belongs to: "realshots" or "bbb"
    name: str  # unique within the sets, e.g. "candycrush" or "bbb/snapshot_1337156532"
    path: Path
    rows: int
    cols: int
    bbox: tuple[int, int, int, int]  # [x0, y0, x1, y1], x1/y1 exclusive
    cells: list[list[str]]  # rows x cols names; "." no tile, "?" not scored
    size: tuple[int, int] | None = None  # (width, height) when the label states it

    @property
    def classes(self) -> int:
        return class_count(self.cells)


def shared_dir() -> Path:
    """The project's shared folder: `shared` beside the repository this package runs from."""
    return Path(__file__).resolve().parents[3] / "shared"


def realshots_dir(shared: Path | None = None) -> Path:
    return (shared if shared is not None else shared_dir()) / "realshots"


def six_shots(shared: Path | None = None) -> list[LabelledShot]:
    """The hand-labelled screenshots of `realshots/labels.json` (none if it is absent)."""
    folder = realshots_dir(shared)
    path = folder / "labels.json"
    if not path.is_file():
        return []
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
        return [_shot_of_item(folder, item) for item in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise LabelsError(f"{path}: not a list of labelled shots ({type(exc).__name__}: {exc})") from None


def _shot_of_item(folder: Path, item: dict[str, Any]) -> LabelledShot:
    cells = [[str(v) for v in row] for row in item["cells"]]
    rows, cols = int(item["rows"]), int(item["cols"])
    _check_grid(cells, rows, cols, f"{item['game']}'s cells")
    x0, y0, x1, y1 = (int(v) for v in item["board_bbox"])
    return LabelledShot("realshots", str(item["game"]), folder / item["game"] / item["file"], rows, cols,
                        (x0, y0, x1, y1), cells, (int(item["width"]), int(item["height"])))  # fmt: skip


# The bbb crops' own format (their README): the board is the crop, 8x8 cells of 40 pixels
# from its top-left corner, whatever a few missing pixels at the bottom or right.
BBB_ROWS = BBB_COLS = 8
BBB_CELL = 40


def bbb_shots(shared: Path | None = None) -> list[LabelledShot]:
    """The Bejeweled Blitz crops of `realshots/bbb/`: each `snapshot_N.png` with its
    `snapshot_N.dat` (8 lines of 8 space-separated colour letters, "?" not scored)."""
    folder = realshots_dir(shared) / "bbb"
    out = []
    for dat in sorted(folder.glob("*.dat")) if folder.is_dir() else []:
        png = dat.with_suffix(".png")
        if not png.is_file():
            raise LabelsError(f"{dat}: no image {png.name} beside it")
        out.append(LabelledShot("bbb", f"bbb/{dat.stem}", png, BBB_ROWS, BBB_COLS,
                                (0, 0, BBB_COLS * BBB_CELL, BBB_ROWS * BBB_CELL), read_dat(dat)))  # fmt: skip
    return out


def read_dat(path: Path) -> list[list[str]]:
    """A .dat label: one line per row, its cells separated by spaces."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelsError(f"{path}: cannot be read ({exc})") from None
    cells = [line.split() for line in text.splitlines() if line.strip()]
    _check_grid(cells, BBB_ROWS, BBB_COLS, str(path))
    return cells


def _check_grid(cells: list[list[str]], rows: int, cols: int, what: str) -> None:
    if len(cells) != rows or any(len(row) != cols for row in cells):
        shape = f"{len(cells)} rows of {sorted({len(r) for r in cells})} cells"
        raise LabelsError(f"{what}: {shape}, expected {rows} rows of {cols}")


def labelled_shots(shared: Path | None = None) -> list[LabelledShot]:
    """Every labelled shot of the shared folder: the six games, then the bbb crops."""
    return six_shots(shared) + bbb_shots(shared)
