"""`agent play --game lines`: the runner registered in agent.games.registry."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from agent.cli_app import console, parse_size_option
from agent.games.lines.config import LinesConfig, preset
from agent.games.lines.play import LinesPlayLoop, LinesPlayOptions, LinesPlaySummary
from agent.games.lines.players import SearchPlayer
from agent.games.lines.reader import label_values
from agent.games.lines.board import WILD
from agent.journal import Journal, new_run_dir

# The simulated game lasts thousands of moves with the search player; without --moves a
# run stops here so `agent play --game lines --sim` finishes in a minute or two.
DEFAULT_SIM_MOVES = 300


def _config_from_profile(profile) -> LinesConfig:
    values = label_values(profile)
    colours = sum(1 for v in values.values() if v != WILD)
    wild = WILD in values.values()
    return preset("seed").with_(
        rows=profile.rows, cols=profile.cols, colors=max(1, colours), wildcard=wild,
        wildcard_weight=preset("seed").wildcard_weight if wild else 0.0, preview=False,
    )


def _table(summary: LinesPlaySummary, title: str, truth: str | None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("stopped", summary.stop_reason)
    t.add_row("moves made", str(summary.moves))
    t.add_row("balls removed", f"{summary.balls_removed} (by the agent's moves, predicted and checked)")
    t.add_row("checks", ", ".join(f"{k} {v}" for k, v in sorted(summary.checks.items())) or "-")
    t.add_row("mean time per decision", f"{summary.mean_decision_ms:.1f} ms")
    t.add_row("mean settle wait", f"{summary.mean_settle_ms:.0f} ms")
    if truth:
        t.add_row("game (simulator's own count)", truth)
    return t


def run(*, sim: bool, serial: str | None, seed: int, size: str, moves: int | None, profiles: Path, runs: Path,
        as_json: bool, realtime: bool) -> LinesPlaySummary:
    from agent.device.clock import ManualClock, RealClock
    from agent.vision.profile import find_profile

    if sim and serial:
        raise typer.BadParameter("use either --sim or --serial, not both", param_hint="--sim")
    phone = None
    if sim:
        from agent.games.lines.sim import LinesSimPhone
        from agent.games.lines.sim_profile import GAME, save_sim_profile

        clock = RealClock() if realtime else ManualClock()
        config = preset("seed")
        phone = LinesSimPhone(config=config, seed=seed, size=parse_size_option(size), clock=clock)
        device = phone
        w, h = device.screen_size()
        save_sim_profile(phone, profiles)
        match = find_profile(device.model, w, h, GAME, [profiles])
        if moves is None:
            moves = DEFAULT_SIM_MOVES
    else:
        from agent.device.adb import AdbDevice, select_serial

        clock = RealClock()
        device = AdbDevice(select_serial(serial))
        w, h = device.screen_size()
        match = find_profile(device.model, w, h, "lines", [profiles])
        config = _config_from_profile(match.profile)
    player = SearchPlayer(config)
    run_dir = new_run_dir(runs)
    journal_path = run_dir / f"{''.join(ch if ch.isalnum() or ch in '-_.' else '_' for ch in device.serial)}.jsonl"
    with Journal(journal_path) as journal:
        journal.write("start", serial=device.serial, model=device.model, size=[w, h], game="lines",
                      seed=seed if sim else None, profile=str(match.path), profile_match=match.how)
        loop = LinesPlayLoop(device, match.profile, config, player, clock, LinesPlayOptions(moves=moves),
                             journal, seed=seed)
        if as_json:
            summary = loop.run()
        else:
            with console.status("playing...") as status:
                loop.on_move = lambda s: status.update(f"playing: move {s.moves}, {s.balls_removed} balls removed")
                summary = loop.run()
    truth = None
    if phone is not None:
        g = phone.game
        truth = f"turns {g.turns}, balls removed {g.removed}, score {g.score}, over {g.over}"
    if as_json:
        out = summary.as_dict() | {"journal": str(journal_path), "serial": device.serial}
        if phone is not None:
            out["game"] = {"turns": phone.game.turns, "removed": phone.game.removed, "score": phone.game.score,
                           "over": phone.game.over}
        print(json.dumps(out))
    else:
        console.print(_table(summary, f"{device.model} ({device.serial}) - lines", truth))
        console.print(f"journal: {journal_path}")
    if not summary.game_over and summary.stop_reason.startswith("board not readable"):
        raise typer.Exit(4)
    return summary
