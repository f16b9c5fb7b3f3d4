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
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from agent.files import write_atomic
from agent.errors import AgentError
from agent.games.match3.board import EMPTY, Board, Move

FORMAT_VERSION = 1
FIELDS = ("count", "target", "final", "steps")
DIRECTIONS = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}
DEFAULT_LIBRARY = Path(__file__).resolve().parents[3] / "plans" / "match3.json"
# Where `pip install .` puts the committed library (pyproject's data-files) when the
# package does not run from the repository.
INSTALLED_LIBRARY = Path(sys.prefix) / "share" / "puzzle-agent" / "plans" / "match3.json"
LIBRARY_ENV = "PUZZLE_AGENT_PLANS"


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
        """Counted from the records (the header's copy is checked by `verify_library`)."""
        return count_table((int(r[0]), r[3].count(";") + 1) for r in self.records)

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


def load_library(path: Path | None = None) -> PlanLibrary:
    path = library_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanLibraryError(f"no plan library at {path}") from None
    except OSError as exc:
        raise PlanLibraryError(f"cannot read the plan library {path}: {exc.strerror}") from None
    # The parse allocates some 200,000 small objects; the cyclic collector would walk them
    # all several times meanwhile (it nearly doubles the load time) and none can be garbage.
    gc.disable()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanLibraryError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    finally:
        gc.enable()
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
        got = data.get("format") if isinstance(data, dict) else None
        raise PlanLibraryError(f"{path} is plan library format {got!r}, this agent reads format {FORMAT_VERSION}")
    if data.get("fields") != list(FIELDS) or not isinstance(data.get("plans"), list):
        raise PlanLibraryError(f"{path} does not hold plans as {list(FIELDS)}")
    records = data.pop("plans")
    return PlanLibrary(data, records)


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
    for i, rec in enumerate(library.records):
        try:
            plan = Plan.from_record(rec)
        except (ValueError, TypeError) as exc:
            yield Failure(i, None, f"unreadable record {rec!r}: {exc}")
            continue
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
