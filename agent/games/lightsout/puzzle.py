"""Toggle puzzles: pressing a button toggles a fixed set of lights.

A `Puzzle` is the action matrix (for each button, the set of lights it toggles, as a
bitset), a goal, and optionally a start state and a layout for showing it. Pressing is
XOR, so order does not matter and pressing a button twice undoes it: a solution is a
*set* of buttons, a vector over GF(2).

Built in: the turtle of seed 004, n x m Lights Out (a press toggles its cell and the 4
orthogonal neighbours) and its torus variant (neighbours wrap around the edges). Any
other puzzle can be given as a TOML file, in one of two forms:

    # explicit: every button lists the lights it toggles
    name = "turtle"
    lights = 8
    buttons = [[0, 1, 3], [0, 1, 2], [1, 2, 4], [0, 5, 3], [1, 4, 6, 3],
               [2, 4, 7], [6, 5, 3], [6, 5, 7], [6, 4, 7]]
    start = "11111111"                 # optional: light 0 first, 1 = on
    goal = "01000000"                  # optional: default all off
    light_names = ["front-left leg", ...]   # optional, one per light
    button_grid = [3, 3]               # optional: buttons shown row-major on a grid
    light_grid = [2, 4]                # optional: lights shown row-major on a grid

    # stencil: lights and buttons are the cells of a grid, a press at (r, c) toggles
    # (r + dr, c + dc) for every offset; off-board cells are skipped, or wrap if wrap = true
    name = "knight lights"
    rows = 5
    cols = 5
    stencil = [[0, 0], [1, 2], [2, 1], [-1, 2], [-2, 1], [1, -2], [2, -1], [-1, -2], [-2, -1]]
    wrap = false                       # optional
    goal = "00000/00000/00100/00000/00000"  # optional, same text form as --board

State text (boards, start, goal): one character per light, '1' '#' '*' 'x' 'X' for on and
'0' '.' for off; rows are separated by newlines or '/', spaces are ignored. A grid puzzle
wants rows x cols characters in rows; any other puzzle its lights in index order.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, cast

from agent.files import InputProblem, read_capped
from agent.errors import AgentError
from agent.games.lightsout.gf2 import bits, from_bits, transpose

MAX_LIGHTS = 1024  # elimination is O(n^3 / 64) big-int work: 32 x 32 takes well under a second
MAX_BUTTONS = 1024
ON_CHARS = frozenset("1#*xX")
OFF_CHARS = frozenset("0.")
BUILTIN = ("turtle", "lightsout", "torus")
# The biggest puzzle (1024 buttons of 1024 lights, named) is well under 1 MiB of TOML.
MAX_FILE_BYTES = 4 * 1024 * 1024
# Offsets of a stencil: each costs a pass over the grid, and no sensible stencil has more
# offsets than the grid has cells.
MAX_STENCIL = MAX_LIGHTS


class PuzzleError(AgentError, ValueError):
    """A puzzle or board that does not make sense."""

    hint = "see `agent solve --help`; puzzle files are described in agent/games/lightsout/puzzle.py"


@dataclass(frozen=True)
class Puzzle:
    name: str
    n_lights: int
    actions: tuple[int, ...]  # actions[b]: the lights button b toggles, bit l = light l
    goal: int = 0
    start: int | None = None  # a default start state, when the puzzle comes with one
    light_grid: tuple[int, int] | None = None  # lights row-major on rows x cols
    button_grid: tuple[int, int] | None = None  # buttons row-major on rows x cols
    light_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.n_lights <= MAX_LIGHTS:
            raise PuzzleError(f"a puzzle has 1..{MAX_LIGHTS} lights, {self.name!r} has {self.n_lights}")
        if not 1 <= len(self.actions) <= MAX_BUTTONS:
            raise PuzzleError(f"a puzzle has 1..{MAX_BUTTONS} buttons, {self.name!r} has {len(self.actions)}")
        object.__setattr__(self, "actions", tuple(int(a) for a in self.actions))
        for b, a in enumerate(self.actions):
            if a < 0 or a >> self.n_lights:
                raise PuzzleError(f"button {b} of {self.name!r} toggles a light outside 0..{self.n_lights - 1}")
        for what, state in (("goal", self.goal), ("start", self.start)):
            if state is not None and (state < 0 or state >> self.n_lights):
                raise PuzzleError(f"the {what} of {self.name!r} has lights outside 0..{self.n_lights - 1}")
        grids = (("light_grid", self.light_grid, self.n_lights), ("button_grid", self.button_grid, self.n_buttons))
        for what, grid, n in grids:
            if grid is not None and (len(grid) != 2 or grid[0] < 1 or grid[1] < 1 or grid[0] * grid[1] != n):
                raise PuzzleError(f"{what} {grid} of {self.name!r} does not hold its {n} cells")
        if self.light_names is not None and len(self.light_names) != self.n_lights:
            raise PuzzleError(f"{self.name!r} names {len(self.light_names)} lights but has {self.n_lights}")

    # -- shape --------------------------------------------------------------------
    @property
    def n_buttons(self) -> int:
        return len(self.actions)

    @property
    def is_grid(self) -> bool:
        """Lights and buttons are the same cells of one grid (Lights Out and its kin)."""
        return self.light_grid is not None and self.light_grid == self.button_grid

    @property
    def rows(self) -> tuple[int, ...]:
        """The matrix lights x buttons: row l holds the buttons that toggle light l."""
        return transpose(self.actions, self.n_lights)

    def light_label(self, light: int) -> str:
        if self.light_names is not None:
            return self.light_names[light]
        if self.light_grid is not None:
            r, c = divmod(light, self.light_grid[1])
            return f"({r}, {c})"
        return f"light {light}"

    def button_ref(self, button: int) -> list[int] | int:
        """How a press is given in JSON: [row, col] when buttons are the cells of the
        light grid, else the button index."""
        if self.is_grid:
            return list(divmod(button, self.button_grid[1]))  # type: ignore[index]
        return button

    def button_label(self, button: int) -> str:
        if self.is_grid:
            return "({}, {})".format(*divmod(button, self.button_grid[1]))  # type: ignore[index]
        if self.button_grid is not None:
            r, c = divmod(button, self.button_grid[1])
            return f"{button} (row {r}, col {c})"
        return str(button)

    # -- playing ------------------------------------------------------------------
    def press(self, state: int, button: int) -> int:
        return state ^ self.actions[button]

    def apply(self, state: int, presses: int) -> int:
        """The state after pressing every button in the set `presses` once."""
        for b in bits(presses):
            state ^= self.actions[b]
        return state

    def full(self) -> int:
        return (1 << self.n_lights) - 1


# -- built-in puzzles ---------------------------------------------------------------

# Seed 004: 9 buttons on the shell (3 x 3, row-major), 8 limbs numbered row by row around
# the centre. The centre button moves head, tail and the two middle legs; every other
# button the three limbs next to it. Start: all out; goal: only the head out.
TURTLE_ACTIONS = ((0, 1, 3), (0, 1, 2), (1, 2, 4), (0, 5, 3), (1, 4, 6, 3), (2, 4, 7), (6, 5, 3), (6, 5, 7), (6, 4, 7))
TURTLE_LIMBS = (
    "front-left leg", "head", "front-right leg", "left middle leg",
    "right middle leg", "back-left leg", "tail", "back-right leg",
)  # fmt: skip


def turtle() -> Puzzle:
    return Puzzle(
        name="turtle", n_lights=8, actions=tuple(from_bits(a) for a in TURTLE_ACTIONS),
        start=0b11111111, goal=0b00000010, button_grid=(3, 3), light_names=TURTLE_LIMBS,
    )  # fmt: skip


PLUS = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))


def stencil_puzzle(
    name: str, rows: int, cols: int, stencil: Sequence[tuple[int, int]], wrap: bool = False,
    goal: int = 0, start: int | None = None,
) -> Puzzle:  # fmt: skip
    """A grid puzzle where pressing (r, c) toggles (r + dr, c + dc) for each offset."""
    if rows < 1 or cols < 1:
        raise PuzzleError(f"a grid has at least one row and column, got {rows}x{cols}")
    if rows * cols > MAX_LIGHTS:
        raise PuzzleError(f"{rows}x{cols} is {rows * cols} cells; at most {MAX_LIGHTS} are supported")
    actions = []
    for r in range(rows):
        for c in range(cols):
            a = 0
            for dr, dc in stencil:
                rr, cc = r + dr, c + dc
                if wrap:
                    rr, cc = rr % rows, cc % cols
                elif not (0 <= rr < rows and 0 <= cc < cols):
                    continue
                # XOR, not OR: on a torus narrower than the stencil two offsets can land on
                # the same cell, and toggling it twice leaves it as it was
                a ^= 1 << (rr * cols + cc)
            actions.append(a)
    return Puzzle(
        name, rows * cols, tuple(actions), goal=goal, start=start, light_grid=(rows, cols), button_grid=(rows, cols)
    )


def lights_out(rows: int, cols: int | None = None) -> Puzzle:
    cols = rows if cols is None else cols
    return stencil_puzzle(f"lightsout {rows}x{cols}", rows, cols, PLUS)


def torus(rows: int, cols: int | None = None) -> Puzzle:
    cols = rows if cols is None else cols
    return stencil_puzzle(f"torus {rows}x{cols}", rows, cols, PLUS, wrap=True)


def builtin(name: str, rows: int | None = None, cols: int | None = None) -> Puzzle:
    if name == "turtle":
        if rows is not None or cols is not None:
            raise PuzzleError("the turtle has a fixed shape (9 buttons, 8 limbs)", hint="drop --rows/--cols")
        return turtle()
    if name in ("lightsout", "torus"):
        if rows is None and cols is None:
            rows = cols = 5
        rows = cols if rows is None else rows
        cols = rows if cols is None else cols
        assert rows is not None and cols is not None  # both given, one, or neither (5)
        return lights_out(rows, cols) if name == "lightsout" else torus(rows, cols)
    raise PuzzleError(f"no built-in puzzle {name!r}", hint=f"use one of {', '.join(BUILTIN)} or a puzzle FILE")


# -- state text ---------------------------------------------------------------------


def board_lines(text: str) -> list[str]:
    """A board's rows: split on newlines or '/', spaces dropped, blank rows skipped."""
    lines = [ln.replace(" ", "").replace("\t", "") for ln in text.replace("/", "\n").splitlines()]
    return [ln for ln in lines if ln]


