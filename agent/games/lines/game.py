"""Color Lines behind the `Game` protocol: a ball moved by two taps (the ball, then an
empty cell it can reach), chosen by one of the players (the search player by default)
and checked on the next still board."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.clock import Clock
from agent.errors import ProfileError
from agent.games.base import (
    BoardRead,
    Check,
    Decision,
    Gesture,
    NoMove,
    Option,
    Pause,
    Settings,
    StatusReader,
    Tap,
)
from agent.games.lines.board import EMPTY, WILD, Position, format_board, parse_board
from agent.games.lines.check import CLEARED, check_move, predict, verdict_of
from agent.games.lines.config import MAX_COLORS, PRESETS, LinesConfig, preset
from agent.games.lines.players import PLAYERS, make_player
from agent.games.lines.players import Player as LinesChooser
from agent.games.lines.reader import WILD_NAMES, label_values, read_board
from agent.games.lines.rules import Move
from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.grid import cell_centers
from agent.vision.profile import GameProfile
from agent.vision.roles import RoleHints

TAP_GAP_S = 0.08  # between the two taps of a move, as a finger would


def config_from_profile(profile: GameProfile) -> LinesConfig:
    """The rules for the board the profile describes: the seed's rules on its size, with
    its colours and the rainbow ball if it has one; no preview (the reader does not read it)."""
    values = label_values(profile)
    colours = [v for v in values.values() if v != WILD]
    wild = WILD in values.values()
    seed = preset("seed")
    # The highest colour value, not the number of colours: a profile labelled A, C, E
    # reads balls as 1, 3 and 5, and the players index colours by value.
    return seed.with_(
        rows=profile.rows, cols=profile.cols, colors=max([1, *colours]), wildcard=wild,
        wildcard_weight=seed.wildcard_weight if wild else 0.0, preview=False,
    )  # fmt: skip


def move_taps(profile: GameProfile, move: Move) -> tuple[tuple[int, int], tuple[int, int]]:
    """The screen points of the ball and of the cell it goes to."""
    centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)
    sx, sy = (int(v) for v in centers[move.src])
    dx, dy = (int(v) for v in centers[move.dst])
    return (sx, sy), (dx, dy)


class LinesPlayer:
    """Asks a Lines player for each move (with one seeded generator for the whole run)
    and checks each move on the next still board; counts the balls its moves removed."""

    def __init__(self, config: LinesConfig, chooser: LinesChooser, seed: int) -> None:
        self.config, self.chooser = config, chooser
        self.rng = np.random.default_rng(seed)
        self._made: tuple[Move, int] | None = None  # the move awaiting its check, and the balls it removes
        self._counts = {"balls_removed": 0}

    def decide(self, board: np.ndarray) -> Decision[Move] | NoMove:
        move = self.chooser.choose(Position(board), self.rng)
        if move is None:
            return NoMove("no move left", finished=True)
        removes = int(predict(board, move, self.config)[1].sum())
        self._made = (move, removes)
        return Decision(move, str(move), fields={"predicted_removed": removes})

    def check(self, before: np.ndarray, decision: Decision[Move], after: np.ndarray) -> Check:
        assert self._made is not None and self._made[0] == decision.move, "check() follows decide()"
        (move, removes), self._made = self._made, None
        result = check_move(before, move, after, self.config)
        removed = removes if result == CLEARED else 0
        self._counts["balls_removed"] += removed
        return Check(verdict_of(result), result, {"removed": removed})

    def at_rest(self, before: np.ndarray, after: np.ndarray) -> bool:
        return True  # a move's animation has no still frame between its phases

    def finished(self, board: np.ndarray) -> str | None:
        return None if (board == EMPTY).any() else "game over (board full)"

    def counts(self) -> dict[str, int]:
        return dict(self._counts)


class LinesScreen:
    # balls lie anywhere, five in a line only for an instant: nothing to tell blockers by
    role_hints = RoleHints()
    options = (
        Option("solver", "player (the search player), greedy (clear a line when possible, else a random move) "
               "or random.", choices=PLAYERS, default="player"),
        Option("variant", "Simulated phone: the game's rules, seed (8x8, five colours and a rainbow ball) or "
               "classic (9x9, seven colours, the next balls shown).", choices=tuple(PRESETS), default="seed",
               sim_only=True),
    )  # fmt: skip

    def check_profile(self, profile: GameProfile) -> None:
        labels = {e.label for e in profile.exemplars} - {EMPTY_LABEL, UNKNOWN_LABEL}
        colours = [lbl for lbl in labels if lbl.lower() not in WILD_NAMES]
        if not colours:
            raise ProfileError(f"the {profile.game} profile has no ball labels (A-I, or names for the colours)")
        if len(colours) > MAX_COLORS:
            raise ProfileError(f"the {profile.game} profile has {len(colours)} ball colours; Lines has at most "
                               f"{MAX_COLORS}")  # fmt: skip
        try:
            config_from_profile(profile)
        except ValueError as exc:
            raise ProfileError(f"the {profile.game} profile's board does not fit Lines: {exc}") from None

    def read(self, frame: np.ndarray, profile: GameProfile) -> BoardRead[np.ndarray]:
        r = read_board(frame, profile)
        return BoardRead(r.board, r.reading, r.confident, format_board(r.board))

    def player(self, profile: GameProfile, settings: Settings, seed: int) -> LinesPlayer:
        config = config_from_profile(profile)
        return LinesPlayer(config, make_player(settings["solver"], config), seed)

    def gestures(self, move: Move, profile: GameProfile) -> tuple[Gesture, ...]:
        src, dst = move_taps(profile, move)
        return (Tap(*src), Pause(TAP_GAP_S), Tap(*dst))

    def summary_rows(self, counts: Mapping[str, int]) -> list[tuple[str, str]]:
        return [("balls removed", f"{counts.get('balls_removed', 0)} (by the agent's moves, predicted and checked)")]


class LinesSim:
    # The search player keeps the seed's game going for thousands of moves: without a cap
    # `agent play --game lines --sim` would not finish in a minute or two.
    default_moves = 300

    def phone(self, settings: Settings, seed: int, size: tuple[int, int], clock: Clock, serial: str | None) -> Any:
        from agent.games.lines.sim import LinesSimPhone

        config = preset(settings["variant"])
        if serial:
            return LinesSimPhone(config=config, seed=seed, size=size, clock=clock, serial=serial)
        return LinesSimPhone(config=config, seed=seed, size=size, clock=clock)

    def save_profile(self, phone: Any, directory: Path) -> tuple[Path, str]:
        from agent.games.lines.sim_profile import sim_game_profile
        from agent.vision.profile import write_phone_profile

        saved = write_phone_profile(phone, sim_game_profile(phone), directory)
        return saved.path, saved.told("written from the simulator's known layout")

    def true_board(self, phone: Any) -> np.ndarray:
        board: np.ndarray = phone.board
        return board

    def status_reader(self, phone: Any) -> StatusReader | None:
        return None  # the score is drawn, but no reader reads it yet

    def truth(self, phone: Any) -> dict[str, object]:
        g = phone.game
        return {"turns": g.turns, "removed": g.removed, "score": g.score, "over": g.over}

    def status_line(self, phone: Any) -> str:
        g = phone.game
        return f"turns {g.turns}, balls removed {g.removed}, score {g.score}" + (", game over" if g.over else "")


class LinesGame:
    name = "lines"
    title = "Color Lines (move a ball to make five in a row)"
    screen = LinesScreen()
    sim = LinesSim()
    solver = None  # no `agent solve` for Lines

    def parse_board(self, text: str) -> np.ndarray:
        return parse_board(text)

    def format_board(self, board: np.ndarray) -> str:
        return format_board(board)


GAME = LinesGame()
