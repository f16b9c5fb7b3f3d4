"""What a run measures about itself, the same for every game: moves, checks by verdict,
decision and settle times, why it stopped, and the game's own tallies."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from agent import signals
from agent.games.base import OK_VERDICTS

# Why a run stopped, as one word; `exit_code` turns it into the process's exit status.
StopKind = Literal[
    "", "finished", "limit", "requested", "interrupted", "unreadable", "failed_checks", "not_at_rest", "stuck",
    "unrecognised", "other_app", "loop", "device_error", "crashed",
]

# An interrupted run exits 128 + the signal: 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP).
EXIT_OK, EXIT_FAILED, EXIT_DEVICE, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 3, 4, 130


@dataclass
class PlaySummary:
    game: str
    moves: int = 0
    checks: Counter[str] = field(default_factory=Counter)
    stop_reason: str = ""
    stop_kind: StopKind = ""
    stop_signal: int | None = None  # the signal that interrupted the run (kind "interrupted")
    finished: bool = False  # the game is over: solved, no moves left, no move possible
    score: int | None = None  # the game's own score, when its header can be read
    moves_left: int | None = None  # likewise its steps or moves left
    first_board: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # the game's own tallies
    decision_ms: list[float] = field(default_factory=list)
    settle_s: list[float] = field(default_factory=list)
    cycle_s: list[float] = field(default_factory=list)  # swipe to swipe, with no other screen between
    captures_per_move: list[int] = field(default_factory=list)  # captures from one swipe to the next
    captures: int = 0
    capture_ms: float = 0.0  # the rolling capture cost at the end
    screens: Counter[str] = field(default_factory=Counter)  # screens looked at, by kind
    dialogs_closed: int = 0  # dialogs and cards dismissed (the screen changed after the tap or Back)
    boards_found: int = 0  # boards found again (a new level's shape or place)
    looks_learned: int = 0  # classes learned during the run
    launches: int = 0  # the game started or brought back to the front
    recording: dict[str, Any] = field(default_factory=dict)  # frames kept and their size (--record)
    # A game of levels: one row per level attempt (agent.play.levels.LevelRecord.as_dict)
    levels: list[dict[str, Any]] = field(default_factory=list)
    levels_won: int = 0
    levels_lost: int = 0
    level: int | None = None  # the level being played, as read
    goal: dict[str, Any] = field(default_factory=dict)  # its goal's progress (a goal-aware player's count)

    @property
    def confirmed(self) -> int:
        """Moves whose outcome the screen showed as the rules predicted."""
        return sum(n for verdict, n in self.checks.items() if verdict in OK_VERDICTS)

    @property
    def mean_decision_ms(self) -> float:
        return float(np.mean(self.decision_ms)) if self.decision_ms else 0.0

    @property
    def mean_settle_ms(self) -> float:
        return 1000.0 * float(np.mean(self.settle_s)) if self.settle_s else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON holds it; the game's tallies sit beside the common fields."""
        return {
            "game": self.game, "moves": self.moves, "confirmed": self.confirmed, "checks": dict(self.checks),
            "stop_reason": self.stop_reason, "stop_kind": self.stop_kind,
            "signal": None if self.stop_signal is None else signals.name(self.stop_signal), "finished": self.finished,
            "score": self.score, "moves_left": self.moves_left, "first_board": self.first_board, **self.counts,
            "mean_decision_ms": round(self.mean_decision_ms, 3), "mean_settle_ms": round(self.mean_settle_ms, 1),
            "median_cycle_s": round(self.median_cycle_s, 3), "captures": self.captures,
            "captures_per_move": round(float(np.mean(self.captures_per_move)), 2) if self.captures_per_move else 0.0,
            "capture_ms": self.capture_ms, "screens": dict(self.screens), "dialogs_closed": self.dialogs_closed,
            "boards_found": self.boards_found, "looks_learned": self.looks_learned, "launches": self.launches,
            **({"recording": self.recording} if self.recording else {}),
            **({"levels": self.levels, "levels_won": self.levels_won, "levels_lost": self.levels_lost}
               if self.levels else {}),
            **({"level": self.level} if self.level is not None else {}), **({"goal": self.goal} if self.goal else {}),
        }  # fmt: skip

    @property
    def median_cycle_s(self) -> float:
        return float(np.median(self.cycle_s)) if self.cycle_s else 0.0


def exit_code(summary: PlaySummary) -> int:
    """0 only when the run did what was asked: it played to the end or to its limit, and
    the screen confirmed its moves. A run whose every move went unconfirmed failed, and so
    did one that ended its game before making any move (a game over read off the screen
    at once is no game played)."""
    kind = summary.stop_kind
    if kind == "interrupted":
        return EXIT_INTERRUPTED if summary.stop_signal is None else signals.exit_code(summary.stop_signal)
    if kind in ("unreadable", "unrecognised"):
        return EXIT_UNREADABLE
    if kind == "device_error":
        return EXIT_DEVICE
    if kind == "finished" and summary.moves == 0:
        return EXIT_FAILED
    if kind in ("finished", "limit", "requested"):
        return EXIT_FAILED if summary.moves > 0 and summary.confirmed == 0 else EXIT_OK
    return EXIT_FAILED
