"""`agent farm`: every device of one or more adb servers, one worker process each."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Optional

import typer
from rich.live import Live
from rich.table import Table

from agent.cli.app import DEFAULT_PROFILES, DEFAULT_RUNS, SEED_MAX, console, output_dir, say, seed_option
from agent.cli.app import chosen_game
from agent.cli.play import GAME_HELP, GOAL_HELP, LEVELS_HELP, MOVES_HELP, SOLVER_HELP, VARIANT_HELP
from agent.cli.play import RECORD_BUDGET_HELP, RECORD_HELP, RECORD_LOSSLESS_HELP, RECORD_QUALITY_HELP, record_options
from agent.cli.play import view_port_option
from agent import signals
from agent.errors import AgentError


# (help is rich markup: the backslash keeps "[ray]" from being read as a style)
RAY_HELP = ("Play on the phones of a Ray cluster's nodes (HOST:PORT of its head, or auto: the cluster started on "
            "this machine): one actor per phone, on the phone's node; only events come here. Each node joins with "
            "`agent farm-node`. Needs the extra: pip install \".\\[ray]\".")


def ray_options(address: str, sim: int, adb: list[str], view: bool) -> None:
    """--ray takes its phones from the cluster's nodes: options about this machine's
    phones do not apply."""
    if sim:
        raise typer.BadParameter("the phones of a Ray farm are those its nodes list: start simulated phones on a node "
                                 "(agent sim serve, adb connect) and join it with `agent farm-node`", param_hint="--sim")  # fmt: skip
    if adb:
        raise typer.BadParameter("with --ray each node lists its own adb server: give it to `agent farm-node --adb`",
                                 param_hint="--adb")  # fmt: skip
    if view:
        raise typer.BadParameter("the live views would be served on each node's 127.0.0.1, out of reach from here",
                                 param_hint="--view")  # fmt: skip
    from agent.farm.ray_farm import check_address, import_ray

    import_ray()
    check_address(address)


def parse_adb_address(text: str):
    from agent.device.adb import AdbTarget

    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter(f"{text!r} should be HOST:PORT (e.g. 127.0.0.1:5037)", param_hint="--adb")
    return AdbTarget(host, int(port))


def farm_table(farm) -> Table:
    m, s = divmod(int(time.time() - farm.started), 60)
    target = farm.options.moves
    aim = f"target {target} moves a device" if target is not None else "each device plays to its end"
    t = Table(title=f"farm: {farm.run_dir}  {m}:{s:02d} elapsed, {aim}", title_justify="left")
    on_ray = any(row.node for row in farm.rows.values()) or hasattr(farm, "driver_node")
    # score: the game's own, when its header is read
    for col in ("node",) * on_ray + ("device", "model", "state", "moves", "confirmed", "score", "fps", "last error"):
        t.add_column(col, overflow="fold")
    for row in farm.rows.values():
        t.add_row(
            *((row.node[:12],) if on_ray else ()),
            row.serial if len(farm.targets) == 1 or on_ray else row.key, row.model, row.state,
            str(row.moves) if target is None else f"{row.moves}/{target}",
            str(row.confirmed), "-" if row.score is None else str(row.score), f"{row.fps:.1f}", row.last_error[-80:],
        )
    return t


def run_farm(targets, run_dir: Path, options, live: bool, reconnect=None, farm_view=None,
             ray_address: str | None = None) -> dict:  # fmt: skip
    """Run the farm; `summary.json` is written however it ended (a signal, a bug, a
    terminal that went away under the live table), before any signal is let through.
    `farm_view` (agent.farm.view.FarmView) is kept up to date on every tick. With
    `ray_address`, the phones are those of the cluster's nodes (agent.farm.ray_farm)."""
    from agent.farm.controller import Farm

    if ray_address is not None:
        from agent.farm.ray_farm import RayFarm

        farm: Farm = RayFarm(ray_address, run_dir, options)
    else:
        farm = Farm(targets, run_dir, options, reconnect=reconnect)
    try:
        return _run_farm(farm, run_dir, live, farm_view)
    finally:
        if ray_address is not None:
            farm.close()  # type: ignore[attr-defined]


