"""Solving one toggle puzzle: is it solvable, how many solutions, which has the fewest presses.

Pressing the set of buttons x changes the state by A x (A: lights x buttons over GF(2)),
so going from `start` to `goal` means solving A x = start ^ goal. One elimination of A
per puzzle (cached) answers every start and goal:

- solvable iff the difference passes every parity check of the left null space; when it
  does not, the smallest failing check names a set of lights that every button toggles
  an even number of, so their count of lights off-goal can never change parity;
- the solutions are one particular solution plus the null space: 2^nullity of them;
- the fewest presses is the lightest vector of that coset. It is found exactly by
  enumerating the coset (vectorised) up to `ENUMERATE_MAX_NULLITY`; beyond that the
  answer is the best a local search found, flagged `exact=False` with a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator, Sequence

import numpy as np

from agent.games.lightsout.gf2 import Elimination, bits, eliminate, parity, span
from agent.games.lightsout.packed import n_words, pack_ints, popcount, unpack_ints
from agent.games.lightsout.puzzle import Puzzle

ENUMERATE_MAX_NULLITY = 22  # 4M candidates
ENUMERATE_MAX_WORDS = 1 << 26  # candidates x 64-bit words scanned: about a second at most
ENUMERATE_BLOCK = 16  # candidates are scanned in blocks of 2^16 (bounded memory)
EXPLAIN_MAX_CHECKS = 16  # search all 2^m parity checks for the smallest failing one up to here
LOCAL_SEARCH_RESTARTS = 64


@dataclass(frozen=True)
class SolveResult:
    """What the solver knows about going from `start` to `goal`.

    `solution` is a set of buttons (bit b = press button b) with the fewest presses found;
    `exact` says whether that is proven to be the minimum. `min_count` is how many
    solutions have that many presses (when exact). When unsolvable, `unreachable` is a
    smallest set of lights whose parity no press can fix.
    """

    puzzle: Puzzle
    start: int
    goal: int
    solvable: bool
    rank: int
    nullity: int
    solution: int | None
    min_presses: int | None
    exact: bool
    min_count: int | None
    unreachable: tuple[int, ...] = ()
    note: str = ""

    @property
    def solutions(self) -> int:
        """How many button sets solve it (order never matters; pressing twice is a no-op)."""
        return 1 << self.nullity if self.solvable else 0

    @property
    def presses(self) -> list[int]:
        return bits(self.solution) if self.solution is not None else []

    @property
    def reason(self) -> str:
        """Why it cannot be solved, in words ('' when it can)."""
        if self.solvable:
            return ""
        labels = [self.puzzle.light_label(i) for i in self.unreachable]
        if len(labels) == 1:
            return f"{labels[0]} differs from the goal and no button toggles it"
        shown = ", ".join(labels[:12]) + (f" and {len(labels) - 12} more" if len(labels) > 12 else "")
        return (
            f"every button toggles an even number of the lights {shown}, so how many of them differ "
            "from the goal can never change parity; here it is odd"
        )


class Solver:
    """All the answers for one puzzle, from one elimination (see module docstring)."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.puzzle = puzzle
        self.elimination: Elimination = eliminate(puzzle.rows, puzzle.n_buttons)
        self.null_basis: tuple[int, ...] = self.elimination.null_basis()

    @property
    def rank(self) -> int:
        return self.elimination.rank

    @property
    def nullity(self) -> int:
        return self.elimination.nullity

    def _diff(self, start: int, goal: int | None) -> int:
        g = self.puzzle.goal if goal is None else goal
        full = self.puzzle.full()
        if start < 0 or start & ~full or g < 0 or g & ~full:
            raise ValueError(f"states of {self.puzzle.name} have {self.puzzle.n_lights} lights")
        return start ^ g

    def solvable(self, start: int, goal: int | None = None) -> bool:
        return self.elimination.consistent(self._diff(start, goal))

    def one(self, start: int, goal: int | None = None) -> int | None:
        """Some solution (free buttons unpressed), or None."""
        d = self._diff(start, goal)
        return self.elimination.particular(d) if self.elimination.consistent(d) else None

    def all(self, start: int, goal: int | None = None) -> Iterator[int]:
        """Every solution, in Gray-code order (2^nullity of them: mind the size)."""
        x = self.one(start, goal)
        if x is None:
            return
        yield x
        basis = self.null_basis
        for i in range(1, 1 << len(basis)):
            x ^= basis[(i & -i).bit_length() - 1]  # Gray code: step i flips the basis vector at i's lowest set bit
            yield x

    def unreachable(self, diff: int) -> tuple[int, ...]:
        """A smallest set of lights whose parity check `diff` fails (empty if it fails none)."""
        checks = self.elimination.left_null
        failing = [y for y in checks if parity(y & diff)]
        if not failing:
            return ()
        if len(checks) <= EXPLAIN_MAX_CHECKS:
            pool = [y for y in span(checks) if parity(y & diff)]
        else:
            pool = failing
        return tuple(bits(min(pool, key=lambda y: (y.bit_count(), y))))

    def fewest(self, start: int, goal: int | None = None) -> tuple[int, bool, int | None] | None:
        """(solution, exact, how many solutions share its press count) or None if unsolvable."""
        p = self.one(start, goal)
        if p is None:
            return None
        if self.enumerable:
            return _lightest_in_coset(p, self.null_basis, self.puzzle.n_buttons)
        return _local_search(p, self.null_basis), False, None

    @property
    def enumerable(self) -> bool:
        """Can every solution be tried, so the fewest presses is exact?"""
        k, w = self.nullity, n_words(self.puzzle.n_buttons)
        return k <= ENUMERATE_MAX_NULLITY and (w << k) <= ENUMERATE_MAX_WORDS

    def solve(self, start: int | None = None, goal: int | None = None) -> SolveResult:
        pz = self.puzzle
        if start is None:
            if pz.start is None:
                raise ValueError(f"{pz.name} has no start state: give one")
            start = pz.start
        g = pz.goal if goal is None else goal
        d = self._diff(start, g)
        common: dict[str, Any] = dict(puzzle=pz, start=start, goal=g, rank=self.rank, nullity=self.nullity)
        if not self.elimination.consistent(d):
            return SolveResult(
                **common, solvable=False, solution=None, min_presses=None, exact=True, min_count=None,
                unreachable=self.unreachable(d),
            )  # fmt: skip
        found = self.fewest(start, g)
        assert found is not None
        x, exact, count = found
        note = "" if exact else (
            f"the 2^{self.nullity} solutions ({pz.n_buttons} buttons each) are too many to try (this solver tries "
            f"at most 2^{ENUMERATE_MAX_NULLITY} solutions and {ENUMERATE_MAX_WORDS:,} 64-bit words in all): this "
            "is the fewest presses a local search found, not proven minimal"
        )  # fmt: skip
        return SolveResult(
            **common, solvable=True, solution=x, min_presses=x.bit_count(), exact=exact, min_count=count, note=note
        )


