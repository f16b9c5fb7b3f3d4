"""The match-3 plan library on disk: its format, loading, saving and verification.

`plans/match3.json` is JSON written one plan per line:

    {"format": 1, "generator": "...", "variant": "complete", "total": N,
     "counts": {"3": {"1": 8, ...}, ...},          # eliminated tiles -> steps -> plans
     "fields": ["count", "target", "final", "steps"],
     "plans": [
    [3,"1101","1110","0,3,Left"],
    ...
    ]}

`target` and `final` are the window before and after, rows joined by '/', '1' a tile of
the plan's type and '0' anything else; `steps` are `row,col,Direction` joined by ';' in
window coordinates: the plan's tile at (row, col) moves one cell Up, Down, Left or Right
(swapping with what is there). Records are arrays and steps one string because that
parses several times faster than objects, and the library loads on every `agent play`.

Loading checks every record's shape (see `record_problem`: four fields of the right
types, windows of 0 and 1 in rows of one width, steps inside the window), so a library
the solver can use never fails later; a bad file is a PlanLibraryError naming the file
and the first bad record. Whether each plan holds is `agent plans verify`'s job.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from agent.files import InputProblem, read_capped, write_atomic
from agent.errors import AgentError
from agent.games.match3.board import EMPTY, MAX_SIZE, Board, Move

FORMAT_VERSION = 1
FIELDS = ("count", "target", "final", "steps")
DIRECTIONS = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}
DEFAULT_LIBRARY = Path(__file__).resolve().parents[3] / "plans" / "match3.json"
# Where `pip install .` puts the committed library (pyproject's data-files) when the
# package does not run from the repository.
INSTALLED_LIBRARY = Path(sys.prefix) / "share" / "puzzle-agent" / "plans" / "match3.json"
LIBRARY_ENV = "PUZZLE_AGENT_PLANS"
# The committed library is 5 MB; a file many times that is not a plan library, and is
# refused before it is read into memory.
MAX_LIBRARY_BYTES = 256 * 1024 * 1024
# The solver's index packs a window into 57 bits of an int64 key (see PlanIndex), and a
# window is at most a board's size (MAX_SIZE rows and columns).
MAX_WINDOW_CELLS = 57
MIN_COUNT = 3  # a plan ends in an elimination, of three tiles or more


class PlanLibraryError(AgentError):
    """A plan library that is missing, unreadable, of another format, or wrong."""

    hint = "rebuild it with `agent plans build` (or point PUZZLE_AGENT_PLANS at a good one)"


@dataclass(frozen=True)
class PlanStep:
    """The plan's tile at (row, col) of the window moves one cell in `direction`."""

    row: int
    col: int
    direction: str  # Up, Down, Left or Right

    def __str__(self) -> str:
        return f"{self.row},{self.col},{self.direction}"

    @classmethod
    def parse(cls, text: str) -> "PlanStep":
        r, c, d = text.split(",")
        if d not in DIRECTIONS:
            raise ValueError(f"direction {d!r} is not one of {', '.join(DIRECTIONS)}")
        return cls(int(r), int(c), d)

    def move(self, row0: int = 0, col0: int = 0) -> Move:
        """This step as a board move, the window's corner at (row0, col0)."""
        return Move(self.row + row0, self.col + col0, self.direction[0])


@dataclass(frozen=True)
class Plan:
    count: int  # tiles the last swap eliminates
    target: str  # the window before, rows joined by '/'
    final: str  # the window after the last swap
    steps: tuple[PlanStep, ...]

    @property
    def rows(self) -> list[str]:
        return self.target.split("/")

    @property
    def height(self) -> int:
        return self.target.count("/") + 1

    @property
    def width(self) -> int:
        return self.target.index("/") if "/" in self.target else len(self.target)

    def record(self) -> list[Any]:
        return [self.count, self.target, self.final, ";".join(str(s) for s in self.steps)]

    @classmethod
    def from_record(cls, rec: Sequence[Any]) -> "Plan":
        count, target, final, steps = rec
        return cls(int(count), target, final, tuple(PlanStep.parse(s) for s in steps.split(";")))

    def __str__(self) -> str:
        steps = " ".join(str(s) for s in self.steps)
        return f"count {self.count}, {len(self.steps)} steps [{steps}]: {self.target} -> {self.final}"


def count_table(counts_and_steps: Iterator[tuple[int, int]]) -> dict[str, dict[str, int]]:
    """Plans by eliminated tiles, then by steps: {"3": {"1": n, ...}, ...}."""
    c = Counter(counts_and_steps)
    table: dict[str, dict[str, int]] = {}
    for (count, steps), n in sorted(c.items()):
        table.setdefault(str(count), {})[str(steps)] = n
    return table


