"""What every command module shares: the consoles, the default folders, option parsing
helpers, and the one error printer."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from agent.errors import AgentError, UsageError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

DEFAULT_PROFILES = Path(os.environ.get("PUZZLE_AGENT_PROFILES", "device_profiles"))
DEFAULT_RUNS = Path("runs")


def say(text: str, err: bool = False) -> None:
    """Print text as it is: never as markup, so a path or serial with [brackets] stays whole."""
    (err_console if err else console).print(text, markup=False, highlight=False, soft_wrap=True)


def print_error(exc: AgentError) -> None:
    line = Text("error: ", style="bold red")
    line.append(str(exc))
    err_console.print(line, highlight=False)
    if exc.hint:
        fix = Text("fix: ", style="bold")
        fix.append(exc.hint)
        err_console.print(fix, highlight=False)


def bad_parameter(exc: UsageError) -> typer.BadParameter:
    """A usage error as typer prints one (exit 2, with the usage line)."""
    return typer.BadParameter(str(exc), param_hint=exc.option)


def chosen_game(name: str, given: Mapping[str, object], sim: bool) -> tuple[Any, dict[str, Any]]:
    """The game `--game` names and its settings from the options given (None: not given).
    With `sim`, the game must have a simulated phone; without, a player for a phone. What
    does not fit is a usage error (exit 2) naming the option and the game."""
    from agent.games.registry import playable, require, settings, simulated

    try:
        game = require(name, simulated(), "simulated phone") if sim else require(name, playable(), "player for a phone")
        return game, settings(game, given, sim)
    except UsageError as exc:
        raise bad_parameter(exc) from None


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """A usage error (exit 2) naming the option and the choices."""
    if value not in choices:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}", param_hint=name)
    return value


def parse_size_option(size: str, option: str = "--size") -> tuple[int, int]:
    from agent.simphone.sizes import parse_size

    try:
        return parse_size(size)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None
