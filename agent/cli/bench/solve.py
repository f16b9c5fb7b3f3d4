"""`agent bench solve`: the plan library's build and load, and the plan solver's speed and
quality against exhaustive search."""

from __future__ import annotations

import json
import time
from typing import Optional

import typer
from rich.table import Table

from agent.cli.app import check_choice, console, seed_option
from agent.cli.plans import _progress

def bench_solve_cmd(
    boards: int = typer.Option(1000, "--boards", min=1, help="Seeded random 8x8 boards, 6 types."),
    seed: int = seed_option(),
    objective: Optional[str] = typer.Option(None, "--objective", help="seed, gain or points (default: gain)."),
    exhaustive: bool = typer.Option(True, "--exhaustive/--no-exhaustive", help="Compare with every sequence of up to 2 swaps (slow)."),
    prune: bool = typer.Option(True, "--prune/--no-prune", help="Verify long plans only while they could win (the default) or all of them."),
    build: bool = typer.Option(True, "--build/--no-build", help="Also time a full library build."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Library build and load time; plan solver time and quality against exhaustive search."""
    from agent.games.match3.plan_bench import bench_solve
    from agent.games.match3.plan_library import load_library
    from agent.games.match3.plan_solver import OBJECTIVES, PlanIndex, PlanSolver
    from agent.games.match3.plans import COMPLETE, build_plans

    if objective is not None:
        check_choice("--objective", objective, tuple(OBJECTIVES))
    figures: dict[str, object] = {}
    with _progress(as_json) as update:
        if build:
            t0 = time.perf_counter()
            build_plans(COMPLETE, progress=update)
            figures["build_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        library = load_library()
        t1 = time.perf_counter()
        index = PlanIndex.build(library)
        t2 = time.perf_counter()
        figures["load_ms"] = round(1000 * (t1 - t0), 1)
        figures["index_ms"] = round(1000 * (t2 - t1), 1)
        solver = PlanSolver(library=library, objective=objective, _index=index)
        result = bench_solve(
            boards, seed, objective, exhaustive=exhaustive, solver=solver, prune=prune,
            progress=lambda done, total: update("plan solver, then exhaustive search", done, total),
        )
    figures |= result.summary()
    if as_json:
        print(json.dumps(figures))
        return
    t = Table(show_header=False, title=f"plan solver on {boards} random 8x8 boards (seed {seed})", title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    labels = {
        "build_s": "library build (s)", "load_ms": "library load (ms)", "index_ms": "index build (ms)",
        "median_plan_ms": "median match + verify + pick (ms)", "p90_plan_ms": "90th percentile (ms)",
        "median_match_ms": "median lookup of the whole library (ms)",
        "median_exhaustive_ms": "median exhaustive search, up to 2 swaps (ms)", "speedup": "speed-up (medians)",
        "median_exhaustive_bits_ms": "median exhaustive search on bit planes (ms)",
        "speedup_vs_bits": "speed-up over that (medians)",
        "bits_disagree": "boards where the two exhaustive searches differ",
        "at_least_as_good_pct": "plan choice at least as good (% of boards)",
        "strictly_better_pct": "plan choice strictly better (% of boards)",
        "mean_plan_score": "mean score, plan solver", "mean_exhaustive_score": "mean score, exhaustive",
        "mean_plan_swaps": "mean swaps per chosen plan", "objective": "objective", "prune": "pruning",
    }
    for key, label in labels.items():
        if key in figures:
            t.add_row(label, str(figures[key]))
    losses = figures.get("losses", {})
    for why, n in (losses.items() if isinstance(losses, dict) else ()):
        t.add_row(f"  lost: {why}", str(n))
    console.print(t)
