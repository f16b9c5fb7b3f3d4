"""Getting to a still board before calibration, as a person would: a game often opens on a
map, a daily bonus or a level's intro card, and its sky may never stop moving.

`reach_board` looks at the screen, tries to find a board on it (as `agent calibrate`
does) and, when there is none, takes the one safe way on that `classify_screen` names (a
Claim, a level node, a Start; never a price, Buy or Install), a few times at most. A
board is then "still" when the board itself has stopped moving: pixels around it (an
animated sky, a sparkling frame) do not count, and neither does a whole screen that
keeps moving for ever.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.base import AppControl, Device
from agent.device.clock import Clock
from agent.errors import AgentError
from agent.vision.grid import BBox, bbox_to_frac
from agent.vision.profile import GameProfile
from agent.vision.scoring import iou
from agent.vision.settle import STILL_GAP_S, STILL_SHARE, STILL_TIMEOUT_S, changed_share, same_around, still_screen

MAX_STEPS = 8  # screens left on the way to a board
STEP_WAIT_S = 1.5  # after a tap: the next screen's animation
TAP_LIMIT = 2  # taps on one button on the way in before it is passed over
AIM_LOOKS = 3  # looks at a button that is still moving before it is tapped all the same (it may pulse)
MOVING_LOOKS = 6  # looks at a board still moving that are not counted as screens left
MISREAD_LOOKS = 3  # looks whose OCR failed, read again before the verdict is taken as it is
_AIM_CHANGE = 0.04  # share of pixels around a button that may change between two looks: it has stopped
_SAME_PLACE_PX = 24  # a button read again a few pixels off is the same button
KEEP_SEEN = 10  # screens kept to explain a way in that found no board (the last ones)


@dataclass
class WayIn:
    """How the board was reached: the screens left on the way (what was tapped and why),
    and the last screens looked at, each with what was made of it."""

    steps: list[str] = field(default_factory=list)
    bbox: BBox | None = None  # the board found
    seen: deque[tuple[str, np.ndarray]] = field(default_factory=lambda: deque(maxlen=KEEP_SEEN), repr=False)


class WayInError(AgentError):
    """No board reached: the message says why, `seen` holds the last screens looked at
    (RGB), each with what was made of it, for `keep_seen` to save."""

    def __init__(self, message: str, hint: str | None, seen: list[tuple[str, np.ndarray]]) -> None:
        super().__init__(message, hint)
        self.seen = seen


def keep_seen(exc: WayInError, folder: Path) -> AgentError:
    """Save the screens `exc` holds in `folder` (one PNG each, named in order with what was
    done on it, and `steps.txt`), and the error again, naming the folder."""
    import cv2

    from agent.files import save_png, write_atomic

    if not exc.seen:
        return exc
    try:
        lines = []
        for i, (what, frame) in enumerate(exc.seen, 1):
            name = f"{i:02d}-{re.sub(r'[^a-z0-9]+', '-', what.lower()).strip('-')[:40]}.png"
            save_png(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR), folder / name)
            lines.append(f"{name}: {what}")
        write_atomic(folder / "steps.txt", ("\n".join(lines) + "\n").encode())
    except (OSError, AgentError) as err:
        kept = AgentError(f"{exc} (its screens were not saved: {err})", exc.hint)
    else:
        kept = AgentError(f"{exc}; the screens it saw are in {folder}", exc.hint)
    kept.exit_code = exc.exit_code
    return kept


def board_still(a: np.ndarray, b: np.ndarray, bbox: BBox) -> bool:
    """Whether the board's box is the same in two frames (next to nothing changed there)."""
    if a.shape != b.shape:
        return False
    x0, y0, x1, y1 = bbox
    pa, pb = a[y0:y1, x0:x1], b[y0:y1, x0:x1]
    return pa.size > 0 and changed_share(pa, pb) < STILL_SHARE


def settled(capture: Callable[[], np.ndarray], clock: Clock, bbox: BBox | None, name: str,
            timeout_s: float = STILL_TIMEOUT_S) -> np.ndarray:  # fmt: skip
    """A frame whose board box (or, with none known, whole screen) has stopped moving."""
    return still_screen(capture, clock, name, timeout_s, bbox)


