"""`agent plans build|verify|stats`: the match-3 plan library of seed 000."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.cli.app import console, err_console, output_file

app = typer.Typer(no_args_is_help=True, help="The match-3 plan library (seed 000's execution plans).")

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


@app.command("build")
def plans_build(
    faithful: bool = typer.Option(False, "--faithful", help="The seed's printed method, defects included (for comparison)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where to write (default: plans/match3.json, or match3-faithful.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the build's figures as JSON."),
) -> None:
    """Generate the plan library and write it (atomically)."""
    from agent.games.match3.plan_library import library_path, save_library
    from agent.games.match3.plans import COMPLETE, FAITHFUL, build_plans

    target = out or (_faithful_path(library_path()) if faithful else library_path())
    output_file(target, "--out")
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


@app.command("verify")
def plans_verify(library: Optional[Path] = typer.Option(None, "--library", help=LIBRARY_HELP)) -> None:
    """Replay every plan in its window; exit non-zero naming any plan that fails.

    A plan holds when no swap before the last lines up three and the last produces exactly
    the final window, one elimination of `count` tiles."""
    from agent.games.match3.plan_library import PlanLibraryError, library_path, load_library, verify_library

    path = library_path(library)
    lib = load_library(path, check=False)  # every bad record is reported below, not just the first
    failures = list(verify_library(lib))
    if failures:
        for f in failures[:10]:
            where = f"plan {f.index + 1}" if f.index >= 0 else "library"
            err_console.print(f"{where}: {f.problem}" + (f"\n  {f.plan}" if f.plan else ""), highlight=False,
                              markup=False)
        raise PlanLibraryError(f"{len(failures)} problem(s) in {path}, first: {failures[0].problem}")
    console.print(f"{len(lib)} plans verified ({path})")


@app.command("stats")
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
