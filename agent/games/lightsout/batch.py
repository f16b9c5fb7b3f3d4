"""Solving many starts of one puzzle at once, and the lookup table for small puzzles.

`BatchSolver` turns the solver's elimination into three tabulated linear maps (see
`packed.ByteTableMap`): the parity checks (solvable iff all are 0), the particular
solution, and the press matrix itself (for checking answers). Every solution of a
difference is its particular solution XOR an element of the null space, so all
solutions of a batch are one broadcast XOR, and the fewest presses one popcount and
argmin over them.

`LookupTable` is the seed's space-for-time idea for puzzles with few lights: every
possible difference solved once (on first use), all its solutions stored lightest
first, so a batch of solves is one fancy-index: for the turtle a (256, 2) uint16 table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np

from agent.games.lightsout.gf2 import span
from agent.games.lightsout.packed import ByteTableMap, as_words, n_words, pack_ints, popcount
from agent.games.lightsout.puzzle import Puzzle
from agent.games.lightsout.solver import solver_for

BATCH_MAX_COSET = 1 << 12  # all-solutions / fewest-presses batches enumerate at most this many per item
CHUNK_WORDS = 1 << 22  # bound on (items x coset x words) held at once: 32 MiB
TABLE_MAX_LIGHTS = 20
TABLE_MAX_ENTRIES = 1 << 24  # differences x solutions stored


class TooLarge(ValueError):
    """The batch or table would need to enumerate more than it is built for."""


class BatchSolver:
    """Vectorised solves of one puzzle. Batches are differences start ^ goal, given as
    a 1-D integer array (up to 64 lights) or (N, W) packed uint64 words."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.puzzle = puzzle
        solver = solver_for(puzzle)
        elim = solver.elimination
        nb, nl = puzzle.n_buttons, puzzle.n_lights
        self.nullity = elim.nullity
        self.checks = len(elim.left_null)
        # syndrome: bit i of the image of light j is set when check i involves light j
        syndrome_cols = [sum(1 << i for i, y in enumerate(elim.left_null) if (y >> j) & 1) for j in range(nl)]
        self._syndrome = ByteTableMap.from_columns(syndrome_cols, max(1, self.checks)) if self.checks else None
        self._particular = ByteTableMap.from_columns(elim.particular_map(), nb)
        self._press = ByteTableMap.from_columns(puzzle.actions, nl)
        self._null_span = (
            pack_ints(span(solver.null_basis), nb) if (1 << self.nullity) <= BATCH_MAX_COSET else None
        )  # (2^k, W): the null space in Gray-free doubling order, 0 first

    @property
    def buttons_words(self) -> int:
        return n_words(self.puzzle.n_buttons)

    def solvable(self, diffs: np.ndarray) -> np.ndarray:
        words = as_words(diffs, self.puzzle.n_lights)
        if self._syndrome is None:
            return np.ones(len(words), dtype=bool)
        return cast(np.ndarray, ~self._syndrome(words).any(axis=1))

    def one(self, diffs: np.ndarray) -> np.ndarray:
        """The particular solution of each difference, (N, W) uint64 (meaningless where unsolvable)."""
        return self._particular(diffs)

    def press(self, presses: np.ndarray) -> np.ndarray:
        """The change in lights each press set makes, (N, W_lights) uint64: for checking answers."""
        return self._press(presses)

    def _span(self) -> np.ndarray:
        if self._null_span is None:
            raise TooLarge(
                f"{self.puzzle.name} has 2^{self.nullity} solutions per solvable state; batches enumerate at most "
                f"{BATCH_MAX_COSET}: solve these one by one with Solver.fewest"
            )
        return self._null_span

    def all(self, diffs: np.ndarray) -> np.ndarray:
        """Every solution of each difference: (N, 2^nullity, W) uint64 (meaningless where unsolvable)."""
        return cast(np.ndarray, self.one(diffs)[:, None, :] ^ self._span()[None, :, :])

    def fewest(self, diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(solvable (N,), fewest-press solution (N, W), its press count (N,), -1 if unsolvable)."""
        null = self._span()
        words = as_words(diffs, self.puzzle.n_lights)
        ok = self.solvable(words)
        part = self.one(words)
        k, w = null.shape
        best = np.empty_like(part)
        count = np.empty(len(part), dtype=np.int64)
        step = max(1, CHUNK_WORDS // (k * w))
        for lo in range(0, len(part), step):
            cand = part[lo : lo + step, None, :] ^ null[None, :, :]  # (n, k, w)
            # one word: bitwise_count's uint8 directly, which argmin scans fastest
            weight = np.bitwise_count(cand[..., 0]) if w == 1 else popcount(cand)
            # flat gather: faster than take_along_axis or [rows, pick] on these shapes
            flat = np.arange(len(cand)) * k + weight.argmin(axis=1)
            best[lo : lo + step] = cand.reshape(-1, w)[flat]
            count[lo : lo + step] = weight.reshape(-1)[flat]
        count[~ok] = -1
        return ok, best, count


@lru_cache(maxsize=16)
def batch_solver(puzzle: Puzzle) -> BatchSolver:
    return BatchSolver(puzzle)


def _smallest_uint(n_bits: int) -> np.dtype:
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if n_bits <= np.iinfo(dt).bits:
            return np.dtype(dt)
    raise TooLarge(f"{n_bits} buttons do not fit a lookup table entry (64 at most)")


@dataclass(frozen=True, eq=False)
class LookupTable:
    """Every difference's solutions, precomputed.

    `solutions[d]` holds the 2^nullity solutions of difference d as button bitsets,
    lightest first (so column 0 is a fewest-press solution); rows of unsolvable
    differences are all zero and `solvable[d]` is False. `presses[d]` is the fewest
    presses (-1 when unsolvable).
    """

    puzzle: Puzzle
    solutions: np.ndarray  # (2^lights, 2^nullity) smallest uint holding the buttons
    solvable: np.ndarray  # (2^lights,) bool
    presses: np.ndarray  # (2^lights,) int8/int16

    def lookup(self, diffs: np.ndarray) -> np.ndarray:
        """All solutions of each difference: one gather, (N, 2^nullity).

        np.take rather than `solutions[diffs]`: for a 2-D table it is about ten times faster
        (one contiguous row copy per index instead of the general fancy-index path)."""
        return np.take(self.solutions, diffs, axis=0)


def table_fits(puzzle: Puzzle) -> bool:
    if puzzle.n_lights > TABLE_MAX_LIGHTS or puzzle.n_buttons > 64:
        return False
    return (1 << puzzle.n_lights) * (1 << solver_for(puzzle).nullity) <= TABLE_MAX_ENTRIES


@lru_cache(maxsize=8)
def lookup_table(puzzle: Puzzle) -> LookupTable:
    """The table of a small puzzle, built on first use and kept (TooLarge if it would not fit)."""
    if not table_fits(puzzle):
        raise TooLarge(
            f"{puzzle.name} has {puzzle.n_lights} lights and {puzzle.n_buttons} buttons: a lookup table holds "
            f"at most {TABLE_MAX_LIGHTS} lights, 64 buttons and {TABLE_MAX_ENTRIES} solutions"
        )
    bs = batch_solver(puzzle)
    diffs = np.arange(1 << puzzle.n_lights, dtype=np.uint64)
    sols = bs.all(diffs)[:, :, 0]  # (2^L, 2^k): one word, since buttons <= 64
    order = np.argsort(popcount(sols[..., None]), axis=1, kind="stable")
    sols = np.take_along_axis(sols, order, axis=1)
    ok = bs.solvable(diffs)
    sols[~ok] = 0
    presses = np.where(ok, popcount(sols[:, :1, None])[:, 0], -1)
    dtype = _smallest_uint(puzzle.n_buttons)
    table = LookupTable(
        puzzle,
        np.ascontiguousarray(sols.astype(dtype)),
        ok,
        presses.astype(np.int8 if puzzle.n_buttons < 128 else np.int16),
    )
    for arr in (table.solutions, table.solvable, table.presses):
        arr.setflags(write=False)
    return table
