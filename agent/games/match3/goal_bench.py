"""How much a goal-aware choice does for a level's goal, against the goal-blind one.

Boards are drawn as the saga game's levels are (its shapes, crates and colours) and
played by the saga game's own rules, specials and refills included, so what is counted
is what a game would count: tiles of the goal's colour cleared, blocker hits and blockers
broken. Each player sees the board as the screen reader gives it (a colour letter per
tile and special, `?` for crates and colour bombs, the crates' cells beside it) and both
play the same levels with the same refills, so only the choices differ.

    python -m agent.games.match3.goal_bench --boards 300 --levels 40 --moves 15
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

import numpy as np

from agent.games.base import Decision
from agent.games.match3.board import Board
from agent.games.match3.game import Match3Player
from agent.games.match3.goal_board import ReadBoard
from agent.games.match3.rules import Match3Config
from agent.games.match3.saga import rules as saga
from agent.games.match3.saga.levels import generate_level
from agent.games.match3.solver import GreedySolver, Solver
from agent.vision.goal import Goal

LETTERS = "ABCDEFGH"


def seen(b: saga.Board) -> Board:
    """The saga board as the match-3 reader gives it."""
    rows = [line.replace("#", "?").replace("*", "?") for line in b.kinds()]
    board = Board.parse("\n".join(rows))
    blockers = frozenset((int(r), int(c)) for r, c in zip(*np.nonzero(b.blocker > 0)))
    return ReadBoard(board.cells, blockers) if blockers else board


def config_of(b: saga.Board, colours: int) -> Match3Config:
    rows, cols = b.shape
    return Match3Config(variant="classic", rows=rows, cols=cols, n_types=max(3, colours))


@dataclass(frozen=True)
class Tally:
    collected: int = 0  # tiles of the goal's colour cleared
    hits: int = 0  # blocker hits
    broken: int = 0  # blockers broken
    moves: int = 0

    def add(self, out: saga.Outcome, colour: int | None) -> "Tally":
        got = 0
        hits = 0
        for ph in out.phases:
            if colour is not None:
                got += sum(1 for cell in ph.cleared if ph.before.colour[cell] == colour)
            hits += len(ph.hits)
        return Tally(self.collected + got, self.hits + hits, self.broken + out.blockers_broken, self.moves + 1)


def player(goal: Goal, pursue: bool, config: Match3Config, solver: Solver | None = None) -> Match3Player:
    p = Match3Player(config, solver or GreedySolver(), "classic", goal="auto" if pursue else "off")
    p.set_goal(goal)
    return p


def play_level(b: saga.Board, colours: int, goal: Goal, pursue: bool, moves: int, seed: int) -> Tally:
    """`moves` swaps of one player on `b`, with the refills of `seed`."""
    rng = np.random.default_rng(seed)
    colour = LETTERS.index(goal.colour) if goal.colour else None
    tally = Tally()
    p = player(goal, pursue, config_of(b, colours))
    for _ in range(moves):
        view = seen(b)
        d = p.decide(view)
        if not isinstance(d, Decision):
            break
        out = saga.play(b, *d.move.cells(), colours, rng)
        if not out.applied or out.board is None:
            break
        tally = tally.add(out, colour)
        b = out.board
        p.check(view, d, seen(b))
    return tally


def draw(seed: int, number: int) -> tuple[saga.Board, int]:
    """A level's start board as the saga game draws one (shape, crates, colours)."""
    rng = np.random.default_rng(seed)
    lv = generate_level(number, rng, simulate=False)
    return lv.start_board(rng), lv.colours


@dataclass(frozen=True)
class Figures:
    boards: int
    aware: int  # the goal's count over all boards, goal-aware
    blind: int
    at_least: int  # boards where the goal-aware choice did at least as much
    more: int  # ... strictly more

    def line(self, what: str) -> str:
        return (f"{what}: {self.boards} boards, goal-aware {self.aware} vs blind {self.blind} "
                f"({self.aware / max(1, self.boards):.2f} vs {self.blind / max(1, self.boards):.2f} a board); "
                f"at least as much on {self.at_least}, more on {self.more}")  # fmt: skip