def library_header(plans: Sequence[Plan], generator: str, variant: str) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "generator": generator,
        "variant": variant,
        "total": len(plans),
        "counts": count_table((p.count, len(p.steps)) for p in plans),
        "fields": list(FIELDS),
    }


class PlanLibrary:
    """The header and the raw records; `Plan` objects are made only for plans used."""

    def __init__(self, header: dict[str, Any], records: list[list[Any]]) -> None:
        self.header = header
        self.records = records

    @classmethod
    def from_plans(cls, header: dict[str, Any], plans: Sequence[Plan]) -> "PlanLibrary":
        return cls(header, [p.record() for p in plans])

    def __len__(self) -> int:
        return len(self.records)

    def plan(self, i: int) -> Plan:
        return Plan.from_record(self.records[i])

    def __iter__(self) -> Iterator[Plan]:
        return (Plan.from_record(r) for r in self.records)

    @property
    def variant(self) -> str:
        return str(self.header.get("variant", "?"))

    def counts(self) -> dict[str, dict[str, int]]:
        """Counted from the records (the header's copy is checked by `verify_library`);
        records of another shape (in a library loaded unchecked) are left out."""
        return count_table(
            (r[0], r[3].count(";") + 1) for r in self.records
            if isinstance(r, list) and len(r) == len(FIELDS) and type(r[0]) is int and isinstance(r[3], str)
        )  # fmt: skip

    def to_json(self) -> str:
        head = {k: v for k, v in self.header.items()}
        head["total"] = len(self.records)
        lines = [json.dumps(head, separators=(", ", ": "))[:-1] + ', "plans": [']
        body = [json.dumps(r, separators=(",", ":")) for r in self.records]
        return "\n".join(lines + [",\n".join(body), "]}"]) + "\n"


def save_library(library: PlanLibrary, path: Path) -> None:
    """Written atomically: a reader never sees half a library."""
    write_atomic(path, library.to_json().encode("utf-8"))


def library_path(path: Path | None = None) -> Path:
    if path is not None:
        return path
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env)
    if not DEFAULT_LIBRARY.exists() and INSTALLED_LIBRARY.exists():
        return INSTALLED_LIBRARY
    return DEFAULT_LIBRARY


def _from_env(path: Path) -> bool:
    env = os.environ.get(LIBRARY_ENV)
    return env is not None and env != "" and Path(env) == path


def _read(path: Path) -> str:
    try:
        raw = read_capped(path, MAX_LIBRARY_BYTES)
    except InputProblem as p:
        if p.kind == "missing" and _from_env(path):
            raise PlanLibraryError(
                f"{LIBRARY_ENV} names {path}, which does not exist",
                hint=f"point {LIBRARY_ENV} at a plan library, unset it to use the default, "
                f"or write one there with `agent plans build --out {path}`",
            ) from None
        cap = f"{MAX_LIBRARY_BYTES // (1024 * 1024)} MiB"
        raise PlanLibraryError({
            "missing": f"no plan library at {path}",
            "folder": f"{path} is a folder, not a plan library file",
            "too big": f"{path}: more than {cap} is not a plan library" if p.size is None
            else f"{path}: {p.size} bytes is not a plan library (at most {cap})",
        }.get(p.kind, f"cannot read the plan library {path}: {p.detail}")) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanLibraryError(f"{path} is not UTF-8 text (byte {exc.start}), so not a plan library") from None


def load_library(path: Path | None = None, check: bool = True) -> PlanLibrary:
    """The library at `path` (default: `library_path()`). With `check`, every record's
    shape is checked and an empty library refused, so the solver can use what it gets;
    `agent plans verify` loads without, to report every bad record."""
    path = library_path(path)
    text = _read(path)
    # The parse allocates some 200,000 small objects; the cyclic collector would walk them
    # all several times meanwhile (it nearly doubles the load time) and none can be garbage.
    gc.disable()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanLibraryError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValueError as exc:  # an integer of thousands of digits
        raise PlanLibraryError(f"{path} is not a plan library: {exc}") from None
    except RecursionError:  # json nests by recursion: a few thousand [ or { deep
        raise PlanLibraryError(f"{path} is not a plan library: arrays or objects nested too deeply") from None
    finally:
        gc.enable()
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
        got = data.get("format") if isinstance(data, dict) else None
        raise PlanLibraryError(f"{path} is plan library format {got!r}, this agent reads format {FORMAT_VERSION}")
    if data.get("fields") != list(FIELDS) or not isinstance(data.get("plans"), list):
        raise PlanLibraryError(f"{path} does not hold plans as {list(FIELDS)}")
    records = data.pop("plans")
    if check:
        if not records:
            raise PlanLibraryError(f"{path} holds no plans")
        if not _records_valid(records):
            bad = next(((i, p) for i, p in enumerate(map(record_problem, records)) if p is not None), None)
            if bad is not None:  # (None would be the fast check disagreeing: record_problem decides)
                raise PlanLibraryError(f"{path}: plan {bad[0] + 1} is unreadable: {bad[1]}")
    return PlanLibrary(data, records)


