"""`agent solve --game match3`: the best verified plans for one or more boards.

    agent solve --game match3 --board FILE|- [--objective seed|gain|points] [--top N] [--json] [--png OUT]

The board is the notation of `agent.games.match3.board` (one line per row, A-H, '.' for
empty). A file may hold several boards separated by blank lines; each is solved (with
--json: one JSON object per line). A line `# levels A=1 C=2` before a board gives tile
types a level 0..20 (the gain objective's 3^level); other `#` lines are comments. The objective
defaults to `gain`; `points` is the classic game's scoring, where only single swaps are
legal. Every plan shown was replayed on the whole board with the rules engine.

The plan library is loaded by `solve()`, never when the solver is made.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from agent.errors import NotationError, UsageError
from agent.games.base import Block, SolveOption, SolveReport, SolveRequest, TableBlock, TextBlock
from agent.games.boardfile import read_board_text
from agent.games.match3.board import LETTERS, MAX_TYPES, Board

if TYPE_CHECKING:
    from agent.games.match3.plan_solver import PlanChoice

_LEVELS = re.compile(r"^#\s*levels?\s*:?\s*(.*)$", re.IGNORECASE)
_LEVEL = re.compile(r"^([A-Ha-h])\s*=\s*(\d+)$")
# A group of n tiles gains (n - 3) * 3**level steps, summed over a decision's cascades in
# int64: 3**20 leaves room for every tile of the biggest board in a hundred cascades
# (3**40 alone is past int64).
MAX_LEVEL = 20
TOP_DEFAULT = 2
OBJECTIVE_DEFAULT = "gain"


class Match3Solver:
    """`values`: board (a file or '-'), objective (default gain), top (default 2) and,
    for callers other than `agent solve` (which has no --variant), variant (step or
    classic; default classic for the points objective, step otherwise)."""

    options = (
        SolveOption("board", "The board: a text file or '-' for stdin, one line per row, A-H and '.' for empty."),
        SolveOption("objective", "What to maximise: seed, gain (default) or points."),
        SolveOption("top", f"How many plans to show (default {TOP_DEFAULT})."),
    )

    def solve(self, request: SolveRequest) -> SolveReport:
        from agent.games.match3.plan_solver import OBJECTIVES, PlanSolver
        from agent.games.match3.rules import Match3Config

        values = request.values
        board = values.get("board")
        if board is None:
            raise UsageError(
                "--board",
                "match3 needs a board: a text file (or '-' for stdin), one line per row, A-H and '.' for empty",
            )
        objective = values.get("objective") or OBJECTIVE_DEFAULT
        if objective not in OBJECTIVES:
            raise UsageError("--objective", f"{objective!r} is not one of {', '.join(OBJECTIVES)}")
        top = values.get("top")
        top = TOP_DEFAULT if top is None else int(top)
        variant = values.get("variant")
        if variant is None:
            variant = "classic" if objective == "points" else "step"
        png = request.png
        if png is not None and png.suffix.lower() != ".png":
            raise UsageError("--png", f"{png} should end in .png")

        try:
            problems = parse_boards(read_board_text(board))
        except NotationError as exc:  # say which file: a batch of boards may come from several
            raise NotationError(f"{'stdin' if board == '-' else board}: {exc}", hint=exc.hint) from None
        if png is not None and len(problems) > 1:
            raise UsageError("--png", f"--png draws one board; the input holds {len(problems)}")
        solver = PlanSolver(objective=objective)
        records: list[dict[str, Any]] = []
        blocks: list[Block] = []
        picture: np.ndarray | None = None
        for n, (position, levels) in enumerate(problems, 1):
            config = Match3Config(
                variant=variant, rows=position.rows, cols=position.cols,  # type: ignore[arg-type]
                n_types=max(3, int(position.cells.max()) + 1), levels=levels,
            )  # fmt: skip
            ranked = solver.rank(config, position, top=top, prune=False)
            report = {
                "board": n, "rows": position.rows, "cols": position.cols, "variant": variant, "objective": objective,
                "plans": [_plan_json(i, pc) for i, pc in enumerate(ranked, 1)],
            }  # fmt: skip
            records.append(report)
            blocks.extend(_blocks(position, report, len(problems) > 1))
            if png is not None:
                picture = draw_plan(position, ranked[0] if ranked else None)
        return SolveReport(records=tuple(records), blocks=tuple(blocks), picture=picture)


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
                                            hint="write levels as `# levels A=1 C=2`")  # fmt: skip
                    digits = lv.group(2).lstrip("0") or "0"
                    if len(digits) > 2 or int(digits) > MAX_LEVEL:  # (int() refuses 4300 digits and more)
                        shown = digits if len(digits) <= 12 else f"{digits[:12]}..."
                        raise NotationError(f"board {len(out) + 1}: level {lv.group(1)}={shown} is above {MAX_LEVEL}",
                                            hint=f"levels are 0..{MAX_LEVEL}: `# levels A=1 C=2`")  # fmt: skip
                    levels[LETTERS.index(lv.group(1).upper())] = int(digits)
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
                                hint="a plan is only as good as the board: give every cell a tile (A-H) or '.'")  # fmt: skip
        out.append((position, tuple(levels)))
    if not out:
        raise NotationError("no board in the input", hint="one line per row, A-H and '.' for empty")
    return out


def _plan_json(rank: int, pc: PlanChoice) -> dict[str, Any]:
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
    }  # fmt: skip


# Table labels for what is not a plan (ORIGINS has the long form).
_SHORT_ORIGINS = {"swap": "a shape not in the library", "setup": "a cascade set up first",
                  "path": "another path to a plan"}  # fmt: skip
_COLUMNS = ("#", "swaps (row,col,dir of the moving tile)", "type", "tiles", "steps gained", "swaps", "score",
            "plan (count: target -> final at row,col)")  # fmt: skip


def _blocks(position: Board, report: dict[str, Any], numbered: bool) -> list[Block]:
    title = f"board {report['board']} " if numbered else ""
    out: list[Block] = [
        TextBlock(f"{title}({report['rows']}x{report['cols']}, {report['variant']}, objective {report['objective']})"),
        TextBlock(str(position)),
    ]
    if not report["plans"]:
        out.append(TextBlock("no plan applies: no swap sequence in the library clears anything on this board"))
        return out
    rows = []
    for p in report["plans"]:
        plan = p["plan"]
        source = (f"{plan['count']}: {plan['target']} -> {plan['final']} at {plan['row']},{plan['col']}" if plan
                  else f"{p['origin']}: {_SHORT_ORIGINS.get(p['origin'], '')}")  # fmt: skip
        rows.append((str(p["rank"]), " ".join(p["swaps"]), p["kind"], str(p["tiles_cleared"]), str(p["steps_gained"]),
                     str(len(p["swaps"])), str(p["score"]), source))  # fmt: skip
    out.append(TableBlock("", _COLUMNS, tuple(rows)))
    return out


# -- picture ------------------------------------------------------------------------------

_CELL = 64


def draw_plan(position: Board, choice: PlanChoice | None) -> np.ndarray:
    """The board with the chosen plan: its window outlined, each swap a numbered arrow."""
    import cv2

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
            cv2.putText(
                img, str(i), (p1[0] - 8, p1[1] + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2, cv2.LINE_AA
            )
    return img
