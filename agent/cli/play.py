"""`agent play`: one game on one phone, simulated or real, to its end (or --moves N)."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from agent.cli.app import DEFAULT_PROFILES, DEFAULT_RUNS, check_choice, chosen_game, console, parse_size_option, say, seed_option, output_dir

# The options `agent play` and `agent farm` share, so both say the same thing.
GAME_HELP = "The game on screen: one of the registered games (`agent play --help` lists them)."
VARIANT_HELP = ("The game's rules (match3: auto, learned by watching the game, the default on a real phone; "
                "step or classic).")
SCENE_HELP = ("Simulated phone (match3): plain, or saga: a commercial-style game (levels of other shapes, specials, "
              "blockers, holes, dialogs, ads; tiles cut from real screenshots).")
WORLD_HELP = ("Simulated phone, --scene saga: which game of the saga family (0, the default: the first saga game; "
              "others differ in art, header words, goals, flows, ads and timings).")
GOAL_HELP = ("match3: auto (read the level's goal, collect a colour or break blockers, and choose moves by it "
             "first) or off (blind to it: the baseline `agent bench levels` compares with).")
LATENCY_HELP = "Simulated phone: what each screenshot costs, in ms (a real phone's takes 300-800)."
SOLVER_HELP = "How moves are chosen (match3: plan, greedy or random; lines: player, greedy or random)."
STEPS_HELP = "Simulated phone: steps at the start (match3, step variant)."
MOVES_HELP = "Stop after this many moves (simulated phone: the game's own cap unless given)."
LEVELS_HELP = ("A game of levels (a real phone's saga game, or --scene saga): stop once this many levels are won. "
               "A level's end (its moves spent, its goal met) is never the run's end.")
RECORD_HELP = ("Keep every frame the decisions were made on beside the journal (JPEG; `agent replay` and "
               "`agent report` read them). Without it, the last few frames are kept when a run stops on a failure.")
RECORD_BUDGET_HELP = "The most the recorded frames may take, in MB; past it no frame is kept (the journal says so)."
RECORD_QUALITY_HELP = "JPEG quality of recorded frames (1-100)."
RECORD_LOSSLESS_HELP = "Record frames as PNG, every pixel as captured (several times bigger)."
VIEW_HELP = ("Serve a live view on 127.0.0.1 while it plays: the phone's latest frame with the agent's overlay "
             "(grid, letters, the move about to be made, the last check) and the run's numbers; the URL is printed "
             "at the start. With --sim the phone animates in wall-clock time (--realtime), so there is something to watch.")
VIEW_PORT_HELP = "The live view's port on 127.0.0.1 (0: any free port)."


def view_port_option(view: bool, port: int) -> None:
    if port and not view:
        raise typer.BadParameter("--view-port places the live view: it goes with --view", param_hint="--view-port")


def record_options(record: bool, budget_mb: float, quality: int, lossless: bool) -> Any:
    """The recording asked for (None: none), refusing options that need --record."""
    from agent.play.recording import DEFAULT_BUDGET_MB, DEFAULT_QUALITY, RecordOptions

    if not record:
        for given, default, name in ((budget_mb, DEFAULT_BUDGET_MB, "--record-budget"),
                                     (quality, DEFAULT_QUALITY, "--record-quality"), (lossless, False, "--record-lossless")):  # fmt: skip
            if given != default:
                raise typer.BadParameter(f"{name} shapes the recording: it goes with --record", param_hint=name)
        return None
    return RecordOptions(budget_mb=budget_mb, quality=quality, lossless=lossless)


def progress_text(game: str, summary: Any, limit: int | None, elapsed_s: float, levels_limit: int | None = None) -> str:
    """The spinner's line: the move against its limit, what the screen confirmed, the time."""
    of = f" of {limit}" if limit is not None else ""
    m, sec = divmod(int(elapsed_s), 60)
    levels = ""
    if getattr(summary, "levels", None):
        wanted = f" of {levels_limit}" if levels_limit is not None else ""
        levels = f", {summary.levels_won}{wanted} levels won ({summary.levels_lost} lost)"
    return (f"playing {game}: move {summary.moves}{of}, {summary.confirmed} confirmed{levels}, "
            f"{m}:{sec:02d} elapsed")