# -- record shapes ---------------------------------------------------------------------------


@cache
def _valid_steps(height: int, width: int) -> frozenset[str]:
    """Every step text that stays inside a height x width window."""
    return frozenset(
        f"{r},{c},{d}" for r in range(height) for c in range(width)
        for d, (dr, dc) in DIRECTIONS.items() if 0 <= r + dr < height and 0 <= c + dc < width
    )  # fmt: skip


def _shown(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (list, dict, str, int, float, bool, type(None))) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _window_shape(text: str) -> tuple[int, int] | None:
    """(height, width) of rows of 0 and 1 joined by '/', all of one width; None otherwise."""
    if not text or text.strip("01/") or "//" in text or text[0] == "/" or text[-1] == "/":
        return None
    h = text.count("/") + 1
    w = text.find("/")
    w = len(text) if w < 0 else w
    if len(text) != h * (w + 1) - 1 or text[w :: w + 1] != "/" * (h - 1):
        return None
    return h, w


def record_problem(rec: Any) -> str | None:
    """What makes `rec` no record the solver can use, or None. This is the definition;
    `_records_valid` is the same check over the whole library at once."""
    if not isinstance(rec, list) or len(rec) != len(FIELDS):
        return f"expected [count, target, final, steps], got {_shown(rec)}"
    count, target, final, steps = rec
    if not isinstance(target, str) or (shape := _window_shape(target)) is None:
        return f"target {_shown(target)} is not rows of 0 and 1 of one width, joined by '/'"
    h, w = shape
    if h * w > MAX_WINDOW_CELLS or h > MAX_SIZE or w > MAX_SIZE:
        return f"the {h}x{w} window is bigger than {MAX_WINDOW_CELLS} cells or {MAX_SIZE} rows or columns"
    if not isinstance(final, str) or _window_shape(final) != shape:
        return f"final {_shown(final)} is not a {h}x{w} window of 0 and 1 like the target"
    if type(count) is not int or not MIN_COUNT <= count <= h * w:
        return f"count {_shown(count)} is not a whole number {MIN_COUNT}..{h * w} (the {h}x{w} window's cells)"
    if not isinstance(steps, str):
        return f"steps {_shown(steps)} is not a string of row,col,Direction joined by ';'"
    valid = _valid_steps(h, w)
    for n, step in enumerate(steps.split(";"), 1):
        if step not in valid:
            try:
                PlanStep.parse(step)
            except ValueError:
                return f"step {n} {_shown(step)} is not row,col,Direction (Up, Down, Left or Right)"
            return f"step {n} ({step}) leaves the {h}x{w} window"
    return None


_WINDOW_BYTES = np.zeros(256, dtype=bool)
_WINDOW_BYTES[list(b"01/\n")] = True
_SLASH, _NEWLINE = ord("/"), ord("\n")


