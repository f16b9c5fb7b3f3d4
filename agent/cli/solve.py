"""`agent solve`: one command, one solver per game (`Game.solver`, see agent.games.base).

The command takes the game from the registry, refuses an option the game's solver does
not declare, hands the solver the values of those it does, and renders the report: JSON
records one per line with --json, the blocks for people otherwise, the picture to --png.
Registered in `agent.cli` as `app.command("solve")(solve.solve)`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from agent.cli.app import console, output_file
from agent.errors import UsageError
from agent.files import save_png
from agent.games.base import Block, SolveOption, SolveReport, SolveRequest, Solver, TableBlock
from agent.games.registry import game_names, get_game, solvable

TOP_DEFAULT = 2  # --top's default: left at it, --top counts as not given
# the command's options a game may take, by their name in SolveRequest.values
FLAGS = {
    "board": "--board", "objective": "--objective", "top": "--top", "puzzle": "--puzzle", "rows": "--rows",
    "cols": "--cols", "start": "--from", "to": "--to",
}  # fmt: skip


def solve(
    game: str = typer.Option("match3", "--game", help="match3, lightsout or junqi."),
    board: Optional[str] = typer.Option(None, "--board", help="The board: a file, '-' for stdin, or text (lightsout)."),
    objective: Optional[str] = typer.Option(None, "--objective", help="match3: what to maximise."),
    top: int = typer.Option(TOP_DEFAULT, "--top", min=1, help="match3: how many plans to show."),
    puzzle: Optional[str] = typer.Option(None, "--puzzle", help="lightsout: turtle, lightsout, torus or a FILE."),
    rows: Optional[int] = typer.Option(None, "--rows", min=1, help="lightsout: rows."),
    cols: Optional[int] = typer.Option(None, "--cols", min=1, help="lightsout: cols."),
    start: Optional[str] = typer.Option(None, "--from", help="junqi: the piece's station R,C."),
    to: Optional[str] = typer.Option(None, "--to", help="junqi: the destination R,C."),
    png: Optional[Path] = typer.Option(None, "--png", help="Draw the result to this PNG."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Solve one position of a game (no phone involved)."""
    output_file(png, "--png", ".png")
    given: dict[str, Any] = {
        "board": board, "objective": objective, "top": None if top == TOP_DEFAULT else top, "puzzle": puzzle,
        "rows": rows, "cols": cols, "start": start, "to": to,
    }  # fmt: skip
    try:
        solver = solver_for(game)
        report = solver.solve(solve_request(game, solver.options, given, png, as_json))
    except UsageError as exc:
        message = f"{exc}; {exc.hint}" if exc.hint else str(exc)
        raise typer.BadParameter(message, param_hint=exc.option) from None
    render(report, png, as_json)


def solver_for(name: str) -> Solver:
    """The game's solver, or a usage error naming the games `agent solve` solves."""
    if name in game_names():
        solver = get_game(name).solver
        if solver is not None:
            return solver
    raise UsageError("--game", f"{name!r} is not one of {', '.join(solvable())}")


def solve_request(
    game: str, options: tuple[SolveOption, ...], given: Mapping[str, Any], png: Path | None, as_json: bool
) -> SolveRequest:
    """The request for a solver that takes `options`, from the values given on the command
    line (None: not given); an option given that the game does not take is a usage error."""
    declared = {o.name for o in options}
    for name, value in given.items():
        if value is not None and value is not False and name not in declared:
            flag = FLAGS.get(name, f"--{name.replace('_', '-')}")
            takes = ", ".join([o.cli_flag for o in options] + ["--json", "--png"])
            raise UsageError(flag, f"{game} does not use {flag} (it takes {takes})")
    return SolveRequest(values={o.name: given.get(o.name) for o in options}, png=png, as_json=as_json)


def render(report: SolveReport, png: Path | None, as_json: bool) -> None:
    """Write the picture, print the report, and exit with its code when that is not 0."""
    wrote = png is not None and report.picture is not None
    if wrote:
        assert png is not None and report.picture is not None
        save_png(report.picture, png)
    if as_json:
        for record in report.records:
            print(json.dumps(record))
    else:
        for block in report.blocks:
            print_block(block)
        if wrote:
            console.print(f"wrote {png}", markup=False, highlight=False, soft_wrap=True)
    if report.exit_code:
        raise typer.Exit(report.exit_code)


def print_block(block: Block) -> None:
    if isinstance(block, TableBlock):
        console.print(_table(block))
    else:
        console.print(block.text, markup=False, highlight=False, soft_wrap=True)


def _table(block: TableBlock) -> Table:
    if block.columns:
        table = Table(*block.columns, title=block.title or None)
    else:  # key/value rows
        table = Table(title=block.title or None, show_header=False)
        table.add_column()
        table.add_column()
    for row in block.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table
