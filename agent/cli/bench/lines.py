"""`agent bench lines`: how long random, greedy and the search player survive at Color Lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.cli.app import check_choice, choice_list, console, err_console, seed_option, output_file


def bench_lines(
    preset_name: str = typer.Option("seed", "--variant", help="seed (8x8, 5 colours + rainbow) or classic (9x9, 7 colours, preview)."),
    games: int = typer.Option(20, "--games", min=1, help="Games per player."),
    moves: int = typer.Option(3000, "--moves", min=1, help="A game stops here if still alive."),
    budget_ms: float = typer.Option(12.0, "--budget-ms", min=0.0, help="The player's lookahead budget per move (0: none)."),
    solvers: str = typer.Option("random,greedy,player", "--solvers", help="Comma-separated: random, greedy, player."),
    seed: int = seed_option("Seed of the first game; game i uses seed+i for every player."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also save a chart of every game's turns to this PNG."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Play whole games and print turns survived, balls removed and time per move."""
    from agent.games.lines.bench import Summary, run_games
    from agent.games.lines.config import PRESETS
    from agent.games.lines.players import PLAYERS, make_player

    check_choice("--variant", preset_name, tuple(PRESETS))
    output_file(png, "--png", ".png")
    names = list(choice_list("--solvers", solvers, tuple(PLAYERS)))
    config = PRESETS[preset_name]
    seeds = list(range(seed, seed + games))
    summaries: list[Summary] = []
    turns: dict[str, list[int]] = {}
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err_console if as_json else console, transient=as_json,
    )
    with progress:
        for name in names:
            task = progress.add_task(f"{name:>7}", total=games)

            def done(result: Any, task: Any = task, name: str = name) -> None:
                progress.update(task, advance=1, description=f"{name:>7} last game {result.turns} turns")

            results = run_games(config, make_player(name, config, budget_ms), seeds, moves, on_game=done)
            summaries.append(Summary.of(name, results))
            turns[name] = [r.turns for r in results]
    if png is not None:
        from agent.files import save_png
        from agent.games.lines.chart import bench_chart

        title = f"Color Lines {preset_name}: turns survived, {games} games, cap {moves}"
        save_png(bench_chart(turns, title, moves), png)
    if as_json:
        print(json.dumps({
            "preset": preset_name, "games": games, "max_turns": moves, "budget_ms": budget_ms, "first_seed": seed,
            "players": [s.__dict__ for s in summaries],
        }))
        return
    table = Table(title=f"Color Lines, preset {preset_name}: {games} games, capped at {moves} turns", title_justify="left")
    for col in ("player", "mean turns", "median turns", "mean removed", "median removed", "ms / move", "reached cap"):
        table.add_column(col, justify="left" if col == "player" else "right")
    for s in summaries:
        table.add_row(
            s.player, f"{s.mean_turns:.1f}", f"{s.median_turns:.1f}", f"{s.mean_removed:.1f}", f"{s.median_removed:.1f}",
            f"{s.ms_per_move:.2f}", f"{s.capped}/{s.games}",
        )
    console.print(table)
    if png is not None:
        console.print(f"chart: {png}")
