"""`agent solve --game lightsout`: solve one toggle puzzle from the command line.

    agent solve --game lightsout --board "10000/11000/10000/00000/00000"
    agent solve --game lightsout --puzzle torus --rows 4 --cols 4 --board board.txt --json
    agent solve --game lightsout --puzzle turtle                 # the seed's start and goal
    agent solve --game lightsout --puzzle my_puzzle.toml --board -   # board on stdin

Reports the presses (cells, or button indexes for puzzles that are not a grid), how many
solutions there are, and the fewest presses; or `unsolvable` with the lights whose
parity no press can fix. An unsolvable board is an answer, not an error: exit code 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.games.base import Block, SolveOption, SolveReport, SolveRequest, TextBlock
from agent.games.boardfile import is_board_file, naming, read_board_text
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import (
    BUILTIN, ON_CHARS, OFF_CHARS, Puzzle, PuzzleError, builtin, format_state, grid_shape_of, load_puzzle, parse_state,
)  # fmt: skip
from agent.games.lightsout.solver import SolveResult, solver_for

LIST_ALL_MAX = 256  # list every solution in the JSON when there are at most this many
PRINT_ALL_MAX = 16  # and for people when there are at most this many
PUZZLE_DEFAULT = "lightsout"


class LightsOutSolver:
    """`values`: board (a file, '-' or the lights as text), puzzle (a built-in name or a
    TOML file; default lightsout), rows and cols."""

    options = (
        SolveOption("board", "The board: a file, '-' for stdin, or the lights as text (1 = on, 0 = off)."),
        SolveOption("puzzle", f"{', '.join(BUILTIN)} or a puzzle TOML file (default {PUZZLE_DEFAULT})."),
        SolveOption("rows", "The grid's rows (default: the board's shape)."),
        SolveOption("cols", "The grid's columns (default: the board's shape)."),
    )

    def solve(self, request: SolveRequest) -> SolveReport:
        values = request.values
        board = values.get("board")
        board_text = _board_text(board) if board is not None else None
        pz = _puzzle(values.get("puzzle") or PUZZLE_DEFAULT, values.get("rows"), values.get("cols"), board_text, board)
        if board_text is None:
            if pz.start is None:
                raise PuzzleError(
                    f"{pz.name} has no start state: give the board with --board",
                    hint="e.g. --board 10010/01100/00000/00000/00000 (1 = on, 0 = off), a file, or '-' for stdin",
                )
            state = pz.start
        else:
            with naming(board):
                state = parse_state(board_text, pz)
        result = solver_for(pz).solve(state, pz.goal)
        picture = None
        if request.png is not None:
            from agent.games.lightsout.picture import draw_solution

            picture = draw_solution(pz, state, result.solution)
        blocks: list[Block] = []
        if pz.goal and pz.light_grid is None:
            blocks.append(
                TextBlock(f"board {format_state(state, pz)} -> goal {format_state(pz.goal, pz)} (light 0 first)")
            )
        blocks.extend(_blocks(result))
        return SolveReport(records=(_as_json(result),), blocks=tuple(blocks), picture=picture)


def _board_text(board: str) -> str:
    if is_board_file(board):
        return read_board_text(board)
    allowed = ON_CHARS | OFF_CHARS | set(" \t\n/")
    if any(ch not in allowed for ch in board) and any(ch.isalpha() and ch not in "xX" for ch in board):
        raise PuzzleError(
            f"--board {board!r} is neither an existing file nor board text",
            hint="give a file, '-' for stdin, or lights as text such as 10010/01100 (1 = on, 0 = off)",
        )
    return board


def _puzzle(name: str, rows: int | None, cols: int | None, board_text: str | None, board: str | None) -> Puzzle:
    if name in BUILTIN:
        if name != "turtle" and rows is None and cols is None and board_text is not None:
            with naming(board):
                rows, cols = _grid_of(name, board_text)
        return builtin(name, rows, cols)
    if not _is_file(name):
        raise PuzzleError(
            f"--puzzle {name!r} is neither a built-in puzzle nor a file",
            hint=f"use {', '.join(BUILTIN)} or the path of a puzzle TOML file",
        )
    return load_puzzle(name, rows, cols)


def _grid_of(name: str, board_text: str) -> tuple[int, int]:
    """The grid a built-in puzzle's board text draws: its rows and columns."""
    shape = grid_shape_of(board_text)  # the board's own shape says how big the grid is
    if shape is None:
        lengths = [len(ln.replace(" ", "")) for ln in board_text.replace("/", "\n").splitlines() if ln.strip()]
        raise PuzzleError(
            f"the board's rows have different lengths ({'/'.join(map(str, lengths)) or 'no rows'})",
            hint="give every row the same number of lights (1 = on, 0 = off)",
        )
    if shape[0] <= 1:
        raise PuzzleError(
            f"a {name} board on one line needs --rows and --cols",
            hint="separate rows with '/' or newlines, or pass --rows R --cols C",
        )
    return shape


