"""The shared Typer apps and console helpers every command module uses.

Feature modules (`agent/cli_*.py`) import `app`, `sim_app` and `bench_app` from here and
add their commands; `agent.cli_feature_imports` imports them, so adding a feature is one
line there and no edit to anyone else's commands.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console

from agent import __version__

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Plays grid puzzle games on Android phones over ADB (or on a simulated phone).",
)
sim_app = typer.Typer(no_args_is_help=True, help="The simulated phone.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: each prints its figures.")
app.add_typer(sim_app, name="sim")
app.add_typer(bench_app, name="bench")

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

DEFAULT_PROFILES = Path(os.environ.get("PUZZLE_AGENT_PROFILES", "device_profiles"))


def _version(value: bool) -> None:
    if value:
        console.print(f"puzzle-agent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    pass


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