@lru_cache(maxsize=64)
def solver_for(puzzle: Puzzle) -> Solver:
    """The solver of a puzzle, eliminated once and kept."""
    return Solver(puzzle)


def _coset_words(p: int, basis: Sequence[int], n_bits: int) -> np.ndarray:
    """Every p ^ span(basis) as packed words, (2^len(basis), W), by doubling."""
    out = pack_ints([p], n_bits)
    for v in pack_ints(list(basis), n_bits):
        out = np.concatenate([out, out ^ v])
    return out


def _lightest_in_coset(p: int, basis: tuple[int, ...], n_bits: int) -> tuple[int, bool, int]:
    """Try every solution: a block of the first basis vectors' combinations at a time,
    moved across the coset by the rest of the basis in Gray-code order (one XOR a block)."""
    inner, outer = basis[:ENUMERATE_BLOCK], basis[ENUMERATE_BLOCK:]
    block = _coset_words(0, inner, n_bits)
    outer_words = pack_ints(list(outer), n_bits)
    offset = pack_ints([p], n_bits)[0]
    best_weight, best, count = None, offset, 0
    for i in range(1 << len(outer)):
        if i:
            offset = offset ^ outer_words[(i & -i).bit_length() - 1]
        weight = popcount(block ^ offset)
        low = int(weight.min())
        if best_weight is None or low < best_weight:
            best_weight, count = low, 0
            best = block[int(np.argmax(weight == low))] ^ offset
        if low == best_weight:
            count += int((weight == low).sum())
    return unpack_ints(best)[0], True, count


def _local_search(p: int, basis: tuple[int, ...], restarts: int = LOCAL_SEARCH_RESTARTS) -> int:
    """Descent by single and pair moves in the null space, from p and from random
    members of its coset; seeded, so the same puzzle always gives the same answer."""
    rng = np.random.default_rng(0)
    k = len(basis)
    best = p
    for attempt in range(restarts):
        x = p
        if attempt:
            for pick in np.flatnonzero(rng.integers(0, 2, size=k)):
                x ^= basis[int(pick)]
        improved = True
        while improved:
            improved = False
            for v in basis:
                if (x ^ v).bit_count() < x.bit_count():
                    x ^= v
                    improved = True
            if improved:
                continue
            for i in range(k):
                for j in range(i + 1, k):
                    v = basis[i] ^ basis[j]
                    if (x ^ v).bit_count() < x.bit_count():
                        x ^= v
                        improved = True
        if x.bit_count() < best.bit_count():
            best = x
    return best
