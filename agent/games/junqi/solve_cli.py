"""`agent solve --game junqi`: the route of one piece, or all its legal destinations.

    agent solve --game junqi --board FILE --from R,C [--to R,C] [--json] [--png OUT]

Stations are ROW,COL, 0-based from the top-left (rows 0-11 on the real board). With
`--to`, prints the shortest legal route, or `unreachable` and why (an answer, not an
error: exit `UNREACHABLE_EXIT_CODE`, 0); without it, every legal destination (exit 0,
even when there is none). `--png` draws the board with the route or the destinations. `--board -` reads
stdin. Options of other games are refused.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from agent.cli_app import check_choice, console
from agent.games.junqi.board import Board
from agent.games.junqi.moves import Destination, MoveRules, destinations, immobile_reason, why_unreachable
from agent.files import save_png
from agent.games.junqi.render import render_board
from agent.games.junqi.topology import Station

# Unreachable is an answer, not an error (as `unsolvable` is for lightsout): exit 0, with
# `"reachable": false` in the JSON for scripts.
UNREACHABLE_EXIT_CODE = 0
VARIANTS = {"straight": MoveRules(curved_corners=False), "curved": MoveRules(curved_corners=True)}
_TOP_DEFAULT = 2  # agent solve's default for match3's --top
_STATION = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


def solve(
    *,
    board: str | None = None,
    start: str | None = None,
    to: str | None = None,
    png: Path | None = None,
    as_json: bool = False,
    top: int = _TOP_DEFAULT,
    variant: str | None = None,
    **unused: Any,
) -> None:
    for key, value in unused.items():
        if value not in (None, False):
            flag = f"--{key.replace('_', '-')}"
            raise typer.BadParameter(f"junqi does not use {flag} (it takes --board, --from, --to, --json, --png)", param_hint=flag)
    if top != _TOP_DEFAULT:
        raise typer.BadParameter("junqi does not use --top: without --to it lists every destination", param_hint="--top")
    rules = VARIANTS[check_choice("--variant", variant or "straight", tuple(VARIANTS))]
    if board is None:
        raise typer.BadParameter("junqi needs a board: a text file (or '-' for stdin), one character per station", param_hint="--board")
    if start is None:
        raise typer.BadParameter("junqi needs the piece to move, as ROW,COL (0-based, e.g. 1,0)", param_hint="--from")
    if png is not None and png.suffix.lower() != ".png":
        raise typer.BadParameter(f"{png} should end in .png", param_hint="--png")

    position = Board.parse(_read_board(board))
    origin = _station(start, "--from", position)
    goal = _station(to, "--to", position) if to is not None else None
    if goal == origin:
        raise typer.BadParameter(f"{to} is the piece's own station; give another destination", param_hint="--to")

    found = destinations(position, origin, rules)
    piece = position[origin]
    assert piece is not None  # destinations() refuses an empty station
    reason = immobile_reason(position, origin) or (None if found else "every way out is blocked")
    report: dict[str, Any] = {
        "game": "junqi",
        "topology": position.topology.name,
        "variant": "curved" if rules.curved_corners else "straight",
        "from": list(origin),
        "piece": {"side": piece.side.value, "kind": piece.kind.english, "char": piece.char},
    }
    if goal is not None:
        hit = found.get(goal)
        report.update({"to": list(goal), "reachable": hit is not None, **_destination_json(hit)})
        report["reason"] = why_unreachable(position, origin, goal, rules)
        shown, caption = (hit.route if hit else None), _caption(origin, goal, hit)
        picked: list[Destination] = []
    else:
        report["destinations"] = [{"to": list(d.station), **_destination_json(d)} for d in found.values()]
        report["reason"] = reason
        shown, caption = None, f"{piece.char} at {_fmt(origin)}: {len(found)} destinations"
        picked = list(found.values())
    if png is not None:
        save_png(render_board(position, shown, picked, caption), png)
        report["png"] = str(png)

    if as_json:
        typer.echo(json.dumps(report))
    else:
        _print_human(report, piece.describe(), found, goal)
        if png is not None:
            console.print(f"wrote {png}")
    if goal is not None and not report["reachable"] and UNREACHABLE_EXIT_CODE:
        raise typer.Exit(UNREACHABLE_EXIT_CODE)


def _read_board(board: str) -> str:
    if board == "-":
        return sys.stdin.read()
    if "\n" in board:  # the board's text itself
        return board
    path = Path(board)
    if not path.is_file():
        raise typer.BadParameter(f"no board file {board}", param_hint="--board")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {board}: {exc}", param_hint="--board") from None


def _station(text: str, option: str, board: Board) -> Station:
    m = _STATION.match(text)
    if not m:
        raise typer.BadParameter(f"{text!r} is not ROW,COL (0-based, e.g. 1,0)", param_hint=option)
    s = (int(m.group(1)), int(m.group(2)))
    t = board.topology
    if not t.inside(s):
        raise typer.BadParameter(
            f"{_fmt(s)} is off the board: rows 0-{t.rows - 1}, columns 0-{t.cols - 1}", param_hint=option
        )
    return s


def _fmt(s: Station) -> str:
    return f"{s[0]},{s[1]}"


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _destination_json(d: Destination | None) -> dict[str, Any]:
    if d is None:
        return {"route": None, "steps": None, "by": None, "attack": None}
    return {"route": [list(s) for s in d.route], "steps": d.steps, "by": d.by, "attack": d.attack}


def _caption(origin: Station, goal: Station, hit: Destination | None) -> str:
    if hit is None:
        return f"{_fmt(origin)} -> {_fmt(goal)}: unreachable"
    return f"{_fmt(origin)} -> {_fmt(goal)}: {_steps(hit.steps)} by {hit.by}" + (" (attack)" if hit.attack else "")


def _print_human(report: dict[str, Any], who: str, found: dict[Station, Destination], goal: Station | None) -> None:
    origin = tuple(report["from"])
    if goal is not None:
        if not report["reachable"]:
            console.print(f"unreachable: {who} at {_fmt(origin)} cannot reach {_fmt(goal)}: {report['reason']}", highlight=False, soft_wrap=True)
            return
        d = found[goal]
        verb = "attacks" if d.attack else "moves to"
        console.print(f"{who} at {_fmt(origin)} {verb} {_fmt(goal)}: {_steps(d.steps)} by {d.by}", highlight=False, soft_wrap=True)
        console.print("route: " + " -> ".join(_fmt(s) for s in d.route), highlight=False, soft_wrap=True)
        return
    if not found:
        console.print(f"no legal moves: {who} at {_fmt(origin)}: {report['reason']}", highlight=False, soft_wrap=True)
        return
    console.print(f"{who} at {_fmt(origin)}: {len(found)} destinations", highlight=False, soft_wrap=True)
    table = Table()
    for name in ("to", "steps", "by", "attack", "route"):
        table.add_column(name)
    for d in found.values():
        table.add_row(_fmt(d.station), str(d.steps), d.by, "yes" if d.attack else "", " ".join(_fmt(s) for s in d.route))
    console.print(table)