def _run_farm(farm, run_dir: Path, live: bool, farm_view) -> dict:
    with signals.deferred():
        try:
            with signals.allowed():  # the farm stops on a signal at once, and cleanly
                if live:
                    with Live(farm_table(farm), console=console, refresh_per_second=4) as view:
                        def tick(f) -> None:
                            view.update(farm_table(f))
                            if farm_view is not None:
                                farm_view.sync(f)

                        farm.run(on_tick=tick)
                else:
                    farm.run(on_tick=None if farm_view is None else farm_view.sync)
        except KeyboardInterrupt as exc:  # came as the farm ended: its workers are stopped
            farm.mark_interrupted(exc)
        finally:
            summary = write_summary(run_dir, farm.summary())
    return summary


def write_summary(run_dir: Path, summary: dict) -> dict:
    from agent.play.journal import write_json_atomic
    from agent.signals import deferred

    with deferred():  # a signal now waits until the file is whole
        write_json_atomic(run_dir / "summary.json", summary)
    return summary


def interrupted_summary(targets, run_dir: Path, options, exc: BaseException) -> dict:
    """The summary of a farm stopped by a signal outside its own run: while its phones
    started (nothing played yet), or stopped (the run's summary, marked interrupted)."""
    from agent import signals
    from agent.farm.controller import Farm

    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        farm = Farm(targets, run_dir, options)
        farm.mark_interrupted(exc)
        summary = farm.summary()
    if not summary.get("interrupted"):
        summary = {**summary, "interrupted": True, "signal": signals.name(signals.signal_of(exc))}
    return write_summary(run_dir, summary)


def sim_args(game: Any, settings: dict[str, Any]) -> list[str]:
    """`agent sim serve` options for the farm's simulated phones: the game's variant, and
    enough steps that --moves, not the game, decides when a phone is done."""
    from agent.simphone.fleet import FARM_STEPS

    takes = {o.name for o in game.screen.options}
    args = ["--variant", str(settings["variant"])] if "variant" in takes else []
    return args + (["--steps", str(FARM_STEPS)] if "steps" in takes else [])


