"""`agent play --game lightsout`: set up the phone (simulated or real), play, report."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from agent.cli_app import console, parse_size_option
from agent.games.lightsout.play import LightsOutLoop, LightsPlayOptions, LightsSummary
from agent.games.lightsout.reader import check_labels
from agent.games.lightsout.sim_profile import GAME
from agent.journal import Journal, new_run_dir


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _table(summary: LightsSummary, title: str, truth: str | None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("stopped", summary.stop_reason)
    t.add_row("first board read", (summary.first_board or "-").replace("\n", "/"))
    if summary.planned_presses is not None:
        t.add_row("fewest presses (planned)", f"{summary.planned_presses} (of {summary.solutions} solutions)")
    t.add_row("taps made", str(summary.taps))
    t.add_row("checks", ", ".join(f"{k} {v}" for k, v in sorted(summary.checks.items())) or "-")
    if summary.rule_changes:
        t.add_row("rules learned from taps", "; ".join(summary.rule_changes))
    t.add_row("mean time per decision", f"{summary.mean_decision_ms:.1f} ms (read + solve)")
    t.add_row("mean settle wait", f"{summary.mean_settle_ms:.0f} ms")
    if truth is not None:
        t.add_row("game (simulator's own count)", truth)
    return t


def run(
    *, sim: bool, serial: str | None, seed: int, size: str, moves: int | None, profiles: Path, runs: Path,
    as_json: bool, realtime: bool,
) -> LightsSummary:  # fmt: skip
    from agent.device.clock import ManualClock, RealClock
    from agent.vision.profile import find_profile

    if sim and serial:
        raise typer.BadParameter("use either --sim or --serial, not both", param_hint="--sim")
    phone = None
    if sim:
        from agent.games.lightsout.sim import LightsOutPhone
        from agent.games.lightsout.sim_profile import save_sim_profile

        clock = RealClock() if realtime else ManualClock()
        phone = LightsOutPhone(seed=seed, size=parse_size_option(size), clock=clock)
        device = phone
        save_sim_profile(phone, profiles)
    else:
        from agent.device.adb import AdbDevice, select_serial

        clock = RealClock()
        device = AdbDevice(select_serial(serial))
    w, h = device.screen_size()
    match = find_profile(device.model, w, h, GAME, [profiles])
    check_labels(match.profile)

    run_dir = new_run_dir(runs)
    journal_path = run_dir / f"{_safe(device.serial)}.jsonl"
    with Journal(journal_path) as journal:
        journal.write(
            "start", serial=device.serial, model=device.model, size=[w, h], game=GAME, seed=seed if sim else None,
            profile=str(match.path), profile_match=match.how,
        )  # fmt: skip
        loop = LightsOutLoop(device, match.profile, clock, options=LightsPlayOptions(moves=moves), journal=journal)
        if as_json:
            summary = loop.run()
        else:
            with console.status("playing...") as status:
                loop.on_tap = lambda s: status.update(f"playing: tap {s.taps} of {s.planned_presses}")
                summary = loop.run()

    truth = None
    if phone is not None:
        truth = f"{'solved' if phone.solved else 'not solved'} after {len(phone.presses)} presses"
    if as_json:
        out = summary.as_dict() | {"journal": str(journal_path), "serial": device.serial}
        if phone is not None:
            out["game"] = {"solved": phone.solved, "presses": len(phone.presses)}
        print(json.dumps(out))
    else:
        console.print(_table(summary, f"{device.model} ({device.serial}) - lightsout", truth))
        console.print(f"journal: {journal_path}")
    if not summary.solved:
        unreadable = summary.stop_reason.startswith("board not readable")
        stopped_on_purpose = summary.stop_reason.startswith(("tap limit", "interrupted"))
        if unreadable:
            raise typer.Exit(4)
        if not stopped_on_purpose:
            raise typer.Exit(1)
    return summary
