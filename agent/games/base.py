"""One protocol for every game the agent plays, and the values that cross it.

A game is its rules, a notation for its boards, a reader that turns a screenshot into a
board, a player that decides the next move (and checks what the screen did with the
last one), the gestures that make a move in screen pixels and, where it has them, a
simulated phone and a solver for `agent solve`. The play loop (`agent.play`), the farm
and the CLI know games only through this module and `agent.games.registry`; what a move
is (a swap, a two-tap ball move, a press) is each game's own business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

from agent.device.base import Device
from agent.device.clock import Clock
from agent.vision.classify import Reading
from agent.vision.goal import Goal
from agent.vision.profile import GameProfile
from agent.vision.roles import RoleHints

BoardT = TypeVar("BoardT")
MoveT = TypeVar("MoveT")
BoardIn = TypeVar("BoardIn", contravariant=True)  # a board a protocol only takes
BoardOut = TypeVar("BoardOut", covariant=True)  # a board a protocol only gives


# -- gestures ------------------------------------------------------------------------


@dataclass(frozen=True)
class Tap:
    x: int
    y: int


@dataclass(frozen=True)
class Swipe:
    x1: int
    y1: int
    x2: int
    y2: int
    duration_ms: int


@dataclass(frozen=True)
class Pause:
    """A finger's beat between two gestures of one move (two taps are not a double tap)."""

    seconds: float


Gesture = Tap | Swipe | Pause


def perform(device: Device, gestures: Sequence[Gesture], clock: Clock) -> None:
    for g in gestures:
        if isinstance(g, Tap):
            device.tap(g.x, g.y)
        elif isinstance(g, Swipe):
            device.swipe(g.x1, g.y1, g.x2, g.y2, g.duration_ms)
        else:
            clock.sleep(g.seconds)


def gesture_json(gestures: Sequence[Gesture]) -> list[list[object]]:
    """Gestures as journal lines hold them: ["tap", x, y], ["swipe", x1, y1, x2, y2, ms], ["pause", s]."""
    out: list[list[object]] = []
    for g in gestures:
        if isinstance(g, Tap):
            out.append(["tap", g.x, g.y])
        elif isinstance(g, Swipe):
            out.append(["swipe", g.x1, g.y1, g.x2, g.y2, g.duration_ms])
        else:
            out.append(["pause", g.seconds])
    return out


# -- reading, deciding, checking -------------------------------------------------------


@dataclass(frozen=True)
class BoardRead(Generic[BoardT]):
    board: BoardT  # unknown cells as the game's notation holds them ('?')
    reading: Reading  # what vision saw: a label and a confidence per cell
    confident: bool  # every cell known, at or above the profile's min_confidence
    text: str  # the board in the game's notation
    # Enough is known to act on: a game whose rules can leave unknown cells out (a match-3
    # solver neither swaps nor matches them) plays the rest of the board; None: as confident.
    usable: bool | None = None

    @property
    def playable(self) -> bool:
        return self.confident if self.usable is None else self.usable

    @property
    def min_confidence(self) -> float:
        return self.reading.min_confidence

    @property
    def unknown_cells(self) -> list[tuple[int, int]]:
        return self.reading.unknown_cells()


# The same verdict names in every game. `cascade`: as predicted where the prediction
# holds, and more changed that the agent could not foresee (refills); `rules_changed`:
# the screen did what another rule of the game would have done, and the player now plays
# by that rule; `unverified`: the run stopped before the move's result could be read.
Verdict = Literal["as_predicted", "cascade", "rules_changed", "not_applied", "unexpected", "unverified"]
OK_VERDICTS: frozenset[str] = frozenset({"as_predicted", "cascade", "rules_changed"})


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    detail: str = ""
    fields: Mapping[str, object] = field(default_factory=dict)  # the game's own journal fields
    # A move made to see what the game does (a piece of unknown kind swapped): whatever the
    # game did is an answer, not a move that failed its prediction.
    trial: bool = False

    @property
    def ok(self) -> bool:
        return self.verdict in OK_VERDICTS


@dataclass(frozen=True)
class Decision(Generic[MoveT]):
    move: MoveT
    text: str  # the move in the game's notation
    fields: Mapping[str, object] = field(default_factory=dict)  # the game's own journal fields
    continues_plan: bool = False  # the next step of a plan checked before its first move


