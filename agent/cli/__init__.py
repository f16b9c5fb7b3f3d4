"""The `agent` command line: a module per command group, registered here explicitly.

This package is the only code that imports typer or rich; the domain below it knows
nothing of the command line.
"""

from __future__ import annotations

import sys

import typer

from agent import __version__
from agent.cli import bench, calibrate, devices, farm, plans, play, sim, solve
from agent.cli.app import console, print_error
from agent.errors import AgentError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Plays grid puzzle games on Android phones over ADB (or on a simulated phone).",
)


def _version(value: bool) -> None:
    if value:
        console.print(f"puzzle-agent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    pass


app.command("play")(play.play)
app.command("devices")(devices.devices)
app.command("calibrate")(calibrate.calibrate)
app.command("read")(calibrate.read)
app.command("solve")(solve.solve)
app.command("farm")(farm.farm)
app.add_typer(sim.app, name="sim")
app.add_typer(plans.app, name="plans")
app.add_typer(bench.app, name="bench")


def main() -> None:
    try:
        app()
    except AgentError as exc:
        print_error(exc)
        sys.exit(exc.exit_code)
