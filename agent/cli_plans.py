"""`agent plans build|verify|stats` (the match-3 plan library of seed 000) and the
benchmarks `agent bench solve` and `agent bench play`."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.cli_app import app, bench_app, check_choice, console, err_console

plans_app = typer.Typer(no_args_is_help=True, help="The match-3 plan library (seed 000's execution plans).")
app.add_typer(plans_app, name="plans")

LIBRARY_HELP = "The library file (default: plans/match3.json, or PUZZLE_AGENT_PLANS)."


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar on stderr (so --json output stays clean); `update(what, done, total)`."""
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err_console, transient=True, disable=quiet,
    ) as bar:
        task = bar.add_task("", total=1)

        def update(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=max(total, 1))

        yield update


def _faithful_path(library: Path) -> Path:
    return library.with_name(library.stem + "-faithful" + library.suffix)


def _counts_table(title: str, counts: dict[str, dict[str, int]]) -> Table:
    steps = sorted({int(s) for row in counts.values() for s in row})
    t = Table(title=title, title_justify="left")
    t.add_column("tiles", justify="right")
    for s in steps:
        t.add_column(f"{s} swap{'s' if s > 1 else ''}", justify="right")
    t.add_column("total", justify="right", style="bold")
    for count in sorted(counts, key=int):
        row = counts[count]
        t.add_row(count, *(str(row.get(str(s), "")) for s in steps), str(sum(row.values())))
    totals = [sum(counts[c].get(str(s), 0) for c in counts) for s in steps]
    t.add_row("all", *(str(n) for n in totals), str(sum(totals)), style="bold")
    return t


# -- plans ------------------------------------------------------------------------------------


@plans_app.command("build")
def plans_build(
    faithful: bool = typer.Option(False, "--faithful", help="The seed's printed method, defects included (for comparison)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where to write (default: plans/match3.json, or match3-faithful.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the build's figures as JSON."),
) -> None:
    """Generate the plan library and write it (atomically)."""
    from agent.games.match3.plan_library import library_path, save_library
    from agent.games.match3.plans import COMPLETE, FAITHFUL, build_plans

    target = out or (_faithful_path(library_path()) if faithful else library_path())
    t0 = time.perf_counter()
    with _progress(as_json) as update:
        library, report = build_plans(FAITHFUL if faithful else COMPLETE, progress=update)
    seconds = time.perf_counter() - t0
    save_library(library, target)
    figures = {
        "variant": library.variant, "plans": len(library), "seconds": round(seconds, 2), "path": str(target),
        "starts_searched": report.pre_positions, "clipped": report.clipped, "no_path": report.no_path,
        "claimed_then_failed": report.claimed_then_failed, "abandoned": report.abandoned, "counts": library.counts(),
    }
    if as_json:
        print(json.dumps(figures))
        return
    console.print(_counts_table(f"{library.variant} library: {len(library)} plans", library.counts()))
    console.print(f"built in {seconds:.1f} s, wrote {target}")
    if faithful:
        console.print(
            f"seed's method: {report.claimed_then_failed} targets claimed by a failed search "
            f"({report.clipped} whose final reaches outside the window, {report.no_path} without a path inside it)"
        )


@plans_app.command("verify")
def plans_verify(library: Optional[Path] = typer.Option(None, "--library", help=LIBRARY_HELP)) -> None:
    """Replay every plan in its window; exit non-zero naming any plan that fails.

    A plan holds when no swap before the last lines up three and the last produces exactly
    the final window, one elimination of `count` tiles."""
    from agent.games.match3.plan_library import PlanLibraryError, library_path, load_library, verify_library

    path = library_path(library)
    lib = load_library(path)
    failures = list(verify_library(lib))
    if failures:
        for f in failures[:10]:
            where = f"plan {f.index + 1}" if f.index >= 0 else "header"
            err_console.print(f"{where}: {f.problem}" + (f"\n  {f.plan}" if f.plan else ""), highlight=False)
        raise PlanLibraryError(f"{len(failures)} problem(s) in {path}, first: {failures[0].problem}")
    console.print(f"{len(lib)} plans verified ({path})")


