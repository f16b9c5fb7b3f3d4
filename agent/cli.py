"""The `agent` command line: `play`, `devices`, `sim ...`, and the commands each feature
module registers on the shared Typer apps in `agent.cli_app`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from agent.cli_app import (
    DEFAULT_PROFILES,
    app,
    check_choice as _check_choice,
    console,
    err_console,
    parse_size_option as _parse_size,
    sim_app,
)
from agent.errors import AgentError
from agent.games.registry import GAMES, run_game


# A step game ends when its steps run out, but the plan solver gains steps faster than it
# spends them: without a cap a simulated game could go on forever.
SIM_DEFAULT_MOVES = 200


# -- play -----------------------------------------------------------------------


def _summary_table(summary, title: str, truth=None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("stopped", summary.stop_reason)
    t.add_row("moves made", str(summary.moves))
    t.add_row("tiles cleared", f"{summary.tiles_cleared} (predicted and checked; refill cascades not included)")
    t.add_row("steps gained / spent", f"{summary.steps_gained} / {summary.steps_spent}")
    if summary.score is not None:
        t.add_row("score (read from the screen)", str(summary.score))
    t.add_row("points (agent's count)", str(summary.points))
    t.add_row("checks", ", ".join(f"{k} {v}" for k, v in sorted(summary.checks.items())) or "-")
    t.add_row("mean time per decision", f"{summary.mean_decision_ms:.1f} ms (read + solve)")
    t.add_row("mean settle wait", f"{summary.mean_settle_ms:.0f} ms")
    if truth is not None:
        t.add_row(
            "game (simulator's own count)",
            f"score {truth.score}, tiles cleared {truth.tiles_cleared}, steps gained {truth.steps_gained}, "
            f"steps left {truth.steps_left}, moves {truth.moves_made}",
        )
    return t


@app.command()
def play(
    sim: bool = typer.Option(False, "--sim", help="Play the simulated phone instead of a real one."),
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="The phone to use (default: ANDROID_SERIAL, then the only one)."),
    game: str = typer.Option("match3", "--game", help="The game on screen."),
    variant: str = typer.Option("step", "--variant", help="Rules: step (any swap costs a step) or classic (only matching swaps)."),
    seed: int = typer.Option(0, "--seed", help="Simulated phone: the game's seed."),
    size: str = typer.Option("1080x2400", "--size", help="Simulated phone: screen WxH."),
    moves: Optional[int] = typer.Option(
        None, "--moves", min=1,
        help=f"Stop after this many moves (simulated phone: {SIM_DEFAULT_MOVES} unless given; the plan solver can keep a step game going forever).",
    ),
    steps: int = typer.Option(30, "--steps", min=1, help="Simulated phone: steps at the start (step variant)."),
    solver: str = typer.Option("plan", "--solver", help="plan (the plan library's multi-swap plans, each verified on the board), greedy (best single swap) or random."),
    realtime: bool = typer.Option(False, "--realtime", help="Simulated phone: animate in wall-clock time instead of simulated time."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder of device profiles."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Where the run's journal goes."),
    capture: str = typer.Option("auto", "--capture", help="Real phone: screenshot method auto, raw or png."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Play a game to its end (or --moves N) and print what happened."""
    from agent.games.match3.rules import VARIANTS, Match3Config
    from agent.games.match3.solver import SOLVERS, make_solver
    from agent.journal import Journal, new_run_dir
    from agent.play import PlayLoop

    _check_choice("--game", game, tuple(GAMES))
    if game != "match3":
        return run_game(
            game, sim=sim, serial=serial, seed=seed, size=size, moves=moves, profiles=profiles, runs=runs,
            as_json=as_json, realtime=realtime,
        )
    _check_choice("--variant", variant, VARIANTS)
    _check_choice("--solver", solver, SOLVERS)
    _check_choice("--capture", capture, ("auto", "raw", "png"))
    if sim and serial:
        raise typer.BadParameter("use either --sim or --serial, not both", param_hint="--sim")

    truth_of = None
    if sim and moves is None:
        moves = SIM_DEFAULT_MOVES
    if sim:
        from agent.device.clock import ManualClock, RealClock
        from agent.games.match3.sim import SimPhone
        from agent.games.match3.sim_profile import sim_profile_for_play, sim_status_reader
        from agent.vision.profile import find_profile

        clock = RealClock() if realtime else ManualClock()
        config = Match3Config(variant=variant, start_steps=steps)
        device = SimPhone(config=config, seed=seed, size=_parse_size(size), clock=clock)
        w, h = device.screen_size()
        _, which = sim_profile_for_play(device, profiles)
        (err_console if as_json else console).print(f"profile: {which}", highlight=False)
        match = find_profile(device.model, w, h, game, [profiles])
        profile = match.profile
        status_reader = sim_status_reader(device.layout)
        truth_of = device
    else:
        from agent.device.adb import AdbDevice, select_serial
        from agent.device.clock import RealClock
        from agent.vision.profile import find_profile

        clock = RealClock()
        device = AdbDevice(select_serial(serial), capture=capture)  # type: ignore[arg-type]
        w, h = device.screen_size()
        match = find_profile(device.model, w, h, game, [profiles])
        profile = match.profile
        n_types = max(3, len({e.label for e in profile.exemplars if e.label not in (".", "?")}))
        config = Match3Config(variant=variant, rows=profile.rows, cols=profile.cols, n_types=min(n_types, 8))
        status_reader = None

    run_dir = new_run_dir(runs)
    journal_path = run_dir / f"{_safe(device.serial)}.jsonl"
    with Journal(journal_path) as journal:
        journal.write(
            "start", serial=device.serial, model=device.model, size=[w, h], game=game, variant=variant,
            solver=solver, seed=seed if sim else None, profile=str(match.path), profile_match=match.how,
        )
        loop = PlayLoop(
            device, profile, config, make_solver(solver, seed), clock,
            options=_play_options(moves), journal=journal, status_reader=status_reader,
        )
        if as_json:
            summary = loop.run()
        else:
            with console.status("playing...") as status:
                loop.on_move = lambda s: status.update(f"playing: move {s.moves}, {s.tiles_cleared} tiles cleared")
                summary = loop.run()
    truth = truth_of.state if truth_of is not None else None
    if as_json:
        out = summary.as_dict() | {"journal": str(journal_path), "serial": device.serial}
        if truth is not None:
            out["game"] = {
                "score": truth.score, "tiles_cleared": truth.tiles_cleared, "steps_gained": truth.steps_gained,
                "steps_left": truth.steps_left, "moves": truth.moves_made,
            }
        print(json.dumps(out))
    else:
        console.print(_summary_table(summary, f"{device.model} ({device.serial}) - {game}/{variant}", truth))
        console.print(f"journal: {journal_path}")
    if not summary.game_over and summary.stop_reason.startswith("board not readable"):
        raise typer.Exit(4)


