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

from typing import Any, Protocol

import numpy as np

from agent.device.base import AppControl
from agent.device.clock import Clock
from agent.games.base import BoardRead, Learns
from agent.play.guards import Guards
from agent.play.pacing import CaptureMeter, Timeouts
from agent.play.stats import PlaySummary, StopKind
from agent.vision.profile import GameProfile
from agent.vision.settle import STILL_SHARE, changed_share


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

    @property
    def timeouts(self) -> Timeouts: ...

    def read(self, frame: np.ndarray) -> BoardRead[Any] | None: ...

    def adopt(self, profile: GameProfile, why: str, **fields: object) -> None: ...

    def _log(self, event: str, **fields: object) -> None: ...

    def _stop(self, reason: str, kind: StopKind, finished: bool = False, signum: int | None = None) -> PlaySummary: ...  # fmt: skip


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
        self._unrecognised_since: float | None = None
        self._back_did_nothing: set[str] = set()  # screens (hashes) where Back changed nothing

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
            self._grower.rebase(loop.profile)  # a new board: what was seen of new looks still counts
            self._grower_for = loop.profile
        grown = self._grower.observe(frame, read.reading)
        if grown is None:
            return read
        new = sorted(set(grown.class_labels) - set(loop.profile.class_labels))
        loop.adopt(grown, "a look seen again and again is learned as a class", classes=new,
                   kinds={c: grown.kind_of(c) for c in new})  # fmt: skip
        self._grower_for = loop.profile  # the grower holds the profile it grew
        loop.summary.looks_learned += len(new)
        again = loop.read(frame)
        return again if again is not None else read

    def _refind(self, frame: np.ndarray) -> bool:
        from agent.vision.relearn import refind_board

        loop = self.loop
        found = refind_board(frame, loop.profile, loop.screen.role_hints)
        if found is None or not found.changed:
            return False
        try:
            read = loop.screen.read(frame, found.profile)
        except ValueError:
            return False
        if not read.playable:
            return False
        if loop.pending is not None:
            loop.summary.checks["unverified"] += 1
            loop._log("check", index=loop.pending.index, verdict="unverified",
                      detail="the board changed shape before the move's result showed (a new level)")  # fmt: skip
            loop.pending = None
        loop.adopt(found.profile, found.reason, new_classes=list(found.new_classes))
        loop.summary.boards_found += 1
        if isinstance(loop.player, Learns):
            loop.player.reset_board()
        return True

    # -- a screen that is no playable board ------------------------------------------------------
    def handle(self, frame: np.ndarray, read: BoardRead[Any] | None, board_readable: bool = False) -> PlaySummary | bool:
        """Act on the screen: True when something was done (look again), False when nothing
        could be (wait), or the run's stop."""
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
        if not board_readable:
            same_for = loop.guards.same_screen_for(now, digest)
            if same_for >= loop.options.stuck_timeout_s:
                return loop._stop(f"the same screen for {same_for:.0f} s with nothing played", "stuck")
            in_game = foreground is None or loop.profile.package is None or foreground == loop.profile.package
            # A new level's board is looked for only where no dialog covers the old one: the
            # visible part of a covered board is not a new board.
            if in_game and loop.options.learn and not covered_board(frame, loop.profile) and self._refind(frame):
                self._unrecognised_since = None
                return True
        verdict = classify_screen(frame, loop.profile, board_readable=board_readable, foreground=foreground,
                                  ocr=self.ocr())  # fmt: skip
        action = verdict.action
        if verdict.kind == "board" or (board_readable and action is None):
            return False
        loop.summary.screens[verdict.kind] += 1
        loop._log("screen", kind=verdict.kind, reason=verdict.reason, hash=digest, taught=verdict.taught,
                  foreground=foreground,  # what the phone said: a replay answers the same
                  action=None if action is None else {"kind": action.kind, "point": action.point,
                                                      "label": action.label, "why": action.why},
                  refused=list(verdict.refused), words=[w.text for w in verdict.words][:24])  # fmt: skip
        if action is None:
            since = self._unrecognised_since = self._unrecognised_since or now
            if now - since >= loop.timeouts.unreadable_s:
                return loop._stop(f"a screen the agent does not recognise ({verdict.reason}): it taps nothing "
                                  "there; teach it with `agent screens add --image FRAME --tap X,Y`",
                                  "unrecognised")  # fmt: skip
            return False
        self._unrecognised_since = None
        device = loop.device
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
        if action.kind == "back" and (digest in self._back_did_nothing or not isinstance(device, AppControl)):
            # Back already did nothing here, or there is no Back key: nothing more to try;
            # the loop's unreadable timeout stops the run with what it saw.
            return False
        point = action.point if action.kind == "tap" and action.point is not None else (-1, -1)
        if loop.guards.tap_repeats(digest, point):
            what = f"tap at {point}" if action.kind == "tap" else "Back"
            return loop._stop(f"the same {what} on the same screen {loop.guards.same_tap_limit} times did not get "
                              f"past it ({verdict.reason})", "loop")  # fmt: skip
        if action.kind == "tap":
            device.tap(*point)
        elif isinstance(device, AppControl):
            device.back()
        changed = self._wait_screen_change(frame)
        if changed:
            loop.summary.dialogs_closed += 1
        elif action.kind == "back":
            self._back_did_nothing.add(digest)
        loop._log("dismissed", kind=action.kind, point=list(point) if action.kind == "tap" else None,
                  label=action.label, changed=changed)  # fmt: skip
        return True