def _is_file(name: str) -> bool:
    try:
        return Path(name).exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL in it
        return False


def _as_json(result: SolveResult) -> dict[str, Any]:
    pz = result.puzzle
    out: dict[str, Any] = {
        "puzzle": pz.name,
        "solvable": result.solvable,
        "presses": [pz.button_ref(b) for b in result.presses] if result.solvable else None,
        "solutions": result.solutions,
        "min_presses": result.min_presses,
        "min_presses_exact": result.exact if result.solvable else None,
        "rank": result.rank,
        "nullity": result.nullity,
    }
    if result.solvable:
        out["fewest_press_solutions"] = result.min_count
        if result.solutions <= LIST_ALL_MAX:
            every = solver_for(pz).all(result.start, result.goal)
            out["all_solutions"] = [[pz.button_ref(b) for b in bits(x)] for x in every]
        if result.note:
            out["note"] = result.note
    else:
        out["reason"] = result.reason
        out["unreachable"] = [pz.light_label(i) if pz.light_names else _light_ref(pz, i) for i in result.unreachable]
    return out


def _light_ref(pz: Puzzle, light: int) -> list[int] | int:
    return list(divmod(light, pz.light_grid[1])) if pz.light_grid is not None else light


def _blocks(result: SolveResult) -> list[Block]:
    pz = result.puzzle
    out: list[Block] = [
        TextBlock(
            f"{pz.name}: {pz.n_buttons} buttons, {pz.n_lights} lights; rank {result.rank}, nullity {result.nullity}"
        )
    ]
    if not result.solvable:
        out.append(TextBlock(f"unsolvable: {result.reason}"))
        return out
    exact = "" if result.exact else " (best found, not proven minimal)"
    out.append(TextBlock(
        f"solvable: {result.solutions} solution{'s' if result.solutions != 1 else ''}; "
        f"fewest presses {result.min_presses}{exact}"
    ))  # fmt: skip
    if result.note:
        out.append(TextBlock(f"note: {result.note}"))
    labels = ", ".join(pz.button_label(b) for b in result.presses) or "nothing: the board is already the goal"
    out.append(TextBlock(f"press: {labels}"))
    if pz.is_grid:
        rows, cols = pz.light_grid  # type: ignore[misc]
        mark = result.solution or 0
        out.append(TextBlock("presses on the board (X = press):"))
        for r in range(rows):
            out.append(TextBlock(" ".join("X" if (mark >> (r * cols + c)) & 1 else "." for c in range(cols))))
    if 1 < result.solutions <= PRINT_ALL_MAX:
        out.append(TextBlock("every solution:"))
        for x in sorted(solver_for(pz).all(result.start, result.goal), key=lambda v: (v.bit_count(), v)):
            n = x.bit_count()
            out.append(
                TextBlock(f"  {n} press{'es' if n != 1 else ''}: " + ", ".join(pz.button_label(b) for b in bits(x)))
            )
    return out
