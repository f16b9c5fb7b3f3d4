"""`agent bench goals`: the family's goal levels won by the goal-aware player and by the
goal-blind greedy one, on the saga rules (in process, the same levels and refills for both)."""

from __future__ import annotations

import json
import time

import typer
from rich.table import Table

from agent.cli.app import console


def bench_goals(
    seeds: int = typer.Option(6, "--seeds", min=1, max=1000, help="Seeds of the family whose goal levels are played."),
    levels: int = typer.Option(6, "--levels", min=1, max=50, help="Levels of each seed (its goal levels are played)."),
    plays: int = typer.Option(3, "--plays", min=1, max=50, help="Plays of each level per player (fresh refills)."),
    solver: str = typer.Option("greedy", "--solver", help="The solver both players start from."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Goal levels (collect N of a colour, break N blockers) of the saga family, each with
    its own move budget: the share won by the goal-aware player and by the goal-blind
    greedy player, per goal kind and in total, and their ratio (target: 1.3 or more)."""
    from agent.games.match3.goal_bench import won_levels

    t0 = time.perf_counter()
    with console.status(f"playing the goal levels of {seeds} seeds x {levels} levels x {plays} plays a player..."):
        shares = won_levels(seeds, levels, plays, solver)
    elapsed = time.perf_counter() - t0
    total = {who: sum(s[who] * s["plays"] for s in shares.values()) for who in ("aware", "blind")}
    n = sum(s["plays"] for s in shares.values())
    ratio = total["aware"] / total["blind"] if total["blind"] else float("inf")
    if as_json:
        print(json.dumps({"kinds": shares, "plays": n, "won_aware": total["aware"], "won_blind": total["blind"],
                          "ratio": ratio, "seconds": round(elapsed, 1)}))  # fmt: skip
        return
    table = Table(title=f"goal levels won ({elapsed:.0f} s)")
    for col in ("goal", "plays", "goal-aware", "goal-blind greedy"):
        table.add_column(col, justify="right" if col != "goal" else "left")
    for kind, s in sorted(shares.items()):
        table.add_row(kind, f"{s['plays']:.0f}", f"{s['aware']:.1%}", f"{s['blind']:.1%}")
    table.add_row("total", f"{n:.0f}", f"{total['aware']:.0f} won", f"{total['blind']:.0f} won")
    console.print(table)
    console.print(f"goal-aware / goal-blind levels won: {ratio:.2f}x (target 1.3x)")
