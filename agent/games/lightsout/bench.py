"""The figures `agent bench lightsout` prints.

Two batches, as the issue asks: N random turtle solves returning both solutions each
(the seed's table: Java, 80 ms for 1,000,000 with a lookup table), and M random 5x5
Lights Out solves for the fewest presses. Every timed batch is best-of-`repeat` on
inputs made beforehand; the cold figure adds making the inputs and building the table,
as the seed's own timing included building its dictionary. Every answer is then
checked (outside the timing): each returned press set really turns start into goal.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, TypeVar, cast

import numpy as np

from agent.games.lightsout.batch import batch_solver, lookup_table
from agent.games.lightsout.packed import WORD, n_words, popcount, unpack_ints
from agent.games.lightsout.puzzle import lights_out, turtle
from agent.games.lightsout.solver import solver_for

_T = TypeVar("_T")

SEED_JAVA_MS = 80.0  # seed 004: 1,000,000 turtle solves (both solutions) with a lookup table


@dataclass
class Figure:
    name: str
    label: str  # short, for a table column
    items: int
    best_s: float  # best of the timed runs
    runs: list[float]
    cold_s: float | None = None  # first run including input generation and table build
    checked: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median_s(self) -> float:
        return float(np.median(self.runs))

    @property
    def per_item_ns(self) -> float:
        return 1e9 * self.best_s / self.items

    @property
    def per_second(self) -> float:
        return self.items / self.best_s if self.best_s > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"per_item_ns": round(self.per_item_ns, 2), "per_second": round(self.per_second),
                              "median_s": self.median_s}


def _best(fn: Callable[[], _T], repeat: int) -> tuple[float, list[float], _T]:
    runs: list[float] = []
    out: _T | None = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        runs.append(time.perf_counter() - t)
    return min(runs), runs, cast(_T, out)  # (min raises first when nothing ran)


def bench_turtle(n: int = 1_000_000, repeat: int = 5, seed: int = 0) -> Figure:
    puzzle = turtle()
    lookup_table.cache_clear()  # the cold figure includes building the table, as the seed's did
    t_cold = time.perf_counter()
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 256, n, dtype=np.uint8)
    goals = rng.integers(0, 256, n, dtype=np.uint8)
    table = lookup_table(puzzle)
    table.lookup(starts ^ goals)
    cold = time.perf_counter() - t_cold

    def rebuild() -> None:
        lookup_table.cache_clear()
        lookup_table(puzzle)

    table_s = _time(rebuild)
    table = lookup_table(puzzle)

    best, runs, sols = _best(lambda: table.lookup(starts ^ goals), repeat)
    sols = np.asarray(sols)
    diffs = (starts ^ goals).astype(np.uint64)
    press = batch_solver(puzzle).press
    both_solve = all(bool((press(sols[:, j].astype(np.uint64))[:, 0] == diffs).all()) for j in range(sols.shape[1]))
    distinct = bool((sols[:, 0] != sols[:, 1]).all())
    if not (both_solve and distinct and sols.shape[1] == 2 and bool(table.solvable.all())):
        raise AssertionError("turtle batch: a returned solution does not solve its puzzle")
    return Figure(
        "turtle, both solutions (lookup table)", "turtle table", n, best, runs, cold,
        checked=f"all {n:,} x 2 solutions turn start into goal, and the two differ",
        extra={"table_build_ms": round(1000 * table_s, 3), "table_shape": list(table.solutions.shape),
               "table_dtype": str(table.solutions.dtype)},
    )  # fmt: skip


def bench_grid_min(n: int = 100_000, rows: int = 5, cols: int = 5, repeat: int = 5, seed: int = 0) -> Figure:
    puzzle = lights_out(rows, cols)
    t_cold = time.perf_counter()
    bs = batch_solver(puzzle)
    rng = np.random.default_rng(seed)
    # random solvable boards: the goal (all off) with a random set of buttons pressed
    presses = random_bits(rng, n, puzzle.n_buttons)
    boards = bs.press(presses)
    bs.fewest(boards)
    cold = time.perf_counter() - t_cold

    best, runs, out = _best(lambda: bs.fewest(boards), repeat)
    ok, sol, count = out
    if not (bool(ok.all()) and bool((bs.press(sol) == boards).all()) and bool((count <= popcount(presses)).all())):
        raise AssertionError("grid batch: a returned solution does not solve its board")
    # the batch minimum agrees with the one-at-a-time solver on a sample
    solver = solver_for(puzzle)
    sample = np.random.default_rng(seed + 1).choice(n, size=min(n, 500), replace=False)
    for i, b in zip(sample, unpack_ints(boards[sample])):
        found = solver.fewest(b, 0)
        assert found is not None and found[0].bit_count() == int(count[i])
    solvable_share = float(bs.solvable(random_bits(rng, n, puzzle.n_lights)).mean())
    return Figure(
        f"{rows}x{cols} Lights Out, fewest presses (batch)", f"{rows}x{cols} fewest", n, best, runs, cold,
        checked=(f"all {n:,} solutions turn the board off and use no more presses than made it; "
                 f"{len(sample)} agree with the one-at-a-time solver"),
        extra={"mean_min_presses": round(float(count.mean()), 3), "max_min_presses": int(count.max()),
               "nullity": bs.nullity, "uniform_random_boards_solvable": round(solvable_share, 4),
               "expected_solvable": 2.0 ** -len(solver.elimination.left_null)},
    )  # fmt: skip


def bench_scalar(n: int = 20_000, seed: int = 0) -> Figure:
    """One Python call per turtle solve (Solver.all), for comparison with the batch."""
    puzzle = turtle()
    solver = solver_for(puzzle)
    rng = np.random.default_rng(seed)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 256, size=(n, 2))]
    best, runs, _ = _best(lambda: [list(solver.all(a, b)) for a, b in pairs], 3)
    return Figure("turtle, both solutions (one Python call each)", "turtle 1-by-1", n, best, runs)


def random_bits(rng: np.random.Generator, n: int, n_bits: int) -> np.ndarray:
    """n uniformly random n_bits-bit vectors as packed words (N, W) uint64."""
    w = n_words(n_bits)
    out = rng.integers(0, np.iinfo(np.uint64).max, size=(n, w), dtype=np.uint64, endpoint=True)
    spare = WORD * w - n_bits
    if spare:
        out[:, -1] >>= np.uint64(spare)
    return out


def _time(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
