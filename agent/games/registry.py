"""The one list of games. Every command takes its games, and the options that apply to
each, from here.

A game is registered by the module that defines it (`agent.games.<name>.game`), named
once below; it is imported on first use, so `agent solve --game junqi` never loads the
match-3 plan library.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from agent.errors import UsageError
from agent.games.base import Game, Option
from agent.vision.roles import RoleHints

# name -> the module whose `GAME` is that game
GAMES: dict[str, str] = {
    "match3": "agent.games.match3.game",
    "lines": "agent.games.lines.game",
    "lightsout": "agent.games.lightsout.game",
    "junqi": "agent.games.junqi.game",
}

_loaded: dict[str, Game[Any, Any]] = {}


def game_names() -> tuple[str, ...]:
    return tuple(GAMES)


def get_game(name: str, option: str = "--game") -> Game[Any, Any]:
    if name not in GAMES:
        raise UsageError(option, f"{name!r} is not one of {', '.join(GAMES)}")
    if name not in _loaded:
        _loaded[name] = importlib.import_module(GAMES[name]).GAME
    return _loaded[name]


def all_games() -> list[Game[Any, Any]]:
    return [get_game(name) for name in GAMES]


def playable() -> tuple[str, ...]:
    """Games `agent play` can play on a phone: every game with a player."""
    return tuple(g.name for g in all_games() if g.screen is not None)


def simulated() -> tuple[str, ...]:
    """Games with a simulated phone (`--sim`, `sim serve`, `sim screenshot`, `farm --sim`)."""
    return tuple(g.name for g in all_games() if g.sim is not None)


def solvable() -> tuple[str, ...]:
    """Games `agent solve` solves."""
    return tuple(g.name for g in all_games() if g.solver is not None)


def role_hints(name: str) -> RoleHints:
    """What calibration may infer from where a game's pieces lie (its screen's hints);
    a game with no screen, or one not registered, gives none."""
    try:
        screen = get_game(name).screen
    except UsageError:
        return RoleHints()
    return screen.role_hints if screen is not None else RoleHints()


def require(name: str, among: tuple[str, ...], what: str, option: str = "--game") -> Game[Any, Any]:
    """The game, or a usage error naming the games that can do `what`."""
    game = get_game(name, option)
    if name not in among:
        raise UsageError(option, f"{name} has no {what} (games with one: {', '.join(among) or 'none'})")
    return game


def settings(game: Game[Any, Any], given: Mapping[str, object], sim: bool) -> dict[str, Any]:
    """The game's settings from the options given on the command line (None: not given):
    an option the game does not take, or a value it does not accept, is a usage error."""
    options = game.screen.options if game.screen is not None else ()
    known: dict[str, Option] = {o.name: o for o in options}
    for name, value in given.items():
        if value is None:
            continue
        flag = f"--{name.replace('_', '-')}"
        if name not in known:
            takes = ", ".join(o.flag for o in options) or "none of them"
            raise UsageError(flag, f"{game.name} does not use {flag} (it takes {takes})")
        if known[name].sim_only and not sim:
            raise UsageError(flag, f"{flag} shapes the simulated phone: it goes with --sim")
    out: dict[str, Any] = {}
    for name, opt in known.items():
        value = given.get(name)
        if value is None:
            value = opt.default_for(sim)
        if opt.choices and value not in opt.choices:
            raise UsageError(opt.flag, f"{value!r} is not one of {', '.join(opt.choices)} (for {game.name})")
        if opt.minimum is not None and isinstance(value, int) and value < opt.minimum:
            raise UsageError(opt.flag, f"{value} is below the minimum {opt.minimum}")
        if opt.maximum is not None and isinstance(value, int) and value > opt.maximum:
            raise UsageError(opt.flag, f"{value} is above the maximum {opt.maximum} (for {game.name})")
        out[name] = value
    return out
