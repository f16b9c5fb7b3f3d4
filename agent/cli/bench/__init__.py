"""`agent bench ...`: every benchmark, one module each; each prints its figures."""

from __future__ import annotations

import typer

from agent.cli.bench import (
    capture, farm, goals, levels, lightsout, lines, play, realshots, record, screens, solve, unattended, unseen,
    vision,
)

app = typer.Typer(no_args_is_help=True, help="Benchmarks: each prints its figures.")
app.command("capture")(capture.bench_capture)
app.command("vision")(vision.bench_vision)
app.command("realshots")(realshots.bench_realshots_cmd)
app.command("solve")(solve.bench_solve_cmd)
app.command("play")(play.bench_play_cmd)
app.command("farm")(farm.bench_farm)
app.command("lines")(lines.bench_lines)
app.command("lightsout")(lightsout.bench_lightsout)
app.command("unseen")(unseen.bench_unseen_cmd)
app.command("unattended")(unattended.bench_unattended)
app.command("record")(record.bench_record)
app.command("levels")(levels.bench_levels)
app.command("goals")(goals.bench_goals)
app.command("screens")(screens.bench_screens)