@plans_app.command("stats")
def plans_stats(
    library: Optional[Path] = typer.Option(None, "--library", help=LIBRARY_HELP),
    ablation: bool = typer.Option(False, "--ablation", help="Also build with one seed detail switched at a time (about a minute)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Plans by eliminated tiles x swaps, for the library and for the seed's method."""
    from agent.games.match3.plan_library import library_path, load_library
    from agent.games.match3.plans import FAITHFUL, ablation as run_ablation, build_plans

    path = library_path(library)
    lib = load_library(path)
    faithful_file = _faithful_path(path)
    with _progress(as_json) as update:
        if faithful_file.exists():
            faithful = load_library(faithful_file)
        else:
            faithful, _ = build_plans(FAITHFUL, progress=update)
        rows = run_ablation(progress=update) if ablation else []
    out = {
        "library": {"path": str(path), "variant": lib.variant, "total": len(lib), "counts": lib.counts()},
        "faithful": {"total": len(faithful), "counts": faithful.counts()},
        "seed_reported": 20036,
    }
    if rows:
        out["ablation"] = [{"detail": d, "way": w, "total": n} for d, w, n in rows]
    if as_json:
        print(json.dumps(out))
        return
    console.print(_counts_table(f"library ({lib.variant}, {path}): {len(lib)} plans", lib.counts()))
    console.print(_counts_table(f"the seed's printed method: {len(faithful)} plans (the seed reports 20036)",
                                faithful.counts()))
    if rows:
        t = Table("seed detail", "seed + this fix", "complete + this defect", title="one detail at a time",
                  title_justify="left")
        for i in range(0, len(rows), 2):
            t.add_row(rows[i][0], str(rows[i][2]), str(rows[i + 1][2]))
        console.print(t)


# -- benchmarks -----------------------------------------------------------------------------


@bench_app.command("solve")
def bench_solve_cmd(
    boards: int = typer.Option(1000, "--boards", min=1, help="Seeded random 8x8 boards, 6 types."),
    seed: int = typer.Option(0, "--seed"),
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
    for why, n in dict(figures.get("losses", {})).items():  # type: ignore[arg-type]
        t.add_row(f"  lost: {why}", str(n))
    console.print(t)


@bench_app.command("play")
def bench_play_cmd(
    variant: str = typer.Option("step", "--variant", help="step or classic."),
    games: int = typer.Option(200, "--games", min=1),
    seed: int = typer.Option(0, "--seed", help="Game g uses seed + g, the same for every solver."),
    max_moves: int = typer.Option(200, "--max-moves", min=1, help="Stop a game after this many swaps (a strong solver never runs out of steps)."),
    solvers: str = typer.Option("random,greedy,plan", "--solvers", help="Comma-separated: random, greedy, plan."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Whole games on the rules engine: moves survived, tiles cleared and score per solver."""
    from agent.games.match3.plan_bench import BENCH_SOLVERS, bench_play, play_summary
    from agent.games.match3.rules import VARIANTS

    check_choice("--variant", variant, VARIANTS)
    names = tuple(n.strip() for n in solvers.split(",") if n.strip())
    for n in names:
        check_choice("--solvers", n, BENCH_SOLVERS)
    with _progress(as_json) as update:
        results = bench_play(variant, games, seed, names, max_moves=max_moves,
                             progress=lambda name, done, total: update(f"{name}: games", done, total))
    table = play_summary(results, max_moves)
    if as_json:
        print(json.dumps({"variant": variant, "games": games, "seed": seed, "max_moves": max_moves, "solvers": table}))
        return
    t = Table("solver", "mean moves", "mean tiles", "mean score", "mean steps gained", "steps left at the end",
              "games at the cap", "ms / decision", title=f"{games} {variant} games (seeds {seed}..{seed + games - 1}, cap {max_moves} swaps)",
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
