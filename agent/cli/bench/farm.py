"""`agent bench farm`: decisions per second and per-device latency at each farm size."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from agent.cli.app import console
from agent.signals import Interrupted


def bench_farm(
    sim: str = typer.Option("1,4,8,16", "--sim", help="Farm sizes to measure, comma-separated."),
    moves: int = typer.Option(15, "--moves", min=2, help="Moves per device at each size."),
    ray: bool = typer.Option(False, "--ray", help="Measure the farm on Ray (a local cluster of two nodes on 127.0.0.1, "
                                                   "each with its own adb server and phones) against the local farm."),
    per_node: str = typer.Option("1,2,4", "--per-node", help="With --ray: phones per node, comma-separated."),
    repeat: int = typer.Option(1, "--repeat", min=1, max=20, help="With --ray: run each size this many times; "
                                                                  "each figure is the median run."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Decisions per second and per-device decision latency at each farm size, through a
    private adb server and simulated phones on the wire, with the scaling efficiency
    against one device; with --ray, on a local two-node Ray cluster against the local
    farm of as many phones, and the bytes sent to the driver per move."""
    if ray:
        _bench_ray(per_node, moves, as_json, repeat)
        return
    import tempfile

    import numpy as np

    from agent.device.adb import AdbTarget, stop_server
    from agent.simphone.launch import free_port
    from agent.farm.controller import Farm, FarmOptions
    from agent.cli.farm import sim_args
    from agent.games.registry import get_game
    from agent.simphone.fleet import SimFleet

    try:
        sizes = [int(s) for s in sim.split(",") if s.strip()]
    except ValueError:
        raise typer.BadParameter(f"{sim!r} should be numbers like 1,4,8", param_hint="--sim") from None
    if not sizes or min(sizes) < 1 or max(sizes) > 64:
        raise typer.BadParameter("farm sizes are 1..64", param_hint="--sim")
    game = get_game("match3")
    # greedy, as the figures in the README were measured: the farm's own cost, not the solver's
    settings = {"variant": "step", "solver": "greedy", "steps": 30}
    results: list[dict[str, Any]] = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="puzzle-agent-farm-") as tmp:
            target = AdbTarget("127.0.0.1", free_port())
            try:
                with console.status(f"farm of {n}: starting {n} simulated phones"):
                    fleet = SimFleet(n, target, profiles=Path(tmp) / "profiles", log_dir=Path(tmp) / "logs",
                                     game_args=sim_args(game, settings)).__enter__()
                try:
                    options = FarmOptions(moves=moves, profiles=fleet.profiles, serials=tuple(fleet.serials),
                                          settings=settings)
                    farm = Farm([target], Path(tmp) / "run", options)
                    with console.status(f"farm of {n}: playing {moves} moves each"):
                        farm.run()
                    if farm.interrupted:  # the farm stopped cleanly on a signal: so does the bench
                        raise Interrupted(farm.stop_signal or signal.SIGINT)
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


def _sizes(text: str, option: str, most: int) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise typer.BadParameter(f"{text!r} should be numbers like 1,2,4", param_hint=option) from None
    if not sizes or min(sizes) < 1 or max(sizes) > most:
        raise typer.BadParameter(f"sizes are 1..{most}", param_hint=option)
    return sizes


def _bench_ray(per_node: str, moves: int, as_json: bool, repeats: int = 1) -> None:
    from agent.cli.farm import sim_args
    from agent.cli.plans import _progress
    from agent.farm.farm_bench import bench_ray_against_local
    from agent.farm.ray_farm import import_ray
    from agent.games.registry import get_game

    sizes = _sizes(per_node, "--per-node", 16)
    import_ray()  # before anything starts: Ray missing is said with its fix
    settings = {"variant": "step", "solver": "greedy", "steps": 30}
    with _progress(as_json) as update:
        results = bench_ray_against_local(sizes, moves, settings, sim_args(get_game("match3"), settings),
                                          progress=update, repeats=repeats)  # fmt: skip
    notes = [note for r in results for note in r.notes]
    if as_json:
        print(json.dumps([r.as_dict() for r in results]))
    else:
        _ray_table(results, moves, repeats)
    if notes:
        # A phone that did not play its moves makes its farm's figures meaningless.
        for note in notes:
            console.print(f"[red]{note}[/red]", highlight=False)
        raise typer.Exit(1)


def _ray_table(results: list[Any], moves: int, repeats: int) -> None:
    runs = f"; the median of {repeats} runs" if repeats > 1 else ""
    t = Table(title=f"agent bench farm --ray ({moves} moves per device{runs}; Ray: 2 nodes on 127.0.0.1, each with its own "
                    "adb server; local: one adb server, a worker process per phone)", title_justify="left")  # fmt: skip
    for col in ("farm", "phones", "done", "decisions/s", "runs", "decide ms p50", "p95", "scaling",
                "KB/move to driver", "calls/move", "on its node"):  # fmt: skip
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(r.kind if r.kind == "local" else f"ray {r.nodes}x{r.devices // r.nodes}", str(r.devices),
                  f"{r.done}/{r.devices}",
                  f"{r.decisions_per_s:.2f}", " ".join(f"{v:.2f}" for v in r.runs) if len(r.runs) > 1 else "-",
                  _ms(r.decide_ms_median), _ms(r.decide_ms_p95),
                  "-" if r.scaling_efficiency is None else f"{100 * r.scaling_efficiency:.0f}%",
                  "-" if r.bytes_per_move is None else f"{r.bytes_per_move / 1000:.2f}",
                  "-" if r.calls_per_move is None else f"{r.calls_per_move:.1f}",
                  "-" if r.on_their_nodes is None else ("all" if r.on_their_nodes else "NOT all"))  # fmt: skip
    console.print(t)
    console.print("scaling: decisions/s per phone against the same kind of farm at its smallest size; decide = read + "
                  "solve for one move (on the phone's own node); on its node: every actor ran where its phone is; "
                  "both farms play the same games (the same seeds)")
    verdict = scaling_verdict(results)
    if verdict:
        console.print(verdict, highlight=False)


def scaling_verdict(results: list[Any]) -> str:
    """The issue's target: Ray's scaling at its largest size at least the local farm's."""
    largest = {r.kind: r for r in sorted(results, key=lambda r: r.devices)}
    ray, local = largest.get("ray"), largest.get("local")
    if ray is None or local is None or ray.devices == min(r.devices for r in results):
        return ""
    met = (ray.scaling_efficiency or 0.0) >= (local.scaling_efficiency or 0.0)
    return (f"target (Ray's scaling at least the local farm's, at {ray.devices} phones): "
            f"Ray {100 * (ray.scaling_efficiency or 0):.0f}% against local {100 * (local.scaling_efficiency or 0):.0f}%: "
            + ("met" if met else "NOT met"))


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"
