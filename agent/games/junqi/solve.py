"""`agent solve --game junqi`: the route of one piece, or all its legal destinations.

    agent solve --game junqi --board FILE --from R,C [--to R,C] [--json] [--png OUT]

Stations are ROW,COL, 0-based from the top-left (rows 0-11 on the real board). With
`--to`, reports the shortest legal route, or `unreachable` and why (an answer, not an
error: exit `UNREACHABLE_EXIT_CODE`, 0); without it, every legal destination (exit 0,
even when there is none). `--png` draws the board with the route or the destinations.
`--board -` reads stdin; board text with newlines is taken as the board itself.
"""

from __future__ import annotations

import re
from typing import Any

from agent.errors import UsageError
from agent.games.base import Block, SolveOption, SolveReport, SolveRequest, TableBlock, TextBlock
from agent.games.boardfile import BoardFileError, is_board_file, naming, read_board_text
from agent.games.junqi.board import Board
from agent.games.junqi.moves import Destination, MoveRules, destinations, immobile_reason, why_unreachable
from agent.games.junqi.topology import Station

# Unreachable is an answer, not an error (as `unsolvable` is for lightsout): exit 0, with
# `"reachable": false` in the JSON for scripts.
UNREACHABLE_EXIT_CODE = 0
VARIANTS = {"straight": MoveRules(curved_corners=False), "curved": MoveRules(curved_corners=True)}
VARIANT_DEFAULT = "straight"
_STATION = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


class JunqiSolver:
    """`values`: board (a file, '-' or the board's text), start (--from) and to and, for
    callers other than `agent solve` (which has no --variant yet), variant (straight or
    curved corners; default straight)."""

    options = (
        SolveOption("board", "The board: a text file or '-' for stdin, one character per station."),
        SolveOption("start", "The piece's station ROW,COL (0-based, e.g. 1,0).", flag="--from"),
        SolveOption("to", "The destination ROW,COL; without it, every legal destination."),
    )

    def solve(self, request: SolveRequest) -> SolveReport:
        values = request.values
        variant = values.get("variant") or VARIANT_DEFAULT
        if variant not in VARIANTS:
            raise UsageError("--variant", f"{variant!r} is not one of {', '.join(VARIANTS)}")
        rules = VARIANTS[variant]
        board, start, to = values.get("board"), values.get("start"), values.get("to")
        if board is None:
            raise UsageError(
                "--board", "junqi needs a board: a text file (or '-' for stdin), one character per station"
            )
        if start is None:
            raise UsageError("--from", "junqi needs the piece to move, as ROW,COL (0-based, e.g. 1,0)")
        png = request.png
        if png is not None and png.suffix.lower() != ".png":
            raise UsageError("--png", f"{png} should end in .png")

        text = _read_board(board)
        with naming(board):
            position = Board.parse(text)
        origin = _station(start, "--from", position)
        goal = _station(to, "--to", position) if to is not None else None
        if goal == origin:
            raise UsageError("--to", f"{to} is the piece's own station; give another destination")

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
        picture = None
        if png is not None:
            from agent.games.junqi.render import render_board

            picture = render_board(position, shown, picked, caption)
            report["png"] = str(png)
        unreachable = goal is not None and not report["reachable"]
        return SolveReport(
            records=(report,),
            blocks=tuple(_blocks(report, piece.describe(), found, goal)),
            picture=picture,
            exit_code=UNREACHABLE_EXIT_CODE if unreachable else 0,
        )


def _read_board(board: str) -> str:
    if board != "-" and "\n" in board:  # the board's text itself
        return board
    if not is_board_file(board):
        raise BoardFileError(f"no board file {board}")
    return read_board_text(board)  # an unreadable file is the file's error (exit 1), as in every game


def _station(text: str, option: str, board: Board) -> Station:
    m = _STATION.match(text)
    if not m:
        raise UsageError(option, f"{text!r} is not ROW,COL (0-based, e.g. 1,0)")
    s = (int(m.group(1)), int(m.group(2)))
    t = board.topology
    if not t.inside(s):
        raise UsageError(option, f"{_fmt(s)} is off the board: rows 0-{t.rows - 1}, columns 0-{t.cols - 1}")
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


def _blocks(report: dict[str, Any], who: str, found: dict[Station, Destination], goal: Station | None) -> list[Block]:
    origin = (report["from"][0], report["from"][1])
    if goal is not None:
        if not report["reachable"]:
            return [TextBlock(f"unreachable: {who} at {_fmt(origin)} cannot reach {_fmt(goal)}: {report['reason']}")]
        d = found[goal]
        verb = "attacks" if d.attack else "moves to"
        return [
            TextBlock(f"{who} at {_fmt(origin)} {verb} {_fmt(goal)}: {_steps(d.steps)} by {d.by}"),
            TextBlock("route: " + " -> ".join(_fmt(s) for s in d.route)),
        ]
    if not found:
        return [TextBlock(f"no legal moves: {who} at {_fmt(origin)}: {report['reason']}")]
    rows = tuple(
        (_fmt(d.station), str(d.steps), d.by, "yes" if d.attack else "", " ".join(_fmt(s) for s in d.route))
        for d in found.values()
    )
    return [
        TextBlock(f"{who} at {_fmt(origin)}: {len(found)} destinations"),
        TableBlock("", ("to", "steps", "by", "attack", "route"), rows),
    ]
