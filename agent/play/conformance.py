"""What every registered game must do, checked the same way for each (as Gymnasium's
`check_env` does for environments). The conformance tests run these over the registry;
a new game that passes them works with every command.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.clock import ManualClock
from agent.games.base import Game, Gesture
from agent.games.registry import settings
from agent.vision.profile import GameProfile, find_profile

CHECK_SIZES: tuple[tuple[int, int], ...] = ((720, 1280), (1080, 2400), (1600, 2560))


class ConformanceError(AssertionError):
    pass


def same_board(a: object, b: object) -> bool:
    """Boards of every game compared alike (a game may hold its board as a numpy array)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def _fail(game: Game[Any, Any], what: str) -> ConformanceError:
    return ConformanceError(f"{game.name}: {what}")


def check_notation(game: Game[Any, Any], boards: Sequence[str]) -> None:
    """Every board's text parses, and formats back to the same text."""
    for text in boards:
        board = game.parse_board(text)
        again = game.format_board(board)
        if not same_board(game.parse_board(again), board) or again.strip() != text.strip():
            raise _fail(game, f"notation does not round-trip: {text!r} -> {again!r}")


def sim_profile(game: Game[Any, Any], phone: Any, directory: Path) -> GameProfile:
    assert game.sim is not None
    game.sim.save_profile(phone, directory)
    w, h = phone.screen_size()
    return find_profile(phone.model, w, h, game.name, [directory]).profile


def check_sim_reads(game: Game[Any, Any], seed: int = 0, sizes: Sequence[tuple[int, int]] = CHECK_SIZES) -> None:
    """A frame of the simulated phone reads back, with confidence, as the board the phone holds."""
    sim, screen = game.sim, game.screen
    if sim is None or screen is None:
        return
    for size in sizes:
        phone = sim.phone(settings(game, {}, sim=True), seed, size, ManualClock(), None)
        with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
            profile = sim_profile(game, phone, Path(tmp))
        read = screen.read(phone.screencap(), profile)
        truth = sim.true_board(phone)
        if not read.confident:
            raise _fail(game, f"at {size[0]}x{size[1]} the simulated frame reads unsure: {read.unknown_cells}")
        if not same_board(read.board, truth):
            raise _fail(game, f"at {size[0]}x{size[1]} read\n{read.text}\nbut the phone holds\n"
                              f"{game.format_board(truth)}")  # fmt: skip
        check_notation(game, [read.text])


def check_deterministic(game: Game[Any, Any], seed: int = 3) -> None:
    """Two phones of one seed show the same frame and board, before and after the same move."""
    sim, screen = game.sim, game.screen
    if sim is None or screen is None:
        return
    stt = settings(game, {}, sim=True)
    phones = [sim.phone(stt, seed, (1080, 2400), ManualClock(), None) for _ in range(2)]
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        profile = sim_profile(game, phones[0], Path(tmp))
    frames = [p.screencap() for p in phones]
    if not np.array_equal(frames[0], frames[1]):
        raise _fail(game, f"two phones of seed {seed} show different frames")
    board = sim.true_board(phones[0])
    decision = screen.player(profile, stt, seed).decide(board)
    move = getattr(decision, "move", None)
    if move is None:
        return
    for p in phones:
        _play(p, screen.gestures(move, profile))
    after = [sim.true_board(p) for p in phones]
    if not same_board(after[0], after[1]) or not np.array_equal(phones[0].screencap(), phones[1].screencap()):
        raise _fail(game, f"two phones of seed {seed} differ after the same move")


def _play(phone: Any, gestures: Sequence[Gesture]) -> None:
    from agent.games.base import perform

    perform(phone, gestures, phone.clock)
    phone.clock.sleep(5.0)  # every animation over


def check_outcomes(game: Game[Any, Any], seed: int = 1, moves: int = 3) -> None:
    """The player's check accepts what the simulated phone did with its moves, and
    catches a move the phone did not make."""
    from agent.play.loop import PlayLoop, PlayOptions

    sim, screen = game.sim, game.screen
    if sim is None or screen is None:
        return
    stt = settings(game, {}, sim=True)
    for deaf in (False, True):
        clock = ManualClock()
        phone = sim.phone(stt, seed, (1080, 2400), clock, None)
        with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
            profile = sim_profile(game, phone, Path(tmp))
        device = _Deaf(phone) if deaf else phone
        loop = PlayLoop(device, game, profile, screen.player(profile, stt, seed), clock,
                        PlayOptions(moves=moves, max_failed_checks=2), status_reader=sim.status_reader(phone))  # fmt: skip
        s = loop.run()
        if not deaf and (s.moves == 0 or s.confirmed < min(s.moves, moves) - s.checks.get("unverified", 0)):
            raise _fail(game, f"the check refused what the phone did: {dict(s.checks)} ({s.stop_reason})")
        if deaf and s.moves > 0 and (s.confirmed or s.stop_kind != "failed_checks"):
            raise _fail(game, f"moves the phone never made passed the check: {dict(s.checks)} ({s.stop_reason})")


class _Deaf:
    """A phone that shows its screen but ignores every gesture."""

    def __init__(self, phone: Any) -> None:
        self.phone = phone
        self.serial, self.model = phone.serial, phone.model

    def screen_size(self) -> tuple[int, int]:
        size: tuple[int, int] = self.phone.screen_size()
        return size

    def screencap(self) -> np.ndarray:
        frame: np.ndarray = self.phone.screencap()
        return frame

    def tap(self, x: int, y: int) -> None:
        return None

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        return None