def _play_options(moves: Optional[int]):
    from agent.play import PlayOptions

    return PlayOptions(moves=moves)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


# -- devices --------------------------------------------------------------------


@app.command()
def devices(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The phones adb sees, with model, resolution and state."""
    from agent.device.adb import AdbTarget, list_devices

    found = list_devices(AdbTarget())
    if as_json:
        print(json.dumps([
            {"serial": d.serial, "state": d.state, "model": d.model,
             "resolution": list(d.resolution) if d.resolution else None} for d in found
        ]))
        return
    if not found:
        console.print("no devices: plug in a phone with USB debugging on, or use `agent play --sim`")
        return
    t = Table("serial", "state", "model", "resolution")
    for d in found:
        res = f"{d.resolution[0]}x{d.resolution[1]}" if d.resolution else "-"
        t.add_row(d.serial, d.state, d.model or "-", res)
    console.print(t)


# -- sim --------------------------------------------------------------------------


@sim_app.command("screenshot")
def sim_screenshot(
    out: Path = typer.Argument(..., help="PNG file to write."),
    seed: int = typer.Option(0, "--seed"),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: str = typer.Option("step", "--variant"),
) -> None:
    """Save what the simulated phone shows."""
    from agent.games.match3.sim import SimPhone
    from agent.files import save_png
    from agent.games.match3.rules import VARIANTS, Match3Config

    _check_choice("--variant", variant, VARIANTS)
    if out.suffix.lower() != ".png":
        raise typer.BadParameter(f"{out} should end in .png", param_hint="OUT")
    phone = SimPhone(config=Match3Config(variant=variant), seed=seed, size=_parse_size(size))
    save_png(phone.screencap(), out)
    console.print(f"wrote {out} ({phone.screen_size()[0]}x{phone.screen_size()[1]}, seed {seed})")


# Feature modules register their commands on import (one line each).
import agent.cli_feature_imports  # noqa: E402,F401


def main() -> None:
    try:
        app()
    except AgentError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        if exc.hint:
            err_console.print(f"[bold]fix:[/] {exc.hint}", highlight=False)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
