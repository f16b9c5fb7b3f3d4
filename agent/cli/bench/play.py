"""`agent bench play`: whole match-3 games on the rules engine, solver against solver."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from agent.cli.app import check_choice, choice_list, console, seed_option
from agent.cli.plans import _progress

def bench_play_cmd(
    variant: str = typer.Option("step", "--variant", help="step or classic."),
    games: int = typer.Option(200, "--games", min=1),
    seed: int = seed_option("Game g uses seed + g, the same for every solver."),
    moves: int = typer.Option(200, "--moves", min=1, help="Stop a game after this many swaps (a strong solver never runs out of steps)."),
    solvers: str = typer.Option("random,greedy,plan", "--solvers", help="Comma-separated: random, greedy, plan."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Whole games on the rules engine: moves survived, tiles cleared and score per solver."""
    from agent.games.match3.plan_bench import BENCH_SOLVERS, bench_play, play_summary
    from agent.games.match3.rules import VARIANTS

    check_choice("--variant", variant, VARIANTS)
    names = choice_list("--solvers", solvers, tuple(BENCH_SOLVERS))
    with _progress(as_json) as update:
        results = bench_play(variant, games, seed, names, max_moves=moves,
                             progress=lambda name, done, total: update(f"{name}: games", done, total))
    table = play_summary(results, moves)
    if as_json:
        print(json.dumps({"variant": variant, "games": games, "seed": seed, "max_moves": moves, "solvers": table}))
        return
    t = Table("solver", "mean moves", "mean tiles", "mean score", "mean steps gained", "steps left at the end",
              "games at the cap", "ms / decision", title=f"{games} {variant} games (seeds {seed}..{seed + games - 1}, cap {moves} swaps)",
              title_justify="left")
    for name, row in table.items():
        t.add_row(name, str(row["mean_moves"]), str(row["mean_tiles"]), str(row["mean_score"]),
                  str(row["mean_steps_gained"]), str(row["mean_steps_left"]), str(row["at_cap"]),
                  str(row["mean_decide_ms"]))
    console.print(t)
    if "plan" in table and "greedy" in table:
        p, g = table["plan"], table["greedy"]
        console.print(
            "plan vs greedy: " + ", ".join(
                f"{what} x{p[k] / g[k]:.2f}" for what, k in
                (("moves", "mean_moves"), ("tiles", "mean_tiles"), ("score", "mean_score")) if g[k]
            )
        )