def one_move(boards: int, kind: str, seed: int = 0) -> Figures:
    """One swap on each of `boards` drawn boards: what the goal-aware and the blind greedy
    choice do for the goal (the whole cascade, refills of one seed for both)."""
    aware = blind = at_least = more = 0
    for i in range(boards):
        b, colours = draw(seed * 100_003 + i, 2 + i % 5)
        goal = _goal(kind, i, colours)
        colour = LETTERS.index(goal.colour) if goal.colour else None
        got = []
        for pursue in (True, False):
            t = play_level(b, colours, goal, pursue, 1, seed * 7 + i)
            got.append(t.collected if colour is not None else t.hits)
        aware, blind = aware + got[0], blind + got[1]
        at_least += got[0] >= got[1]
        more += got[0] > got[1]
    return Figures(boards, aware, blind, at_least, more)


def levels(games: int, moves: int, kind: str, seed: int = 0) -> Figures:
    """`moves` swaps on each of `games` levels: the goal's count (tiles collected, or
    blockers broken) of the goal-aware and the blind greedy player."""
    aware = blind = at_least = more = 0
    for i in range(games):
        b, colours = draw(seed * 100_003 + 50_000 + i, 2 + i % 5)
        goal = _goal(kind, i, colours)
        got = []
        for pursue in (True, False):
            t = play_level(b, colours, goal, pursue, moves, seed * 11 + i)
            got.append(t.collected if kind == "collect" else t.broken)
        aware, blind = aware + got[0], blind + got[1]
        at_least += got[0] >= got[1]
        more += got[0] > got[1]
    return Figures(games, aware, blind, at_least, more)


def won_levels(seeds: int, levels: int, plays: int, solver: str = "greedy") -> dict[str, dict[str, float]]:
    """The family's goal levels (collect and break, each with its count and move budget
    set by play), each played `plays` times per player with fresh refills: the share of
    plays won by the goal-aware and by the blind player, per goal kind."""
    from agent.games.match3.saga.goal_levels import world_level
    from agent.games.match3.saga.goals import outcome_progress
    from agent.games.match3.solver import make_solver

    won: dict[str, dict[str, list[bool]]] = {}
    for seed in range(seeds):
        for k in range(2, levels + 2):
            lv = world_level(2000 + seed, 1, k, (0.0, 0.5, 0.5), True, 6)
            if lv.goal.kind not in ("collect", "break"):
                continue
            collect = lv.goal.kind == "collect"
            goal = Goal("collect" if collect else "break", target=lv.goal.count, left=lv.goal.count,
                        colour=LETTERS[lv.goal.colour] if collect else None)  # fmt: skip
            for pursue in (True, False):
                rng = np.random.default_rng([seed, k, 91])
                for _ in range(plays):
                    b = lv.start_board(rng)
                    p = player(goal, pursue, config_of(b, lv.colours), make_solver(solver, seed))
                    got = 0
                    for _ in range(lv.moves):
                        view = seen(b)
                        d = p.decide(view)
                        if not isinstance(d, Decision):
                            break
                        out = saga.play(b, *d.move.cells(), lv.colours, rng)
                        if not out.applied or out.board is None:
                            break
                        got += outcome_progress(lv.goal, out)
                        b = out.board
                        p.check(view, d, seen(b))
                        p.set_goal(replace(goal, left=max(0, lv.goal.count - got)))
                        if got >= lv.goal.count:
                            break
                    who = "aware" if pursue else "blind"
                    won.setdefault(lv.goal.kind, {}).setdefault(who, []).append(got >= lv.goal.count)
    return {kind: {who: float(np.mean(v)) for who, v in by.items()} | {"plays": float(len(by["aware"]))}
            for kind, by in won.items()}  # fmt: skip


def _goal(kind: str, i: int, colours: int) -> Goal:
    if kind == "collect":
        return Goal("collect", target=20, colour=LETTERS[i % colours])
    return Goal("break", target=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--levels", type=int, default=40)
    ap.add_argument("--moves", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--won", type=int, default=0, help="also play the family's goal levels of this many seeds")
    a = ap.parse_args()
    if a.won:
        for kind, shares in won_levels(a.won, 6, 3).items():
            print(f"goal levels won, {kind}:", {k: round(v, 3) for k, v in shares.items()})
    for kind in ("collect", "break"):
        print(one_move(a.boards, kind, a.seed).line(f"one move, {kind}"))
        print(levels(a.levels, a.moves, kind, a.seed).line(f"{a.moves} moves, {kind}"))


if __name__ == "__main__":
    main()
