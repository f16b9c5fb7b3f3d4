"""A run on a real game is a session of levels: when one ends, what it was, and how it ended.

A level ends when the header's move counter reads 0 after the agent has moved in it, when
its goal reads as met, when a card says the level was won or lost, or when another level
(its number read, or a board of another shape) comes. A level's outcome is taken from
what the game said, in this order: the card (its words: "Level complete", "Out of
moves"), the goal read as met, then what came next (a higher level number: won; the same
number again: lost and retried). When nothing tells, the outcome stays unknown rather than
guessed.

Each attempt at a level is one record (`LevelRecord`): the level number as read, its
goal, the moves the agent made in it, won or lost, the score as read, and how many times
this run had tried the level before (its retries).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.games.base import Status
from agent.vision.goal import Goal, merge_goals

# A board of another shape is a new level, but the header may show the last level's
# number, moves and goal for a few seconds more (it is redrawn after the board, or a card
# came between): a reading of the same number this soon after is the last level's.
HEADER_LAG_S = 8.0
# A move counter at 0 is believed only when read so this many times in a row: one
# reading of a "0" is an OCR slip as often as not (an "8" or an "O").
ZERO_READS = 2


@dataclass
class LevelRecord:
    index: int  # 1-based: the run's n-th level attempt
    level: int | None  # the level number as read (header, intro card, map, card)
    started_t: float
    goal: Goal | None = None
    moves: int = 0  # the agent's moves in this attempt
    score: int | None = None  # the last score read on its header or card
    won: bool | None = None  # None: ended, but nothing told how; or not ended yet
    how: str = ""  # what told the outcome
    retries: int = 0  # earlier attempts at this level number in this run
    ended_t: float | None = None
    ending: str = ""  # why the level is over, before its outcome is known
    level_from: str = ""  # where its number came from: "card" (a card, intro or map: big words), "header", "neighbours"

    @property
    def open(self) -> bool:
        return self.ended_t is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "level": self.level, "goal": None if self.goal is None else self.goal.as_dict(),
            "moves": self.moves, "won": self.won, "score": self.score, "retries": self.retries, "how": self.how,
            "seconds": None if self.ended_t is None else round(self.ended_t - self.started_t, 2),
        }  # fmt: skip


@dataclass
class LevelTracker:
    """Follows the levels of one run from what the loop reads and does."""

    records: list[LevelRecord] = field(default_factory=list)
    _zeros: int = 0
    _last_number: int | None = None  # the last level number read anywhere
    _next_number: int | None = None  # a number read between levels (a map, an intro card)
    _pending_goal: Goal | None = None  # a goal read between levels (an intro card), for the next one
    _last_status: Status | None = None  # the header reading last counted (one reading stands for a few frames)
    _other_level: tuple[int | None, int] = (None, 0)  # another level number on the header, and readings of it
    _opened_under: Status | None = None  # the header reading that stood when the current level opened
    _left: tuple[int, float] | None = None  # the level a board of another shape ended, and when

    # -- what the loop reads -------------------------------------------------------------
    @property
    def current(self) -> LevelRecord | None:
        return self.records[-1] if self.records and self.records[-1].open else None

    @property
    def won(self) -> int:
        return sum(1 for r in self.records if r.won is True)

    @property
    def lost(self) -> int:
        return sum(1 for r in self.records if r.won is False)

    @property
    def ending(self) -> str:
        """Why the current level is over (its card not seen yet), or "" while it is played."""
        cur = self.current
        return "" if cur is None else cur.ending

    def board(self, t: float) -> LevelRecord | None:
        """A playable board is up: a level is being played (a new attempt if none is open).
        Returns a record that this closed (a previous level), if any."""
        closed = None
        cur = self.current
        if cur is not None and cur.ending and cur.moves > 0 and self._next_number is not None \
                and self._next_number != cur.level:
            # a new level's number came between (a map's, an intro's): the next one's means
            # the game moved on, which it does for a level won; another, nothing certain
            if cur.level is not None and self._next_number == cur.level + 1:
                closed = self._close(cur, t, True, f"the next level, {self._next_number}, came up")
            else:
                closed = self._close(cur, t, None, "")
        if self.current is None:
            self._open(t, self._next_number)
        self._next_number = None
        return closed

    def status(self, status: Status | None, t: float) -> list[LevelRecord]:
        """The header as read on a board: its level, score, moves left and goal. Returns the
        records this closed (a level whose number changed under the agent)."""
        closed: list[LevelRecord] = []
        cur = self.current
        if status is None or cur is None:
            return closed
        if status is self._opened_under:
            # read before this level's board came (the header is read every few frames): its
            # number, score and goal are the last level's
            return closed
        if self._left is not None and status.level is not None:
            if status.level == self._left[0] and t - self._left[1] < HEADER_LAG_S:
                return closed  # the header still shows the level a board of another shape ended
            self._left = None
        fresh, self._last_status = status is not self._last_status, status
        level = status.level
        prev = self.records[-2] if len(self.records) >= 2 else None
        if cur.level is None and prev is not None and prev.won is True and prev.level == level:
            # the header still shows the level just won (a won level's Next plays the next
            # one): the new level's number is the next one the header shows
            level = None
        if level is not None and cur.level is not None and level != cur.level and fresh:
            # another number: believed once read twice in a row (a 3 read as an 8 is no new level)
            n, times = self._other_level
            self._other_level = (level, times + 1 if n == level else 1)
        elif fresh:
            self._other_level = (None, 0)
        if level is not None and (cur.level is None or level == cur.level or self._other_level[1] >= ZERO_READS):
            if cur.level is None or (cur.moves == 0 and cur.level != level and cur.level_from != "card"):
                self._number(cur, level, "header")  # the header names the level played
            elif cur.level is not None and level == cur.level + 1 and cur.moves > 0:
                # (only the next number: a header's small digits misread as another level are no new level)
                # the header shows another level: the last one ended while the agent looked away
                closed.append(self._close(cur, t, True, f"the header's level went from {cur.level} to {level}"))
                self._open(t, level, "header")
                self._other_level = (None, 0)
                cur = self.current
                assert cur is not None
            self._last_number = level
        if status.score is not None:
            cur.score = status.score
        if status.goal is not None:
            cur.goal = _merged(cur.goal, status.goal)
            if cur.goal.left == 0 and cur.moves > 0 and not cur.ending:
                cur.ending = "the goal reads as met"
        if status.moves_left == 0 and cur.moves > 0:
            self._zeros += 1 if fresh else 0
            if self._zeros >= ZERO_READS and not cur.ending:
                cur.ending = "the move counter reads 0"
        elif status.moves_left is not None:
            self._zeros = 0
        return closed

    def zero_doubted(self, status: Status | None) -> bool:
        """A counter at 0 that is no level's end (yet): read before any move of this level,
        or read once only."""
        if status is None or status.moves_left != 0:
            return False
        cur = self.current
        return cur is None or cur.moves == 0 or self._zeros < ZERO_READS

    def moved(self) -> None:
        cur = self.current
        if cur is not None:
            cur.moves += 1

    def not_taken(self) -> None:
        """The last move was seen not taken (the board did not change): it used no move."""
        cur = self.current
        if cur is not None and cur.moves > 0:
            cur.moves -= 1

    def goal(self, goal: Goal, t: float) -> None:
        """The goal read off an intro card (before its level's board)."""
        cur = self.current
        if cur is not None and cur.moves == 0:
            cur.goal = _merged(cur.goal, goal)
        else:
            self._pending_goal = goal

    def screen(self, outcome: str | None, level: int | None, score: int | None, t: float,
               kind: str = "card") -> LevelRecord | None:  # fmt: skip
        """A card, map or intro card was seen: its words say won or lost, or name a level.
        Returns the record this closed, if any. A screen with no board on it after the
        agent moved ends the level (`kind` "card", "map", "intro"); a dialog over the board
        ("covered": a tip, an offer) does not, unless its words say how the level ended."""
        cur = self.current
        if level is not None:
            self._last_number = level
        if outcome in ("won", "lost") and cur is not None and cur.moves > 0:
            if score is not None:
                cur.score = score
            if level is not None:
                self._number(cur, level)  # the card names the level it ends, in big words
            return self._close(cur, t, outcome == "won", f"the card says the level was {outcome}")
        if level is not None and cur is not None and cur.moves == 0 and cur.level_from != "card":
            self._number(cur, level)
        elif level is not None and (cur is None or cur.moves > 0):
            self._next_number = level
        if cur is not None and cur.moves > 0 and not cur.ending and outcome is None and kind in ("card", "map", "intro"):
            cur.ending = f"a {kind} screen came after the board"
        return None

    def new_board(self, t: float) -> LevelRecord | None:
        """The board changed shape or place: a new level, whatever the last one did."""
        cur = self.current
        if cur is None or cur.moves == 0:
            return None
        self._left = None if cur.level is None else (cur.level, t)
        return self._close(cur, t, None, "")

    def finish(self, t: float) -> LevelRecord | None:
        """The run stops: the level being played is left open-ended (won stays None) unless
        what was read already says how it ended."""
        cur = self.current
        if cur is None or cur.moves == 0:
            if cur is not None:
                self.records.pop()  # a level the agent never moved in is no attempt
            return None
        return self._close(cur, t, None, "")

    # -- helpers ------------------------------------------------------------------------------
    def _number(self, rec: LevelRecord, number: int, source: str = "card") -> None:
        rec.level, rec.level_from = number, source
        rec.retries = sum(1 for r in self.records if r is not rec and r.level == number)

    def _open(self, t: float, number: int | None, source: str = "card") -> None:
        rec = LevelRecord(len(self.records) + 1, None, t)
        if number is not None:
            self._number(rec, number, source)
        if self._pending_goal is not None:
            rec.goal, self._pending_goal = self._pending_goal, None
        self.records.append(rec)
        self._zeros = 0
        self._opened_under = self._last_status

    def _close(self, rec: LevelRecord, t: float, won: bool | None, how: str) -> LevelRecord:
        rec.ended_t = t
        if won is None:
            won, how = self._inferred(rec)
        rec.won, rec.how = won, how
        self._zeros = 0
        return rec

    def _inferred(self, rec: LevelRecord) -> tuple[bool | None, str]:
        """How a level ended when no card said it: its goal read as met, else nothing known yet
        (`resolve` looks again once the next level's number is read)."""
        if rec.goal is not None and rec.goal.left == 0:
            return True, "its goal read as met"
        if rec.goal is not None and rec.goal.kind == "score" and rec.goal.target is not None \
                and rec.score is not None and rec.score >= rec.goal.target:
            return True, f"its score {rec.score} reached the target {rec.goal.target}"
        return None, rec.ending

    def resolve(self) -> list[LevelRecord]:
        """Levels whose outcome or number was unknown, told now by their neighbours: the
        number of the level that came after (higher: won; the same again: lost and
        retried), and a number never read taken from both sides (after level N was won
        comes N; then N+1 means this one was won, N again that it was lost)."""
        out = []
        for i, rec in enumerate(self.records[:-1]):
            nxt = self.records[i + 1]
            if rec.open:
                continue
            if rec.level is None and i > 0 and nxt.level is not None:
                prev = self.records[i - 1]
                if prev.level is not None and prev.won is not None:
                    expected = prev.level + (1 if prev.won else 0)
                    if nxt.level in (expected, expected + 1) and rec.won in (None, nxt.level == expected + 1):
                        self._number(rec, expected, "neighbours")
                        for later in self.records[i + 1:]:  # this attempt counts in their retries now
                            if later.level == expected:
                                self._number(later, expected, later.level_from)
                        if rec.won is not None:
                            out.append(rec)
            if rec.won is None and rec.level is not None and nxt.level is not None:
                rec.won = nxt.level > rec.level
                rec.how = (f"the next level was {nxt.level}" if rec.won
                           else f"level {rec.level} came again")  # fmt: skip
                out.append(rec)
        return out


def _merged(old: Goal | None, new: Goal) -> Goal:
    """A goal read again: what this reading lacks is kept from the last (the intro card
    names the kind and target, the header counts down; agent.vision.goal.merge_goals)."""
    merged = merge_goals(old, new)
    return new if merged is None else merged