def farm(
    serial: list[str] = typer.Option([], "--serial", "-s", help="Only these devices (repeatable)."),
    sim: int = typer.Option(0, "--sim", min=0, max=64, help="Start N simulated phones on the wire and farm them."),
    moves: Optional[int] = typer.Option(None, "--moves", min=1, help=MOVES_HELP),
    levels: Optional[int] = typer.Option(None, "--levels", min=1, max=100_000, help=LEVELS_HELP),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    solver: Optional[str] = typer.Option(None, "--solver", help=SOLVER_HELP),
    goal: Optional[str] = typer.Option(None, "--goal", help=GOAL_HELP),
    seed: int = seed_option("Simulated phones: the first phone's seed (phone i gets seed + i)."),
    adb: list[str] = typer.Option([], "--adb", help="An adb server HOST:PORT (repeatable; default: the local one)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder of device profiles."),
    launch: bool = typer.Option(False, "--launch", help="Start the game on each phone (its profile's package) and bring it back when another app comes in front."),
    calibrate: bool = typer.Option(False, "--calibrate", help="Calibrate a device that has no profile on its screen (writes the profile and an overlay to --profiles) instead of skipping it."),
    runs: Path = typer.Option(DEFAULT_RUNS, "--runs", help="Where the run folder goes."),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    record_budget: float = typer.Option(1000.0, "--record-budget", min=0.001, help=RECORD_BUDGET_HELP + " (each device)"),
    record_quality: int = typer.Option(90, "--record-quality", min=1, max=100, help=RECORD_QUALITY_HELP),
    record_lossless: bool = typer.Option(False, "--record-lossless", help=RECORD_LOSSLESS_HELP),
    view: bool = typer.Option(False, "--view", help="Serve a page on 127.0.0.1 with every device's live view (its latest frame with the agent's overlay, and its numbers); the URL is printed at the start."),
    view_port: int = typer.Option(0, "--view-port", min=0, max=65535, help="The farm page's port on 127.0.0.1 (0: any free port; each device's own view takes a free one)."),
    as_json: bool = typer.Option(False, "--json", help="Print the final summary as JSON instead of a live table."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS|auto", help=RAY_HELP),
) -> None:
    """Play on every device the adb server(s) list, one worker process per device (or, with
    --ray, one Ray actor per phone on the node it is attached to)."""
    from agent.device.adb import AdbTarget
    from agent.farm.controller import FarmOptions
    from agent.play.journal import new_run_dir

    chosen, settings = chosen_game(game, {"variant": variant, "solver": solver, "goal": goal}, sim=bool(sim))
    recording = record_options(record, record_budget, record_quality, record_lossless)
    view_port_option(view, view_port)
    if sim and seed + sim - 1 > SEED_MAX:
        raise typer.BadParameter(f"phone {sim - 1} would get seed {seed + sim - 1}, above {SEED_MAX}", param_hint="--seed")
    output_dir(runs, "--runs")
    if sim or calibrate:
        output_dir(profiles, "--profiles")
    if sim and moves is None:
        moves = chosen.sim.default_moves
    targets = [parse_adb_address(a) for a in adb] or [AdbTarget()]
    if ray is not None:
        ray_options(ray, sim=sim, adb=adb, view=view)
        targets = []
    if sim and len(targets) > 1:
        raise typer.BadParameter("--sim starts phones on one adb server: give at most one --adb", param_hint="--sim")
    farm_view = None
    if view:  # before the run folder: a port in use leaves none behind
        from agent.farm.view import FarmView

        farm_view = FarmView(view_port)
        say(f"live view: {farm_view.start()}", err=as_json)
    run_dir = new_run_dir(runs)
    options = FarmOptions(moves=moves, game=game, settings=settings, seed=seed, profiles=profiles,
                          serials=tuple(serial), calibrate=calibrate, launch=launch, levels=levels,
                          record=None if recording is None else asdict(recording), view=view)  # fmt: skip
    try:
        with ExitStack() as stack:
            if farm_view is not None:
                stack.callback(farm_view.close)
            if sim:
                from agent.simphone.fleet import SimFleet

                fleet = stack.enter_context(SimFleet(sim, targets[0], profiles=profiles, game=game,
                                                     game_args=sim_args(chosen, settings),
                                                     log_dir=run_dir / "phones", base_seed=seed))  # fmt: skip
                options = replace(options, serials=options.serials + tuple(fleet.serials))
            summary = run_farm(targets, run_dir, options, live=not as_json, farm_view=farm_view, ray_address=ray)
    except KeyboardInterrupt as exc:  # while the phones started or stopped
        summary = interrupted_summary(targets, run_dir, options, exc)
    if as_json:
        print(json.dumps(summary))
    else:
        totals = summary["totals"]
        sent = f", {totals['bytes_per_move']:.0f} bytes to the driver a move" if totals.get("bytes_per_move") else ""
        if totals.get("recording_bytes_to_driver"):
            sent += f" (and {totals['recording_bytes_to_driver'] / 1e6:.1f} MB of recordings)"
        console.print(
            f"{totals['devices']} devices, {totals['moves']} moves, {totals['decisions_per_s']:.2f} decisions/s{sent}; "
            f"states: {', '.join(f'{k} {v}' for k, v in totals['by_state'].items()) or '-'}"
        )
        if summary.get("interrupted"):
            say(f"{signals.reason(signals.number(summary.get('signal') or 'SIGINT'))}: the farm stopped cleanly")
        say(f"journals and summary: {run_dir}")
        if options.record is not None:
            where = " (copied from each phone's node)" if ray is not None else ""
            say(f"recordings{where}: beside the journals; see them with `agent report {run_dir}`")
    if summary.get("interrupted"):
        # After the clean stop (journals and summary.json written): 130, 143 or 129.
        raise typer.Exit(signals.exit_code(signals.number(summary.get("signal") or "SIGINT")))
    if not summary["devices"] and ray is not None:
        raise AgentError(
            f"no phones to farm: no node of the Ray cluster at {ray} lists any",
            hint="on each machine with phones run `agent farm-node --address ADDRESS` (see `agent farm-node --help`)",
        )
    if not summary["devices"]:
        raise AgentError(
            "no devices to farm: the adb server(s) list none",
            hint="attach phones or emulators (check `agent devices`), or try `agent farm --sim 4`",
        )
    if not any(d["state"] == "done" for d in summary["devices"]):
        states = ", ".join(sorted({d["state"] for d in summary["devices"]}))
        problem = AgentError(
            f"no device played to the end: every one was {states}",
            hint=f"see each device's last error in {run_dir}/summary.json and its journal",
        )
        # every phone's run ended as `agent play` says with one code: the farm says it too
        (code, *others) = {d.get("exit_code") for d in summary["devices"]}
        if not others and isinstance(code, int) and code:
            problem.exit_code = code
        raise problem


def farm_node(
    address: str = typer.Option(..., "--address", help="The Ray cluster's head, HOST:PORT (as `ray start --head` printed)."),
    adb: str = typer.Option("127.0.0.1:5037", "--adb", help="This node's adb server HOST:PORT: its phones are the ones played here."),
    node_ip_address: Optional[str] = typer.Option(None, "--node-ip-address", help="This node's IP as the other nodes reach it (passed to `ray start`; 127.0.0.1 for a cluster on one machine)."),
    num_cpus: Optional[int] = typer.Option(None, "--num-cpus", min=1, help="CPUs this node gives Ray (default: all)."),
    no_start: bool = typer.Option(False, "--no-start", help="A raylet of this cluster runs here already (ray start): only start the roster."),
) -> None:
    """Join this machine to a Ray cluster as a node of `agent farm --ray`, with the phones of its adb server.

    Runs `ray start --address ADDRESS [--node-ip-address IP]` (unless --no-start), then starts this
    node's roster: a detached actor, named after the node and pinned to it, that lists the adb
    server's phones every 2 s and keeps up as phones come and go. `agent farm --ray ADDRESS` asks
    every node's roster for its phones and plays each one with an actor on its node. This is the
    documented equivalent of advertising the phones as node resources: Ray fixes a node's
    resources when its raylet starts, and phones come and go. Run it again after changing --adb;
    `ray stop` on this machine takes the node (and its roster) out of the cluster. Each node needs
    this package installed; the device profiles come from the farm's --profiles with each run, and
    what a run learns or calibrates goes back there.

    On one machine's loopback (a cluster on 127.0.0.1) `ray start` cannot join (Ray rewrites
    127.0.0.1 to the host's address): start the node another way and add --no-start.
    """
    from agent.farm.ray_farm import check_address, import_ray
    from agent.farm.ray_node import join_node

    target = parse_adb_address(adb)
    import_ray()
    check_address(address, option="--address")  # (before `ray start` is asked to join it)
    joined = join_node(address, target, node_ip_address=node_ip_address, num_cpus=num_cpus, start=not no_start)
    say(f"node {joined.node_id[:12]} ({joined.node_ip}) joined {address}; its roster lists adb {joined.adb} every 2 s")
    for d in joined.devices:
        say(f"  {d['serial']}  {d['state']}  {d.get('model') or '-'}")
    if not joined.devices:
        say("  no phones yet: the roster will see them when the adb server lists them")
