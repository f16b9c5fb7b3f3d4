"""What every command module shares: the consoles, the default folders, option parsing
helpers, and the one error printer."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.text import Text

from agent.errors import AgentError, UsageError

# Never markup: what is printed holds paths, serials and file text, where [brackets] are
# literal (a `[/x]` would crash the printer, a `[device]` would vanish).
# Rich takes COLUMNS as it is: 0 prints nothing at all, 1 a letter per line.
_MIN_WIDTH = 40
# Output to a file or a pipe (a log, CI, `| less`) has no terminal to fit: Rich's 80
# columns squeeze a bench's table into a column of wrapped fragments there.
_PIPED_WIDTH = 160


def _width(stream: TextIO) -> int | None:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        try:
            return None if stream.isatty() else _PIPED_WIDTH
        except (AttributeError, ValueError):  # a closed or replaced stream
            return None
    return max(columns, _MIN_WIDTH)


console = Console(markup=False, width=_width(sys.stdout))
err_console = Console(stderr=True, soft_wrap=True, markup=False, width=_width(sys.stderr))

DEFAULT_PROFILES = Path(os.environ.get("PUZZLE_AGENT_PROFILES", "device_profiles"))
DEFAULT_RUNS = Path("runs")
# Seeds go to numpy's SeedSequence, which takes any integer >= 0; the cap keeps `seed + i`
# (phone i, game i) within what JSON readers and int64 hold.
SEED_MAX = 2**62


def seed_option(help: str = "The seed of the simulated game and of any random choice.") -> Any:
    """The one `--seed` option: an integer from 0 (a usage error otherwise)."""
    return typer.Option(0, "--seed", min=0, max=SEED_MAX, help=help)


def output_dir(path: Path, option: str) -> Path:
    """`path` as a folder files can be written into (made if missing), checked before any
    work starts: otherwise a usage error (exit 2) naming the option and the path."""
    from agent.files import writable_dir_problem

    problem = writable_dir_problem(path)
    if problem:
        raise typer.BadParameter(f"{problem}; give a folder you can write to", param_hint=option)
    return path


def output_file(path: Path | None, option: str, suffix: str | None = None) -> Path | None:
    """`path` as a file that can be written (its folder made if missing), or a usage error."""
    from agent.files import writable_file_problem

    if path is None:
        return None
    problem = writable_file_problem(path, suffix)
    if problem:
        raise typer.BadParameter(f"{problem}; give a file you can write", param_hint=option)
    return path


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


def choice_list(name: str, value: str, choices: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of choices, at least one, each known, none twice: otherwise
    a usage error (exit 2) naming the option and the choices."""
    names = tuple(n.strip() for n in value.split(","))
    if not any(names):
        raise typer.BadParameter(f"name at least one of {', '.join(choices)}", param_hint=name)
    for n in names:
        if not n:
            raise typer.BadParameter(f"{value!r} has an empty entry; give names like {','.join(choices[:2])}",
                                     param_hint=name)  # fmt: skip
        check_choice(name, n, choices)
    if len(set(names)) < len(names):
        raise typer.BadParameter(f"{value!r} names one twice", param_hint=name)
    return names


def parse_size_option(size: str, option: str = "--size") -> tuple[int, int]:
    from agent.simphone.sizes import parse_size

    try:
        return parse_size(size)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None
