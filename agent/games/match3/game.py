"""Match-3 behind the `Game` protocol: swaps chosen by a solver (the plan library's
multi-swap plans by default), swiped one swap at a time and each checked on screen."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.clock import Clock
from agent.games.base import (
    BoardRead,
    Check,
    Decision,
    Gesture,
    NoMove,
    Option,
    Settings,
    Status,
    StatusReader,
    Swipe,
)
from agent.games.match3.board import MAX_TYPES, Board, Move
from agent.games.match3.hud import MAX_STEPS
from agent.games.match3.reader import label_types, read_board
from agent.games.match3.rules import VARIANTS, Match3Config
from agent.games.match3.solver import SOLVERS, Choice, Solver, make_solver
from agent.games.match3.verify import at_rest, check_outcome
from agent.vision.grid import cell_centers
from agent.errors import ProfileError
from agent.vision.profile import GameProfile
from agent.vision.roles import RoleHints


def swipe_points(profile: GameProfile, move: Move) -> tuple[int, int, int, int]:
    centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)
    (r1, c1), (r2, c2) = move.cells()
    x1, y1 = (int(v) for v in centers[r1, c1])
    x2, y2 = (int(v) for v in centers[r2, c2])
    return x1, y1, x2, y2


def _swaps_after(choice: Choice) -> int:
    n, nxt = 0, choice.then
    while nxt is not None:
        n, nxt = n + 1, nxt.then
    return n


def config_for(profile: GameProfile, variant: str, start_steps: int = 30) -> Match3Config:
    """The rules for the board the profile describes: its size and its number of tile kinds."""
    n_types = max(3, len(label_types(profile)))
    return Match3Config(variant=variant, rows=profile.rows, cols=profile.cols, n_types=min(n_types, 8),  # type: ignore[arg-type]
                        start_steps=start_steps)  # fmt: skip


class Match3Player:
    """Asks the solver for a choice (a swap, or the first swap of a plan) and, when the
    screen showed a plan's swap exactly as predicted, plays the plan's next swap; any
    surprise drops the plan and the solver decides afresh."""

    def __init__(self, config: Match3Config, solver: Solver) -> None:
        self.config, self.solver = config, solver
        self._made: Choice | None = None  # the choice whose swipe is awaiting its check
        self._next: Choice | None = None  # a plan's next swap, once its previous one checked out
        self._counts = {"tiles_cleared": 0, "steps_gained": 0, "steps_spent": 0, "points": 0}

    def decide(self, board: Board) -> Decision[Move] | NoMove:
        planned, self._next = self._next, None
        choice = planned if planned is not None else self.solver.choose(self.config, board)
        if choice is None:
            over = self.config.variant == "classic"
            return NoMove("game over: no swap makes a match" if over else "no legal swap", finished=over)
        self._made = choice
        self._counts["steps_spent"] += choice.steps_spent
        return Decision(
            choice.move, str(choice.move), continues_plan=planned is not None,
            fields={"predicted_cleared": choice.tiles_cleared, "predicted_gain": choice.steps_gained,
                    "plan_swaps_left": _swaps_after(choice)},
        )  # fmt: skip

    def check(self, before: Board, decision: Decision[Move], after: Board) -> Check:
        choice = self._made
        assert choice is not None and choice.move == decision.move, "check() follows decide()"
        self._made = None
        c = check_outcome(before, choice, after)
        if c.verdict == "as_predicted":
            # Verified with the rest of the plan before its first swap.
            self._next = choice.next_on(after)
        if c.ok:
            self._counts["tiles_cleared"] += choice.tiles_cleared
            self._counts["steps_gained"] += choice.steps_gained
            self._counts["points"] += choice.points
        return Check(c.verdict, c.detail, {"known": c.known_cells, "agreeing": c.agreeing})

    def at_rest(self, before: Board, after: Board) -> bool:
        return at_rest(before, after)

    def finished(self, board: Board) -> str | None:
        return None  # the header (no steps left) or the solver (no swap) says when it is over

    def counts(self) -> dict[str, int]:
        return dict(self._counts)


class Match3Screen:
    # at rest no colour lies three in a line, and levels place their obstacles by design
    role_hints = RoleHints(run_length=3, symmetric_layouts=True)
    options = (
        Option("variant", "match3 rules: step (any swap costs a step) or classic (only matching swaps).",
               choices=VARIANTS, default="step"),
        Option("solver", "plan (the plan library's multi-swap plans, each verified on the board), greedy (best "
               "single swap) or random.", choices=SOLVERS, default="plan"),
        Option("steps", "Simulated phone: steps at the start (step variant).", default=30, minimum=1,
               maximum=MAX_STEPS, sim_only=True),
    )  # fmt: skip

    def check_profile(self, profile: GameProfile) -> None:
        # Refused before any move: a board of more kinds than the rules hold would fail on
        # the first frame read, mid-run.
        types = label_types(profile)
        colours = sorted({profile.kind_of(lbl) for lbl in types})
        if len(colours) > MAX_TYPES:
            raise ProfileError(
                f"the {profile.game} profile has {len(colours)} colour kinds "
                f"({', '.join(colours)}); the match-3 rules hold at most {MAX_TYPES}",
                hint="calibrate again on a still board (`agent calibrate --yes`), or give the classes of one "
                     "colour the same kind in the profile",
            )  # fmt: skip

    def read(self, frame: np.ndarray, profile: GameProfile) -> BoardRead[Board]:
        r = read_board(frame, profile)
        return BoardRead(r.board, r.reading, r.confident, str(r.board))

    def player(self, profile: GameProfile, settings: Settings, seed: int) -> Match3Player:
        config = config_for(profile, settings["variant"], int(settings["steps"]))
        return Match3Player(config, make_solver(settings["solver"], seed))

    def gestures(self, move: Move, profile: GameProfile) -> tuple[Gesture, ...]:
        return (Swipe(*swipe_points(profile, move), profile.swipe_ms),)

    def summary_rows(self, counts: Mapping[str, int]) -> list[tuple[str, str]]:
        return [
            ("tiles cleared", f"{counts.get('tiles_cleared', 0)} (predicted and checked; refill cascades not included)"),
            ("steps gained / spent", f"{counts.get('steps_gained', 0)} / {counts.get('steps_spent', 0)}"),
            ("points (agent's count)", str(counts.get("points", 0))),
        ]


class Match3Sim:
    # A step game ends when its steps run out, but the plan solver gains steps faster than
    # it spends them: without a cap a simulated game could go on forever.
    default_moves = 200

    def phone(self, settings: Settings, seed: int, size: tuple[int, int], clock: Clock, serial: str | None) -> Any:
        from agent.games.match3.sim import SimPhone

        config = Match3Config(variant=settings["variant"], start_steps=int(settings["steps"]))
        if serial is None:
            return SimPhone(config=config, seed=seed, size=size, clock=clock)
        return SimPhone(config=config, seed=seed, size=size, clock=clock, serial=serial)

    def save_profile(self, phone: Any, directory: Path) -> tuple[Path, str]:
        from agent.games.match3.sim_profile import sim_profile_for_play

        return sim_profile_for_play(phone, directory)

    def true_board(self, phone: Any) -> Board:
        board: Board = phone.board
        return board

    def status_reader(self, phone: Any) -> StatusReader | None:
        from agent.games.match3.hud import read_hud

        layout = phone.layout

        def read(frame: np.ndarray) -> Status | None:
            hud = read_hud(frame, layout)
            return None if hud is None else Status(moves_left=hud.steps, score=hud.score)

        return read

    def truth(self, phone: Any) -> dict[str, object]:
        s = phone.state
        return {"score": s.score, "tiles_cleared": s.tiles_cleared, "steps_gained": s.steps_gained,
                "steps_left": s.steps_left, "moves": s.moves_made}  # fmt: skip

    def status_line(self, phone: Any) -> str:
        s = phone.state
        left = f"steps left {s.steps_left}" if phone.config.variant == "step" else f"moves {s.moves_made}"
        return f"score {s.score}, {left}" + (", game over" if phone.game_over else "")


class Match3Game:
    name = "match3"
    title = "match-3 (swap tiles, three or more in a row clear)"
    screen = Match3Screen()
    sim = Match3Sim()

    @property
    def solver(self) -> Any:
        from agent.games.match3.solve import Match3Solver

        return Match3Solver()

    def parse_board(self, text: str) -> Board:
        return Board.parse(text)

    def format_board(self, board: Board) -> str:
        return str(board)


GAME = Match3Game()
