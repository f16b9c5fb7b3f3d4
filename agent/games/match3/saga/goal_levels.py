"""The levels of a family world: a shape as the old game's, and a goal from the world's mix.

A collect level asks for N tiles of one colour, a break level for all its blockers
(in blocks, more of them than the old game's levels have), a score level for a target. The goal's
count and the move budget are set by play, as the old game's targets are: a
goal-focused greedy player (`goals.focused_move`) plays the level a few times; a
collect goal's N is most of what it gathered in its first play, and the budget is the
most moves it then needed in the others, with some slack (more for a block of
crates, whose pace varies more from play to play). So a player who goes for the
goal meets it within the budget in most plays, and one who only clears what it can
(the goal-blind greedy player) often runs out. A score level that runs until its moves
are spent gets a target the goal-blind greedy player passes in most full plays.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from agent.games.match3.saga.goals import BREAK, COLLECT, SCORE, Goal, collected_in, moves_to_goal
from agent.games.match3.saga.levels import TARGET_STEP, Level, generate_level, greedy_score, stream

# Measured with `python -m agent.games.match3.saga.goal_bench 10 6 4` (10 seeds, 6 goal
# levels each, 4 fresh plays per player): collect levels won by the goal-focused player
# in 91% of plays and by the goal-blind one in 81%; break levels 89% and 60%. A level is
# drawn in a median 0.25 s (at most ~1 s: a block the focused player needed long for).
# Collecting is won by luck more than breaking: what falls in brings the goal's colour
# to either player, and a one-move-ahead player picks the goal's colour only when a
# match of it is on the board.
COLLECT_MOVES = (14, 22)  # the first play's length: N is COLLECT_SHARE of what it gathered
COLLECT_SHARE = 0.9
COLLECT_COLOURS = 6
PLAYS = 4  # plays that set the budget: the most moves one needed, times SLACK (per kind)
SLACK = {"collect": 1.2, "break": 1.3}  # a block of crates goes at a pace that varies more
MOVES_CAP = 36
# A break level's blockers stand in one or two blocks, as real games pile crates: a
# stray match touches a block's edge seldom, so going for it tells. Hits each takes
# (1, 2, 3) are drawn with BREAK_HITS.
BREAK_BLOCKS = (1, 3)
BREAK_LEAST = 6  # blocks are added until there are this many blockers
BREAK_HITS = (0.3, 0.6, 0.1)
# A greedy play's score varies several-fold from draw to draw: the least of two plays
# was at times above most others (a level the greedy player lost in 4 plays of 5, as no
# real game's designer would ship); the least of four is under nine plays in ten.
END_TARGET_SHARE = 0.75  # of the least score of END_PLAYS full plays
END_PLAYS = 4


@lru_cache(maxsize=512)
def world_level(seed: int, world: int, number: int, mix: tuple[float, float, float], to_end: bool,
                max_colours: int) -> Level:  # fmt: skip
    """Level `number` of `seed` in world `world`, asking goals in `mix` (weights of
    score, collect, break)."""
    rng = stream(seed, 6, world, number)
    base = generate_level(number, rng, simulate=False)
    base = replace(base, colours=min(base.colours, max_colours))
    weights = np.asarray(mix, float) / float(sum(mix))
    kind = (SCORE, COLLECT, BREAK)[int(rng.choice(3, p=weights))]
    play_rng = np.random.default_rng(rng.integers(2**63))
    if kind == SCORE:
        return _score_level(base, to_end, rng, play_rng)
    if kind == BREAK:
        base = _with_blockers(base, rng)
        goal = Goal(BREAK, len(base.blockers))
    else:
        # with more colours a stray clear brings fewer of the goal's: going for it counts more
        base = replace(base, colours=max(base.colours, min(COLLECT_COLOURS, max_colours)))
        colour = int(rng.integers(base.colours))
        probe = Goal(COLLECT, 10**6, colour)
        got = collected_in(base.start_board(play_rng), base.colours, probe, play_rng, int(rng.integers(*COLLECT_MOVES)))
        goal = Goal(COLLECT, max(6, int(got * COLLECT_SHARE)), colour)
    needed = _needed(base, goal, play_rng)
    if kind == BREAK and needed * SLACK[BREAK] >= MOVES_CAP and len(base.blockers) > 4:
        # a block the focused player cannot clear within the cap: a smaller one
        base = replace(base, blockers=base.blockers[: len(base.blockers) // 2])
        goal = Goal(BREAK, len(base.blockers))
        needed = _needed(base, goal, play_rng)
    moves = min(MOVES_CAP, int(math.ceil(needed * SLACK[goal.kind])) + 1)
    return replace(base, moves=moves, target=0, goal=goal)


def _needed(level: Level, goal: Goal, rng: np.random.Generator) -> int:
    worst = 0
    for _ in range(PLAYS):
        k = moves_to_goal(level.start_board(rng), level.colours, goal, rng, MOVES_CAP)
        worst = max(worst, MOVES_CAP if k is None else k)
    return worst


def _score_level(base: Level, to_end: bool, rng: np.random.Generator, play_rng: np.random.Generator) -> Level:
    if not to_end:
        lv = generate_level(base.number, rng)  # the old game's target: reached well before the end
        return replace(lv, colours=base.colours) if lv.colours > base.colours else lv
    moves = int(rng.integers(12, 21))
    lv = replace(base, moves=moves)
    least = min(greedy_score(lv, play_rng, moves) for _ in range(END_PLAYS))
    target = int(max(TARGET_STEP, least * END_TARGET_SHARE // TARGET_STEP * TARGET_STEP))
    return replace(lv, target=target, goal=Goal(SCORE, 0, -1, to_the_end=True))


def _with_blockers(level: Level, rng: np.random.Generator) -> Level:
    holes = level.hole_mask()
    cells: set[tuple[int, int]] = set()
    blocks = int(rng.integers(*BREAK_BLOCKS))
    for k in range(blocks + 4):
        if k >= blocks and len(cells) >= BREAK_LEAST:
            break
        h, w = int(rng.integers(2, 4)), int(rng.integers(2, 5))
        r0 = int(rng.integers(1, max(2, level.rows - h + 1)))
        c0 = int(rng.integers(0, max(1, level.cols - w + 1)))
        cells |= {(r, c) for r in range(r0, min(level.rows, r0 + h)) for c in range(c0, min(level.cols, c0 + w))
                  if not holes[r, c]}  # fmt: skip
    playable = int((~holes).sum())
    # never so many that the board has too few tiles left to match
    keep = sorted(cells)[: max(1, playable // 4)]
    blockers = tuple((r, c, 1 + int(rng.choice(3, p=BREAK_HITS))) for r, c in keep)
    return replace(level, blockers=blockers)
