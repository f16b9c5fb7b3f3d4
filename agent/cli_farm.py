"""`agent farm` and `agent bench farm`."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Optional

import typer
from rich.live import Live
from rich.table import Table

from agent.cli_app import DEFAULT_PROFILES, app, bench_app, check_choice, console
from agent.errors import AgentError


def parse_adb_address(text: str):
    from agent.device.adb import AdbTarget

    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter(f"{text!r} should be HOST:PORT (e.g. 127.0.0.1:5037)", param_hint="--adb")
    return AdbTarget(host, int(port))


def farm_table(farm) -> Table:
    t = Table(title=f"farm: {farm.run_dir}", title_justify="left")
    # score: the game's own when its header is read, else the agent's count of points
    for col in ("device", "model", "state", "moves", "score", "fps", "last error"):
        t.add_column(col, overflow="fold")
    for row in farm.rows.values():
        t.add_row(
            row.serial if len(farm.targets) == 1 else row.key, row.model, row.state, str(row.moves),
            str(row.points) if row.score is None else str(row.score), f"{row.fps:.1f}", row.last_error[-80:],
        )
    return t


def run_farm(targets, run_dir: Path, options, live: bool, reconnect=None) -> dict:
    from agent.farm.controller import Farm
    from agent.journal import write_json_atomic

    farm = Farm(targets, run_dir, options, reconnect=reconnect)
    if live:
        with Live(farm_table(farm), console=console, refresh_per_second=4) as view:
            summary = farm.run(on_tick=lambda f: view.update(farm_table(f)))
    else:
        summary = farm.run()
    write_json_atomic(run_dir / "summary.json", summary)
    return summary


@app.command()
def farm(
    serial: list[str] = typer.Option([], "--serial", "-s", help="Only these devices (repeatable)."),
    sim: int = typer.Option(0, "--sim", min=0, max=64, help="Start N simulated phones on the wire and farm them."),
    moves: Optional[int] = typer.Option(None, "--moves", min=1, help="Moves per device."),
    game: str = typer.Option("match3", "--game", help="The game on every device."),
    variant: str = typer.Option("step", "--variant", help="match3 rules: step or classic."),
    solver: str = typer.Option("greedy", "--solver", help="The solver each worker uses."),
    adb: list[str] = typer.Option([], "--adb", help="An adb server HOST:PORT (repeatable; default: the local one)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder of device profiles."),
    calibrate: bool = typer.Option(False, "--calibrate", help="Calibrate a device that has no profile on its screen (writes the profile and an overlay to --profiles) instead of skipping it."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Where the run folder goes."),
    as_json: bool = typer.Option(False, "--json", help="Print the final summary as JSON instead of a live table."),
) -> None:
    """Play on every device the adb server(s) list, one worker process per device."""
    from agent.device.adb import AdbTarget
    from agent.farm.controller import FarmOptions
    from agent.games.match3.rules import VARIANTS
    from agent.games.match3.solver import SOLVERS
    from agent.journal import new_run_dir

    check_choice("--game", game, ("match3",))
    check_choice("--variant", variant, VARIANTS)
    check_choice("--solver", solver, SOLVERS)
    targets = [parse_adb_address(a) for a in adb] or [AdbTarget()]
    if sim and len(targets) > 1:
        raise typer.BadParameter("--sim starts phones on one adb server: give at most one --adb", param_hint="--sim")
    run_dir = new_run_dir(runs)
    with ExitStack() as stack:
        serials = tuple(serial)
        if sim:
            from agent.simphone.fleet import SimFleet

            fleet = stack.enter_context(SimFleet(sim, targets[0], profiles=profiles, variant=variant,
                                                 log_dir=run_dir / "phones"))  # fmt: skip
            serials = serials + tuple(fleet.serials) if serials else tuple(fleet.serials)
        options = FarmOptions(moves=moves, game=game, variant=variant, solver=solver, profiles=profiles,
                              serials=serials, calibrate=calibrate)  # fmt: skip
        summary = run_farm(targets, run_dir, options, live=not as_json)
    if as_json:
        print(json.dumps(summary))
    else:
        totals = summary["totals"]
        console.print(
            f"{totals['devices']} devices, {totals['moves']} moves, {totals['decisions_per_s']:.2f} decisions/s; "
            f"states: {', '.join(f'{k} {v}' for k, v in totals['by_state'].items()) or '-'}"
        )
        console.print(f"journals and summary: {run_dir}")
    if not summary["devices"]:
        raise AgentError(
            "no devices to farm: the adb server(s) list none",
            hint="attach phones or emulators (check `agent devices`), or try `agent farm --sim 4`",
        )


@bench_app.command("farm")
def bench_farm(
    sim: str = typer.Option("1,4,8,16", "--sim", help="Farm sizes to measure, comma-separated."),
    moves: int = typer.Option(15, "--moves", min=2, help="Moves per device at each size."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Decisions per second and per-device decision latency at each farm size, through a
    private adb server and simulated phones on the wire, with the scaling efficiency
    against one device."""
    import tempfile

    import numpy as np

    from agent.device.adb import AdbTarget, stop_server
    from agent.simphone.launch import free_port
    from agent.farm.controller import Farm, FarmOptions
    from agent.simphone.fleet import SimFleet

    try:
        sizes = [int(s) for s in sim.split(",") if s.strip()]
    except ValueError:
        raise typer.BadParameter(f"{sim!r} should be numbers like 1,4,8", param_hint="--sim") from None
    if not sizes or min(sizes) < 1 or max(sizes) > 64:
        raise typer.BadParameter("farm sizes are 1..64", param_hint="--sim")
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="puzzle-agent-farm-") as tmp:
            target = AdbTarget("127.0.0.1", free_port())
            try:
                with console.status(f"farm of {n}: starting {n} simulated phones"):
                    fleet = SimFleet(n, target, profiles=Path(tmp) / "profiles", log_dir=Path(tmp) / "logs").__enter__()
                try:
                    options = FarmOptions(moves=moves, profiles=fleet.profiles, serials=tuple(fleet.serials))
                    farm = Farm([target], Path(tmp) / "run", options)
                    with console.status(f"farm of {n}: playing {moves} moves each"):
                        summary = farm.run()
                finally:
                    fleet.__exit__(None, None, None)
            finally:
                stop_server(target)
        rows = list(farm.rows.values())
        # Time from the first worker's start to the last one's end counts only play, not
        # the phones' and workers' start-up.
        play_s = max((r.play_s for r in rows), default=0.0)
        total = sum(r.moves for r in rows)
        cycle = [r.play_s / r.moves for r in rows if r.moves]
        decide = [ms for r in rows for ms in r.decision_ms]
        results.append({
            "devices": n,
            "moves": total,
            "done": sum(r.state == "done" for r in rows),
            "decisions_per_s": total / play_s if play_s else 0.0,
            "move_cycle_s_median": float(np.median(cycle)) if cycle else None,
            "decide_ms_median": float(np.median(decide)) if decide else None,
            "decide_ms_p95": float(np.percentile(decide, 95)) if decide else None,
        })
    base = next((r["decisions_per_s"] for r in results if r["devices"] == 1), None)
    if base is None and results:
        base = results[0]["decisions_per_s"] / results[0]["devices"]
    for r in results:
        r["scaling_efficiency"] = r["decisions_per_s"] / (r["devices"] * base) if base else None
    if as_json:
        print(json.dumps(results))
        return
    t = Table(title=f"agent bench farm ({moves} moves per device, real adb server, simulated phones on the wire)")
    for col in ("devices", "done", "decisions/s", "move cycle (median)", "decide ms (median)", "decide ms (p95)",
                "scaling efficiency"):  # fmt: skip
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(str(r["devices"]), f"{r['done']}/{r['devices']}", f"{r['decisions_per_s']:.2f}",
                  f"{r['move_cycle_s_median']:.2f} s", f"{r['decide_ms_median']:.1f}", f"{r['decide_ms_p95']:.1f}",
                  f"{100 * r['scaling_efficiency']:.0f}%")  # fmt: skip
    console.print(t)
    console.print("decide = read + solve for one move; move cycle = one device's time per move, "
                  "animations and settling included")
