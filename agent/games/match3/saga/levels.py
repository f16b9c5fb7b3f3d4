"""The level sequence of a seed: each level's shape, blockers, move budget and target.

Level k has 7..9 rows and columns, a pattern of holes (corners cut, a missing centre,
a notch, ...), some crates of 1 or 2 hits, 20..30 moves, and a target score set by
playing it: a greedy player (the swap that clears most at once) plays 60% of the
budget a few times, each on its own draw of refills, and the target is most of the
least it scored, so a decent player reaches it well under the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agent.games.match3.saga.goals import Goal
from agent.games.match3.saga.rules import Board, Cell, fill, first_wave, matching_swaps, play

SHAPES = ("full", "corners", "centre", "diamond", "notch", "sides", "pillars")
# The target is TARGET_SHARE of the least a greedy player scored in TARGET_PLAYS plays of
# TARGET_AT of the budget: measured over 20 levels (4 seeds x 5 levels, 7 more plays of
# each), greedy then reaches it in a median 24% of the budget (p90 54%) and runs out of
# moves in 1 play of 140 (the refills' luck, cascades of specials, has a long tail).
TARGET_SHARE = 0.7
TARGET_AT = 0.6
TARGET_PLAYS = 5
TARGET_STEP = 100


@dataclass(frozen=True)
class Level:
    number: int  # 1-based
    rows: int
    cols: int
    colours: int
    shape: str
    holes: tuple[str, ...]  # rows of "." (hole) and "o" (playable)
    blockers: tuple[tuple[int, int, int], ...]  # (row, col, hits)
    moves: int
    target: int  # the score to reach (a score goal's; other goals show it too)
    goal: Goal = Goal()  # a score goal (the target) unless the world asks otherwise

    def hole_mask(self) -> np.ndarray:
        return np.array([[ch == "." for ch in line] for line in self.holes], bool)

    def blocker_hits(self) -> np.ndarray:
        out = np.zeros((self.rows, self.cols), np.int8)
        for r, c, n in self.blockers:
            out[r, c] = n
        return out

    def start_board(self, rng: np.random.Generator) -> Board:
        return fill(self.hole_mask(), self.blocker_hits(), self.colours, rng)


def hole_pattern(shape: str, rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    h = np.zeros((rows, cols), bool)
    if shape == "corners":
        k = int(rng.integers(1, 3))
        for r in range(k):
            for c in range(k - r):
                h[r, c] = h[r, cols - 1 - c] = h[rows - 1 - r, c] = h[rows - 1 - r, cols - 1 - c] = True
    elif shape == "centre":
        hr, hc = (2 if rows % 2 == 0 else 1), (2 if cols % 2 == 0 else 1)
        if rng.random() < 0.5:
            hr, hc = hr + (1 if hr == 1 else 0), hc
        r0, c0 = (rows - hr) // 2, (cols - hc) // 2
        h[r0 : r0 + hr, c0 : c0 + hc] = True
    elif shape == "diamond":
        k = 2 if min(rows, cols) >= 8 else 1
        for r in range(k + 1):
            for c in range(k + 1 - r):
                h[r, c] = h[r, cols - 1 - c] = h[rows - 1 - r, c] = h[rows - 1 - r, cols - 1 - c] = True
    elif shape == "notch":
        w = 2 if cols % 2 == 0 else 3
        c0 = (cols - w) // 2
        h[0:2, c0 : c0 + w] = True
    elif shape == "sides":
        r0 = (rows - 2) // 2
        h[r0 : r0 + 2, 0] = h[r0 : r0 + 2, cols - 1] = True
    elif shape == "pillars":
        for c in (1, cols - 2):
            h[rows - 2 :, c] = True
    return h


def generate_level(number: int, rng: np.random.Generator, simulate: bool = True) -> Level:
    """Level `number` (1-based) drawn from `rng`; `simulate=False` skips the target's
    greedy play (the target is then a rule of thumb)."""
    rows, cols = int(rng.integers(7, 10)), int(rng.integers(7, 10))
    shape = "full" if number == 1 else SHAPES[int(rng.integers(1, len(SHAPES)))]
    holes = hole_pattern(shape, rows, cols, rng)
    colours = 5 if number == 1 else int(rng.choice([5, 5, 6]))
    free = [(r, c) for r in range(1, rows) for c in range(cols) if not holes[r, c]]
    n_blockers = 0 if number == 1 else int(rng.integers(2, 7))
    picks = rng.choice(len(free), size=min(n_blockers, len(free) // 6), replace=False)
    blockers = tuple(sorted((free[int(i)][0], free[int(i)][1], 2 if rng.random() < 0.4 else 1) for i in picks))
    moves = int(rng.integers(20, 31))
    holes_rows = tuple("".join("." if holes[r, c] else "o" for c in range(cols)) for r in range(rows))
    level = Level(number, rows, cols, colours, shape, holes_rows, blockers, moves, 0)
    if simulate:
        # the least of a few plays: the refills' luck counts for a lot
        score = min(greedy_score(level, np.random.default_rng(rng.integers(2**63)), int(moves * TARGET_AT))
                    for _ in range(TARGET_PLAYS))  # fmt: skip
        target = int(max(TARGET_STEP, (score * TARGET_SHARE) // TARGET_STEP * TARGET_STEP))
    else:
        target = 60 * moves // 2 // TARGET_STEP * TARGET_STEP
    return Level(number, rows, cols, colours, shape, holes_rows, blockers, moves, target)


def greedy_move(board: Board, colours: int, rng: np.random.Generator) -> tuple[Cell, Cell] | None:
    """The swap that clears most in its first wave (a special made counts as 3 more
    tiles): what a player sees on the board, without knowing what will fall in."""
    best, best_pts = None, -1
    for m in matching_swaps(board):
        first = first_wave(board, *m, colours)
        if first is None:
            continue
        pts = len(first.cleared) + 3 * len(first.created)
        if pts > best_pts:
            best, best_pts = m, pts
    return best


def greedy_score(level: Level, rng: np.random.Generator, moves: int) -> int:
    board = level.start_board(rng)
    score = 0
    for _ in range(moves):
        m = greedy_move(board, level.colours, rng)
        if m is None:
            break
        out = play(board, *m, level.colours, rng)
        assert out.board is not None
        board, score = out.board, score + out.points
    return score


@lru_cache(maxsize=256)
def level_of(seed: int, number: int) -> Level:
    """Level `number` of `seed` (kept: drawing one plays it a few times)."""
    return generate_level(number, level_rng(seed, number))


def level_rng(seed: int, number: int) -> np.random.Generator:
    """The generator a level is drawn from: the seed's, one stream per level."""
    return stream(seed, 1, number)


def stream(seed: int, *tags: int) -> np.random.Generator:
    """One of a seed's independent streams, named by `tags` (the whole seed counts:
    any int, negative ones too)."""
    return np.random.default_rng([int(seed) % (1 << 64), *(int(t) for t in tags)])
