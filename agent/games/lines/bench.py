"""Playing whole games to measure a player: turns survived, balls removed, time per move."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from agent.games.lines.config import LinesConfig
from agent.games.lines.players import Player
from agent.games.lines.rules import LinesGame


@dataclass(frozen=True)
class GameResult:
    seed: int
    turns: int
    removed: int
    score: int
    seconds_thinking: float
    capped: bool


def play_game(config: LinesConfig, player: Player, seed: int, max_turns: int = 3000) -> GameResult:
    """One game from `seed`; the game's spawns and the player's choices use separate streams."""
    game_rng, player_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    game = LinesGame(config, game_rng)
    thinking = 0.0
    while not game.over and game.turns < max_turns:
        t0 = time.perf_counter()
        move = player.choose(game.position(), player_rng)
        thinking += time.perf_counter() - t0
        if move is None:
            break
        game.play(move)
    return GameResult(seed, game.turns, game.removed, game.score, thinking, game.turns >= max_turns)


@dataclass(frozen=True)
class Summary:
    player: str
    games: int
    mean_turns: float
    median_turns: float
    mean_removed: float
    median_removed: float
    ms_per_move: float
    capped: int

    @classmethod
    def of(cls, player: str, results: list[GameResult]) -> "Summary":
        turns = np.array([r.turns for r in results], dtype=float)
        removed = np.array([r.removed for r in results], dtype=float)
        moves = max(1, int(turns.sum()))
        return cls(
            player, len(results), float(turns.mean()), float(np.median(turns)), float(removed.mean()),
            float(np.median(removed)), 1000.0 * sum(r.seconds_thinking for r in results) / moves,
            sum(r.capped for r in results),
        )


def run_games(
    config: LinesConfig, player: Player, seeds: list[int], max_turns: int = 3000,
    on_game: Callable[[GameResult], None] | None = None,
) -> list[GameResult]:
    out = []
    for seed in seeds:
        res = play_game(config, player, seed, max_turns)
        out.append(res)
        if on_game is not None:
            on_game(res)
    return out