@dataclass(frozen=True)
class NoMove:
    """The player has nothing to play: the game is over (or solved), or it is stuck."""

    reason: str
    finished: bool
    # Nothing to play now, but the game itself may change the board (a match-3 game
    # reshuffles a board with no match): wait and read again rather than stop.
    wait: bool = False


@dataclass(frozen=True)
class Status:
    """What a game's header says, when the game has a reader for it."""

    moves_left: int | None  # steps or moves left; None where the game shows none
    score: int | None
    level: int | None = None  # the level number the header shows
    goal: Goal | None = None  # the level's goal as the header shows it (its count left)


StatusReader = Callable[[np.ndarray], Status | None]


@runtime_checkable
class FollowsProfile(Protocol):
    """A status reader or a player that goes on with the profile in play: a goal's icon
    is matched to the classes learned since the run began (a level's crates, a new
    colour), and the player aims at them."""

    def adopt(self, profile: GameProfile) -> None: ...


class Player(Protocol[BoardIn, MoveT]):
    """One run's decisions. It may keep state from move to move: a plan under way, a
    rule learned from what the screen did, the counts the summary reports."""

    def decide(self, board: BoardIn) -> Decision[MoveT] | NoMove: ...

    def check(self, before: BoardIn, decision: Decision[MoveT], after: BoardIn) -> Check:
        """What the screen did with `decision`, judged on the next still board `after`;
        an ok check also counts what the move achieved."""
        ...

    def at_rest(self, before: BoardIn, after: BoardIn) -> bool:
        """Whether `after` can be the board once the move made on `before` is over (a
        still frame between two animation phases is not)."""
        ...

    def finished(self, board: BoardIn) -> str | None:
        """Why the game is over on this board (solved, full, ...), or None."""
        ...

    def counts(self) -> dict[str, int]:
        """The game's own tallies for the summary (tiles cleared, balls removed, ...)."""
        ...


@dataclass(frozen=True)
class Learned:
    """What a player learned about the game by watching it, for the profile and the journal."""

    rules: Mapping[str, str] = field(default_factory=dict)  # e.g. {"variant": "classic"}
    immovable: tuple[tuple[int, int], ...] = ()  # cells that never moved when swiped (blockers)
    evidence: tuple[str, ...] = ()  # one sentence per thing learned


@runtime_checkable
class Learns(Protocol):
    """A player that learns the game's rules from what the screen did."""

    def learned(self) -> Learned: ...

    def reset_board(self) -> None:
        """A new board (a new level): what was learned about cells no longer holds."""
        ...


@runtime_checkable
class PursuesGoal(Protocol):
    """A player that aims its moves at the level's goal (collect a colour, break
    blockers, reach a score) when the game shows one."""

    def set_goal(self, goal: Goal | None) -> None:
        """The level's goal as last read (None: no readable goal: play as without one)."""
        ...

    def goal_progress(self) -> dict[str, object]:
        """What the moves made towards the goal, for the journal and the live view."""
        ...


@runtime_checkable
class WaryOf(Protocol):
    """A player told, before each decision, the cells of pieces no move has shown to be
    pieces yet: looks first seen with a new board, whose role was judged from their
    colour alone (a crate the colour of a tile passes for a special of it). Swaps
    elsewhere come first; the game's answer to one that uses them proves them either way."""

    def wary_of(self, cells: frozenset[tuple[int, int]]) -> None: ...


@runtime_checkable
class SeesMotion(Protocol):
    """A player told, before each check, whether the screen moved at all after the move's
    gestures: an undone swap moves and comes back, an ignored one never moves."""

    def moved(self, changed: bool) -> None: ...


# -- options -------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """An option of `agent play`/`farm`/`sim serve` that a game takes: `--NAME`."""

    name: str  # the option's flag without dashes, and the key in the game's settings
    help: str
    choices: tuple[str, ...] = ()
    default: object = None  # on a real phone
    sim_default: object = None  # on the simulated phone (None: as `default`)
    minimum: int | None = None
    maximum: int | None = None  # e.g. what the game's header can show
    sim_only: bool = False  # it shapes the simulated phone, not how the agent plays

    @property
    def flag(self) -> str:
        return f"--{self.name.replace('_', '-')}"

    def default_for(self, sim: bool) -> object:
        return self.sim_default if sim and self.sim_default is not None else self.default