def summary_table(game: Any, summary: Any, title: str, truth: dict[str, object] | None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("stopped", summary.stop_reason)
    t.add_row("moves made", f"{summary.moves} ({summary.confirmed} confirmed on screen)")
    if summary.levels:
        t.add_row("levels", f"{summary.levels_won} won, {summary.levels_lost} lost, {len(summary.levels)} played")
    for label, value in game.screen.summary_rows(summary.counts):
        t.add_row(label, value)
    if summary.score is not None:
        t.add_row("score (read from the screen)", str(summary.score))
    t.add_row("checks", ", ".join(f"{k} {v}" for k, v in sorted(summary.checks.items())) or "-")
    t.add_row("mean time per decision", f"{summary.mean_decision_ms:.1f} ms (read + decide)")
    t.add_row("mean settle wait", f"{summary.mean_settle_ms:.0f} ms")
    if summary.cycle_s:
        per_move = sum(summary.captures_per_move) / len(summary.captures_per_move)
        t.add_row("move cycle", f"median {summary.median_cycle_s:.2f} s swipe to swipe, {per_move:.1f} captures a move, "
                                f"a capture {summary.capture_ms:.0f} ms")  # fmt: skip
    if summary.screens or summary.boards_found or summary.looks_learned or summary.launches:
        seen = ", ".join(f"{k} {v}" for k, v in sorted(summary.screens.items())) or "none"
        t.add_row("screens", f"{seen}; {summary.dialogs_closed} dismissed, {summary.boards_found} boards found again, "
                             f"{summary.looks_learned} looks learned, {summary.launches} launches")  # fmt: skip
    if truth is not None:
        t.add_row("game (simulator's own count)", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in truth.items()
                                                            if not isinstance(v, (list, dict))))  # fmt: skip
    return t


def levels_table(summary: Any) -> Table | None:
    """One row per level attempt: its number and goal as read, moves used, won or lost, score, retries."""
    rows = getattr(summary, "levels", None)
    if not rows:
        return None
    t = Table(title=f"levels: {summary.levels_won} won, {summary.levels_lost} lost", title_justify="left")
    for col in ("#", "level", "goal", "moves", "result", "score", "retries", "how it was known"):
        t.add_column(col, justify="left" if col in ("goal", "how it was known") else "right")
    for r in rows:
        goal = r.get("goal")
        goal_text = "-" if not goal else describe_goal(goal)
        result = {True: "won", False: "lost", None: "?"}[r.get("won")]
        t.add_row(str(r["index"]), "?" if r.get("level") is None else str(r["level"]), goal_text, str(r["moves"]),
                  result, "-" if r.get("score") is None else str(r["score"]), str(r.get("retries", 0)),
                  str(r.get("how") or "-"))  # fmt: skip
    return t


def describe_goal(goal: dict[str, Any]) -> str:
    from agent.vision.goal import Goal

    try:
        return Goal(goal["kind"], goal.get("target"), goal.get("left"), goal.get("colour")).describe()
    except (KeyError, ValueError, TypeError):
        return str(goal)


