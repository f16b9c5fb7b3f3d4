"""`agent solve`: one command, one solver per game. Each game implements
`agent.games.<game>.solve_cli:solve(**options)` and validates the options it uses; an
option a game does not use is refused with a clear message."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Optional

import typer

from agent.cli_app import app, check_choice

SOLVE_GAMES = ("match3", "lightsout", "junqi")


@app.command()
def solve(
    game: str = typer.Option("match3", "--game", help="match3, lightsout or junqi."),
    board: Optional[str] = typer.Option(None, "--board", help="The board: a file, '-' for stdin, or text (lightsout)."),
    objective: Optional[str] = typer.Option(None, "--objective", help="match3: what to maximise."),
    top: int = typer.Option(2, "--top", min=1, help="match3: how many plans to show."),
    puzzle: Optional[str] = typer.Option(None, "--puzzle", help="lightsout: turtle, lightsout, torus or a FILE."),
    rows: Optional[int] = typer.Option(None, "--rows", min=1, help="lightsout: rows."),
    cols: Optional[int] = typer.Option(None, "--cols", min=1, help="lightsout: cols."),
    start: Optional[str] = typer.Option(None, "--from", help="junqi: the piece's station R,C."),
    to: Optional[str] = typer.Option(None, "--to", help="junqi: the destination R,C."),
    png: Optional[Path] = typer.Option(None, "--png", help="Draw the result to this PNG."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Solve one position of a game (no phone involved)."""
    check_choice("--game", game, SOLVE_GAMES)
    try:
        module = importlib.import_module(f"agent.games.{game}.solve_cli")
    except ModuleNotFoundError as exc:
        if exc.name not in (f"agent.games.{game}", f"agent.games.{game}.solve_cli"):
            raise  # a missing module inside the game is a bug, not "not available"
        raise typer.BadParameter(f"solving {game} is not available yet", param_hint="--game") from None
    module.solve(
        board=board, objective=objective, top=top, puzzle=puzzle, rows=rows, cols=cols, start=start, to=to,
        png=png, as_json=as_json,
    )