def parse_state(text: str, puzzle: Puzzle, what: str = "board") -> int:
    """State text -> bitset (see the module docstring for the form)."""
    lines = board_lines(text)
    if not lines:
        raise PuzzleError(f"the {what} is empty", hint="give one character per light: 1 (on) or 0 (off)")
    for r, ln in enumerate(lines):
        for c, ch in enumerate(ln):
            if ch not in ON_CHARS and ch not in OFF_CHARS:
                raise PuzzleError(
                    f"the {what} has {ch!r} at row {r}, column {c}",
                    hint="lights are 1 (or # * x) for on and 0 (or .) for off",
                )
    if puzzle.light_grid is not None:
        rows, cols = puzzle.light_grid
        shape = [len(ln) for ln in lines]
        if len(lines) == 1 and len(lines[0]) == rows * cols and rows > 1:
            lines = [lines[0][i * cols : (i + 1) * cols] for i in range(rows)]  # all on one line
        elif len(lines) != rows or any(n != cols for n in shape):
            raise PuzzleError(
                f"the {what} is {len(lines)} rows of {'/'.join(map(str, shape))} lights "
                f"but {puzzle.name} is {rows}x{cols}",
                hint=f"give {rows} rows of {cols} lights (rows separated by newlines or '/'), or pass --rows/--cols",
            )
    flat = "".join(lines)
    if len(flat) != puzzle.n_lights:
        raise PuzzleError(
            f"the {what} has {len(flat)} lights but {puzzle.name} has {puzzle.n_lights}",
            hint=f"give {puzzle.n_lights} characters, light 0 first",
        )
    return from_bits(i for i, ch in enumerate(flat) if ch in ON_CHARS)


