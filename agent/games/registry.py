"""The games the agent plays, and where each game's `agent play` runner lives.

match3 is played by the loop in `agent.play` (wired directly in the CLI); every other
game names a runner `module:function` taking keyword arguments
(sim, serial, seed, size, moves, profiles, runs, as_json, realtime).
"""

from __future__ import annotations

import importlib
from typing import Any

GAMES: dict[str, str | None] = {
    "match3": None,
    "lines": "agent.games.lines.runner:run",
    "lightsout": "agent.games.lightsout.runner:run",
}


def run_game(game: str, **options: Any) -> Any:
    target = GAMES[game]
    if target is None:
        raise ValueError(f"{game} is played by the built-in loop")
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)(**options)
