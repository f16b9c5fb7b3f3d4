"""`agent play`: one game on one phone, simulated or real, to its end (or --moves N)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from agent.cli.app import DEFAULT_PROFILES, DEFAULT_RUNS, check_choice, chosen_game, console, parse_size_option, say, seed_option, output_dir

# The options `agent play` and `agent farm` share, so both say the same thing.
GAME_HELP = "The game on screen: one of the registered games (`agent play --help` lists them)."
VARIANT_HELP = "The game's rules (match3: step or classic)."
SOLVER_HELP = "How moves are chosen (match3: plan, greedy or random; lines: player, greedy or random)."
STEPS_HELP = "Simulated phone: steps at the start (match3, step variant)."
MOVES_HELP = "Stop after this many moves (simulated phone: the game's own cap unless given)."


def summary_table(game: Any, summary: Any, title: str, truth: dict[str, object] | None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("stopped", summary.stop_reason)
    t.add_row("moves made", f"{summary.moves} ({summary.confirmed} confirmed on screen)")
    for label, value in game.screen.summary_rows(summary.counts):
        t.add_row(label, value)
    if summary.score is not None:
        t.add_row("score (read from the screen)", str(summary.score))
    t.add_row("checks", ", ".join(f"{k} {v}" for k, v in sorted(summary.checks.items())) or "-")
    t.add_row("mean time per decision", f"{summary.mean_decision_ms:.1f} ms (read + decide)")
    t.add_row("mean settle wait", f"{summary.mean_settle_ms:.0f} ms")
    if truth is not None:
        t.add_row("game (simulator's own count)", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in truth.items()))
    return t


def play(
    sim: bool = typer.Option(False, "--sim", help="Play the simulated phone instead of a real one."),
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="The phone to use (default: ANDROID_SERIAL, then the only one)."),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    solver: Optional[str] = typer.Option(None, "--solver", help=SOLVER_HELP),
    seed: int = seed_option("The seed of the simulated game and of any random choice."),
    size: str = typer.Option("1080x2400", "--size", help="Simulated phone: screen WxH."),
    moves: Optional[int] = typer.Option(None, "--moves", min=1, help=MOVES_HELP),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help=STEPS_HELP),
    realtime: bool = typer.Option(False, "--realtime", help="Simulated phone: animate in wall-clock time instead of simulated time."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder of device profiles."),
    runs: Path = typer.Option(DEFAULT_RUNS, "--runs", help="Where the run's journal and summary go."),
    capture: str = typer.Option("auto", "--capture", help="Real phone: screenshot method auto, raw or png."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Play a game to its end (or --moves N) and print what happened."""
    from agent.play import run as runs_mod
    from agent.play.journal import journal_name, new_run_dir
    from agent.play.loop import PlayOptions
    from agent.play.stats import exit_code

    if sim and serial:
        raise typer.BadParameter("use either --sim or --serial, not both", param_hint="--sim")
    check_choice("--capture", capture, ("auto", "raw", "png"))
    output_dir(runs, "--runs")
    output_dir(profiles, "--profiles")
    chosen, settings = chosen_game(game, {"variant": variant, "solver": solver, "steps": steps}, sim)
    if sim:
        run = runs_mod.sim_run(chosen, settings, seed, parse_size_option(size), realtime, profiles)
        if moves is None:
            moves = chosen.sim.default_moves
    else:
        from agent.device.adb import AdbDevice, select_serial

        device = AdbDevice(select_serial(serial), capture=capture)  # type: ignore[arg-type]
        run = runs_mod.device_run(chosen, device, settings, seed, profiles)
    for note in run.notes:
        say(note, err=as_json)
    player = run.make_player()  # before the run folder: a broken plan library leaves none behind
    run_dir = new_run_dir(runs)
    journal_path = run_dir / journal_name(run.device.serial)
    options = PlayOptions(moves=moves)
    if as_json:
        summary = runs_mod.play(run, options, journal_path, summary_path=run_dir / "summary.json", player=player)
    else:
        limit = f" of {moves}" if moves is not None else ""
        with console.status("playing...") as status:
            summary = runs_mod.play(
                run, options, journal_path, summary_path=run_dir / "summary.json", player=player,
                on_move=lambda s: status.update(f"playing {game}: move {s.moves}{limit}, {s.confirmed} confirmed"),
            )  # fmt: skip
    if as_json:
        print(json.dumps(runs_mod.result_json(run, summary, journal_path)))
    else:
        title = f"{run.device.model} ({run.device.serial}) - {game}"
        console.print(summary_table(chosen, summary, title, run.truth()))
        say(f"journal: {journal_path}")
    code = exit_code(summary)
    if code:
        raise typer.Exit(code)