def format_state(state: int, puzzle: Puzzle, on: str = "1", off: str = "0") -> str:
    chars = [on if (state >> i) & 1 else off for i in range(puzzle.n_lights)]
    if puzzle.light_grid is None:
        return "".join(chars)
    rows, cols = puzzle.light_grid
    return "\n".join("".join(chars[r * cols : (r + 1) * cols]) for r in range(rows))


def grid_shape_of(text: str) -> tuple[int, int] | None:
    """The rows x cols of a rectangular board text, or None if it is not rectangular."""
    lines = board_lines(text)
    if not lines or len({len(ln) for ln in lines}) != 1:
        return None
    return len(lines), len(lines[0])


# -- puzzle files -------------------------------------------------------------------

_FILE_KEYS = {
    "name", "lights", "buttons", "start", "goal", "light_names", "button_grid", "light_grid",
    "rows", "cols", "stencil", "wrap",
}  # fmt: skip


def load_puzzle(path: Path | str, rows: int | None = None, cols: int | None = None) -> Puzzle:
    """A puzzle from a TOML file; --rows/--cols resize a stencil puzzle."""
    path = Path(path)
    try:
        raw = read_capped(path, MAX_FILE_BYTES)
    except InputProblem as p:
        if p.kind == "missing":
            raise PuzzleError(
                f"no puzzle file {path}", hint=f"give a built-in puzzle ({', '.join(BUILTIN)}) or an existing file"
            ) from None
        raise PuzzleError({
            "folder": f"{path} is a folder, not a puzzle file",
            "too big": f"{path}: more than {MAX_FILE_BYTES // (1024 * 1024)} MiB is not a puzzle file",
        }.get(p.kind, f"cannot read {path}: {p.detail}")) from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PuzzleError(f"{path}: not UTF-8 text (byte {exc.start})", hint="puzzle files are UTF-8 TOML") from None
    except tomllib.TOMLDecodeError as exc:
        raise PuzzleError(f"{path}: not a TOML puzzle file: {exc}") from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively; a puzzle nests two deep
        raise PuzzleError(f"{path}: arrays or tables nested too deeply to be a puzzle file") from None
    return puzzle_from_dict(doc, str(path), rows, cols)