def _records_valid(records: list[Any]) -> bool:
    """Whether every record passes `record_problem`, checked column by column with numpy
    and set operations: a record at a time takes longer than the JSON parse itself, on
    every `agent play`. False says only that some record fails: `record_problem` says
    which and why."""
    n = len(records)
    if n == 0:
        return True
    if set(map(type, records)) != {list} or set(map(len, records)) != {len(FIELDS)}:
        return False
    # (comprehensions: zip(*records) is several times slower with 50,000 arguments)
    counts, targets, finals, steps = ([r[k] for r in records] for k in range(len(FIELDS)))
    if set(map(type, counts)) != {int} or not all(set(map(type, col)) == {str} for col in (targets, finals, steps)):
        return False
    if list(map(len, targets)) != list(map(len, finals)):
        return False
    try:
        t = np.frombuffer("\n".join(targets).encode("ascii"), dtype=np.uint8)
        f = np.frombuffer("\n".join(finals).encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        return False
    # Targets and finals are joined by newlines at the same places (equal lengths), so
    # their '/' must fall at the same places too for equal shapes.
    if not (_WINDOW_BYTES[t].all() and _WINDOW_BYTES[f].all() and np.array_equal(t == _SLASH, f == _SLASH)):
        return False
    if (f == _NEWLINE).sum() != n - 1 or (t == _NEWLINE).sum() != n - 1:  # a newline inside a window
        return False
    # Row lengths: the runs between separators, each record's first run its width.
    sep = np.flatnonzero(t < ord("0"))
    runs = np.diff(np.concatenate(([-1], sep, [t.size]))) - 1
    ends = np.concatenate((t[sep] == _NEWLINE, [True]))  # the run ends its record
    record = np.concatenate(([0], np.cumsum(ends)[:-1]))
    height = np.bincount(record, minlength=n)
    width = runs[np.concatenate(([0], np.flatnonzero(ends)[:-1] + 1))]
    if not (runs > 0).all() or not np.array_equal(runs, width[record]):
        return False
    cells = height * width
    if (cells > MAX_WINDOW_CELLS).any() or height.max() > MAX_SIZE or width.max() > MAX_SIZE:
        return False
    try:
        c = np.fromiter(counts, dtype=np.int64, count=n)
    except OverflowError:
        return False
    if not ((c >= MIN_COUNT) & (c <= cells)).all():
        return False
    # Steps: all records of one window shape at once, against that shape's valid steps.
    shapes, which = np.unique(height * 64 + width, return_inverse=True)
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(shapes.size + 1))
    for k, code in enumerate(shapes.tolist()):
        members = order[bounds[k] : bounds[k + 1]].tolist()
        group = itemgetter(*members)(steps) if len(members) > 1 else (steps[members[0]],)
        if not _valid_steps(code // 64, code % 64).issuperset(";".join(group).split(";")):
            return False
    return True


# -- verification ---------------------------------------------------------------------------


def _lines_up_three(grid: list[list[str]]) -> bool:
    rows = ("".join(row) for row in grid)
    cols = ("".join(col) for col in zip(*grid))
    return any("111" in line for line in rows) or any("111" in line for line in cols)


def _one_elimination(final: list[list[str]]) -> set[tuple[int, int]] | None:
    """The cells the rules engine clears on the final window (1s as one tile type, 0s
    empty), if that is exactly one group."""
    from agent.games.match3.rules import find_groups

    h, w = len(final), len(final[0])
    a = np.full((max(h, 3), max(w, 3)), EMPTY, dtype=np.int8)
    for r, row in enumerate(final):
        for c, ch in enumerate(row):
            if ch == "1":
                a[r, c] = 0
    groups = find_groups(Board(a))
    return set(groups[0].cells) if len(groups) == 1 else None


def verify_plan(plan: Plan) -> str | None:
    """Replay a plan inside its window. None if it holds, else what is wrong."""
    target = [list(row) for row in plan.target.split("/")]
    final = [list(row) for row in plan.final.split("/")]
    h, w = len(target), len(target[0])
    if any(len(row) != w for row in target) or len(final) != h or any(len(row) != w for row in final):
        return "target and final are not windows of one size"
    if any(ch not in "01" for row in target + final for ch in row):
        return "windows hold only 0 and 1"
    ones = sum(row.count("1") for row in target)
    if ones != plan.count or sum(row.count("1") for row in final) != plan.count:
        return f"count {plan.count} but target has {ones} tiles"
    if not plan.steps:
        return "a plan has at least one step"
    if _lines_up_three(target):
        return "the target already lines up three"
    grid = [row[:] for row in target]
    for i, step in enumerate(plan.steps):
        dr, dc = DIRECTIONS[step.direction]
        r2, c2 = step.row + dr, step.col + dc
        if not (0 <= step.row < h and 0 <= step.col < w and 0 <= r2 < h and 0 <= c2 < w):
            return f"step {i + 1} ({step}) leaves the window"
        if grid[step.row][step.col] != "1" or grid[r2][c2] != "0":
            return f"step {i + 1} ({step}) does not move a tile into a free cell"
        grid[step.row][step.col], grid[r2][c2] = "0", "1"
        if i < len(plan.steps) - 1 and _lines_up_three(grid):
            return f"step {i + 1} ({step}) lines up three before the last step"
    if grid != final:
        return "the last step does not produce the final window"
    group = _one_elimination(final)
    cells = {(r, c) for r, row in enumerate(final) for c, ch in enumerate(row) if ch == "1"}
    if group != cells:
        return "the final window is not one elimination of all its tiles"
    return None


@dataclass(frozen=True)
class Failure:
    index: int
    plan: Plan | None
    problem: str


def verify_library(library: PlanLibrary) -> Iterator[Failure]:
    """Every plan that does not hold, duplicates, and a header that disagrees."""
    seen: set[tuple[str, str]] = set()
    if not library.records:
        yield Failure(-1, None, "the library holds no plans")
    for i, rec in enumerate(library.records):
        unreadable = record_problem(rec)
        if unreadable is not None:
            yield Failure(i, None, f"unreadable record: {unreadable}")
            continue
        plan = Plan.from_record(rec)
        problem = verify_plan(plan)
        if problem is None and (plan.target, plan.final) in seen:
            problem = "the same target and final appear twice"
        seen.add((plan.target, plan.final))
        if problem is not None:
            yield Failure(i, plan, problem)
    if library.header.get("total") != len(library):
        yield Failure(-1, None, f"header says {library.header.get('total')} plans, the file holds {len(library)}")
    if library.header.get("counts") != library.counts():
        yield Failure(-1, None, "the header's counts do not match the plans")
