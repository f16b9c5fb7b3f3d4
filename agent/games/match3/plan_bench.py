"""Benchmarks of the plan library and the plan solver (`agent bench solve`, `agent bench
play`): the exhaustive search the plan solver is measured against, and whole games on
the rules engine with every solver on the same seeds."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, cast

import numpy as np

from agent.games.match3.board import Board, Move, adjacent_swaps
from agent.games.match3 import bitrules as br
from agent.games.match3.candidates import Evaluator, score_of
from agent.games.match3.plan_solver import Outcome, PlanSolver, default_objective, replay
from agent.games.match3.rules import (
    GameState, Match3Config, Variant, apply_move, has_match, is_legal_swap, is_over, new_game, random_board,
)
from agent.games.match3.solver import GreedySolver, Solver, make_solver

Progress = Callable[[int, int], None]


def _swaps(board: Board) -> list[Move]:
    """Legal swaps that change the board (two different tiles)."""
    return [m for m in adjacent_swaps(board.rows, board.cols)
            if is_legal_swap(board, m) and board[m.cells()[0]] != board[m.other]]


def exhaustive_best(config: Match3Config, board: Board, objective: str, max_swaps: int = 2) -> Outcome | None:
    """The best sequence of up to `max_swaps` swaps (1 or 2) under the plan solver's rules:
    only the last swap may clear, outcomes from the same whole-board replay."""
    best: Outcome | None = None

    def consider(out: Outcome | None) -> None:
        nonlocal best
        if out is not None and (best is None or out.key(objective) < best.key(objective)):
            best = out

    for first in _swaps(board):
        after = board.swapped(first)
        if has_match(after):
            consider(replay(config, board, (first,)))
        elif max_swaps >= 2 and config.variant == "step":
            for second in _swaps(after):
                if not second.same_swap(first) and has_match(after.swapped(second)):
                    consider(replay(config, board, (first, second)))
    return best


def exhaustive_bits_best(config: Match3Config, board: Board, objective: str) -> int | None:
    """The same search as `exhaustive_best`, on the bit planes the plan solver scores
    with: its best score. Timed too, so the speed-up is also stated against a search
    that is as quick per sequence as the plan solver."""
    ev = Evaluator(config, objective, board)
    stride = ev.lay.stride
    swaps = [m for m in adjacent_swaps(board.rows, board.cols)]
    best: int | None = None
    for first in swaps:
        after = ev.swap(ev.base, first)
        if after is None:
            continue
        if br.has_match(after, stride):
            pred = br.settle(after, ev.lay, ev.levels, config.max_cascades)
            score = score_of(config, objective, 1, pred)
            best = score if best is None else max(best, score)
        elif config.variant == "step":
            for second in swaps:
                if second == first:
                    continue
                last = ev.swap(after, second)
                if last is not None and br.has_match(last, stride):
                    pred = br.settle(last, ev.lay, ev.levels, config.max_cascades)
                    score = score_of(config, objective, 2, pred)
                    best = score if best is None else max(best, score)
    return best


@dataclass
class SolveBench:
    boards: int
    objective: str = "gain"
    prune: bool = True
    plan_ms: list[float] = field(default_factory=list)
    match_ms: list[float] = field(default_factory=list)
    exhaustive_ms: list[float] = field(default_factory=list)
    exhaustive_bits_ms: list[float] = field(default_factory=list)
    bits_disagree: int = 0  # boards where the two exhaustive searches differ (a bug if any)
    at_least_as_good: int = 0
    better: int = 0  # plan solver strictly better (a plan longer than two swaps)
    plan_scores: list[int] = field(default_factory=list)
    exhaustive_scores: list[int] = field(default_factory=list)
    plan_steps: list[int] = field(default_factory=list)
    losses: Counter[str] = field(default_factory=Counter)  # why the exhaustive search did better

    def summary(self) -> dict[str, Any]:
        med = statistics.median
        n = max(1, len(self.plan_ms))
        out = {
            "boards": self.boards,
            "objective": self.objective,
            "prune": self.prune,
            "median_match_ms": round(med(self.match_ms), 3),
            "median_plan_ms": round(med(self.plan_ms), 3),
            "p90_plan_ms": round(float(np.percentile(self.plan_ms, 90)), 3),
            "at_least_as_good_pct": round(100.0 * self.at_least_as_good / n, 2),
            "strictly_better_pct": round(100.0 * self.better / n, 2),
            "mean_plan_score": round(float(np.mean(self.plan_scores)), 3),
            "mean_plan_swaps": round(float(np.mean(self.plan_steps)), 3),
        }
        if self.exhaustive_ms:
            out["median_exhaustive_ms"] = round(med(self.exhaustive_ms), 3)
            out["speedup"] = round(med(self.exhaustive_ms) / med(self.plan_ms), 1)
            out["median_exhaustive_bits_ms"] = round(med(self.exhaustive_bits_ms), 3)
            out["speedup_vs_bits"] = round(med(self.exhaustive_bits_ms) / med(self.plan_ms), 1)
            out["bits_disagree"] = self.bits_disagree
            out["mean_exhaustive_score"] = round(float(np.mean(self.exhaustive_scores)), 3)
            out["losses"] = dict(self.losses.most_common())
        return out


def why_lost(config: Match3Config, board: Board, better: Outcome, solver: PlanSolver) -> str:
    """Why the exhaustive search found something better than the plan solver's choice,
    by the kind of sequence it found."""
    if len(better.moves) == 1:
        return "a single swap (every clearing swap is weighed: a bug)"
    first, last = better.moves
    if not has_match(board.swapped(last)):
        return "an elimination no plan reaches (a shape outside the library, or more of the type in its window)"
    alone = apply_move(config, GameState(board=board, steps_left=1), last, rng=None).phases[0].groups
    after = apply_move(config, GameState(board=board.swapped(first), steps_left=1), last, rng=None).phases[0].groups
    if alone != after:
        return "a first swap that changes the last one's elimination"
    return "a set-up of a chain the set-up filter does not foresee"


def _fallback(config: Match3Config, board: Board) -> Outcome | None:
    """What the plan solver plays when no plan applies: the best single swap."""
    choice = GreedySolver().choose(config, board)
    return replay(config, board, (choice.move,)) if choice is not None else None


def bench_solve(
    boards: int = 1000, seed: int = 0, objective: str | None = None, exhaustive: bool = True,
    solver: PlanSolver | None = None, prune: bool = True, progress: Progress | None = None,
) -> SolveBench:
    """Seeded random 8x8 boards with 6 types (no three in a row at the start). The plan
    solver goes through all of them first, then the exhaustive searches: each is timed in
    a loop of its own, so neither runs on caches the other has just emptied."""
    config = Match3Config()
    objective = objective or default_objective(config)
    solver = solver or PlanSolver(objective=objective)
    _ = solver.index  # loading is measured separately
    rng = np.random.default_rng(seed)
    result = SolveBench(boards, objective=objective, prune=prune)
    positions = [random_board(config, rng) for _ in range(boards)]
    steps = boards * (2 if exhaustive else 1)
    chosen: list[Outcome | None] = []
    for i, board in enumerate(positions):
        t0 = time.perf_counter()
        solver.index.matches(board)  # timed alone too: the lookup is one part of the total
        t1 = time.perf_counter()
        ranked = solver.rank(config, board, top=1, prune=prune)
        t2 = time.perf_counter()
        result.match_ms.append(1000 * (t1 - t0))
        result.plan_ms.append(1000 * (t2 - t1))
        mine = ranked[0].outcome if ranked else _fallback(config, board)
        chosen.append(mine)
        result.plan_scores.append(mine.score(objective) if mine else 0)
        result.plan_steps.append(len(mine.moves) if mine else 0)
        if progress:
            progress(i + 1, steps)
    if not exhaustive:
        return result
    for i, (board, mine) in enumerate(zip(positions, chosen)):
        t3 = time.perf_counter()
        theirs = exhaustive_best(config, board, objective)
        result.exhaustive_ms.append(1000 * (time.perf_counter() - t3))
        result.exhaustive_scores.append(theirs.score(objective) if theirs else 0)
        t4 = time.perf_counter()
        bits = exhaustive_bits_best(config, board, objective)
        result.exhaustive_bits_ms.append(1000 * (time.perf_counter() - t4))
        result.bits_disagree += bits != (theirs.score(objective) if theirs else None)
        if theirs is None or (mine is not None and mine.score(objective) >= theirs.score(objective)):
            result.at_least_as_good += 1
            if theirs is not None and mine is not None and mine.score(objective) > theirs.score(objective):
                result.better += 1
        else:
            result.losses[why_lost(config, board, theirs, solver)] += 1
        if progress:
            progress(boards + i + 1, steps)
    return result


# -- whole games ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameResult:
    moves: int  # swaps made before the steps ran out (step) or the budget / matches did (classic)
    tiles_cleared: int
    score: int
    steps_gained: int
    steps_left: int  # at the end: what a capped game had in hand
    decide_ms: float  # mean time per decision


def play_game(config: Match3Config, solver: Solver, seed: int, max_moves: int = 200) -> GameResult:
    """One game on the rules engine, refills from the seed. A multi-swap plan is followed
    swap by swap while each leaves the board exactly as predicted (as the play loop does)."""
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    times: list[float] = []
    while not is_over(config, state) and state.moves_made < max_moves:
        t = time.perf_counter()
        choice = solver.choose(config, state.board)
        times.append(time.perf_counter() - t)
        if choice is None:
            break
        while choice is not None and not is_over(config, state) and state.moves_made < max_moves:
            state = apply_move(config, state, choice.move, rng).state
            choice = choice.next_on(state.board)
    return GameResult(
        state.moves_made, state.tiles_cleared, state.score, state.steps_gained, state.steps_left,
        1000 * float(np.mean(times)) if times else 0.0,
    )


BENCH_SOLVERS = ("random", "greedy", "plan")


def bench_play(
    variant: str = "step", games: int = 200, seed: int = 0, solvers: tuple[str, ...] = BENCH_SOLVERS,
    max_moves: int = 200, progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, list[GameResult]]:
    config = Match3Config(variant=cast(Variant, variant))  # checked by Match3Config
    results: dict[str, list[GameResult]] = {}
    for name in solvers:
        out = []
        for g in range(games):
            out.append(play_game(config, make_solver(name, seed + g), seed + g, max_moves))
            if progress:
                progress(name, g + 1, games)
        results[name] = out
    return results


def play_summary(results: dict[str, list[GameResult]], max_moves: int) -> dict[str, dict[str, float]]:
    table = {}
    for name, games in results.items():
        table[name] = {
            "games": len(games),
            "mean_moves": round(float(np.mean([g.moves for g in games])), 2),
            "mean_tiles": round(float(np.mean([g.tiles_cleared for g in games])), 2),
            "mean_score": round(float(np.mean([g.score for g in games])), 1),
            "mean_steps_gained": round(float(np.mean([g.steps_gained for g in games])), 2),
            "mean_steps_left": round(float(np.mean([g.steps_left for g in games])), 2),
            "mean_decide_ms": round(float(np.mean([g.decide_ms for g in games])), 2),
            "at_cap": sum(g.moves >= max_moves for g in games),
        }
    return table
