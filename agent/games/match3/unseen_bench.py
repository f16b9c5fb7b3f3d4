"""`agent bench unseen`: calibration on look-alike screens the project has never seen.

Each screen of `agent.games.match3.lookalike` comes with its truth. The benchmark
calibrates it with `calibrate_frame`, as `agent calibrate` would, and scores what it
found as `agent bench realshots` does (`agent.vision.scoring`):

- grid (rows x cols) exact, and the board box's IoU with the truth's cell area;
- cells: the clustering's appearance classes against the truth's `looks`, and colour
  kinds (`kind_labels`) against its `kinds`, each under the best one-to-one mapping
  ("." only to ".", "#" only to "#", "?" not scored); nothing is right on a wrong grid;
- moving or covered cells (pieces mid-fall, a score over a cell; "?" in the truth): a
  cell is *misread* when its kind maps to a colour that does not show in it (reading
  it "?", ".", or as a class that maps to no colour, is not a misread);
- refusals: a screen whose truth says refuse (a dialog, a dimmed screen) must raise
  NoBoardError; a board screen must not;
- seconds to calibrate, and the median time of reading the frame with the profile.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from agent.games.match3.lookalike import Case, Truth, make_case
from agent.games.match3.vision_bench import CALIBRATE_TARGET_S, CELLS_TARGET, IOU_TARGET, READ_TARGET_MS, Target, kinds_view
from agent.games.match3.game import Match3Screen
from agent.vision.calibrate import Calibration, calibrate_frame
from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.locate import NoBoardError
from agent.vision.scoring import BLOCKER, UNSCORED, CellScore, best_mapping, cell_score, class_count, iou

READ_SCREEN = (1080, 2400)  # the screen size the read target is stated for
READ_RUNS = 5


@dataclass(frozen=True)
class ScreenResult:
    """One look-alike screen calibrated and scored."""

    family: str
    seed: int
    screen: tuple[int, int]
    truth_grid: tuple[int, int]
    grid: tuple[int, int] | None  # found; None when calibration refused
    iou: float
    classes: int | None  # appearance classes found
    truth_classes: int  # distinct looks in the truth
    cells: CellScore | None  # appearance; None on a screen that must be refused
    kinds: CellScore | None
    covered: int  # moving or covered cells ("?" with colours showing) on the screen
    misread: int  # of them, read as a colour that does not show there
    must_refuse: str | None  # the truth's reason
    refused: str | None  # calibration's reason
    seconds: float
    read_ms: float | None  # median time of profile.read(frame)

    @property
    def name(self) -> str:
        return f"{self.family}/{self.seed}"

    @property
    def grid_exact(self) -> bool:
        return self.grid == self.truth_grid

    @property
    def refusal_right(self) -> bool:
        return (self.refused is not None) == (self.must_refuse is not None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "family": self.family, "seed": self.seed, "screen": list(self.screen),
            "truth_grid": list(self.truth_grid), "grid": list(self.grid) if self.grid else None,
            "grid_exact": self.grid_exact, "iou": round(self.iou, 4),
            "classes": self.classes, "truth_classes": self.truth_classes,
            "cells_right": self.cells.right if self.cells else None, "cells_scored": self.cells.scored if self.cells else None,
            "kinds_right": self.kinds.right if self.kinds else None, "kinds_scored": self.kinds.scored if self.kinds else None,
            "covered": self.covered, "misread": self.misread,
            "must_refuse": self.must_refuse, "refused": self.refused, "refusal_right": self.refusal_right,
            "seconds": round(self.seconds, 3), "read_ms": None if self.read_ms is None else round(self.read_ms, 2),
        }  # fmt: skip


def misread_cells(kinds: Sequence[Sequence[str]], truth: Truth) -> int:
    """Covered cells whose kind maps (under the scoring's mapping) to a colour that does
    not show in them; a "#" read on a moving piece is a misread too."""
    mapping = best_mapping(kinds, truth.kinds)
    out = 0
    for r, c, showing in truth.covered:
        got = kinds[r][c]
        if got in (UNKNOWN_LABEL, EMPTY_LABEL):
            continue
        if got == BLOCKER or (got in mapping and mapping[got] not in showing):
            out += 1
    return out


def _read_ms(cal: Calibration, frame: np.ndarray, runs: int = READ_RUNS) -> float:
    cal.profile.read(frame)  # warm
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        cal.profile.read(frame)
        times.append(1000.0 * (time.perf_counter() - t))
    return float(np.median(times))


def _scored(grid: Sequence[Sequence[str]]) -> int:
    return sum(v != UNSCORED for row in grid for v in row)


def score_case(case: Case) -> tuple[ScreenResult, Calibration | None]:
    """Calibrate the case's screen and score it against its truth."""
    tr, frame = case.truth, case.frame
    t = time.perf_counter()
    try:
        cal: Calibration | None = calibrate_frame(frame, hints=Match3Screen.role_hints)
        refused = None
    except NoBoardError as exc:
        cal, refused = None, str(exc)
    seconds = time.perf_counter() - t
    grid_truth = (tr.rows, tr.cols)
    truth_classes = class_count(tr.looks)
    board = tr.refuse is None
    no_cells = CellScore(0, _scored(tr.looks)) if board else None
    no_kinds = CellScore(0, _scored(tr.kinds)) if board else None
    if cal is None:
        return ScreenResult(tr.family, tr.seed, tr.screen, grid_truth, None, 0.0, None, truth_classes, no_cells,
                            no_kinds, len(tr.covered), 0, tr.refuse, refused, seconds, None), None  # fmt: skip
    b = cal.board
    grid = (b.rows, b.cols)
    cells, kinds, misread = no_cells, no_kinds, 0
    view = kinds_view()
    if board and grid == grid_truth:
        cells = cell_score(cal.labels, tr.looks)
        if view is not None:
            got = view(cal, frame)
            kinds = cell_score(got, tr.kinds)
            misread = misread_cells(got, tr)
    read = _read_ms(cal, frame) if board else None
    return ScreenResult(tr.family, tr.seed, tr.screen, grid_truth, grid, iou(b.bbox, tr.bbox), class_count(cal.labels),
                        truth_classes, cells, kinds, len(tr.covered), misread, tr.refuse, None, seconds, read), cal  # fmt: skip


@dataclass(frozen=True)
class FamilyTotals:
    family: str
    screens: int
    board_screens: int
    grids_exact: int  # of the board screens
    min_iou: float | None  # over the board screens
    cells: CellScore
    kinds: CellScore
    covered: int
    misread: int
    refusals_right: int  # of all screens
    seconds: float  # mean

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["cells"] = {"right": self.cells.right, "scored": self.cells.scored, "share": round(self.cells.share, 4)}
        out["kinds"] = {"right": self.kinds.right, "scored": self.kinds.scored, "share": round(self.kinds.share, 4)}
        out["min_iou"] = None if self.min_iou is None else round(self.min_iou, 4)
        out["seconds"] = round(self.seconds, 3)
        return out


def totals(family: str, results: Sequence[ScreenResult]) -> FamilyTotals:
    boards = [s for s in results if s.must_refuse is None]
    zero = CellScore(0, 0)
    return FamilyTotals(
        family, len(results), len(boards), sum(s.grid_exact for s in boards),
        min((s.iou for s in boards), default=None),
        sum((s.cells for s in boards if s.cells), zero), sum((s.kinds for s in boards if s.kinds), zero),
        sum(s.covered for s in boards), sum(s.misread for s in boards),
        sum(s.refusal_right for s in results), float(np.mean([s.seconds for s in results])) if results else 0.0,
    )  # fmt: skip


@dataclass(frozen=True)
class UnseenReport:
    screens: list[ScreenResult]

    @property
    def families(self) -> list[FamilyTotals]:
        names = list(dict.fromkeys(s.family for s in self.screens))
        return [totals(f, [s for s in self.screens if s.family == f]) for f in names]

    @property
    def overall(self) -> FamilyTotals:
        return totals("all", self.screens)

    @property
    def read_ms(self) -> float | None:
        """Median read time over the board screens of READ_SCREEN size."""
        ms = [s.read_ms for s in self.screens if s.read_ms is not None and s.screen == READ_SCREEN]
        return float(np.median(ms)) if ms else None

    def targets(self) -> list[Target]:
        boards = [s for s in self.screens if s.must_refuse is None]
        refusing = [s for s in self.screens if s.must_refuse is not None]
        n = len(boards)
        all_ = self.overall
        exact = sum(s.grid_exact for s in boards)
        good_iou = sum(s.iou >= IOU_TARGET for s in boards)
        low_cells = [s for s in boards if s.cells is not None and s.cells.share < CELLS_TARGET]
        low_kinds = [s for s in boards if s.kinds is not None and s.kinds.share < CELLS_TARGET]
        refused_right = sum(s.refused is not None for s in refusing)
        boards_refused = sum(s.refused is not None for s in boards)
        slowest = max((s.seconds for s in self.screens), default=0.0)
        read = self.read_ms
        w, h = READ_SCREEN
        return [
            Target("grid exact on every board screen", exact == n, f"{exact} of {n}"),
            Target(f"box IoU >= {IOU_TARGET:g} on every board screen", good_iou == n,
                   f"{good_iou} of {n}; min {all_.min_iou if all_.min_iou is not None else 0:.3f}"),
            Target(f"cells right >= {CELLS_TARGET:.0%} on every board screen", not low_cells,
                   f"{n - len(low_cells)} of {n}; {all_.cells.share:.1%} of all scored cells"),
            Target(f"kinds right >= {CELLS_TARGET:.0%} on every board screen", not low_kinds,
                   f"{n - len(low_kinds)} of {n}; {all_.kinds.share:.1%} of all scored cells"),
            Target("moving or covered cells never misread", all_.misread == 0,
                   f"{all_.misread} misread of {all_.covered}"),
            Target("every dialog or dim screen refused", refused_right == len(refusing),
                   f"{refused_right} of {len(refusing)}"),
            Target("no board screen refused", boards_refused == 0, f"{boards_refused} of {n} refused"),
            Target(f"read <= {READ_TARGET_MS:g} ms on {w}x{h}", None if read is None else read <= READ_TARGET_MS,
                   "no such screen" if read is None else f"median {read:.1f} ms"),
            Target(f"calibrate <= {CALIBRATE_TARGET_S:g} s per frame", slowest <= CALIBRATE_TARGET_S,
                   f"slowest {slowest:.2f} s"),
        ]  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        return {
            "screens": [s.as_dict() for s in self.screens],
            "families": [f.as_dict() for f in self.families],
            "totals": self.overall.as_dict() | {"read_ms": None if self.read_ms is None else round(self.read_ms, 2)},
            "targets": [asdict(t) for t in self.targets()],
        }


def save_case(folder: Path, case: Case, cal: Calibration | None) -> None:
    """The screen's PNG, its truth as JSON, and the calibration's overlay (with its
    legend) when there is one; each written whole (agent.files)."""
    from agent.files import save_png, write_atomic
    from agent.vision.calibrate import class_infos
    from agent.vision.overlay import draw_overlay

    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{case.truth.family}-{case.truth.seed}"
    save_png(case.frame, folder / f"{stem}.png")
    write_atomic(folder / f"{stem}.json", json.dumps(case.truth.as_dict()).encode("utf-8"))
    if cal is not None:
        legend = [(c.letter, c.name or c.role, c.colour) for c in class_infos(cal.profile, cal.labels)]
        img = draw_overlay(case.frame, cal.board.bbox, cal.labels, cal.reading.confidence, title=case.truth.name,
                           legend=legend)  # fmt: skip
        save_png(img, folder / f"{stem}-overlay.png")


def bench_unseen(
    pairs: Sequence[tuple[str, int]],
    progress: Callable[[str, int, int], None] | None = None,
    save: Path | None = None,
) -> UnseenReport:
    """Make, calibrate and score each (family, seed); `progress(what, done, total)`."""
    out = []
    for i, (family, seed) in enumerate(pairs):
        if progress:
            progress(f"{family}/{seed}", i, len(pairs))
        case = make_case(family, seed)
        result, cal = score_case(case)
        out.append(result)
        if save is not None:
            save_case(save, case, cal)
    if progress:
        progress("done", len(pairs), len(pairs))
    return UnseenReport(out)
