"""`agent bench record`: what recording, the live view and the report cost a run."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from agent.cli.app import console, parse_size_option, seed_option
from agent.cli.plans import _progress


def bench_record(
    moves: int = typer.Option(200, "--moves", min=1, help="Moves in each run."),
    repeats: int = typer.Option(3, "--repeats", min=1, max=20, help="Runs with and without --record, in turns."),
    seed: int = seed_option("The simulated game's seed (the same for every run)."),
    size: str = typer.Option("1080x2400", "--size", help="Simulated phone: screen WxH."),
    view: bool = typer.Option(True, "--view/--no-view", help="Also play with the live view on and a viewer polling it."),
    report: bool = typer.Option(True, "--report/--no-report", help="Also time `agent report` on the recording."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """`agent play --sim` with and without --record, the live view's lag, and the report's time."""
    from agent.report.record_bench import bench_record as run_bench

    w, h = parse_size_option(size)
    with _progress(as_json) as update:
        bench = run_bench(moves=moves, seed=seed, size=(w, h), repeats=repeats, view=view, report=report,
                          progress=update)  # fmt: skip
    d = bench.as_dict()
    if as_json:
        print(json.dumps(d))
        return
    t = Table(show_header=False, title=f"{moves}-move runs of match3 on the simulated phone ({w}x{h}, seed {seed}), "
                                       f"{repeats} with and {repeats} without --record", title_justify="left")  # fmt: skip
    t.add_column(style="bold")
    t.add_column()
    pm = d["per_move_ms"]
    t.add_row("wall time per move", f"{pm['plain']:.1f} ms without --record, {pm['record']:.1f} ms with "
                                    f"({100 * d['record_overhead_of_wall_time']:+.1f}%)")  # fmt: skip
    share = d["recorder_share_of_cycle"]
    t.add_row("recorder's own work", f"{d['recorder_cpu_ms_per_move']:.1f} ms of processor time per move"
              + (f", {100 * share:.1f}% of the {d['median_cycle_s']:.2f} s move cycle (target: under 10%)"
                 if share is not None else ""))  # fmt: skip
    t.add_row("recording", f"{d['recording_mb']:.1f} MB for {d['frames']} frames (target: under 50 MB for 200 moves)")
    if d["report_s"] is not None:
        t.add_row("agent report", f"{d['report_s']:.2f} s, {d['report_mb']:.1f} MB of HTML (target: under 10 s)")
    v = d["view"]
    if v["samples"]:
        t.add_row("live view", f"{v['samples']} frames fetched over {v['moves']} moves: at most {v['max_lag_captures']} "
                               f"capture(s) behind the agent, {v['mean_lag_captures']:.2f} on average (target: at most 1)")  # fmt: skip
    console.print(t)
