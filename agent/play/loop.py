"""The play loop, one for every game: a board at rest -> read -> decide -> gestures -> check.

It never acts on a board it did not read with confidence: a board at rest is one whose
every cell reads the same on two captures in a row (`agent.play.pacing`), and the game
says whether enough of it is known to act on (a match-3 board plays around a few unknown
cells). After every move it waits for the screen to change, and on the next board at
rest it asks the game's player whether the screen did what the rules predicted; a few
failed checks in a row stop the run. Waits scale with what a capture costs on this phone.

A screen that is no playable board is looked at (`agent.play.screens`): the board found
again when a new level brought another shape, a dialog or card dismissed by a safe
button or the Back key, the game brought back when another app is in front; a screen it
does not recognise, the same screen for a minute, or the same tap over and over stops
the run with the frames that explain it. It stops at once on Ctrl-C or a stop signal
(SIGTERM, SIGHUP: `agent.signals`), and on a farm's stop request between two moves; a
device error, or a bug, ends the journal with a stop line before it propagates. What a
move is, and what counts as the game being over, is the game's business
(`agent.games.base`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic

import numpy as np

from agent import signals
from agent.device.base import Device
from agent.device.clock import Clock, RealClock
from agent.errors import AgentError
from agent.games.base import (
    BoardRead,
    BoardT,
    Check,
    Decision,
    FollowsProfile,
    Game,
    Gesture,
    MoveT,
    NoMove,
    Player,
    PursuesGoal,
    SeesMotion,
    WaryOf,
    Status,
    StatusReader,
    Swipe,
    gesture_json,
    perform,
)
from agent.play.guards import STUCK_AFTER_S, Guards
from agent.play.journal import Journal
from agent.play.levels import LevelRecord, LevelTracker
from agent.play.recording import Recorder
from agent.play.pacing import (
    MAX_MOVING_CELLS, CaptureMeter, RestingRead, Motion, Timeouts, at_rest_between, same_kinds, screen_still,
)  # fmt: skip
from agent.play.screens import ScreenHandler
from agent.play.stats import PlaySummary, StopKind
from agent.play.watch import Watcher
from agent.vision.classify import EMPTY_LABEL
from agent.vision.goal import Goal
from agent.vision.grid import cell_at
from agent.vision.hole_memory import HoleMemory
from agent.vision.profile import GameProfile




@dataclass(frozen=True)
class PlayOptions:
    moves: int | None = None  # stop after this many moves
    unreadable_timeout_s: float = 5.0  # stop when no playable board comes for this long (at least)
    change_timeout_s: float = 1.0  # how long a move may take to show on screen (at least)
    max_failed_checks: int = 3  # moves in a row that did not do what was predicted
    handle_screens: bool = True  # look at a screen that is no playable board: refind, dismiss, relaunch
    launch: bool = False  # start the game's app (the profile's package) and bring it back when it leaves
    stuck_timeout_s: float = STUCK_AFTER_S  # the same screen with nothing played this long stops the run
    no_move_wait_s: float = 10.0  # a board with nothing to play is watched this long for the game to change it
    learn: bool = True  # learn new looks and new boards during the run
    # A game of levels (a real phone's saga game): a move counter at 0, a goal met or a card
    # ends a level, not the run; the run goes on to the next level.
    level_life: bool = False
    levels: int | None = None  # stop once this many levels are won (level_life)
    # A screen whose pixels never rest (an ad's moving art, an animated sky behind a card) is
    # classified anyway once it has moved this long (at least; scaled with the capture cost).
    moving_screen_s: float = 2.0
    # Screens left one after another, and still no board to play this long: going round in
    # circles (two cards that lead to each other), not between two levels.
    no_progress_s: float = 300.0


# A counter read 0 once after a move is looked at again this many times before the
# next move (its second reading of 0 ends the level; a misread gives way to the number).
ZERO_LOOKS = 3
HEADER_FACTS = ("moves", "level", "goal")  # header places looked for again on a level's board when calibration missed one

# Swipes are made slower, up to this, for a game that ignores fast ones.
SLOWEST_SWIPE_MS = 480

# Stops that are no failure: nothing to explain with frames.
SUCCESS_STOPS = frozenset({"finished", "limit", "requested", "interrupted"})

# Journal lines about a frame read at rest name it, and a recording keeps the frames these
# lines name (a board still moving is not kept: it decided nothing).
FRAME_EVENTS = frozenset({"decision", "check", "unreadable", "no_move", "screen", "dismissed", "profile"})
# ... and keeps these lossless: a dialog's buttons are read by OCR, a new board's edges found
# again, and a JPEG's edges would lead either elsewhere on replay.
LOSSLESS_EVENTS = frozenset({"screen", "dismissed", "profile"})

# A board at rest but for a cell or two that move and read unsure is either a hint's
# wiggle (it goes on for ever) or a piece still clearing or landing (a phase of a few
# hundred ms): it is taken for at rest once it has held this long.
DOUBT_HOLD_S = 0.6
# A cell read empty this long on a board whose pieces fall is a hole of the board, not a
# cell about to be filled (a cleared cell fills within a fall, a few hundred ms): what
# shows through it (an animated sky) is not the board moving.
HOLE_HOLD_S = 2 * DOUBT_HOLD_S


def _agree(a: str, b: str) -> bool:
    """Two reads of a board that show the same wherever both read a cell: a cell read
    unknown in one (a hint's sparkle over it, a glow) is no change of the board."""
    return len(a) == len(b) and all(x == y or "?" in (x, y) for x, y in zip(a, b))


def swiped_cells(gestures: tuple[Gesture, ...], profile: GameProfile) -> tuple[tuple[int, int], ...]:
    """The board's cells where the gestures' swipes start and end."""
    out: list[tuple[int, int]] = []
    for g in gestures:
        if isinstance(g, Swipe):
            for x, y in ((g.x1, g.y1), (g.x2, g.y2)):
                cell = cell_at(profile.board_bbox, profile.rows, profile.cols, x, y)
                if cell is not None:
                    out.append(cell)
    return tuple(out)


def _hole_mask(read: BoardRead[BoardT], rows: int, cols: int) -> np.ndarray:
    """(rows, cols) bool: the cells read as holes (what lies behind the board shows there)."""
    mask = np.array([[v == EMPTY_LABEL for v in row] for row in read.reading.labels], dtype=bool)
    return mask if mask.shape == (rows, cols) else np.zeros((rows, cols), dtype=bool)


class _Unread:
    """A frame not read (yet): its board was moving."""


UNREAD = _Unread()


@dataclass(frozen=True)
class _Pending(Generic[BoardT, MoveT]):
    before: BoardT
    decision: Decision[MoveT]
    index: int
    at: float  # clock time of the move
    changed: bool  # the screen moved after the swipe (an undone swap moves and comes back)
    unknown: frozenset[tuple[int, int]] = frozenset()  # cells unknown on the board the move was made on
    text: str = ""  # the board the move was made on, as read
    labels: tuple[tuple[str, ...], ...] = ()  # ... its cells' classes
    swiped: tuple[tuple[int, int], ...] = ()  # the cells the gestures went from and to


class PlayLoop(Generic[BoardT, MoveT]):
    def __init__(
        self,
        device: Device,
        game: Game[BoardT, MoveT],
        profile: GameProfile,
        player: Player[BoardT, MoveT],
        clock: Clock,
        options: PlayOptions = PlayOptions(),
        journal: Journal | None = None,
        status_reader: StatusReader | None = None,
        on_move: Callable[[PlaySummary], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        keep_learned: Callable[["PlayLoop[BoardT, MoveT]"], dict[str, object] | None] | None = None,
        recorder: Recorder | None = None,
        watcher: Watcher | None = None,
    ) -> None:
        if game.screen is None:
            raise ValueError(f"{game.name} is not played on a screen")
        self.device, self.game, self.screen, self.profile = device, game, game.screen, profile
        self.player, self.clock, self.options, self.journal = player, clock, options, journal
        self.status_reader, self.on_move = status_reader, on_move
        self.should_stop = should_stop  # asked before every capture: a farm's stop signal
        # Called as the run stops, before the stop line: keeps what was learned (the
        # profile), and says what for the journal.
        self.keep_learned = keep_learned
        self.summary = PlaySummary(game=game.name)
        # Every frame read at rest goes to the recorder (all of them, or the last few held
        # for a failure); the watcher (a live view) sees every capture and what was made of it.
        if recorder is None and journal is not None:
            recorder = Recorder(journal.path, "ring")  # a journal always gets the frames that explain a failure
        self.recorder, self.watcher = recorder, watcher
        self.frame_id: int | None = None  # the recorder's id of the frame last read at rest
        self._rest_frame: tuple[np.ndarray, float] | None = None  # that frame, for the lines that name it
        self._recording_noted = False
        self.pending: _Pending[BoardT, MoveT] | None = None
        self.stopped = False  # the stop line is written: the run is over, whatever comes after
        # Overlapping captures only where calls may overlap and time is real.
        overlap = bool(getattr(device, "concurrent_captures", False)) and isinstance(clock, RealClock)
        self.capture = CaptureMeter(device.screencap, clock, overlap,
                                    None if watcher is None else watcher.captured)
        self.guards = Guards(options.stuck_timeout_s)
        self.screens = ScreenHandler(self)
        self._goal_icons_doubted: set[str] = set()
        self._counter_counted = False  # the moves counter has read more than 0
        self._zero_doubted = False
        self.levels = LevelTracker()
        # the holes of the board in play, for a scene that moves behind them: in a game whose
        # pieces fall into every cleared cell, a cell empty at rest is a hole (in another, an
        # empty square a piece may come to)
        self.holes = HoleMemory.for_game(getattr(self.screen.role_hints, "falls", False))
        self._level_stop: PlaySummary | None = None  # --levels reached while a screen was handled
        self._ending_since: float | None = None  # the level is over, and its next screen has not come
        self._last_moving_text: str | None = None  # the board as read while it did not look at rest
        self._same_reads = 0  # reads of that board in a row
        self._read_late = False  # the pending move's board was read once past the settle time
        self._zero_looks = 0  # looks again at a counter read 0 once, since the last move
        self._header_looked: int | None = None  # the level attempt whose board the header was last looked for on
        self._progress_at: float | None = None  # the last move made (or the run's start)
        self.profile_changed = False  # a board found again or a look learned: the profile to save
        self._read_ms = 0.0  # what the last read cost, counted in the decision time
        self._ignored = 0  # swipes in a row that did nothing at all: look at the screen before the next  # a board with new unknown cells, and since when
        self._last_swipe_at: float | None = None
        self._captures_at_swipe = 0
        # The holes of the board a move was last made on, with the box and lattice they belong to:
        # what shows through them (an animated sky) is not the board moving.
        self._holes: tuple[tuple[object, ...], np.ndarray] | None = None

    # -- the journal and the screen ---------------------------------------------------
    def _log(self, event: str, **fields: object) -> None:
        if self.journal is not None:
            if event in FRAME_EVENTS:
                self._record_rest_frame("screen" if event in LOSSLESS_EVENTS else "rest")
                if self.frame_id is not None:
                    fields.setdefault("frame", self.frame_id)
            self.journal.write(event, t=round(self.clock.now(), 4), **fields)

    def _record_rest_frame(self, role: str = "rest") -> None:
        if self.recorder is None or self._rest_frame is None:
            return
        frame, at = self._rest_frame  # kept: a later line may want it lossless (the recorder keeps it once)
        self.frame_id = self.recorder.add(frame, role, at, self.summary.moves)
        problem = self.recorder.problem
        if problem is not None and not self._recording_noted:
            self._recording_noted = True
            self._log("note", detail=problem)

    def _keep(self, frame: np.ndarray, read: BoardRead[BoardT] | None) -> None:
        """A frame read at rest: held for the recorder (a recording keeps it once a journal
        line names it; a ring of the last few keeps it at once), shown by the watcher."""
        now = self.clock.now()
        if self.recorder is not None:
            self.frame_id, self._rest_frame = None, (frame, now)
            if self.recorder.mode == "ring":
                self._record_rest_frame()
        if self.watcher is not None:
            self.watcher.board(self.profile.board_bbox, None if read is None else read.text)

    @property
    def timeouts(self) -> Timeouts:
        p, o = self.profile, self.options
        return Timeouts.fitted(self.capture.cost_s, p.settle, o.change_timeout_s, o.unreadable_timeout_s,
                               p.swipe_ms / 1000.0)  # fmt: skip

    def read(self, frame: np.ndarray) -> BoardRead[BoardT] | None:
        t0 = time.perf_counter()
        try:
            if self.holes is None:
                return self.screen.read(frame, self.profile)
            # a hole of this board that shows a scene it never showed before is a hole still
            return self.holes.read(self.screen.read, frame, self.profile)
        except ValueError:
            return None  # the profile's board box does not fit this frame (another app, rotated)
        finally:
            self._read_ms = (time.perf_counter() - t0) * 1000.0

    def _rest(self, unknown_before: frozenset[tuple[int, int]] | None = None,
              within_s: float | None = None) -> RestingRead[BoardT]:  # fmt: skip
        """Capture and read until two reads in a row show the board at rest, or the settle
        timeout passes (then the last read, not still). A frame whose board moved against
        the one before is not read at all: it cannot be at rest, and reading costs more
        than comparing.

        Two kinds of rest are held for DOUBT_HOLD_S, from the first frame that showed them,
        before they count: a board at rest but for a cell or two that move and read unsure
        (a hint's wiggle, or a piece still landing), and, after a move (`unknown_before`:
        the cells unknown on the board the move was made on), one with cells unknown since
        (a piece caught mid-clear reads unknown for a moment; a special the move made
        stays so, and is then played around or learned).

        `within_s`: a shorter wait than the settle timeout, for a screen already seen moving
        with no board on it (an ad's art never rests: each look at it is short)."""
        p, t = self.profile, self.timeouts
        settle_s = t.settle_s if within_s is None else min(t.settle_s, within_s)
        start, captures = self.clock.now(), 1
        frame = self.capture()
        frame_at = self.capture.started_at
        read: BoardRead[BoardT] | None | _Unread = UNREAD
        motion = np.zeros((p.rows, p.cols), dtype=bool)
        motion_of = Motion(p.board_bbox, p.rows, p.cols, p.settle.threshold)
        known = self._holes_of()
        holes = known if known is not None else np.zeros((p.rows, p.cols), dtype=bool)
        # A board whose holes are not known yet (the run's first, a new level's) is read at
        # every capture until they are: a cell read empty for HOLE_HOLD_S is a hole.
        empty_since = None if known is not None or not self.screen.role_hints.falls else \
            self._empty_since(self.read(frame), frame_at, None)  # fmt: skip
        same_since = frame_at  # the first frame of the current run of agreeing reads
        while self.clock.now() - start < settle_s - 1e-6:
            self.clock.sleep(t.poll_s)
            nxt = self.capture()
            nxt_at = self.capture.started_at
            captures += 1
            nxt_read: BoardRead[BoardT] | None | _Unread = UNREAD
            if empty_since is not None:
                nxt_read = self.read(nxt)
                empty_since = self._empty_since(nxt_read, nxt_at, empty_since)
                holes = nxt_at - empty_since >= HOLE_HOLD_S - 1e-6
            motion = motion_of.between(frame, nxt) & ~holes
            if int(motion.sum()) > MAX_MOVING_CELLS:
                frame, frame_at, read, same_since = nxt, nxt_at, nxt_read, nxt_at
                continue
            prev = self.read(frame) if isinstance(read, _Unread) else read
            last, frame, read = frame, nxt, self.read(nxt) if isinstance(nxt_read, _Unread) else nxt_read
            if prev is None or read is None:
                # A screen with no board box on it is still when next to nothing changed.
                if prev is None and read is None and screen_still(last, frame):
                    return RestingRead(frame, None, True, self.clock.now() - start, captures, motion)
                same_since = frame_at = nxt_at
                continue
            rest = at_rest_between(prev, read, motion, p.min_confidence) if read.playable else 0
            if rest == 0:
                same_since = nxt_at
            else:
                fresh = unknown_before is not None and bool(set(read.unknown_cells) - unknown_before)
                if self._before_the_move_shows(read, nxt_at):
                    same_since = nxt_at
                elif (rest == 1 and not fresh) or nxt_at - same_since >= DOUBT_HOLD_S - 1e-6:
                    return RestingRead(frame, read, True, self.clock.now() - start, captures, motion)
            frame_at = nxt_at
            # A screen with no playable board is still when next to nothing on it changed
            # (a card's sparkle may go on for ever); a shaking or sliding one is not.
            if not read.playable and same_kinds(prev, read) and screen_still(last, frame):
                return RestingRead(frame, read, True, self.clock.now() - start, captures, motion)
        final = self.read(frame) if isinstance(read, _Unread) else read
        return RestingRead(frame, final, False, self.clock.now() - start, captures, motion)

    def _before_the_move_shows(self, read: BoardRead[BoardT], at: float) -> bool:
        """Whether a frame captured at `at` shows the swiped tiles as they were before the
        swipe, while the game may still be about to react (within the change timeout). A
        board at rest so soon after a swipe may be one that has not reacted yet (the finger
        still on the glass, a hint going out under it), not one that ignored the swipe."""
        pending = self.pending
        if pending is None or not pending.swiped or not pending.labels or pending.index != self.summary.moves:
            return False
        if at - pending.at >= self.timeouts.change_s:
            return False
        labels = read.reading.labels
        try:
            return all(labels[r][c] == pending.labels[r][c] for r, c in pending.swiped)
        except IndexError:
            return False

    def _lattice(self) -> tuple[object, ...]:
        p = self.profile
        return (p.board_bbox, p.rows, p.cols)

    def _holes_of(self) -> np.ndarray | None:
        """The cells of the board that are holes: those of the last board a move was made
        on, on this box (None: none made on it yet)."""
        if self._holes is not None and self._holes[0] == self._lattice():
            return self._holes[1]
        return None

    def _empty_since(self, read: BoardRead[BoardT] | None, at: float, since: np.ndarray | None) -> np.ndarray:
        """Since when each cell has been read empty, in every read (inf: not empty now)."""
        p = self.profile
        empty = np.zeros((p.rows, p.cols), dtype=bool) if read is None else _hole_mask(read, p.rows, p.cols)
        before = np.full((p.rows, p.cols), np.inf) if since is None else since
        return np.where(empty, np.minimum(before, at), np.inf)

    def _note_holes(self, read: BoardRead[BoardT]) -> None:
        """The holes of a board a move is made on (at rest by sight and by the rules). Where
        pieces never fall in (Color Lines), an empty cell is no hole: a piece may appear there."""
        if self.screen.role_hints.falls:
            self._holes = (self._lattice(), _hole_mask(read, self.profile.rows, self.profile.cols))

    def _wait_for_change(self, before: np.ndarray, hint: np.ndarray,
                         swiped: tuple[tuple[int, int], ...] = ()) -> bool:  # fmt: skip
        """Whether the board moved away from `before` within the change timeout; cells that
        were moving at rest (a hint's wiggle, a glow) and the board's holes are not a change.
        After a swipe the swiped tiles move first (a swap, or one shaken back): a change
        elsewhere alone (a glow starting on another tile) is not the move's."""
        p = self.profile
        holes = self._holes_of()
        hint = hint if holes is None else hint | holes
        where = np.zeros((p.rows, p.cols), dtype=bool)
        for r, c in swiped:
            if 0 <= r < p.rows and 0 <= c < p.cols:
                where[r, c] = True
        where &= ~hint
        motion = Motion(p.board_bbox, p.rows, p.cols, p.settle.threshold)
        deadline = self.clock.now() + self.timeouts.change_s
        while self.clock.now() < deadline:
            self.clock.sleep(self.timeouts.poll_s)
            # against the frame before the swipe, each time: a late, slow change still shows
            changed = motion.between(self.capture(), before) & ~hint
            if changed[where].any() if where.any() else changed.any():
                return True
        return False

    def unverified(self, reason: str) -> None:
        """The pending move's result will not be seen (a screen came between, a new level,
        the stop): its check is journaled as unverified and no longer waited for."""
        if self.pending is None:
            return
        self.summary.checks["unverified"] += 1
        self._log("check", index=self.pending.index, verdict="unverified", detail=reason)
        if self.watcher is not None:
            self.watcher.checked("unverified", reason)
        self.pending = None

    def _pause(self) -> None:
        self.clock.sleep(max(self.profile.settle.poll_ms / 1000.0 - self.capture.cost_s, 0.0))

    # -- stopping -------------------------------------------------------------------------
    def _stop(self, reason: str, kind: StopKind, finished: bool = False, signum: int | None = None) -> PlaySummary:  # fmt: skip
        s = self.summary
        # Whole or not at all: a signal now waits until the stop line is written.
        with signals.deferred():
            # The last move's result was never seen on a readable board (a game-over card
            # covers it, or the run was cut short): say so rather than count it.
            self.unverified(reason)
            if self.options.level_life:
                last = self.levels.finish(self.clock.now())
                if last is not None:
                    self._log("level", **last.as_dict())
                s.levels = self._level_rows()
                s.levels_won, s.levels_lost = self.levels.won, self.levels.lost
            frames = self._save_evidence() if kind not in SUCCESS_STOPS else []
            recording = None
            if self.recorder is not None and self.recorder.mode == "all":
                recording = str(self.recorder.folder.relative_to(self.recorder.run_dir))
            elif frames and self.recorder is not None:
                recording = str(self.recorder.folder.relative_to(self.recorder.run_dir))
            kept = self.keep_learned(self) if self.keep_learned is not None else None
            if kept:
                self._log("learned", **kept)
            s.counts = self.player.counts()
            s.captures, s.capture_ms = self.capture.count, round(1000.0 * self.capture.cost_s, 1)
            s.stop_reason, s.stop_kind, s.finished, s.stop_signal = reason, kind, finished, signum
            self._log("stop", reason=reason, kind=kind, finished=finished, summary=s.as_dict(),
                      **({} if signum is None else {"signal": signals.name(signum)}),
                      **({"frames": [str(f) for f in frames]} if frames else {}),
                      **({"recording": recording} if recording else {}))  # fmt: skip
            self.stopped = True
            if self.watcher is not None:
                self.watcher.summary(s.as_dict())
        return s

    def _save_evidence(self) -> list[Path]:
        if self.recorder is None:
            return []
        try:
            return self.recorder.flush()
        except (OSError, AgentError) as exc:
            self._log("note", detail=f"the frames that explain the stop were not saved: {exc}")
            return []

    def _record_check(self, pending: _Pending[BoardT, MoveT], read: BoardRead[BoardT]) -> Check:
        if isinstance(self.player, SeesMotion):
            self.player.moved(pending.changed)
        check = self.player.check(pending.before, pending.decision, read.board)
        self.summary.checks[check.verdict] += 1
        if self.watcher is not None:
            self.watcher.checked(check.verdict, check.detail)
        if check.verdict == "rules_changed":
            self._log("rules", index=pending.index, detail=check.detail, **check.fields)
        self._log("check", index=pending.index, verdict=check.verdict, detail=check.detail, board=read.text,
                  screen_changed=pending.changed, **check.fields)  # fmt: skip
        return check

    def _status(self, frame: np.ndarray) -> Status | None:
        status = self.status_reader(frame) if self.status_reader is not None else None
        if status is not None:
            self.summary.score, self.summary.moves_left = status.score, status.moves_left
        return status

    # -- levels -------------------------------------------------------------------------
    @property
    def timeouts_moving_s(self) -> float:
        """How long a screen with no playable board may move before it is classified anyway."""
        return max(self.options.moving_screen_s, 6 * self.capture.cost_s)

    @property
    def glance_s(self) -> float:
        """How long one look at a screen already seen moving with no board may wait for it to
        rest: a few captures."""
        return max(self.options.moving_screen_s, 3 * self.capture.cost_s)

    @property
    def level_wait_s(self) -> float:
        """How long the screens between two levels (cards counting stars, a map scrolling, an
        ad) may show nothing the agent can act on before the run stops: longer than a board's
        wait, within the stuck timeout, scaled with the capture cost."""
        return min(self.options.stuck_timeout_s, max(self.timeouts.unreadable_s, 20.0, 40 * self.capture.cost_s))

    def _level_on_board(self, status: Status | None, now: float, frame: np.ndarray | None = None) -> PlaySummary | None:
        """A playable board at rest in a game of levels: the level it belongs to, its header."""
        stop = self.level_ended(self.levels.board(now))
        if stop is None:
            stop = self.level_ended(self.levels.status(status, now))
        cur = self.levels.current
        if stop is None and frame is not None:
            self._header_again(frame)
        goal = None if cur is None or cur.goal is None else self._goal_as_seen(cur.goal)
        if stop is None and goal is not None:
            self._blocker_by_goal(goal)
        if stop is None and goal is not None and isinstance(self.player, PursuesGoal):
            self.player.set_goal(goal)
        return stop

    def _zero_believed(self) -> bool:
        """Whether a moves counter read as 0 is the game's: once the counter has read more
        than 0, yes. A counter that never read more is a reading to doubt (a header that
        calibration's OCR found reads "0" of a label's "O", or of a counter not drawn yet:
        every phone of a farm stopped at once with "no moves left", none of its moves made);
        the board is played, and the game's own end (its card, a board it no longer takes
        moves on) tells."""
        if self._counter_counted:
            return True
        if not self._zero_doubted:
            self._zero_doubted = True
            self._log("status_doubted", moves_left=0, reason="the moves counter read 0 and never more: not taken "
                      "for the game's end")  # fmt: skip
        return False

    def _goal_as_seen(self, goal: Goal) -> Goal:
        """The goal, its icon's match dropped where the game has shown otherwise: a break
        goal's piece is a blocker, and a look the game has moved is none (an intro card's
        crate icon, read before the new board taught its look, matched a colour's tile; made
        a blocker, that colour was unplayable and the level stuck)."""
        if goal.kind != "break" or goal.piece is None:
            return goal
        if goal.piece not in {self.profile.kind_of(v) for v in self.screens.moved_looks()}:
            return goal
        if goal.piece not in self._goal_icons_doubted:
            self._goal_icons_doubted.add(goal.piece)
            self._log("goal_icon", piece=goal.piece, reason="the break goal's icon matched a look the game has moved: "
                      "no blocker; the goal's blockers are those the board shows")  # fmt: skip
        return replace(goal, piece=None)

    def _header_again(self, frame: np.ndarray) -> None:
        """Where calibration's one look did not find a part of the header (the level's
        number, its goal, moves left: one OCR pass over one frame can miss a bold digit on
        a badge), it is looked for again on each level's first board at rest, and what is
        found is read from then on."""
        cur = self.levels.current
        if cur is None or cur.index == self._header_looked or not isinstance(self.status_reader, FollowsProfile):
            return
        self._header_looked = cur.index
        missing = [name for name in HEADER_FACTS if name not in self.profile.hud]
        ocr = self.screens.ocr() if missing else None
        if ocr is None:
            return
        from agent.vision.header import header_again

        found = header_again(self.profile, frame, ocr, missing)
        if found:
            names = [n for n in missing if n in found]
            self.adopt(replace(self.profile, hud={**self.profile.hud, **found}),
                       f"the header's {', '.join(names)} found on this level's board (calibration missed it)",
                       hud=names)  # fmt: skip

    def _blocker_by_goal(self, goal: Goal) -> None:
        """A goal to break a piece the profile holds as a tile: the game says what it is (a
        crate found with the board of a new level, before any move showed that it never
        moves, looks like a tile of a colour of its own). It alone becomes a blocker, with a
        kind of its own: the tiles of a colour it joined stay tiles."""
        from agent.vision.grow import relabel

        p, piece = self.profile, goal.piece
        if goal.kind != "break" or not piece or not self.options.learn or piece not in p.class_labels \
                or p.role_of(piece) not in ("tile", "special"):
            return
        self.adopt(relabel(p, piece, piece, "blocker"), "the level's goal is to break this look: a blocker",
                   classes=[piece])  # fmt: skip

    def level_ended(self, records: list[LevelRecord] | LevelRecord | None) -> PlaySummary | None:
        """Journal the levels that just ended (and those whose outcome the next level's
        number told only now); the run's stop once --levels levels are won."""
        ended = [] if records is None else [records] if isinstance(records, LevelRecord) else list(records)
        just_now = bool(ended)  # (not only an earlier level told late: the level played ended)
        # (a level left open-ended is told by the number of the one after it as soon as
        # that is read: the run stops at --levels then, not a level later)
        ended += [r for r in self.levels.resolve() if r not in ended]
        if not ended:
            return None
        s = self.summary
        s.levels, s.levels_won, s.levels_lost = self._level_rows(), self.levels.won, self.levels.lost
        for rec in ended:
            self._log("level", **rec.as_dict())
        if self.watcher is not None:
            self.watcher.summary(s.as_dict())
        if just_now:
            self._set_goal(None)
            self._ending_since = None
        won, wanted = self.levels.won, self.options.levels
        if wanted is not None and won >= wanted:
            self._level_stop = self._stop(f"{won} levels won (--levels {wanted})", "limit", finished=True)
            return self._level_stop
        return None

    def _level_rows(self) -> list[dict[str, object]]:
        return [r.as_dict() for r in self.levels.records]

    def _set_goal(self, goal: object) -> None:
        if isinstance(self.player, PursuesGoal):
            self.player.set_goal(goal if isinstance(goal, Goal) else None)

    def _level_fields(self) -> dict[str, object]:
        """A decision's level and the progress towards its goal, for the journal."""
        if not self.options.level_life:
            return {}
        cur = self.levels.current
        out: dict[str, object] = {"level": None if cur is None else cur.level}
        self.summary.level = None if cur is None else cur.level
        if isinstance(self.player, PursuesGoal):
            progress = self.player.goal_progress()
            self.summary.goal = dict(progress)
            if progress:
                out["goal"] = progress
        return out

    def adopt(self, profile: GameProfile, why: str, **fields: object) -> None:
        """Play on with another profile: the board found again, or a look learned."""
        self.profile, self.profile_changed = profile, True
        if isinstance(self.status_reader, FollowsProfile):
            self.status_reader.adopt(profile)
        if isinstance(self.player, FollowsProfile):
            self.player.adopt(profile)
        snapshot = None if self.recorder is None else self.recorder.snapshot_profile(profile)
        if snapshot is not None:
            fields["snapshot"] = snapshot
        self._log("profile", reason=why, rows=profile.rows, cols=profile.cols, board_bbox=list(profile.board_bbox),
                  **fields)  # fmt: skip

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> PlaySummary:
        try:
            # However the caller defers signals, the loop itself stops at once on one.
            with signals.allowed():
                return self._run()
        except KeyboardInterrupt as exc:
            if self.stopped:
                return self.summary  # it came after the stop line: the run had ended by itself
            signum = signals.signal_of(exc)
            return self._stop(signals.reason(signum), "interrupted", signum=signum)
        except AgentError as exc:
            # The device failed (killed, unplugged, hung): the journal still ends with why.
            if not self.stopped:
                self._stop(f"device error: {exc}", "device_error")
            raise
        except Exception as exc:
            # A bug: it keeps its traceback, and the journal still says how the run ended.
            if not self.stopped:
                self._stop(f"error: {type(exc).__name__}: {exc}", "crashed")
            raise
        finally:
            self.capture.close()  # captures still in flight are let go

    def _run(self) -> PlaySummary:
        s, opt = self.summary, self.options
        failed_checks = 0
        unplayable_since: float | None = None
        no_board_moving = False  # the last look: a screen with no playable board, moving
        no_move_since: float | None = None
        if opt.launch:
            stop = self.screens.bring_game_to_front()
            if stop is not None:
                return stop
        self._progress_at = self.clock.now()
        while True:
            if self.should_stop is not None and self.should_stop():
                return self._stop("stopped on request", "requested")
            if opt.level_life and self.clock.now() - self._progress_at >= opt.no_progress_s:
                return self._stop(f"no move for {opt.no_progress_s:.0f} s, though screens were left one after "
                                  "another: going round in circles", "stuck")  # fmt: skip
            # A screen seen moving with no board on it is looked at again soon: a full settle
            # wait per look (scaled to a slow phone's capture) would spend an ad's whole wait
            # on a few looks.
            rest = self._rest(None if self.pending is None else self.pending.unknown,
                              within_s=self.glance_s if no_board_moving else None)  # fmt: skip
            no_board_moving = not rest.still and (rest.read is None or not rest.read.playable)
            s.settle_s.append(rest.waited_s)
            now = self.clock.now()
            self._keep(rest.frame, rest.read)
            status = self._status(rest.frame)
            # A game of levels: a counter at 0 ends a level, never the run (see agent.play.levels).
            if status is not None and status.moves_left is not None and status.moves_left > 0:
                self._counter_counted = True
            game_over = not opt.level_life and status is not None and status.moves_left == 0 and self._zero_believed()
            read = rest.read
            if game_over and (read is None or not read.confident):
                return self._stop("game over: no moves left", "finished", finished=True)
            if read is not None and rest.still and opt.learn and read.playable and not read.confident:
                read = self.screens.learn_looks(rest.frame, read)  # (read again if a look was learned)
            read_with = self.profile  # what `read` was read with
            if read is None or not rest.still or not read.playable:
                if game_over:
                    return self._stop("game over: no moves left", "finished", finished=True)
                unplayable_since = now if unplayable_since is None else unplayable_since
                # A screen that never rests (an ad's moving art, a card over an animated sky)
                # is looked at all the same once it has moved for a while.
                moving_long = (opt.level_life and not rest.still
                               and now - unplayable_since >= self.timeouts_moving_s)  # fmt: skip
                if opt.handle_screens and (rest.still or moving_long):
                    outcome = self.screens.handle(rest.frame, read, moving=not rest.still)
                    if self._level_stop is not None:
                        return self._level_stop
                    if isinstance(outcome, PlaySummary):
                        return outcome
                    if outcome:
                        unplayable_since = None
                        self._last_swipe_at = None  # a screen came between: not one move's cycle
                        # (what the last move did is gone under what the screen led to)
                        self.unverified("a screen came between the move and its result")
                        continue
                limit = self.timeouts.unreadable_s if not opt.level_life else self.level_wait_s
                limit += self.screens.waiting_s  # an ad's countdown is waited out, then Back
                # (counted from when the wait began: a screen first classified late still gets it)
                waited = self.screens.waiting_since
                since = unplayable_since if waited is None else max(unplayable_since, waited)
                if now - since >= limit:
                    why = "the board never stopped moving" if not rest.still else (
                        "no board on the screen" if read is None else
                        f"{len(read.unknown_cells)} cells unknown, lowest confidence {read.min_confidence:.2f}"
                    )  # fmt: skip
                    return self._stop(
                        f"board not readable for {limit:.0f} s ({why}): "
                        "a game-over screen, a dialog, or a profile that does not fit this screen",
                        "unreadable",
                    )
                self._log("unreadable" if rest.still else "moving", board=read.text if read else None)
                self._pause()
                continue
            self.screens.on_board()
            if opt.level_life:
                stop = self._level_on_board(status, now, rest.frame)
                if stop is not None:
                    return stop
                if self.levels.ending:
                    # The level is over (its counter at 0, its goal met): the game is about to
                    # show what comes next; a move now would be ignored, or worse.
                    self._ending_since = now if self._ending_since is None else self._ending_since
                    waited = now - self._ending_since
                    if waited < self.level_wait_s:
                        if waited == 0.0:
                            self._log("level_over", reason=self.levels.ending, level=self.levels.current.level
                                      if self.levels.current else None)  # fmt: skip
                        self._pause()
                        continue
                    # Nothing came: the reading that ended the level is doubted, and play goes on
                    # (a move the game does not take is checked as such, and repeated ones stop the run).
                    self._log("note", detail=f"{self.levels.ending}, but the board stayed playable for "
                                             f"{waited:.0f} s: playing on")  # fmt: skip
                    cur = self.levels.current
                    if cur is not None:
                        cur.ending = ""
                    self._ending_since = None
                elif self.levels.zero_doubted(status) and self._zero_looks < ZERO_LOOKS \
                        and self.levels.current is not None and self.levels.current.moves > 0:
                    # The counter read 0 once after a move: the level may be over, and a move
                    # now would be one the game ignores; it is read again first.
                    self._zero_looks += 1
                    self._pause()
                    continue
            unplayable_since = None
            if opt.handle_screens and (read.unknown_cells or self._ignored):
                # Unknown cells, or a swipe the game ignored, can be a dialog over the board:
                # never swipe under one.
                outcome = self.screens.handle(rest.frame, read, board_readable=True)
                if self._level_stop is not None:
                    return self._level_stop
                if isinstance(outcome, PlaySummary):
                    return outcome
                if outcome:
                    self._ignored = 0
                    self._last_swipe_at = None  # a screen came between: not one move's cycle
                    self.unverified("a dialog over the board came between the move and its result")
                    continue
            if self._ignored >= 2 and self.profile.swipe_ms < SLOWEST_SWIPE_MS:
                # Nothing covers the board and the game took none of the last swipes: some
                # games ignore a swipe faster than a finger they expect.
                slower = min(SLOWEST_SWIPE_MS, 2 * self.profile.swipe_ms)
                self.adopt(replace(self.profile, swipe_ms=slower),
                           f"the game ignored {self._ignored} swipes in a row: swipes now take {slower} ms")  # fmt: skip
                self._ignored = 0
            if self.pending is not None and not self.player.at_rest(self.pending.before, read.board):
                same = self._last_moving_text is not None and _agree(read.text, self._last_moving_text)
                self._same_reads = self._same_reads + 1 if same else 0
                late = now - self.pending.at > self.timeouts.settle_s
                if late and opt.level_life and self._same_reads >= 1:
                    # The same board read twice in a row once the settle time is over (whatever
                    # moves around it), and still "mid-move" by the rules (three of a look in a row that the
                    # game does not clear: an obstacle read as a look): it is at rest as it is.
                    # The move is checked on it all the same: a swap the game undid leaves the
                    # board as it was, and is learned from (never made again and again).
                    self._same_reads = 0
                    self.screens.learn_from_move(self.pending, read, lined=True)
                    if read.text != self.pending.text:
                        self.unverified("the board rests as read, though the rules say it is mid-move "
                                        "(a look that does not match, such as an obstacle)")  # fmt: skip
                    else:
                        # the board as it was: the swipe did nothing, and is checked so (a
                        # swipe the game ignores is not made again and again)
                        self.pending = replace(self.pending, labels=())
                elif late and opt.level_life and not self._read_late:
                    # The board's pixels moved until now (a slow phone, an effect over it): its
                    # first read past the settle time is no proof that it never rests; one more.
                    self._read_late = True
                    self._last_moving_text = read.text
                    self._log("moving", board=read.text)
                    self._pause()
                    continue
                elif late:
                    return self._stop(
                        f"the board did not come to rest within {self.timeouts.settle_s:.0f} s of move "
                        f"{self.pending.index}", "not_at_rest",
                    )  # fmt: skip
                else:
                    self._last_moving_text = read.text
                    self._log("moving", board=read.text)
                    self._pause()
                    continue
            pending, self.pending = self.pending, None
            if pending is not None:
                if pending.labels:  # (emptied once learned from, above)
                    self.screens.learn_from_move(pending, read)
                check = self._record_check(pending, read)
                failed_checks = 0 if check.ok else failed_checks + (0 if check.trial else 1)
                ignored = check.verdict == "not_applied" and not pending.changed
                self._ignored = self._ignored + 1 if ignored else 0
                if check.verdict == "not_applied":
                    self.levels.not_taken()  # a swipe the game refused used none of the level's moves
                if failed_checks >= opt.max_failed_checks:
                    return self._stop(
                        f"{failed_checks} moves in a row did not do what the rules predicted "
                        f"(last: {check.verdict}{': ' + check.detail if check.detail else ''}): "
                        "check the profile's board box, and that the game plays by the rules the agent assumes",
                        "failed_checks",
                    )
            if self.profile is not read_with:
                # What the move taught (a look that never moves is a blocker) changes how
                # this board reads: it is read again before a move is chosen on it, or the
                # next check would take the new reading for the move's doing.
                continue
            if s.first_board is None:
                s.first_board = read.text
            over = self.player.finished(read.board)
            if over is not None:
                return self._stop(over, "finished", finished=True)
            if opt.moves is not None and s.moves >= opt.moves:
                return self._stop(f"move limit reached ({opt.moves})", "limit")
            if game_over:
                return self._stop("game over: no moves left", "finished", finished=True)
            t_decide = time.perf_counter()
            if self.holes is not None:
                self.holes.saw(self.profile, read.reading)  # (once a board moves are chosen on)
            unproven: frozenset[tuple[int, int]] = frozenset()
            if isinstance(self.player, WaryOf):
                unproven = self.screens.unproven_cells(read.reading.labels)
                self.player.wary_of(unproven)
            decision = self.player.decide(read.board)
            if isinstance(decision, NoMove):
                no_move_since = now if no_move_since is None else no_move_since
                if decision.wait and now - no_move_since < opt.no_move_wait_s:
                    self._log("no_move", reason=decision.reason, board=read.text)
                    self._pause()
                    continue
                if decision.wait and not game_over:
                    # The game would have changed a board with nothing to play (a reshuffle):
                    # it did not, so the board as read is likely not the board.
                    return self._stop(f"{decision.reason} on the board as read, and the game did not change it "
                                      f"within {opt.no_move_wait_s:.0f} s: a look read wrong, or a rule the agent "
                                      "does not know", "stuck")  # fmt: skip
                return self._stop(decision.reason, "finished" if decision.finished else "stuck",
                                  finished=decision.finished)  # fmt: skip
            no_move_since = None
            decide_ms = (time.perf_counter() - t_decide) * 1000.0 + self._read_ms
            gestures = self.screen.gestures(decision.move, self.profile)
            if self.watcher is not None:
                self.watcher.about_to(gesture_json(gestures), decision.text, s.moves + 1)
            perform(self.device, gestures, self.clock)
            # A move made is counted, journaled and awaited together: a signal waits for all three.
            with signals.deferred():
                s.moves += 1
                self.levels.moved()
                self._progress_at = self.clock.now()
                s.decision_ms.append(decide_ms)
                swiped_at = self.clock.now()
                cycle = None if self._last_swipe_at is None else swiped_at - self._last_swipe_at
                if cycle is not None:
                    s.cycle_s.append(cycle)
                    s.captures_per_move.append(self.capture.count - self._captures_at_swipe)
                self._last_swipe_at, self._captures_at_swipe = swiped_at, self.capture.count
                self._log(
                    "decision", index=s.moves, board=read.text, min_confidence=round(read.min_confidence, 3),
                    move=decision.text, gestures=gesture_json(gestures), decide_ms=round(decide_ms, 3),
                    settle_s=round(s.settle_s[-1], 4), plan_step=decision.continues_plan,
                    capture_ms=round(1000.0 * self.capture.cost_s, 1),
                    **({} if cycle is None else {"cycle_s": round(cycle, 3)}), **decision.fields,
                    **({"unproven": sorted(map(list, unproven))} if unproven else {}), **self._level_fields(),
                )  # fmt: skip
                self.pending = _Pending(read.board, decision, s.moves, swiped_at, False,
                                        frozenset(read.unknown_cells), read.text,
                                        tuple(tuple(row) for row in read.reading.labels),
                                        swiped_cells(gestures, self.profile))  # fmt: skip
                self._read_late = False
                self._zero_looks = 0
                self._note_holes(read)
            self.guards.progress()
            changed = self._wait_for_change(rest.frame, rest.moving, self.pending.swiped)
            self.pending = replace(self.pending, changed=changed)
            if self.on_move is not None or self.watcher is not None:
                s.counts = self.player.counts()
                s.captures, s.capture_ms = self.capture.count, round(1000.0 * self.capture.cost_s, 1)
            if self.on_move is not None:
                self.on_move(s)
            if self.watcher is not None:
                self.watcher.summary(s.as_dict())
