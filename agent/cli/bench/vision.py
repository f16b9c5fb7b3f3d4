"""`agent bench vision`: reading a frame with a profile, and calibrating from scratch."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from agent.cli.app import console, parse_size_option

def bench_vision(
    size: str = typer.Option("1080x2400", "--size", help="The simulated phone's screen WxH."),
    reads: int = typer.Option(200, "--reads", min=5, help="Frames read per measurement."),
    calibrations: int = typer.Option(5, "--calibrations", min=1, help="Calibrations per measurement."),
    realshots: bool = typer.Option(True, "--realshots/--no-realshots", help="Also calibrate the shared real screenshots (if present)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Reading a frame with a profile (target <= 15 ms median) and calibrating from scratch
    (target <= 1.5 s), on the simulated phone and the shared real screenshots."""
    from agent.games.match3.vision_bench import run
    from agent.vision.scoring import shared_dir

    wh = parse_size_option(size)
    shared = shared_dir() if realshots else None
    with console.status("benchmarking...", spinner="dots") as status:
        figures = run(wh, reads, calibrations, shared, tick=lambda label: status.update(label))
    if as_json:
        print(json.dumps({"figures": [f.as_dict() for f in figures]}))
        return
    t = Table(title="agent bench vision (medians; first run not counted)", title_justify="left")
    for col in ("what", "screen", "runs", "median", "p95", "target"):
        t.add_column(col, justify="left" if col in ("what", "screen") else "right")
    for f in figures:
        mark = "" if f.ok is None else (" ok" if f.ok else " MISSED")
        target = "-" if f.target_ms is None else f"<= {f.target_ms:g} ms{mark}"
        t.add_row(f.what, f.screen, str(f.runs), f"{f.median_ms:.1f} ms", f"{f.p95_ms:.1f} ms", target)
    console.print(t)
