"""`agent solve --game match3`: the best verified plans for one or more boards.

    agent solve --game match3 --board FILE|- [--objective seed|gain|points] [--top N] [--json] [--png OUT]

The board is the notation of `agent.games.match3.board` (one line per row, A-H, '.' for
empty). A file may hold several boards separated by blank lines; each is solved (with
--json: one JSON object per line). A line `# levels A=1 C=2` before a board gives tile
types a level (the gain objective's 3^level); other `#` lines are comments. The objective
defaults to `gain`; `points` is the classic game's scoring, where only single swaps are
legal. Every plan shown was replayed on the whole board with the rules engine.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import typer
from rich.table import Table

from agent.cli_app import check_choice, console
from agent.errors import AgentError, NotationError
from agent.files import save_png
from agent.games.match3.board import LETTERS, MAX_TYPES, Board
from agent.games.match3.plan_solver import OBJECTIVES, PlanChoice, PlanSolver
from agent.games.match3.rules import Match3Config

_LEVELS = re.compile(r"^#\s*levels?\s*:?\s*(.*)$", re.IGNORECASE)
_LEVEL = re.compile(r"^([A-Ha-h])\s*=\s*(\d+)$")


def solve(
    *, board: str | None = None, objective: str | None = None, top: int = 2, png: Path | None = None,
    as_json: bool = False, variant: str | None = None, **unused: Any,
) -> None:
    for key, value in unused.items():
        if value not in (None, False):
            flag = {"start": "--from"}.get(key, f"--{key.replace('_', '-')}")
            raise typer.BadParameter(
                f"match3 does not use {flag} (it takes --board, --objective, --top, --json, --png)", param_hint=flag
            )
    if board is None:
        raise typer.BadParameter(
            "match3 needs a board: a text file (or '-' for stdin), one line per row, A-H and '.' for empty",
            param_hint="--board",
        )
    objective = check_choice("--objective", objective or "gain", tuple(OBJECTIVES))
    if variant is None:
        variant = "classic" if objective == "points" else "step"
    if png is not None and png.suffix.lower() != ".png":
        raise typer.BadParameter(f"{png} should end in .png", param_hint="--png")

    problems = parse_boards(_read(board))
    if png is not None and len(problems) > 1:
        raise typer.BadParameter(f"--png draws one board; the input holds {len(problems)}", param_hint="--png")
    solver = PlanSolver(objective=objective)
    for n, (position, levels) in enumerate(problems, 1):
        config = Match3Config(
            variant=variant, rows=position.rows, cols=position.cols,  # type: ignore[arg-type]
            n_types=max(3, int(position.cells.max()) + 1), levels=levels,
        )
        ranked = solver.rank(config, position, top=top, prune=False)
        report = {
            "board": n, "rows": position.rows, "cols": position.cols, "variant": variant, "objective": objective,
            "plans": [_plan_json(i, pc) for i, pc in enumerate(ranked, 1)],
        }
        if as_json:
            print(json.dumps(report))
        else:
            _print(position, report, len(problems) > 1)
        if png is not None:
            write_png(png, position, ranked[0] if ranked else None)
            if not as_json:
                console.print(f"wrote {png}")


def _read(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentError(f"no board file {path}", hint="give a text file, or '-' to read the board from stdin") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"cannot read {path}: {exc}", hint="give a text file with one line per row") from None


def parse_boards(text: str) -> list[tuple[Board, tuple[int, ...]]]:
    """Boards separated by blank lines, each with the levels its `# levels` line gives."""
    out: list[tuple[Board, tuple[int, ...]]] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        levels = [0] * MAX_TYPES
        rows = []
        for line in block.splitlines():
            line = line.strip()
            m = _LEVELS.match(line)
            if m:
                for item in re.split(r"[\s,]+", m.group(1).strip()):
                    lv = _LEVEL.match(item)
                    if not lv:
                        raise NotationError(f"board {len(out) + 1}: {item!r} is not a level like A=1",
                                            hint="write levels as `# levels A=1 C=2`")
                    levels[LETTERS.index(lv.group(1).upper())] = int(lv.group(2))
            elif line and not line.startswith("#"):
                rows.append(line)
        if not rows:
            continue
        try:
            position = Board.parse("\n".join(rows))
        except NotationError as exc:
            raise NotationError(f"board {len(out) + 1}: {exc}") from None
        if position.has_unknown():
            raise NotationError(f"board {len(out) + 1} has unreadable cells ('?')",
                                hint="a plan is only as good as the board: give every cell a tile (A-H) or '.'")
        out.append((position, tuple(levels)))
    if not out:
        raise NotationError("no board in the input", hint="one line per row, A-H and '.' for empty")
    return out


def _plan_json(rank: int, pc: PlanChoice) -> dict:
    o = pc.outcome
    return {
        "rank": rank,
        "score": pc.score,
        "swaps": [str(m) for m in o.moves],  # row,col,direction: the tile at (row, col) moves
        "tiles_cleared": o.tiles_cleared,
        "steps_gained": o.steps_gained,
        "steps_spent": o.steps_spent,
        "points": o.points,
        "kind": LETTERS[pc.kind],
        "origin": pc.origin,  # plan, swap, setup or path (see agent.games.match3.plan_solver.ORIGINS)
        "plan": None if pc.plan is None else {
            "count": pc.plan.count, "target": pc.plan.target, "final": pc.plan.final,
            "row": pc.row, "col": pc.col, "library_index": pc.plan_index,
        },
    }


# Table labels for what is not a plan (ORIGINS has the long form).
_SHORT_ORIGINS = {"swap": "a shape not in the library", "setup": "a cascade set up first",
                  "path": "another path to a plan"}


def _print(position: Board, report: dict, numbered: bool) -> None:
    title = f"board {report['board']} " if numbered else ""
    console.print(f"{title}({report['rows']}x{report['cols']}, {report['variant']}, objective {report['objective']})")
    console.print(str(position), highlight=False)
    if not report["plans"]:
        console.print("no plan applies: no swap sequence in the library clears anything on this board")
        return
    t = Table("#", "swaps (row,col,dir of the moving tile)", "type", "tiles", "steps gained", "swaps", "score",
              "plan (count: target -> final at row,col)")
    for p in report["plans"]:
        plan = p["plan"]
        source = (f"{plan['count']}: {plan['target']} -> {plan['final']} at {plan['row']},{plan['col']}" if plan
                  else f"{p['origin']}: {_SHORT_ORIGINS.get(p['origin'], '')}")
        t.add_row(str(p["rank"]), " ".join(p["swaps"]), p["kind"], str(p["tiles_cleared"]), str(p["steps_gained"]),
                  str(len(p["swaps"])), str(p["score"]), source)
    console.print(t)


# -- picture ------------------------------------------------------------------------------

_CELL = 64


def write_png(path: Path, position: Board, choice: PlanChoice | None) -> None:
    """The board with the chosen plan: its window outlined, each swap a numbered arrow."""
    from agent.games.match3.render import sprite

    h, w = position.rows * _CELL, position.cols * _CELL
    img = np.full((h, w, 3), (46, 34, 40), np.uint8)
    for (r, c), v in np.ndenumerate(position.cells):
        y, x = r * _CELL, c * _CELL
        cv2.rectangle(img, (x, y), (x + _CELL - 1, y + _CELL - 1), (70, 56, 62), 1)
        if v >= 0:
            spr = sprite(int(v), _CELL)
            roi = img[y : y + _CELL, x : x + _CELL].astype(np.float32)
            a = spr.alpha[..., None]
            img[y : y + _CELL, x : x + _CELL] = (roi * (1 - a) + spr.bgr.astype(np.float32) * a + 0.5).astype(np.uint8)
    if choice is not None:
        if choice.plan is not None:
            ph, pw = choice.plan.height, choice.plan.width
        else:  # not a plan: outline the cells its swaps touch
            cells = [c for m in choice.moves for c in m.cells()]
            ph = max(r for r, _ in cells) - choice.row + 1
            pw = max(c for _, c in cells) - choice.col + 1
        x0, y0 = choice.col * _CELL, choice.row * _CELL
        cv2.rectangle(img, (x0 + 1, y0 + 1), (x0 + pw * _CELL - 2, y0 + ph * _CELL - 2), (255, 255, 255), 2)
        for i, move in enumerate(choice.moves, 1):
            (r1, c1), (r2, c2) = move.cells()
            p1 = (c1 * _CELL + _CELL // 2, r1 * _CELL + _CELL // 2)
            p2 = (c2 * _CELL + _CELL // 2, r2 * _CELL + _CELL // 2)
            cv2.arrowedLine(img, p1, p2, (0, 0, 0), 6, cv2.LINE_AA, tipLength=0.35)
            cv2.arrowedLine(img, p1, p2, (255, 255, 255), 3, cv2.LINE_AA, tipLength=0.35)
            cv2.putText(img, str(i), (p1[0] - 8, p1[1] + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 4, cv2.LINE_AA)
            cv2.putText(img, str(i), (p1[0] - 8, p1[1] + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2, cv2.LINE_AA)
    save_png(img, path)
