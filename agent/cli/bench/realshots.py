"""`agent bench realshots`: how right calibration is on the labelled real screenshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.table import Table

from agent.cli.app import check_choice, console
from agent.cli.plans import _progress

SETS = ("all", "realshots", "bbb")
CAPTION = (
    "grid and classes: found (labelled); IoU: of the board box with the labelled one; cells: right under the best "
    "one-to-one mapping of appearance classes to labels (held to the target only on shots labelled by look: the bbb "
    "crops are labelled by colour); kinds: the same on colour kinds (a special as its colour, '#' blocker); '?' cells "
    "not scored; s: seconds to calibrate; the last row: all shots, the lowest IoU, cells over all scored cells"
)


def bench_realshots_cmd(
    which: str = typer.Option("all", "--set", help="all, realshots (the six games of labels.json) or bbb (20 crops)."),
    shared: Optional[Path] = typer.Option(None, "--shared", help="The shared folder (default: ../shared beside the repository)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Calibrate every labelled shot of the shared folder and score it: grid, box IoU,
    classes, and cells right under the best one-to-one mapping of classes to labels
    (targets: grid exact and IoU >= 0.9 on every shot, >= 98% of cells right)."""
    from agent.games.match3.vision_bench import bench_realshots
    from agent.vision.scoring import LabelsError, bbb_shots, realshots_dir, shared_dir, six_shots

    check_choice("--set", which, SETS)
    folder = shared if shared is not None else shared_dir()
    shots = (six_shots(folder) if which in ("all", "realshots") else []) + (bbb_shots(folder) if which in ("all", "bbb") else [])
    if not shots:
        raise LabelsError(
            f"no labelled shots in {realshots_dir(folder)} (set {which})",
            hint="put the project's shared folder beside the repository, or pass --shared DIR",
        )
    with _progress(as_json) as update:
        report = bench_realshots(shots, progress=update)
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    t = Table(title="agent bench realshots", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              caption=CAPTION, caption_justify="left")  # fmt: skip
    # (the screen sizes are in --json: the table fits 80 columns with the shots' names whole)
    for col in ("shot", "grid", "IoU", "classes", "cells", "kinds", "s"):
        t.add_column(col, justify="left" if col in ("shot", "grid") else "right", no_wrap=True)
    for s in report.shots:
        if s.grid is None:
            grid = f"refused ({s.label_grid[0]}x{s.label_grid[1]})"
        else:
            grid = f"{s.grid[0]}x{s.grid[1]} " + ("exact" if s.grid_exact else f"({s.label_grid[0]}x{s.label_grid[1]}) WRONG")
        t.add_row(
            s.name, grid, f"{s.iou:.3f}",
            f"{'-' if s.classes is None else s.classes} ({s.label_classes})",
            f"{s.cells.share:.1%}", "-" if s.kinds is None else f"{s.kinds.share:.1%}", f"{s.seconds:.2f}",
        )  # fmt: skip
    kinds = report.kinds
    n = len(report.shots)
    t.add_section()
    t.add_row(
        f"all {n}", f"{report.grids_exact}/{n} exact", f"{report.min_iou:.3f}", "",
        f"{report.cells.share:.1%}", "-" if kinds is None else f"{kinds.share:.1%}", "", style="bold",
    )  # fmt: skip
    console.print(t)
    for target in report.targets():
        mark = "-" if target.met is None else ("met" if target.met else "NOT MET")
        console.print(f"{target.what}: {mark} ({target.detail})")
    refused = [s for s in report.shots if s.refused]
    for s in refused:
        console.print(f"{s.name}: refused: {s.refused}")
