"""`agent solve --game lightsout`: solve one toggle puzzle from the command line.

    agent solve --game lightsout --board "10000/11000/10000/00000/00000"
    agent solve --game lightsout --puzzle torus --rows 4 --cols 4 --board board.txt --json
    agent solve --game lightsout --puzzle turtle                 # the seed's start and goal
    agent solve --game lightsout --puzzle my_puzzle.toml --board -   # board on stdin

Prints the presses (cells, or button indexes for puzzles that are not a grid), how many
solutions there are, and the fewest presses; or `unsolvable` with the lights whose
parity no press can fix. An unsolvable board is an answer, not an error: exit code 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from agent.cli_app import console
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import (
    BUILTIN, ON_CHARS, OFF_CHARS, Puzzle, PuzzleError, builtin, format_state, grid_shape_of, load_puzzle, parse_state,
)  # fmt: skip
from agent.games.lightsout.solver import SolveResult, solver_for

LIST_ALL_MAX = 256  # list every solution when there are at most this many


def _refuse(name: str, why: str) -> None:
    raise typer.BadParameter(f"lightsout does not use {name} ({why})", param_hint=name)


def _board_text(board: str) -> str:
    if board == "-":
        return sys.stdin.read()
    path = Path(board)
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PuzzleError(f"cannot read the board file {board}: {exc}") from None
    allowed = ON_CHARS | OFF_CHARS | set(" \t\n/")
    if any(ch not in allowed for ch in board) and any(ch.isalpha() and ch not in "xX" for ch in board):
        raise PuzzleError(
            f"--board {board!r} is neither an existing file nor board text",
            hint="give a file, '-' for stdin, or lights as text such as 10010/01100 (1 = on, 0 = off)",
        )
    return board


def _puzzle(name: str, rows: int | None, cols: int | None, board_text: str | None) -> Puzzle:
    if name in BUILTIN:
        if name != "turtle" and rows is None and cols is None and board_text is not None:
            shape = grid_shape_of(board_text)  # the board's own shape says how big the grid is
            if shape is None:
                lengths = [len(ln.replace(" ", "")) for ln in board_text.replace("/", "\n").splitlines() if ln.strip()]
                raise PuzzleError(
                    f"the board's rows have different lengths ({'/'.join(map(str, lengths)) or 'no rows'})",
                    hint="give every row the same number of lights (1 = on, 0 = off)",
                )
            if shape[0] > 1:
                rows, cols = shape
            else:
                raise PuzzleError(
                    f"a {name} board on one line needs --rows and --cols",
                    hint="separate rows with '/' or newlines, or pass --rows R --cols C",
                )
        return builtin(name, rows, cols)
    if not Path(name).exists():
        raise PuzzleError(
            f"--puzzle {name!r} is neither a built-in puzzle nor a file",
            hint=f"use {', '.join(BUILTIN)} or the path of a puzzle TOML file",
        )
    return load_puzzle(name, rows, cols)


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


def _print(result: SolveResult) -> None:
    pz = result.puzzle
    console.print(
        f"[bold]{pz.name}[/]: {pz.n_buttons} buttons, {pz.n_lights} lights; rank {result.rank}, "
        f"nullity {result.nullity}", highlight=False,
    )  # fmt: skip
    if not result.solvable:
        console.print(f"[bold red]unsolvable[/]: {result.reason}", highlight=False)
        return
    exact = "" if result.exact else " (best found, not proven minimal)"
    console.print(
        f"solvable: {result.solutions} solution{'s' if result.solutions != 1 else ''}; "
        f"fewest presses {result.min_presses}{exact}", highlight=False,
    )  # fmt: skip
    if result.note:
        console.print(f"note: {result.note}", highlight=False)
    labels = ", ".join(pz.button_label(b) for b in result.presses) or "nothing: the board is already the goal"
    console.print(f"press: {labels}", highlight=False)
    if pz.is_grid:
        rows, cols = pz.light_grid  # type: ignore[misc]
        mark = result.solution or 0
        console.print("presses on the board (X = press):", highlight=False)
        for r in range(rows):
            console.print(" ".join("X" if (mark >> (r * cols + c)) & 1 else "." for c in range(cols)), highlight=False)
    if 1 < result.solutions <= 16:
        console.print("every solution:", highlight=False)
        for x in sorted(solver_for(pz).all(result.start, result.goal), key=lambda v: (v.bit_count(), v)):
            n = x.bit_count()
            console.print(
                f"  {n} press{'es' if n != 1 else ''}: " + ", ".join(pz.button_label(b) for b in bits(x)), highlight=False
            )


def solve(
    *, board: str | None = None, objective: str | None = None, top: int = 2, puzzle: str | None = None,
    rows: int | None = None, cols: int | None = None, start: str | None = None, to: str | None = None,
    png: Path | None = None, as_json: bool = False, **_: Any,
) -> SolveResult:  # fmt: skip
    if objective is not None:
        _refuse("--objective", "a solution is the set of presses; the fewest is always chosen")
    if start is not None:
        _refuse("--from", "that is for junqi")
    if to is not None:
        _refuse("--to", "that is for junqi")
    if top != 2:
        _refuse("--top", "it prints the fewest-press solution, and every solution when there are few")
    board_text = _board_text(board) if board is not None else None
    pz = _puzzle(puzzle or "lightsout", rows, cols, board_text)
    if board_text is None:
        if pz.start is None:
            raise PuzzleError(
                f"{pz.name} has no start state: give the board with --board",
                hint="e.g. --board 10010/01100/00000/00000/00000 (1 = on, 0 = off), a file, or '-' for stdin",
            )
        state = pz.start
    else:
        state = parse_state(board_text, pz)
    result = solver_for(pz).solve(state, pz.goal)
    if png is not None:
        from agent.files import save_png
        from agent.games.lightsout.picture import draw_solution

        save_png(draw_solution(pz, state, result.solution), png)
    if as_json:
        print(json.dumps(_as_json(result)))
    else:
        if pz.goal and pz.light_grid is None:
            console.print(
                f"board {format_state(state, pz)} -> goal {format_state(pz.goal, pz)} (light 0 first)", highlight=False
            )
        _print(result)
        if png is not None:
            console.print(f"wrote {png}", highlight=False)
    return result