def _two(capture: Callable[[], np.ndarray], clock: Clock) -> tuple[np.ndarray, np.ndarray]:
    a = capture()
    clock.sleep(STILL_GAP_S)
    return a, capture()


def _provisional(frame: np.ndarray, game: str) -> GameProfile:
    """A profile with no board of its own: what classify_screen needs to look at a screen
    before any calibration (its board box is the middle of the screen)."""
    h, w = frame.shape[:2]
    box = (w // 10, h // 4, w - w // 10, h - h // 4)
    return GameProfile(game=game, rows=8, cols=8, board_bbox=box, board_frac=bbox_to_frac(box, w, h), exemplars=[])


def reach_board(device: Device, clock: Clock, name: str, find: Callable[[np.ndarray], BBox],
                game: str = "match3", ocr: Any = None, say: Callable[[str], None] = lambda _: None) -> WayIn:  # fmt: skip
    """Leave screens until `find(frame)` finds a board whose box is still (then return it),
    or raise the last AgentError `find` gave when no safe way on is left."""
    from agent.vision.screens import classify_screen

    way = WayIn()
    tapped: dict[TapKey, int] = {}  # (screen kind, label, place) -> taps made
    aimed: dict[TapKey, int] = {}  # (screen kind, label, place) -> looks while it moved
    misread = 0  # looks whose reading failed (Tesseract timed out on a busy machine)
    last: AgentError = AgentError(f"{name}: no board found", hint="open the game on a level's board, then calibrate again")
    steps = 0
    moving = 0  # looks at a board found while it still moved
    while steps <= MAX_STEPS:
        steps += 1
        a, b = _two(device.screencap, clock)
        bbox: BBox | None = None
        try:
            bbox = find(b)
        except AgentError as exc:
            last = exc
        if bbox is not None and not board_still(a, b, bbox):
            last = AgentError(f"{name}: the board is still moving", hint="let the game settle, then try again")
            # A screen sliding in (or a board behind a card still dimming) is looked at
            # again: that look leaves no screen, so it spends no step, up to a bound.
            moving += 1
            if moving <= MOVING_LOOKS:
                steps -= 1
            way.seen.append(("a board still moving", b))
            clock.sleep(STILL_GAP_S)
            continue
        foreground = device.foreground() if isinstance(device, AppControl) else None
        failures = getattr(ocr, "failures", 0)
        verdict = classify_screen(b, _provisional(b, game), board_readable=False, foreground=foreground, ocr=ocr,
                                  board_known=False)  # fmt: skip
        if getattr(ocr, "failures", 0) != failures and misread < MISREAD_LOOKS:
            # Words missing from a failed reading make another screen of it (a map's Start
            # behind the dimmed gift card taken for its way on): never acted on, read again.
            misread += 1
            steps -= 1
            way.seen.append((f"{verdict.kind}: a reading that failed", b))
            clock.sleep(STILL_GAP_S)
            continue
        if bbox is not None and not _dialog_over(verdict, bbox):
            way.bbox = bbox
            return way
        action = _untried(verdict, tapped)
        way.seen.append((f"{verdict.kind}: {action.label if action is not None else 'no way on'}", b))
        if action is None or action.kind not in ("tap", "back", "wait"):
            raise _failed(last, way, unread=ocr is None and action is None) from last
        if action.kind == "wait":
            way.steps.append(f"waited on {verdict.kind}: {action.why}")
            clock.sleep(STEP_WAIT_S)
            continue
        if action.kind == "tap" and action.point is not None:
            key = _tap_key(action, verdict.kind)
            if aimed.get(key, 0) < AIM_LOOKS and not _still_around(device.screencap, clock, b, action.point):
                # A screen still sliding in (a map after a dialog closes) takes a tap
                # somewhere else, or not at all: look again, without spending a step.
                aimed[key] = aimed.get(key, 0) + 1
                if sum(aimed.values()) <= 2 * AIM_LOOKS:
                    steps -= 1
                continue
            tapped[key] = tapped.get(key, 0) + 1
            device.tap(*action.point)
            step = f"tapped {action.label!r} on a {verdict.kind} screen ({action.why})"
        elif isinstance(device, AppControl):
            device.back()
            step = f"pressed Back on a {verdict.kind} screen ({action.why})"
        else:
            raise _failed(last, way) from last
        way.steps.append(step)
        say(f"to reach the board: {step}")
        clock.sleep(STEP_WAIT_S)
    raise WayInError(f"{name}: no board after leaving {MAX_STEPS} screens ({'; '.join(way.steps[-3:])})",
                     "open the game on a level's board by hand, then calibrate again", list(way.seen))  # fmt: skip


def _failed(last: AgentError, way: WayIn, unread: bool = False) -> WayInError:
    """The stop, with the screens that explain it. `unread`: the screen left no way on
    because there was no OCR to read its buttons; that, not the board, is what to fix (a
    fresh machine without Tesseract said only "no game board found" over a dialog)."""
    from agent.vision.ocr import ocr_unavailable_reason

    missing = ocr_unavailable_reason() if unread else None
    message, hint = str(last), last.hint
    if missing is not None:
        message, hint = f"{message}; a screen with no way on could not be read: {missing}", f"{missing}, then try again"
    err = WayInError(message, hint, list(way.seen))
    err.exit_code = last.exit_code
    return err


def _still_around(capture: Callable[[], np.ndarray], clock: Clock, frame: np.ndarray, point: tuple[int, int]) -> bool:
    """Whether the screen around a button is the same a moment later."""
    clock.sleep(STILL_GAP_S)
    return same_around(frame, capture(), point, _AIM_CHANGE)


TapKey = tuple[str, str, tuple[int, int]]


def _tap_key(action: Any, kind: str) -> TapKey:
    """A tap's button on a kind of screen: its words and its place (read again a few pixels
    off, the same). The screen's kind is part of it: a map's Start tapped twice while a
    dialog stood over it (the dialog took the taps) is the way on once the dialog is gone."""
    x, y = action.point
    return kind, action.label, (x // _SAME_PLACE_PX, y // _SAME_PLACE_PX)


def _untried(verdict: Any, tapped: dict[TapKey, int]) -> Any:
    """The verdict's best action but a button already tapped TAP_LIMIT times on the way
    on this kind of screen (a Start behind a dialog that takes every tap: a button that led
    nowhere twice is not tapped a third time); with every button so spent, Back (the safe
    way off a dialog)."""
    from agent.vision.screens import Action

    ranked = list(getattr(verdict, "ranked", ()) or ([] if verdict.action is None else [verdict.action]))
    for action in ranked:
        if action.kind == "tap" and action.point is not None and tapped.get(_tap_key(action, verdict.kind), 0) >= TAP_LIMIT:
            continue
        return action
    if not ranked:
        return verdict.action
    return Action("back", None, "Back", f"every way on was tapped {TAP_LIMIT} times and the screen stayed")


def _dialog_over(verdict: Any, bbox: BBox) -> bool:
    """A board was found, but a card with a safe button lies over part of it (a level's
    intro over a dimmed board, a daily bonus): that card is left first. A board's own
    screen has no panel with a safe word on it; Back alone is never a reason; and a
    "panel" that is the board itself (its slots a flat face, a tile at its corner taken
    for a close glyph) is no card over it."""
    from agent.vision.screens import NODE_LABEL, _inside

    action = verdict.action
    panel = getattr(verdict, "panel", None)
    if panel is not None and iou(panel, bbox) >= 0.6:
        return False
    if (action is not None and action.label == NODE_LABEL and action.point is not None
            and _inside(action.point, bbox)):  # fmt: skip
        # A "map" read from round shapes alone (no number, no Play) whose node is one of
        # the found board's cells is the board: drawn gems and crates are round flat badges
        # too (world 2's drawn art: its level node was tapped, a crate, until the steps ran out).
        return False
    if action is not None and action.kind in ("tap", "wait") and verdict.kind in ("map", "ad"):
        return True  # a map's or an ad's pictures may repeat like cells: no board is on it
    return (action is not None and action.kind in ("tap", "wait") and getattr(verdict, "panel", None) is not None
            and verdict.kind in ("covered", "card", "intro", "map", "ad"))
