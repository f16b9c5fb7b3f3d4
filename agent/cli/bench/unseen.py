"""`agent bench unseen`: how right calibration is on look-alike screens it has never seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich import box
from rich.table import Table

from agent.cli.app import choice_list, console, output_dir, seed_option
from agent.cli.plans import _progress

DEFAULT_PER_FAMILY = 3  # 12 families x 3 screens: about a minute on 2 cores
CAPTION = (
    "grid: found, X when not the truth's; IoU of the box with the truth's; classes: appearance classes found (truth's looks); cells: "
    "appearance classes right, kinds: colour kinds right, each under the best one-to-one mapping ('?' not "
    "scored); moving: moving or covered cells misread / there; refusal: ok when refused exactly where "
    "the truth says so; s: seconds to calibrate"
)


def _families(values: list[str]) -> tuple[str, ...]:
    from agent.games.match3.lookalike import FAMILIES

    if not values:
        return FAMILIES
    out: list[str] = []
    for v in values:
        for name in choice_list("--family", v, FAMILIES):
            if name not in out:
                out.append(name)
    return tuple(out)


def bench_unseen_cmd(
    per_family: int = typer.Option(DEFAULT_PER_FAMILY, "--per-family", min=1, help="Screens of each family."),
    seed: int = seed_option("The first seed; each family takes consecutive seeds from it."),
    family: List[str] = typer.Option([], "--family", help="A family, or a comma list (repeatable; default all)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    save: Optional[Path] = typer.Option(None, "--save", help="Write each screen's PNG, truth JSON and overlay here."),
) -> None:
    """Calibrate look-alike screens (agent.games.match3.lookalike) and score them against
    their truth: grid, box IoU, cells and kinds right, moving cells misread, refusals of
    dialogs and dimmed screens, and timings (targets: grid exact and IoU >= 0.9 on every
    board screen, >= 98% of cells right, moving cells never misread, every dialog/dim
    screen refused and no board screen, read <= 15 ms, calibrate <= 1.5 s)."""
    from agent.games.match3.lookalike import cases
    from agent.games.match3.unseen_bench import FamilyTotals, bench_unseen

    if save is not None:
        output_dir(save, "--save")
    pairs = cases(_families(family), per_family, seed)
    with _progress(as_json) as update:
        report = bench_unseen(pairs, progress=update, save=save)
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    t = Table(title="agent bench unseen", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, 0), caption=CAPTION, caption_justify="left")  # fmt: skip
    for col in ("screen", "size", "grid", "IoU", "classes", "cells", "kinds", "moving", "refuse", "s"):
        # no padding: the box's column divider is the only space between columns, so 80 columns hold the table
        t.add_column(col, justify="left" if col in ("screen", "grid", "refuse") else "right", no_wrap=True,
                     min_width=len(col))
    for s in report.screens:
        if s.grid is None:
            grid = "refused"
        else:
            grid = f"{s.grid[0]}x{s.grid[1]}" + ("" if s.grid_exact else "X")
        t.add_row(
            s.name, f"{s.screen[0]}x{s.screen[1]}", grid, f"{s.iou:.3f}",
            f"{'-' if s.classes is None else s.classes}({s.truth_classes})",
            "-" if s.cells is None else f"{s.cells.share:.1%}", "-" if s.kinds is None else f"{s.kinds.share:.1%}",
            f"{s.misread}/{s.covered}" if s.covered else "-", "ok" if s.refusal_right else "WRONG", f"{s.seconds:.2f}",
        )  # fmt: skip

    def total_row(f: FamilyTotals, style: str | None = None) -> None:
        boards = f.board_screens
        t.add_row(
            f"{f.family} {f.screens}", "", f"{f.grids_exact}/{boards}" if boards else "-",
            "-" if f.min_iou is None else f"{f.min_iou:.3f}", "",
            f"{f.cells.share:.1%}" if f.cells.scored else "-", f"{f.kinds.share:.1%}" if f.kinds.scored else "-",
            f"{f.misread}/{f.covered}" if f.covered else "-", f"{f.refusals_right}/{f.screens}", f"{f.seconds:.2f}",
            style=style,
        )  # fmt: skip

    t.add_section()
    for f in report.families:
        total_row(f)
    t.add_section()
    total_row(report.overall, "bold")
    console.print(t)
    for target in report.targets():
        mark = "-" if target.met is None else ("met" if target.met else "NOT MET")
        console.print(f"{target.what}: {mark} ({target.detail})")
    for s in report.screens:
        if s.refused and s.must_refuse is None:
            console.print(f"{s.name}: refused: {s.refused}")
    if save is not None:
        console.print(f"wrote {len(report.screens)} screens, their truth and overlays to {save}")
