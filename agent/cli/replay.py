"""`agent replay RUN`: read and decide a recorded run again with the current code (and
profile), and say per decision whether the board read and the move chosen are the same.

Exit 0 when everything agrees, 1 when anything differs (or a decision's frame was not
recorded, or part of the run could not be compared: a torn journal, damaged lines of the
recording's index: "incomplete"), 2 for input it cannot replay (no journal, no recording,
a broken profile, a path that leads out of the run folder).
Registered in `agent.cli` as `app.command("replay")(replay.replay)`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from agent.cli.app import console, print_error, say
from agent.errors import AgentError

EXIT_SAME, EXIT_DIFFERS, EXIT_BAD_INPUT = 0, 1, 2
CELLS_SHOWN = 6  # differing cells listed in a row; the rest counted


def replay(
    run: Path = typer.Argument(..., help="The run folder (runs/<timestamp>/) or one of its journals."),
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="The device whose journal to replay, when the run has several."),
    profiles: Optional[Path] = typer.Option(None, "--profiles", help="Replay with the current profile from this folder instead of the recorded snapshot."),
    loop: bool = typer.Option(False, "--loop", help="Also play the recording back through the play loop, on a replay device."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Re-read and re-decide a recorded run (`agent play --record`) and compare with what it did."""
    from agent.play.replay import replay_loop, replay_run

    try:
        override = _profile_from(profiles, run, serial) if profiles is not None else None
        report = replay_run(run, serial, override)
        played = replay_loop(run, serial, override) if loop else None
    except AgentError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    ok = report.ok and (played is None or played.same)
    word = report.summary().split(":", 1)[0] if played is None or played.same else "differs"  # same, differs, incomplete
    final = (f"{word}: {report.details()}"
             + ("" if played is None else f"; play loop {'the same' if played.same else 'differs'}"))  # fmt: skip
    if as_json:
        out: dict[str, Any] = {**report.as_dict(), "ok": ok, "summary": final}
        if played is not None:
            out["loop"] = played.as_dict()
        print(json.dumps(out))
    else:
        console.print(_table(report))
        for note in report.notes:
            say(f"note: {note}")
        if played is not None:
            say(_loop_line(played))
        say(final)
    raise typer.Exit(EXIT_SAME if ok else EXIT_DIFFERS)


def _profile_from(folder: Path, run: Path, serial: str | None) -> Any:
    """The profile `agent play` would pick now for the recorded phone and game."""
    from agent.play.replay import find_journal, load_run
    from agent.vision.profile import find_profile

    if not folder.is_dir():
        raise AgentError(f"--profiles {folder} is no folder", hint="give the folder of device profiles (device_profiles/)")
    _, start, _ = load_run(find_journal(run, serial))
    device = start.get("device")
    size = device.get("size") if isinstance(device, dict) else None
    if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
        raise AgentError("the journal's start line names no screen size: no profile can be picked for it",
                         hint="give a journal `agent play` wrote")  # fmt: skip
    assert isinstance(device, dict)
    return find_profile(str(device.get("model", "")), size[0], size[1], str(start.get("game")), [folder]).profile


def _table(report: Any) -> Table:
    t = Table(title=f"replay of {report.journal} ({report.game}, {report.profile})", title_justify="left")
    for name in ("move", "frame", "board", "recorded", "replayed", "cells that differ"):
        t.add_column(name)
    for d in report.decisions:
        if not d.replayed:
            board, move = "not recorded", "-"
        else:
            board = "same" if d.board_same else "differs"
            move = "same" if d.move_same else "differs"
        cells = ", ".join(f"{c.row},{c.col} {c.recorded or '-'}->{c.replayed or '-'}" for c in d.cells[:CELLS_SHOWN])
        if len(d.cells) > CELLS_SHOWN:
            cells += f" (+{len(d.cells) - CELLS_SHOWN})"
        replayed = d.replayed_move if d.replayed_move is not None else "-"
        if d.replayed:
            replayed = f"{replayed} ({move})"
        t.add_row(str(d.index), "-" if d.frame is None else str(d.frame), board, d.recorded_move, replayed,
                  cells or d.note or "")  # fmt: skip
    return t


def _loop_line(played: Any) -> str:
    end = "the recording ended" if played.ended else f"stopped: {played.stop_reason}"
    head = f"play loop: {played.moves} moves of {len(played.recorded_moves)} recorded ({end})"
    if played.same:
        return f"{head}: every move and gesture as recorded"
    if not played.moves_same:
        i = played.first_move_difference
        rec = played.recorded_moves[i - 1] if i is not None and i <= len(played.recorded_moves) else "none"
        got = played.replayed_moves[i - 1] if i is not None and i <= len(played.replayed_moves) else "none"
        return f"{head}: move {i} differs (recorded {rec}, replayed {got})"
    i = next((k for k, (a, b) in enumerate(zip(played.recorded, played.replayed)) if a != b),
             min(len(played.recorded), len(played.replayed)))  # fmt: skip
    rec = played.recorded[i] if i < len(played.recorded) else "none"
    got = played.replayed[i] if i < len(played.replayed) else "none"
    return f"{head}: the moves as recorded, but gesture {i + 1} differs (recorded {rec}, replayed {got})"