def puzzle_from_dict(doc: dict[str, Any], where: str, rows: int | None = None, cols: int | None = None) -> Puzzle:
    unknown = sorted(set(doc) - _FILE_KEYS)
    if unknown:
        raise PuzzleError(
            f"{where}: unknown key(s) {', '.join(unknown)}", hint=f"known keys: {', '.join(sorted(_FILE_KEYS))}"
        )
    name = doc.get("name", Path(where).stem)
    if not isinstance(name, str) or not name:
        raise PuzzleError(f"{where}: name must be a non-empty string")
    if ("stencil" in doc) == ("buttons" in doc):
        raise PuzzleError(f"{where}: give either buttons (with lights) or stencil (with rows and cols)")

    if "stencil" in doc:
        for key in ("lights", "light_names", "button_grid", "light_grid"):
            if key in doc:
                raise PuzzleError(f"{where}: {key} does not go with a stencil puzzle (its lights are its cells)")
        file_rows, file_cols = _int(doc, "rows", where, 1, MAX_LIGHTS), _int(doc, "cols", where, 1, MAX_LIGHTS)
        stencil = doc["stencil"]
        if not isinstance(stencil, list) or not stencil or not all(
            isinstance(o, list) and len(o) == 2 and all(_is_int(v) for v in o) for o in stencil
        ):
            raise PuzzleError(f"{where}: stencil must be a list of [drow, dcol] integer pairs")
        if len(stencil) > MAX_STENCIL:
            raise PuzzleError(f"{where}: a stencil has at most {MAX_STENCIL} offsets, this one {len(stencil)}")
        wrap = doc.get("wrap", False)
        if not isinstance(wrap, bool):
            raise PuzzleError(f"{where}: wrap must be true or false")
        shell = stencil_puzzle(name, rows or file_rows, cols or file_cols, [tuple(o) for o in stencil], wrap)
        return _with_states(shell, doc, where)

    if rows is not None or cols is not None:
        raise PuzzleError(f"{where} lists its buttons, so its size is fixed", hint="drop --rows/--cols")
    n_lights = _int(doc, "lights", where, 1, MAX_LIGHTS)
    buttons = doc["buttons"]
    if not isinstance(buttons, list) or not buttons:
        raise PuzzleError(f"{where}: buttons must be a non-empty list of lists of light indexes")
    actions = []
    for b, lights in enumerate(buttons):
        if not isinstance(lights, list) or not all(_is_int(v) and 0 <= v < n_lights for v in lights):
            raise PuzzleError(f"{where}: buttons[{b}] must list light indexes in 0..{n_lights - 1}")
        if len(set(lights)) != len(lights):
            raise PuzzleError(f"{where}: buttons[{b}] lists a light twice")
        actions.append(from_bits(lights))
    names = doc.get("light_names")
    if names is not None and (not isinstance(names, list) or not all(isinstance(s, str) for s in names)):
        raise PuzzleError(f"{where}: light_names must be a list of strings")
    grids = {k: _pair(doc, k, where) for k in ("button_grid", "light_grid")}
    shell = Puzzle(
        name, n_lights, tuple(actions), light_grid=grids["light_grid"], button_grid=grids["button_grid"],
        light_names=tuple(names) if names is not None else None,
    )  # fmt: skip
    return _with_states(shell, doc, where)


def _with_states(shell: Puzzle, doc: dict[str, Any], where: str) -> Puzzle:
    states: dict[str, int | None] = {}
    for key in ("start", "goal"):
        value = doc.get(key)
        if value is None:
            states[key] = None
        elif not isinstance(value, str):
            raise PuzzleError(f"{where}: {key} must be a string of 0/1 lights")
        else:
            states[key] = parse_state(value, shell, what=f"{key} in {where}")
    return Puzzle(
        shell.name, shell.n_lights, shell.actions, goal=states["goal"] or 0, start=states["start"],
        light_grid=shell.light_grid, button_grid=shell.button_grid, light_names=shell.light_names,
    )  # fmt: skip


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(doc: dict[str, Any], key: str, where: str, lo: int, hi: int) -> int:
    if key not in doc:
        raise PuzzleError(f"{where}: missing {key}")
    v = doc[key]
    if not _is_int(v) or not lo <= v <= hi:
        raise PuzzleError(f"{where}: {key} must be an integer in {lo}..{hi}, got {v!r}")
    return cast(int, v)


def _pair(doc: dict[str, Any], key: str, where: str) -> tuple[int, int] | None:
    v = doc.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 2 or not all(_is_int(x) and x >= 1 for x in v):
        raise PuzzleError(f"{where}: {key} must be [rows, cols]")
    return (v[0], v[1])