Settings = Mapping[str, Any]  # a game's options after validation, every one of them filled in


# -- the simulated phone ---------------------------------------------------------------


class SimGame(Protocol[BoardOut]):
    """A game's simulated phone: what `--sim` plays, `sim serve` serves and the conformance
    suite checks readings against."""

    @property
    def default_moves(self) -> int | None:
        """`agent play --sim` stops after this many moves unless told otherwise (a game
        the agent plays well may never end); None: play to the end."""
        ...

    def phone(self, settings: Settings, seed: int, size: tuple[int, int], clock: Clock, serial: str | None) -> Any: ...

    def save_profile(self, phone: Any, directory: Path) -> tuple[Path, str]:
        """Write (or refresh) the phone's profile; (path, a sentence saying which it is)."""
        ...

    def true_board(self, phone: Any) -> BoardOut:
        """The board the phone shows once still: for tests, never for deciding."""
        ...

    def status_reader(self, phone: Any) -> StatusReader | None: ...

    def truth(self, phone: Any) -> dict[str, object]:
        """The simulator's own count of the game, for the summary."""
        ...

    def status_line(self, phone: Any) -> str: ...


# -- solving one position ---------------------------------------------------------------


@dataclass(frozen=True)
class SolveOption:
    """An option of `agent solve` that a game takes."""

    name: str  # the key in SolveRequest.values; the flag is `--NAME` (or `flag`)
    help: str
    flag: str = ""

    @property
    def cli_flag(self) -> str:
        return self.flag or f"--{self.name.replace('_', '-')}"


@dataclass(frozen=True)
class SolveRequest:
    values: Mapping[str, Any]  # only the options the game declared, as given (None: not given)
    png: Path | None
    as_json: bool


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class TableBlock:
    title: str
    columns: tuple[str, ...]  # empty: a two-column key/value table without a header
    rows: tuple[tuple[str, ...], ...]


Block = TextBlock | TableBlock


@dataclass(frozen=True)
class SolveReport:
    """What a solver found, for the CLI to render: JSON records (one line each with
    --json), blocks for people, an optional picture, and the exit code."""

    records: tuple[dict[str, Any], ...]
    blocks: tuple[Block, ...]
    picture: np.ndarray | None = None
    exit_code: int = 0


class Solver(Protocol):
    @property
    def options(self) -> tuple[SolveOption, ...]: ...

    def solve(self, request: SolveRequest) -> SolveReport: ...


# -- the game --------------------------------------------------------------------------


class Screen(Protocol[BoardT, MoveT]):
    """How a game is played on a phone's screen: read, decide, gesture, check."""

    @property
    def options(self) -> tuple[Option, ...]:
        """What `agent play`, `farm` and `sim serve` take for this game."""
        ...

    @property
    def role_hints(self) -> RoleHints:
        """What the rules say about where pieces lie at rest, for calibration to tell
        blockers by (agent.vision.roles)."""
        ...

    def check_profile(self, profile: GameProfile) -> None:
        """Refuse (ProfileError) a profile this game cannot read."""
        ...

    def read(self, frame: np.ndarray, profile: GameProfile) -> BoardRead[BoardT]: ...

    def player(self, profile: GameProfile, settings: Settings, seed: int) -> Player[BoardT, MoveT]: ...

    def gestures(self, move: MoveT, profile: GameProfile) -> tuple[Gesture, ...]: ...

    def summary_rows(self, counts: Mapping[str, int]) -> list[tuple[str, str]]:
        """(label, value) rows for the human summary of a run."""
        ...


class Game(Protocol[BoardT, MoveT]):
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def screen(self) -> Screen[BoardT, MoveT] | None:
        """How it is played on a phone; None: it is only solved (`agent solve`)."""
        ...

    @property
    def sim(self) -> SimGame[BoardT] | None:
        """Its simulated phone, if it has one."""
        ...

    @property
    def solver(self) -> Solver | None:
        """Its solver for `agent solve`, if it has one."""
        ...

    def parse_board(self, text: str) -> BoardT: ...

    def format_board(self, board: BoardT) -> str: ...
