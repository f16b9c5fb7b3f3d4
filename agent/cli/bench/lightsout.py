"""`agent bench lightsout`: batch throughput of the toggle-puzzle solvers."""

from __future__ import annotations

import json
import os

import typer
from rich.table import Table

from agent.cli.app import console, seed_option


def bench_lightsout(
    turtle_n: int = typer.Option(1_000_000, "--turtle", min=1, help="Random turtle solves (both solutions each)."),
    grid_n: int = typer.Option(100_000, "--grid", min=1, help="Random Lights Out fewest-press solves."),
    rows: int = typer.Option(5, "--rows", min=1, max=32, help="Rows of the Lights Out board."),
    cols: int = typer.Option(5, "--cols", min=1, max=32, help="Columns of the Lights Out board."),
    scalar_n: int = typer.Option(
        20_000, "--scalar", min=0, help="Turtle solves one Python call at a time, for comparison (0: skip)."
    ),
    repeat: int = typer.Option(7, "--repeat", min=1, max=100, help="Timed runs per batch; the best is reported."),
    seed: int = seed_option("Seed of the random boards."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """1,000,000 random turtle solves (both solutions) and 100,000 random 5x5 fewest-press
    solves, vectorised; prints batch time, throughput and time per solve."""
    from agent.games.lightsout.batch import TooLarge
    from agent.games.lightsout.bench import SEED_JAVA_MS, bench_grid_min, bench_scalar, bench_turtle

    figures = []
    with console.status("benchmarking...", spinner="dots") as status:
        status.update(f"turtle: {turtle_n:,} solves x {repeat}")
        figures.append(bench_turtle(turtle_n, repeat, seed))
        status.update(f"{rows}x{cols} Lights Out: {grid_n:,} fewest-press solves x {repeat}")
        try:
            figures.append(bench_grid_min(grid_n, rows, cols, repeat, seed))
        except TooLarge as exc:
            raise typer.BadParameter(str(exc), param_hint="--rows/--cols") from None
        if scalar_n:
            status.update(f"turtle: {scalar_n:,} one-at-a-time solves")
            figures.append(bench_scalar(scalar_n, seed))
    turtle = figures[0]
    per_million_ms = 1000 * turtle.best_s * 1_000_000 / turtle.items
    if as_json:
        print(json.dumps({
            "figures": [f.as_dict() for f in figures],
            "turtle_ms_per_million": round(per_million_ms, 3),
            "seed_java_ms_per_million": SEED_JAVA_MS,
            "cpus": os.cpu_count(),
        }))  # fmt: skip
        return
    t = Table(title=f"agent bench lightsout (best of {repeat} runs; seed {seed})", title_justify="left")
    for col in ("batch", "solves", "best", "median", "per solve", "solves/s", "cold"):
        t.add_column(col, justify="left" if col == "batch" else "right")
    for f in figures:
        t.add_row(
            f.label, f"{f.items:,}", f"{1000 * f.best_s:.2f} ms", f"{1000 * f.median_s:.2f} ms",
            _ns(f.per_item_ns), _rate(f.per_second), f"{1000 * f.cold_s:.1f} ms" if f.cold_s else "-",
        )  # fmt: skip
    console.print(t)
    ratio = SEED_JAVA_MS / per_million_ms
    verdict = f"{ratio:.0f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x SLOWER"
    console.print(
        f"turtle: {per_million_ms:.2f} ms per 1,000,000 solves, {verdict} than "
        f"the seed's Java lookup table ({SEED_JAVA_MS:.0f} ms); cold (inputs + table build + first run): "
        f"{1000 * (turtle.cold_s or 0.0):.1f} ms", highlight=False,
    )  # fmt: skip
    for f in figures:
        if f.checked:
            console.print(f"checked: {f.name}: {f.checked}", highlight=False)
        if f.extra:
            console.print(f"  {', '.join(f'{k} {v}' for k, v in f.extra.items())}", highlight=False)
    console.print("cold = making the random inputs, building the solver's tables, and the first run", highlight=False)


def _rate(per_s: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if per_s >= scale:
            return f"{per_s / scale:.3g} {unit}"
    return f"{per_s:.3g}"


def _ns(ns: float) -> str:
    return f"{ns:.1f} ns" if ns < 1000 else f"{ns / 1000:.2f} us"
