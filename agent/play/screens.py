"""What the play loop does with a screen that is no playable board.

In this order, cheapest and safest first:
1. The same screen for a minute with nothing played stops the run (`Guards`).
2. A new level: the board found again (another shape or place), keeping the classes
   already learned (`agent.vision.relearn`); play goes on with that profile.
3. The screen classified (`agent.vision.screens`): another app in front is brought back
   (with `--launch`, else the run stops saying so); a dialog or card is dismissed by the
   button its text names as safe (never a price, Buy, Share, Install), else by Back; a
   taught screen gets the tap a person taught. The same tap on the same screen three
   times stops the run: it is not getting anywhere.
4. A screen it does not recognise is never tapped: after the unreadable timeout the run
   stops, with the frames that explain it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agent.device.base import AppControl
from agent.device.clock import Clock
from agent.games.base import BoardRead, Learns
from agent.play.guards import Guards
from agent.play.pacing import CaptureMeter, Timeouts
from agent.play.stats import PlaySummary, StopKind
from agent.vision.goal import Goal
from agent.vision.profile import GameProfile
from agent.vision.screens import Action
from agent.vision.settle import STILL_GAP_S, STILL_SHARE, changed_share, same_around

# A button tapped this many times on one screen with nothing changing is not tapped again.
NOWHERE_LIMIT = 2
# An ad waited on this long for its close control is left with Back (countdowns run 5-30 s).
AD_WAIT_S = 35.0
# A dialog whose pixels changed this much after a tap changed (a share of the dialog's
# box: its words and buttons, not a sparkle's few pixels).
LOCAL_CHANGE = 0.04
AIM_LOOKS = 3  # looks at a moving dialog whose button stays in one place before it is tapped all the same
MISREAD_LOOKS = 3  # looks in a row whose OCR failed, read again before the verdict is acted on
# A board of another shape is a new level once found in one place for this long (and
# over this many captures, on a slow phone): measured, a board cleared at once showed
# its crates over empty slots for half a second, found as a board of their own.
NEW_BOARD_HOLD_S = 1.5
NEW_BOARD_HOLD_LOOKS = 2


class Loop(Protocol):
    """What the handler uses of the play loop (agent.play.loop.PlayLoop)."""

    device: Any
    profile: GameProfile
    player: Any
    screen: Any
    clock: Clock
    options: Any
    summary: PlaySummary
    capture: CaptureMeter
    guards: Guards
    pending: Any
    levels: Any
    _level_stop: PlaySummary | None

    @property
    def timeouts(self) -> Timeouts: ...

    def read(self, frame: np.ndarray) -> BoardRead[Any] | None: ...

    def adopt(self, profile: GameProfile, why: str, **fields: object) -> None: ...

    def _log(self, event: str, **fields: object) -> None: ...

    def unverified(self, reason: str) -> None: ...

    def level_ended(self, records: Any) -> PlaySummary | None: ...

    def _stop(self, reason: str, kind: StopKind, finished: bool = False, signum: int | None = None) -> PlaySummary: ...  # fmt: skip


def blockers_from(profile: GameProfile, looks: list[str]) -> GameProfile:
    """`profile` with `looks` made blockers: a tile's look with every look of its colour
    (its cracked and banded looks joined it), a special's alone (it had joined a colour
    it is not)."""
    from agent.vision.grow import relabel

    out = profile
    for v in looks:
        if profile.role_of(v) == "tile":
            kind = profile.kinds.get(v, v)
            family = [u for u in profile.class_labels if profile.kinds.get(u, u) == kind]
        else:
            kind, family = v, [v]
        for u in family:
            if out.role_of(u) in ("tile", "special", "colourless"):
                out = relabel(out, u, kind, "blocker")
    return out


def frame_digest(frame: np.ndarray) -> bytes:
    """The frame's exact pixels, as a short digest (a screenshot of a screen that did not
    change is the same bytes)."""
    return hashlib.blake2b(np.ascontiguousarray(frame).data, digest_size=16).digest() + repr(frame.shape).encode()


@dataclass(frozen=True)
class _Asked:
    """A question put about a frame: equal values (the frame's digest, ...), and the very
    same objects (the profile and hints in use: one adopted since is another question)."""

    values: tuple[object, ...]
    objects: tuple[object, ...]

    def same(self, other: _Asked | None) -> bool:
        return other is not None and other.values == self.values and len(other.objects) == len(self.objects) \
            and all(a is b for a, b in zip(other.objects, self.objects))  # fmt: skip


def covered_board(frame: np.ndarray, profile: Any) -> bool:
    """Whether a dialog lies over the profile's board (no OCR: shapes only)."""
    from agent.vision.screens import cover_boxes

    return bool(cover_boxes(frame, profile))


class ScreenHandler:
    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self._ocr: Any = None
        self._ocr_checked = False
        self._grower: Any = None
        self._grower_for: object = None
        self._fixed: Any = None  # agent.vision.fixed.FixedLooks, once a move is seen
        # looks first seen with a new board (judged by colour alone), until a move shows them pieces
        self._unproven: set[str] = set()
        self._held: dict[tuple[int, int], str] = {}  # unknown cells where a blocker stood: its class
        self._unrecognised_since: float | None = None
        self._back_did_nothing: set[str] = set()  # screens (signatures) where Back changed nothing
        self._led_nowhere: dict[tuple[str, str, tuple[int, int]], int] = {}  # (screen, label, point) -> taps in vain
        self._aimed: dict[tuple[str, tuple[int, int]], int] = {}  # (screen, point) -> looks while its dialog moved
        self._waiting: dict[str, float] = {}  # a screen kind waited on (an ad's countdown) -> since when
        self._last_logged = ""  # the signature of the last screen journaled
        self._new_board: GameProfile | None = None  # a board of another shape seen, not yet taken
        self._new_board_since = 0.0
        # The same frame again (a still dialog, look after look) gets the answers it got:
        # finding a board and classifying a screen take seconds of CPU a look.
        self._no_board_in: _Asked | None = None  # where no new board was found
        self._verdict_of: tuple[_Asked, Any] | None = None  # the last verdict, and what it answered
        self._misread = 0  # looks in a row whose reading failed: read again, not acted on

    def on_board(self) -> None:
        """A playable board is up: whatever was awaited on other screens is over."""
        self._waiting.clear()
        self._unrecognised_since = None
        self._new_board = None  # (the board of the profile is back: what was seen once was passing)

    @property
    def waiting_s(self) -> float:
        """How much longer than a board's wait the loop should give the screen: an ad's
        countdown being waited on (0: nothing awaited)."""
        return AD_WAIT_S if self._waiting else 0.0

    @property
    def waiting_since(self) -> float | None:
        """When the wait for a way on began (None: nothing awaited)."""
        return min(self._waiting.values()) if self._waiting else None

    # -- helpers ------------------------------------------------------------------------
    def ocr(self) -> Any:
        if not self._ocr_checked:
            from agent.vision.ocr import default_ocr, ocr_unavailable_reason

            self._ocr_checked, self._ocr = True, default_ocr()
            if self._ocr is None:
                self.loop._log("note", detail=f"{ocr_unavailable_reason()}: buttons are found by taught screens only")
        return self._ocr

    def _foreground(self) -> str | None:
        device = self.loop.device
        return device.foreground() if isinstance(device, AppControl) else None

    def _wait_screen_change(self, before: np.ndarray) -> bool:
        loop = self.loop
        deadline = loop.clock.now() + 2 * loop.timeouts.change_s
        while loop.clock.now() < deadline:
            loop.clock.sleep(max(loop.timeouts.poll_s, 0.05))
            frame = loop.capture()
            if frame.shape != before.shape or changed_share(frame, before) >= STILL_SHARE:
                return True
        return False

    # -- the game in front -------------------------------------------------------------------
    def bring_game_to_front(self) -> PlaySummary | None:
        loop = self.loop
        package = loop.profile.package
        if package is None:
            return loop._stop("--launch needs the game's package: the profile names none (`agent calibrate` "
                              "records the app in front, or set `package` in the profile)", "other_app")  # fmt: skip
        if not isinstance(loop.device, AppControl):
            return loop._stop("--launch: this phone cannot start apps", "other_app")
        front = loop.device.foreground()
        loop._log("front", foreground=front)  # what the phone said: a replay answers the same
        if front != package:
            frame = loop.capture()
            loop.device.launch(package)
            loop.summary.launches += 1
            loop._log("launch", package=package)
            self._wait_screen_change(frame)
        return None

    # -- learning ---------------------------------------------------------------------------
    def learn_looks(self, frame: np.ndarray, read: BoardRead[Any]) -> BoardRead[Any]:
        """Feed the unknown cells of a board at rest to the class grower; a look that keeps
        coming back becomes a class, and the frame is read again with it."""
        from agent.vision.relearn import ClassGrower

        loop = self.loop
        if self._grower is None:
            self._grower, self._grower_for = ClassGrower(loop.profile), loop.profile
        elif self._grower_for is not loop.profile:
            old = self._grower.profile
            if (old.rows, old.cols, old.board_bbox) != (loop.profile.rows, loop.profile.cols, loop.profile.board_bbox):
                self._held = {}  # another board: its cells are others
            self._grower.rebase(loop.profile)  # a new board: what was seen of new looks still counts
            self._grower_for = loop.profile
        # The cells that showed a blocker before the move, unknown since (a blocker stays
        # where it is: a new look there is the blocker hit, on this frame and the next ones)
        before = loop.pending.labels if loop.pending is not None else ()
        unknown = set(read.reading.unknown_cells())
        self._held = {rc: v for rc, v in self._held.items() if rc in unknown} | {
            (r, c): v for r, row in enumerate(before) for c, v in enumerate(row)
            if (r, c) in unknown and v not in (".", "?") and loop.profile.role_of(v) == "blocker"}  # fmt: skip
        grown = self._grower.observe(frame, read.reading, self._held)
        if grown is None:
            return read
        new = sorted(set(grown.class_labels) - set(loop.profile.class_labels))
        loop.adopt(grown, "a look seen again and again is learned as a class", classes=new,
                   kinds={c: grown.kind_of(c) for c in new})  # fmt: skip
        self._grower_for = loop.profile  # the grower holds the profile it grew
        loop.summary.looks_learned += len(new)
        again = loop.read(frame)
        return again if again is not None else read

    def learn_from_move(self, pending: Any, read: BoardRead[Any], lined: bool = False) -> None:
        """What a move showed of the looks that never move (agent.vision.fixed): a look
        that kept its place while its column fell, or refused swipes the game ignored, is
        a blocker from now on, with the looks of its colour; and of a colour bomb
        (agent.vision.bombs): a look of unknown kind that, swapped with a tile, cleared its
        whole colour, is one from now on. `pending` is the loop's move
        awaiting its result (the board it was made on, as classes, and the cells swiped),
        `read` the board at rest after it; `lined`: at rest though a look lies in a line
        on it, which the rules say a match would clear."""
        from agent.vision.bombs import fired_bomb
        from agent.vision.fixed import FixedLooks, Move

        loop = self.loop
        before = pending.labels
        after = read.reading.labels
        if not loop.options.learn or not before or [len(r) for r in before] != [len(r) for r in after]:
            return
        p = loop.profile
        bomb = fired_bomb(before, after, pending.swiped, p.kind_of)
        if bomb is not None and p.role_of(bomb) != "colourless":
            from agent.vision.grow import relabel

            p = relabel(p, bomb, bomb, "colourless")
            loop.adopt(p, "swapped with a tile, it cleared every tile of that colour: a colour bomb", classes=[bomb])
        if self._fixed is None:
            self._fixed = FixedLooks(bool(getattr(loop.screen.role_hints, "falls", False)))
        # the game showed the swap (took it, or undid it before our eyes), or it never moved
        moved = pending.changed or read.text != pending.text
        lines = getattr(loop.screen.role_hints, "run_length", None) if lined else None
        found = self._fixed.observe(Move(before, after, pending.swiped, moved, not moved, lines),
                                    {v: p.role_of(v) for v in p.class_labels})  # fmt: skip
        if not found:
            return
        out = blockers_from(p, found)
        made = [v for v in out.class_labels if out.role_of(v) != p.role_of(v)]
        loop.adopt(out, "looks that never move are blockers", classes=made,
                   evidence={v: self._fixed.evidence[v] for v in found})  # fmt: skip

    def moved_looks(self) -> frozenset[str]:
        """The looks the game has moved: pieces, whatever they look like."""
        return frozenset() if self._fixed is None else frozenset(self._fixed.movable)

    def came_with_board(self, looks: Sequence[str]) -> None:
        """Looks first seen with a new board: pieces or not, only a move will show."""
        self._unproven.update(looks)

    def unproven_cells(self, labels: Sequence[Sequence[str]]) -> frozenset[tuple[int, int]]:
        """The cells of specials whose look came with a new board and that no move has
        shown to move yet: a rare look judged by its colour alone (a crate of a tile's
        colour passes for a special of it). A new colour's tiles are no suspects (a whole
        colour avoided is a board played badly; a crate taken for a colour of its own is
        caught by its first refusal), and a look that proved fixed is a blocker now."""
        p = self.loop.profile
        if self._fixed is not None:
            self._unproven -= self._fixed.movable
        self._unproven = {v for v in self._unproven if v in p.class_labels and p.role_of(v) == "special"}
        if not self._unproven:
            return frozenset()
        return frozenset((r, c) for r, row in enumerate(labels) for c, v in enumerate(row) if v in self._unproven)

    def _refind(self, frame: np.ndarray, exact: bytes, spanning: list[tuple[int, int, int, int]] | None = None) -> bool:
        """A new board (another level's) adopted when one is on the screen (`exact`: the
        frame's digest). `spanning`:
        boxes that must lie inside the new board (a dialog taken for one that is a hole of it)."""
        from agent.vision.relearn import refind_board, same_place

        loop = self.loop
        now = loop.clock.now()
        if self._new_board is not None and now - self._new_board_since < self._new_board_hold():
            # (a look while a new board is held: the board is found again once the hold is
            # over, not at every look of it)
            loop.unverified("the board changed shape before the move's result showed (looking again)")
            return True
        asked = _Asked((exact,), (loop.profile, loop.screen.role_hints))
        found = None if asked.same(self._no_board_in) else refind_board(frame, loop.profile, loop.screen.role_hints)
        if found is None or not found.changed:
            self._new_board, self._no_board_in = None, asked
            return False
        if spanning:
            x0, y0, x1, y1 = found.profile.board_bbox
            # each shape a hole of the new board, or well away from it (a badge of the header
            # where the old, taller board was): one beside it may hide the rest of a board
            gap = max((x1 - x0) / max(1, found.profile.cols), (y1 - y0) / max(1, found.profile.rows))
            if not all((x0 <= b[0] and y0 <= b[1] and b[2] <= x1 and b[3] <= y1)
                       or b[2] <= x0 - gap or b[0] >= x1 + gap or b[3] <= y0 - gap or b[1] >= y1 + gap
                       for b in spanning):  # fmt: skip
                return False
        try:
            read = loop.screen.read(frame, found.profile)
        except ValueError:
            return False
        if not read.playable:
            return False
        # A new board is taken once it has stayed a while: a board caught mid-animation
        # (every tile of it cleared at once, its crates left over empty slots, for half a
        # second) is found as the few cells still standing, and taking it ended the level
        # in the middle (its moves split between two levels, the rest played a board off).
        # A real new level stays; the wait costs a few captures at each level's start.
        p, held = found.profile, self._new_board
        if held is None or not same_place(held, p.board_bbox, p.rows, p.cols):
            self._new_board, self._new_board_since = p, now
            loop.unverified("the board changed shape before the move's result showed (looking again)")
            return True
        self._new_board = None
        loop.unverified("the board changed shape before the move's result showed (a new level)")
        if loop.options.level_life:
            if loop.level_ended(loop.levels.new_board(loop.clock.now())) is not None:  # another board: another level
                return True  # --levels reached: the run has stopped
        loop.adopt(found.profile, found.reason, new_classes=list(found.new_classes))
        self.came_with_board(found.new_classes)
        loop.summary.boards_found += 1
        if isinstance(loop.player, Learns):
            loop.player.reset_board()
        return True

    def _new_board_hold(self) -> float:
        """How long a board of another shape is held before it is taken (see NEW_BOARD_HOLD_S)."""
        return max(NEW_BOARD_HOLD_S, NEW_BOARD_HOLD_LOOKS * self.loop.capture.cost_s)

    # -- a screen that is no playable board ------------------------------------------------------
    def handle(self, frame: np.ndarray, read: BoardRead[Any] | None, board_readable: bool = False,
               moving: bool = False) -> PlaySummary | bool:  # fmt: skip
        """Act on the screen: True when something was done (look again), False when nothing
        could be done yet (wait), or the run's stop. `moving`: the screen has not come to
        rest (an ad's art, an animated sky): it is classified all the same, and never taken
        for a new board."""
        from agent.vision.screens import classify_screen, screen_hash

        loop = self.loop
        if board_readable and not covered_board(frame, loop.profile):
            # The board was read and no dialog lies over it (what classify_screen would say
            # too): asked on every board with an unknown cell, so without a call to the phone
            # or a hash.
            return False
        now = loop.clock.now()
        foreground = self._foreground()
        digest = screen_hash(frame)
        exact = frame_digest(frame)
        if not board_readable and not moving:
            in_game = foreground is None or loop.profile.package is None or foreground == loop.profile.package
            # A new level's board is looked for only where no dialog covers the old one: the
            # visible part of a covered board is not a new board.
            if in_game and loop.options.learn and not covered_board(frame, loop.profile) and self._refind(frame, exact):
                self._unrecognised_since = None
                return True
        asked = _Asked((exact, board_readable, foreground), (loop.profile,))
        if self._verdict_of is not None and asked.same(self._verdict_of[0]):
            verdict = self._verdict_of[1]
        else:
            ocr = self.ocr()
            failures = getattr(ocr, "failures", 0)
            verdict = classify_screen(frame, loop.profile, board_readable=board_readable, foreground=foreground,
                                      ocr=ocr)  # fmt: skip
            # (a reading the OCR failed in, timed out on a busy machine, is not kept: the
            # next look at the same screen reads it again)
            failed = getattr(ocr, "failures", 0) != failures
            self._verdict_of = None if failed else (asked, verdict)
            if failed and verdict.kind != "board" and self._misread < MISREAD_LOOKS:
                # Its missing words make another screen of it (a button behind the dialog
                # taken for its way on): never acted on; read again, a few times.
                self._misread += 1
                loop._log("note", detail=f"{verdict.kind}: the screen's reading failed (OCR timed out?); "
                                         "reading it again before acting")  # fmt: skip
                return False
        self._misread = 0
        action = verdict.action
        if verdict.kind == "board" or (board_readable and action is None):
            return False
        if verdict.kind == "covered" and not board_readable and not moving and loop.options.learn \
                and not any(a.kind == "tap" for a in verdict.ranked):
            # A "dialog" with nothing to tap over where the old board was may be a hole of
            # the next level's board, whose tiles lie all around it: a new board that holds
            # every such shape is taken (Back would only leave the level).
            from agent.vision.screens import cover_boxes

            if self._refind(frame, exact, spanning=cover_boxes(frame, loop.profile)):
                self._unrecognised_since = None
                return True
        seen = _Seen.of(verdict, digest, frame)
        if not board_readable:
            # "The same screen" by what it shows (its kind and its buttons' words), not by its
            # pixels: an animated background changes every frame of a card that stays.
            same_for = loop.guards.same_screen_for(now, seen.signature)
            if same_for >= loop.options.stuck_timeout_s:
                return loop._stop(f"the same screen for {same_for:.0f} s with nothing played ({verdict.reason})",
                                  "stuck")  # fmt: skip
        loop.summary.screens[verdict.kind] += 1
        if loop.options.level_life:
            stop = self._levels_seen(frame, verdict, now)
            if stop is not None:
                return stop
        action = self._choose(verdict, seen, frame)
        # the same screen waited on (nothing to tap yet, an ad's countdown): said once
        quiet = (action is None or action.kind == "wait") and seen.signature == self._last_logged
        self._last_logged = seen.signature
        if not quiet:
            self._log_screen(verdict, seen, action, digest, foreground, moving)
        if action is None:
            return self._nothing_to_do(now, verdict, seen)
        self._unrecognised_since = None
        device = loop.device
        if action.kind == "wait":
            # An ad's close control comes after its countdown: wait for it; Back once waiting
            # has gone on longer than any countdown would.
            since = self._waiting.setdefault(seen.signature_kind, now)
            if now - since < AD_WAIT_S or not isinstance(device, AppControl):
                loop.clock.sleep(max(0.3, loop.timeouts.poll_s))
                return False
            action = Action("back", None, "Back", f"waited {now - since:.0f} s for a close control: trying Back")
        else:
            self._waiting.pop(seen.signature_kind, None)
        if action.kind == "launch":
            if not loop.options.launch:
                return loop._stop(f"another app is in front ({foreground}): run with --launch to bring the game "
                                  "back", "other_app")  # fmt: skip
            if not isinstance(device, AppControl) or loop.profile.package is None:
                return loop._stop("another app is in front and this phone cannot start the game", "other_app")  # fmt: skip
            device.launch(loop.profile.package)
            loop.summary.launches += 1
            loop._log("launch", package=loop.profile.package)
            self._wait_screen_change(frame)
            return True
        if action.kind == "back" and (seen.signature in self._back_did_nothing or not isinstance(device, AppControl)):
            # Back already did nothing here, or there is no Back key: nothing more to try.
            return self._nothing_to_do(now, verdict, seen)
        point = action.point if action.kind == "tap" and action.point is not None else (-1, -1)
        if loop.guards.tap_repeats(seen.signature, point):
            what = f"tap at {point}" if action.kind == "tap" else "Back"
            return loop._stop(f"the same {what} on the same screen {loop.guards.same_tap_limit} times did not get "
                              f"past it ({verdict.reason})", "loop")  # fmt: skip
        aim = (seen.signature, _rounded(point, frame))
        if action.kind == "tap" and moving and not self._still_where(frame, seen.still_region(action), point) \
                and self._aimed.get(aim, 0) < AIM_LOOKS:  # fmt: skip
            # Around it the screen never rests (an animated sky, an ad's art); the dialog
            # itself must: a card still sliding in would take the tap somewhere else. (A
            # button found at the same place look after look is not sliding: it may pulse.)
            self._aimed[aim] = self._aimed.get(aim, 0) + 1
            # a way on is in sight: the screen is waited on, as an ad's countdown is
            self._waiting.setdefault(seen.signature_kind, now)
            loop._log("note", detail=f"{verdict.kind}: the dialog is still moving; looking again before tapping")
            return False
        self._aimed.clear()
        if action.kind == "tap":
            device.tap(*point)
        elif isinstance(device, AppControl):
            device.back()
        region = seen.region_of(action)
        changed, where = self._wait_local_change(frame, region)
        key = (seen.signature, action.label, _rounded(point, frame))
        if changed:
            loop.summary.dialogs_closed += 1
            self._led_nowhere.pop(key, None)
        else:
            self._led_nowhere[key] = self._led_nowhere.get(key, 0) + 1
            if action.kind == "back":
                self._back_did_nothing.add(seen.signature)
        loop._log("dismissed", kind=action.kind, point=list(point) if action.kind == "tap" else None,
                  label=action.label, why=action.why, changed=changed, where=where,
                  **({"region": list(region)} if region is not None else {}))  # fmt: skip
        return True

    def _nothing_to_do(self, now: float, verdict: Any, seen: "_Seen") -> PlaySummary | bool:
        """A screen with no way on the agent may take: waited on for the unreadable timeout
        (it may change by itself), then the run stops saying why, with its frames."""
        loop = self.loop
        if self._unrecognised_since is None:
            self._unrecognised_since = now
        if now - self._unrecognised_since < loop.timeouts.unreadable_s:
            return False
        blocked = getattr(verdict, "blocked", None)
        if blocked or (verdict.refused and not seen.safe_seen):
            return loop._stop(f"the only ways on from this screen are forbidden ({blocked or verdict.reason}): it "
                              "taps none of them; close it by hand, or teach the screen with `agent screens add "
                              "--image FRAME --tap X,Y`", "unrecognised")  # fmt: skip
        return loop._stop(f"a screen the agent does not recognise ({verdict.reason}): it taps nothing there; teach "
                          "it with `agent screens add --image FRAME --tap X,Y`", "unrecognised")  # fmt: skip

    def _log_screen(self, verdict: Any, seen: "_Seen", action: Any, digest: str, foreground: str | None,
                    moving: bool) -> None:  # fmt: skip
        """The journal's line for a screen: its kind, the buttons seen (words, boxes, safe or
        forbidden and why), the action chosen and why."""
        self.loop._log("screen", kind=verdict.kind, reason=verdict.reason, hash=digest, taught=verdict.taught,
                       foreground=foreground,  # what the phone said: a replay answers the same
                       action=None if action is None else {"kind": action.kind, "point": action.point,
                                                           "label": action.label, "why": action.why},
                       refused=list(verdict.refused), words=[w.text for w in verdict.words][:24],
                       buttons=seen.buttons, moving=moving,
                       **{k: v for k, v in (("outcome", seen.outcome), ("level", seen.level), ("panel", seen.panel),
                                            ("countdown", seen.countdown)) if v is not None})  # fmt: skip

    def _levels_seen(self, frame: np.ndarray, verdict: Any, now: float) -> PlaySummary | None:
        """What a screen between (or over) levels says: the level won or lost, a level's
        number, an intro card's goal."""
        loop = self.loop
        outcome, level = getattr(verdict, "outcome", None), getattr(verdict, "level", None)
        stop = loop.level_ended(loop.levels.screen(outcome, level, None, now, verdict.kind))
        if stop is not None:
            return stop
        if verdict.kind == "intro" and verdict.words:
            # A level's goal is read where the game states it before the level: its intro
            # card (and the header, on the board). Other cards say other things in the same
            # words ("Get 5 extra moves" on an offer, a gem counter beside its gem on a map),
            # and a goal read there would steer the next level.
            panel = getattr(verdict, "panel", None)
            words = [wd for wd in verdict.words if panel is None or _inside_box(wd.centre, panel)]
            goal = _goal_on(frame, words, loop.profile) if words else None
            if goal is not None:
                loop.levels.goal(goal, now)
                loop._log("goal", source=verdict.kind, **goal.as_dict())
        return None

    def _choose(self, verdict: Any, seen: "_Seen", frame: np.ndarray) -> Any:
        """The verdict's best action, but not a button that led nowhere twice on this screen."""
        ranked = list(getattr(verdict, "ranked", ()) or ([] if verdict.action is None else [verdict.action]))
        for action in ranked:
            point = action.point if action.kind == "tap" and action.point is not None else (-1, -1)
            if self._led_nowhere.get((seen.signature, action.label, _rounded(point, frame)), 0) >= NOWHERE_LIMIT:
                continue
            return action
        return None if ranked else verdict.action

    def _still_where(self, frame: np.ndarray, region: tuple[int, int, int, int] | None, point: tuple[int, int]) -> bool:
        """Whether the dialog (or, with none, the part of the screen around the tap) is the
        same a moment later: a tap lands where it was aimed only on what has stopped."""
        loop = self.loop
        loop.clock.sleep(STILL_GAP_S)
        return same_around(frame, loop.capture(), point, LOCAL_CHANGE, region)

    def _wait_local_change(self, before: np.ndarray, region: tuple[int, int, int, int] | None) -> tuple[bool, str]:
        """Whether the screen changed where it matters after a tap or Back: the dialog (or the
        button) changed, or another app came; never the whole frame, which an animated
        background changes all the time. (changed, where it was seen)."""
        loop = self.loop
        deadline = loop.clock.now() + 2 * loop.timeouts.change_s
        while loop.clock.now() < deadline:
            loop.clock.sleep(max(loop.timeouts.poll_s, 0.05))
            frame = loop.capture()
            if frame.shape != before.shape:
                return True, "screen size"
            if region is None:
                if changed_share(frame, before) >= STILL_SHARE:
                    return True, "screen"
                continue
            x0, y0, x1, y1 = region
            a, b = frame[y0:y1, x0:x1], before[y0:y1, x0:x1]
            if a.size and changed_share(a, b) >= LOCAL_CHANGE:
                return True, "dialog"
        return False, "nowhere"


def _rounded(point: tuple[int, int], frame: Any) -> tuple[int, int]:
    """A tap point on a coarse grid (a fortieth of the screen): the same button read a pixel
    or two apart is the same button."""
    if frame is None or not hasattr(frame, "shape") or point == (-1, -1):
        return point
    h, w = frame.shape[:2]
    return (int(point[0] * 40 // max(1, w)), int(point[1] * 40 // max(1, h)))


def _inside_box(point: tuple[int, int], box: Any) -> bool:
    return bool(box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3])


def _goal_on(frame: np.ndarray, words: Any, profile: GameProfile) -> Goal | None:
    """The level's goal as a card shows it, when the goal reader is there to read it."""
    try:
        from agent.vision.goal_read import read_goal
    except ImportError:
        return None
    goal = read_goal(frame, list(words), profile)
    return goal if isinstance(goal, Goal) else None


@dataclass(frozen=True)
class _Seen:
    """A verdict as the journal and the guards see it."""

    signature: str  # the screen by what it shows: its kind and its buttons' words
    signature_kind: str
    buttons: list[dict[str, object]]
    safe_seen: bool
    outcome: str | None
    level: int | None
    panel: list[int] | None
    countdown: int | None

    @classmethod
    def of(cls, verdict: Any, digest: str, frame: np.ndarray) -> "_Seen":
        seen = list(getattr(verdict, "buttons", ()) or ())
        buttons = [{"text": b.text, "box": list(b.box), "verdict": b.verdict, "why": b.why} for b in seen][:24]
        words = sorted({b["text"].lower() for b in buttons if b["text"]}) or sorted(
            {w.text.lower() for w in verdict.words if len(w.text) > 1})[:12]  # fmt: skip
        panel = getattr(verdict, "panel", None)
        if not words and panel is not None:
            # with no words at all, a hash tells one screen from another: the dialog's own,
            # which an animated background around it does not change
            from agent.vision.screens import screen_hash

            x0, y0, x1, y1 = (int(v) for v in panel)
            crop = frame[max(0, y0):max(y0 + 1, y1), max(0, x0):max(x0 + 1, x1)]
            digest = screen_hash(crop) if crop.size else digest
        signature = f"{verdict.kind}:{'|'.join(words)}" if words else f"{verdict.kind}#{digest}"
        return cls(signature, str(verdict.kind), buttons, any(b["verdict"] == "safe" for b in buttons),
                   getattr(verdict, "outcome", None), getattr(verdict, "level", None),
                   None if panel is None else [int(v) for v in panel], getattr(verdict, "countdown", None))  # fmt: skip

    def still_region(self, action: Any) -> tuple[int, int, int, int] | None:
        """Where to judge whether the dialog has stopped before a tap: its box; or, with no
        dialog, the middle of the tapped button (a round close badge on an ad's moving art
        shows the art in its box's corners)."""
        region = self.region_of(action)
        if region is None or self.panel is not None:
            return region
        x0, y0, x1, y1 = region
        mx, my = (x1 - x0) // 4, (y1 - y0) // 4
        return (x0 + mx, y0 + my, x1 - mx, y1 - my)

    def region_of(self, action: Any) -> tuple[int, int, int, int] | None:
        """Where to judge whether the action did something: the dialog's box, else the
        tapped button's, else the whole screen (None)."""
        if self.panel is not None:
            x0, y0, x1, y1 = self.panel
            return (x0, y0, x1, y1)
        if action.kind == "tap" and action.point is not None:
            for b in self.buttons:
                x0, y0, x1, y1 = (int(v) for v in b["box"])  # type: ignore[attr-defined]
                if x0 <= action.point[0] < x1 and y0 <= action.point[1] < y1:
                    return (x0, y0, x1, y1)
        return None