def play(
    sim: bool = typer.Option(False, "--sim", help="Play the simulated phone instead of a real one."),
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="The phone to use (default: ANDROID_SERIAL, then the only one)."),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    solver: Optional[str] = typer.Option(None, "--solver", help=SOLVER_HELP),
    seed: int = seed_option("The seed of the simulated game and of any random choice."),
    size: str = typer.Option("1080x2400", "--size", help="Simulated phone: screen WxH."),
    moves: Optional[int] = typer.Option(None, "--moves", min=1, help=MOVES_HELP),
    levels: Optional[int] = typer.Option(None, "--levels", min=1, max=100_000, help=LEVELS_HELP),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help=STEPS_HELP),
    scene: Optional[str] = typer.Option(None, "--scene", help=SCENE_HELP),
    world: Optional[int] = typer.Option(None, "--world", min=0, max=100_000, help=WORLD_HELP),
    goal: Optional[str] = typer.Option(None, "--goal", help=GOAL_HELP),
    latency_ms: float = typer.Option(0.0, "--latency-ms", min=0.0, max=10_000.0, help=LATENCY_HELP),
    launch: bool = typer.Option(False, "--launch", help="Start the game (the profile's package) and bring it back when another app comes in front."),
    realtime: bool = typer.Option(False, "--realtime", help="Simulated phone: animate in wall-clock time instead of simulated time."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder of device profiles."),
    runs: Path = typer.Option(DEFAULT_RUNS, "--runs", help="Where the run's journal and summary go."),
    record: bool = typer.Option(False, "--record", help=RECORD_HELP),
    record_budget: float = typer.Option(1000.0, "--record-budget", min=0.001, help=RECORD_BUDGET_HELP),
    record_quality: int = typer.Option(90, "--record-quality", min=1, max=100, help=RECORD_QUALITY_HELP),
    record_lossless: bool = typer.Option(False, "--record-lossless", help=RECORD_LOSSLESS_HELP),
    view: bool = typer.Option(False, "--view", help=VIEW_HELP),
    view_port: int = typer.Option(0, "--view-port", min=0, max=65535, help=VIEW_PORT_HELP),
    capture: str = typer.Option("auto", "--capture", help="Real phone: screenshot method auto (each timed at connect, the fastest correct one), raw, gzip or png."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Play a game to its end (or --moves N) and print what happened."""
    from agent.play import run as runs_mod
    from agent.play.journal import journal_name, new_run_dir
    from agent.play.stats import exit_code
    from agent.device.adb import CAPTURE_MODES

    if sim and serial:
        raise typer.BadParameter("use either --sim or --serial, not both", param_hint="--sim")
    check_choice("--capture", capture, CAPTURE_MODES)
    recording = record_options(record, record_budget, record_quality, record_lossless)
    view_port_option(view, view_port)
    output_dir(runs, "--runs")
    output_dir(profiles, "--profiles")
    if latency_ms and not sim:
        raise typer.BadParameter("--latency-ms shapes the simulated phone: it goes with --sim", param_hint="--latency-ms")
    if scene == "saga" and variant is None:
        variant = "auto"  # a game the agent has not seen: its rules are learned by watching
    chosen, settings = chosen_game(game, {"variant": variant, "solver": solver, "steps": steps, "scene": scene,
                                          "world": world, "goal": goal}, sim)  # fmt: skip
    header: dict[str, object] = {}
    if sim:
        realtime = realtime or view  # simulated time runs a move in milliseconds: nothing a person could watch
        from agent.vision.way_in import WayInError, keep_seen

        try:
            run = runs_mod.sim_run(chosen, settings, seed, parse_size_option(size), realtime, profiles, latency_ms)
        except WayInError as exc:  # no board to calibrate on: the screens that explain it are kept
            raise keep_seen(exc, new_run_dir(runs)) from exc
        if moves is None and levels is None:
            moves = chosen.sim.default_moves
    else:
        from agent.device.adb import AdbDevice, select_serial

        device = AdbDevice(select_serial(serial), capture=capture)  # type: ignore[arg-type]
        run = runs_mod.device_run(chosen, device, settings, seed, profiles)
        # Each capture method timed now, before any move: the loop's waits scale with it.
        device.choose_capture()
        header["capture"] = {"mode": device.capture_mode, "ms": device.capture_report()}
    if levels is not None and not run.has_levels:
        raise typer.BadParameter(f"{game} on this phone has no levels: it plays to its own end (use --moves)",
                                 param_hint="--levels")
    for note in run.notes:
        say(note, err=as_json)
    player = run.make_player()  # before the run folder: a broken plan library leaves none behind
    title = f"{run.device.model} ({run.device.serial}) - {game}"
    with ExitStack() as stack:
        watcher = None
        if view:  # before the run folder too: a port in use leaves none behind
            from agent.play.view import LiveView

            watcher = stack.enter_context(LiveView(view_port, title=title, limit=moves))
            say(f"live view: {watcher.url}", err=as_json)
        run_dir = new_run_dir(runs)
        journal_path = run_dir / journal_name(run.device.serial)
        options = run.options(moves=moves, launch=launch, levels=levels)
        if as_json:
            summary = runs_mod.play(run, options, journal_path, summary_path=run_dir / "summary.json", player=player,
                                    record=recording, watcher=watcher, capture=header.get("capture"))  # fmt: skip
        else:
            started = time.monotonic()
            with console.status(f"playing {game}: move 0{f' of {moves}' if moves is not None else ''}") as status:
                summary = runs_mod.play(
                    run, options, journal_path, summary_path=run_dir / "summary.json", player=player, record=recording,
                    watcher=watcher, capture=header.get("capture"),
                    on_move=lambda s: status.update(progress_text(game, s, moves, time.monotonic() - started, levels)),
                )  # fmt: skip
    if as_json:
        print(json.dumps(runs_mod.result_json(run, summary, journal_path)))
    else:
        console.print(summary_table(chosen, summary, title, run.truth()))
        table = levels_table(summary)
        if table is not None:
            console.print(table)
        say(f"journal: {journal_path}")
        if summary.recording:
            r = summary.recording
            say(f"recording: {r['frames']} frames, {r['mb']:.1f} MB in {r['folder']}"
                + (" (its budget was reached: later frames were not kept)" if r["budget_reached"] else ""))
    code = exit_code(summary)
    if code:
        raise typer.Exit(code)
