"""Timing fitted to the phone: a board at rest by its kinds, a slow phone, a hint that wiggles.

The plain simulated phone is used with wrappers that make it behave as real phones do:
a screencap that costs hundreds of milliseconds, and one tile that wiggles for ever as a
game's idle hint does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.game import GAME, Match3Player, Match3Sim
from agent.games.match3.rules import Match3Config
from agent.games.match3.sim import AnimationTiming, SimPhone
from agent.games.match3.sim_profile import sim_game_profile
from agent.games.match3.solver import GreedySolver
from agent.play.guards import Guards
from agent.play.loop import PlayLoop, PlayOptions
from agent.play.pacing import CaptureMeter, Timeouts, at_rest_between
from agent.simphone.latency import SlowCapture
from agent.vision.settle import SettleSettings


class Wiggle:
    """The phone with one tile that never stops moving (a hint), a few pixels either way."""

    def __init__(self, phone: SimPhone, cell: tuple[int, int] = (2, 3)) -> None:
        self.phone, self.cell, self.n = phone, cell, 0
        self.serial, self.model = phone.serial, phone.model
        self.swipes_while_moving = 0

    def screen_size(self):
        return self.phone.screen_size()

    def screencap(self):
        frame = self.phone.screencap().copy()
        self.n += 1
        x0, y0, x1, y1 = self.phone.layout.board_bbox
        pitch = (x1 - x0) // self.phone.config.cols
        r, c = self.cell
        cx, cy = x0 + c * pitch, y0 + r * pitch
        shift = 4 if self.n % 2 else -4  # the tile sways by a few pixels: still itself
        tile = frame[cy:cy + pitch, cx:cx + pitch].copy()
        frame[cy:cy + pitch, cx:cx + pitch] = np.roll(tile, shift, axis=1)
        return frame

    def tap(self, x, y):
        self.phone.tap(x, y)

    def swipe(self, x1, y1, x2, y2, duration_ms=200):
        if self.phone.animating:
            self.swipes_while_moving += 1
        self.phone.swipe(x1, y1, x2, y2, duration_ms)


def loop_for(phone, device, moves, **options):
    return PlayLoop(device, GAME, sim_game_profile(phone), Match3Player(phone.config, GreedySolver()), phone.clock,
                    options=PlayOptions(moves=moves, **options), status_reader=Match3Sim().status_reader(phone))


def test_a_hint_that_wiggles_for_ever_does_not_keep_the_board_from_being_at_rest():
    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=4, clock=ManualClock())
    device = Wiggle(phone)
    summary = loop_for(phone, device, moves=15).run()
    assert summary.moves == 15 and summary.stop_kind == "limit"
    assert device.swipes_while_moving == 0
    # every swipe was a swap the game took
    assert all(g.applied for g in phone.gesture_log) and len(phone.outcomes) == 15


@pytest.mark.parametrize("latency_ms", [300, 800])
def test_a_slow_screencap_never_swipes_on_a_moving_board_and_every_swipe_is_taken(latency_ms):
    clock = ManualClock()
    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=9, clock=clock)
    slow = SlowCapture(phone, clock, latency_ms / 1000)
    summary = loop_for(phone, slow, moves=12).run()
    assert summary.moves == 12 and summary.stop_kind == "limit"
    assert all(g.applied for g in phone.gesture_log)
    assert len(phone.outcomes) == 12  # no swipe ignored
    for g in phone.gesture_log:  # none while the board still moved from the move before
        assert g.move is not None
    assert summary.checks.get("not_applied", 0) == 0
    # the waits were fitted: the capture cost is what the phone charged
    assert summary.capture_ms == pytest.approx(latency_ms, rel=0.01)
    # a move's cycle: its animation plus a few captures, not a fixed poll
    timing = phone.timing
    longest = timing.swap_ms + 4 * (timing.clear_ms + timing.fall_ms)
    assert summary.median_cycle_s * 1000 <= longest + 5 * latency_ms


def test_capture_meter_is_the_median_of_recent_captures():
    clock = ManualClock()
    costs = iter([0.1, 0.1, 0.9, 0.1, 0.1])

    def capture():
        clock.sleep(next(costs))
        return np.zeros((4, 4, 3), np.uint8)

    meter = CaptureMeter(capture, clock)
    for _ in range(5):
        meter()
    assert meter.count == 5 and meter.cost_s == pytest.approx(0.1)  # one slow frame does not count


def test_timeouts_scale_with_the_capture_cost_and_keep_their_floors():
    settle = SettleSettings()
    fast = Timeouts.fitted(0.0, settle, 1.0, 5.0, 0.2)
    assert (fast.change_s, fast.settle_s, fast.unreadable_s) == (1.0, settle.timeout_s, 5.0)
    slow = Timeouts.fitted(0.8, settle, 1.0, 5.0, 0.2)
    assert slow.change_s == pytest.approx(0.2 + 3.2) and slow.settle_s == pytest.approx(9.6)
    assert slow.poll_s == 0.0  # a capture that slow is its own pause


def _read(text: str, conf: float = 0.9):
    from agent.games.base import BoardRead
    from agent.vision.classify import Reading

    labels = [list(row) for row in text.split()]
    reading = Reading(labels, np.full((len(labels), len(labels[0])), conf, np.float32))
    return BoardRead(None, reading, "?" not in text, text, True)  # a few unknown: still playable


def test_at_rest_needs_the_same_kinds_and_few_cells_moving():
    a = _read("ABC BCA CAB")
    moved = np.zeros((3, 3), bool)
    assert at_rest_between(a, _read("ABC BCA CAB"), moved, 0.5) == 1
    assert at_rest_between(a, _read("ABC BCA CBA"), moved, 0.5) == 0  # a kind changed
    one = moved.copy()
    one[1, 1] = True
    assert at_rest_between(a, _read("ABC BCA CAB"), one, 0.5) == 1  # a hint on one tile
    many = moved.copy()
    many[:, 0] = True
    assert at_rest_between(a, _read("ABC BCA CAB"), many, 0.5) == 0  # a column falling
    # moving and unsure: at rest only once it has held a while (the loop's DOUBT_HOLD_S)
    assert at_rest_between(a, _read("ABC BCA CAB", conf=0.3), one, 0.5) == 2
    unknown = _read("ABC B?A CAB")
    assert at_rest_between(unknown, _read("ABC B?A CAB"), one, 0.5) == 2
    # a hint's glow pulsing over its tile: read unknown, then its kind, then unknown again
    assert at_rest_between(unknown, a, one, 0.5) == 2 and at_rest_between(a, unknown, one, 0.5) == 2
    assert at_rest_between(_read("?BC B?A CAB"), a, one, 0.5) == 0  # two: a swap, not a hint
    assert at_rest_between(unknown, _read("ABC BBA CAB"), one, 0.5) == 2
    assert at_rest_between(_read("ABC BCA CA?"), _read("ABC BBA CAB"), one, 0.5) == 0  # a kind changed too
    # the glow's tile read as a look of its own: at rest if that tile moved, not otherwise
    assert at_rest_between(a, _read("ABC BDA CAB"), one, 0.5) == 2
    assert at_rest_between(a, _read("ABC BDA CAB"), moved, 0.5) == 0


def test_guards_see_the_same_tap_over_and_over_and_a_screen_that_stays():
    g = Guards(stuck_after_s=60, same_tap_limit=3)
    assert not g.tap_repeats("h1", (10, 10)) and not g.tap_repeats("h1", (10, 10))
    assert g.tap_repeats("h1", (10, 10))
    g.progress()
    assert not g.tap_repeats("h1", (10, 10))
    assert not g.tap_repeats("h2", (10, 10)) and not g.tap_repeats("h1", (10, 10))
    assert g.same_screen_for(0.0, "s") == 0.0 and g.same_screen_for(61.0, "s") == 61.0
    assert g.same_screen_for(62.0, "t") == 0.0


def test_animation_timing_is_untouched_by_the_slow_wrapper():
    clock = ManualClock()
    phone = SimPhone(seed=1, clock=clock, timing=AnimationTiming())
    slow = SlowCapture(phone, clock, 0.25)
    t0 = clock.now()
    slow.screencap()
    assert clock.now() - t0 == pytest.approx(0.25)
    with pytest.raises(ValueError):
        SlowCapture(phone, clock, -1)


class StillWithALine:
    """After the first swipe the board's pixels move for `moving_s` (an effect over it, a
    slow phone catching up), then rest for good with three like tiles in a row that the
    game never clears (an obstacle the reader takes for a tile's look)."""

    def __init__(self, phone: SimPhone, moving_s: float) -> None:
        self.phone, self.moving_s = phone, moving_s
        self.serial, self.model = phone.serial, phone.model
        self.swiped_at: float | None = None
        self.frozen: np.ndarray | None = None

    def screen_size(self):
        return self.phone.screen_size()

    def screencap(self):
        if self.swiped_at is None:
            return self.phone.screencap()
        if self.phone.clock.now() - self.swiped_at < self.moving_s:
            frame = self.phone.screencap().copy()
            x0, y0, x1, y1 = self.phone.layout.board_bbox
            frame[y0:y1, x0:x1] = np.roll(frame[y0:y1, x0:x1], int(self.phone.clock.now() * 50) % 40 + 5, axis=1)
            return frame
        if self.frozen is None:
            frame = self.phone.screencap().copy()
            x0, y0, x1, _ = self.phone.layout.board_bbox
            pitch = (x1 - x0) // self.phone.config.cols
            tile = frame[y0:y0 + pitch, x0:x0 + pitch].copy()
            for c in (1, 2):
                frame[y0:y0 + pitch, x0 + c * pitch:x0 + (c + 1) * pitch] = tile
            self.frozen = frame
        return self.frozen

    def tap(self, x, y):
        pass

    def swipe(self, x1, y1, x2, y2, duration_ms=200):
        if self.swiped_at is None:
            self.phone.swipe(x1, y1, x2, y2, duration_ms)
            self.swiped_at = self.phone.clock.now()


def test_a_board_that_moved_past_the_settle_time_then_rests_as_read_is_read_twice_before_any_stop():
    """A game of levels: the board moved (by its pixels) until after the settle time, then
    reads the same at rest though the rules see a line in it. One read is no proof that it
    never rests: it is read again, and the same board twice is at rest as read. The move is
    checked on it; the swipes after it, which the frozen game ignores, are checked too and
    learned from, never made again and again."""
    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=4, clock=ManualClock())
    device = StillWithALine(phone, moving_s=sim_game_profile(phone).settle.timeout_s + 0.5)
    loop = loop_for(phone, device, moves=20, level_life=True, handle_screens=False)
    summary = loop.run()
    assert device.frozen is not None  # the board came to rest with its line
    assert summary.stop_kind != "not_at_rest", summary.stop_reason
    assert summary.checks.get("unverified", 0) <= 1, summary.checks  # the first move: the line it left
    assert summary.checks.get("not_applied", 0) >= 1, summary.checks
    assert summary.stop_kind == "failed_checks" and summary.moves < 20, summary.stop_reason


def test_two_reads_agree_wherever_both_read_a_cell():
    """Reads past the settle time are the same board when they differ only where one of them
    read a cell unknown (a sparkle over it): such a board is at rest as read."""
    from agent.play.loop import _agree

    assert _agree("AB.\nC?D", "AB.\nCED") and _agree("?B.\nCED", "AB.\nC?D")
    assert not _agree("AB.\nCFD", "AB.\nCED")  # a cell read as two tiles: the board changed
    assert not _agree("AB.\nCED", "AB\nCED.")


def test_a_counter_read_0_once_after_a_move_is_read_again_before_the_next_swipe():
    """A game of levels: the header's counter reads 0 once after a move (the level's end,
    or an OCR slip). A swipe then would be one the game ignores if the level is over; the
    agent reads the header again first, and plays on when the number comes back."""
    from agent.games.base import Status

    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=4, clock=ManualClock())
    events: list[str] = []
    real = Match3Sim().status_reader(phone)
    assert real is not None

    class Recording:
        serial, model = phone.serial, phone.model

        def screen_size(self):
            return phone.screen_size()

        def screencap(self):
            return phone.screencap()

        def tap(self, x, y):
            phone.tap(x, y)

        def swipe(self, x1, y1, x2, y2, duration_ms=200):
            events.append("swipe")
            phone.swipe(x1, y1, x2, y2, duration_ms)

    def reader(frame):
        status = real(frame)
        if events.count("swipe") == 2 and not phone.animating and "zero" not in events:
            events.append("zero")  # the slip: one reading of 0 after the second move
            return Status(moves_left=0, score=None if status is None else status.score)
        events.append("read")
        return status

    loop = PlayLoop(Recording(), GAME, sim_game_profile(phone), Match3Player(phone.config, GreedySolver()),
                    phone.clock, options=PlayOptions(moves=4, level_life=True, handle_screens=False),
                    status_reader=reader)  # fmt: skip
    summary = loop.run()
    assert summary.moves == 4, summary.stop_reason
    after = events[events.index("zero") + 1:]
    assert after and after[0] == "read", events  # the header read again before any swipe


class Glow(Wiggle):
    """The phone with a light pulsing over one tile (a hint's glow): every other capture the
    tile is washed out, and reads unknown."""

    def screencap(self):
        frame = self.phone.screencap().copy()
        self.n += 1
        if self.n % 2:
            x0, y0, x1, _ = self.phone.layout.board_bbox
            pitch = (x1 - x0) // self.phone.config.cols
            r, c = self.cell
            cx, cy = x0 + c * pitch, y0 + r * pitch
            tile = frame[cy:cy + pitch, cx:cx + pitch]
            tile[:] = (0.3 * tile + 0.7 * 255).astype(np.uint8)
        return frame


def test_a_hint_whose_glow_makes_its_tile_read_unknown_now_and_then_does_not_keep_the_board_moving():
    """Two reads that differ only in one tile, read unknown in one of them, are a hint
    glowing over that tile, not a board that moves (before: the board never rested, and
    the run stopped on "an unknown screen" with the board in front of it)."""
    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=4, clock=ManualClock())
    device = Glow(phone)
    profile = sim_game_profile(phone)
    assert "?" in profile.read(device.screencap()).text or "?" in profile.read(device.screencap()).text
    summary = loop_for(phone, device, moves=10).run()
    assert summary.moves == 10 and summary.stop_kind == "limit", summary.stop_reason
    assert device.swipes_while_moving == 0


class Counting(Wiggle):
    """A phone that counts the swipes made while its board still moved (and no wiggle)."""

    def screencap(self):
        return self.phone.screencap()

    def back(self):
        self.phone.back()


def _saga_level(world: int, level: int):
    """A family world's phone showing the board of `level` at rest, and its calibration."""
    from test_saga_family import level_board

    from agent.vision.frames import calibrate_frames

    ph = level_board(world, level)
    assert ph.screen_kind == "board"
    # no tip over the board, no other app in front: these tests are about the board
    ph._scripts = [dataclasses.replace(sc, tip_after=None, switch_after=None) for sc in ph._scripts]
    return ph, calibrate_frames([ph.screencap()], "match3").profile


def _saga_loop(ph, device, profile, moves: int) -> PlayLoop:
    options = {o.name: o.default for o in GAME.screen.options}
    return PlayLoop(device, GAME, profile, GAME.screen.player(profile, options, 0), ph.clock,
                    options=PlayOptions(moves=moves, level_life=True, handle_screens=False))  # fmt: skip


class ThroughTheHoles(Counting):
    """What shows through the board's holes changes at every capture (a sky, a scene),
    and still reads as the holes."""

    def __init__(self, phone, profile) -> None:
        super().__init__(phone)
        self.profile, self.n = profile, 0

    def screencap(self):
        frame = self.phone.screencap().copy()
        self.n += 1
        x0, y0, x1, y1 = self.profile.board_bbox
        rows, cols = self.profile.rows, self.profile.cols
        for r, c in np.argwhere(self.phone.level.hole_mask()):
            ya, yb = y0 + (y1 - y0) * r // rows, y0 + (y1 - y0) * (r + 1) // rows
            xa, xb = x0 + (x1 - x0) * c // cols, x0 + (x1 - x0) * (c + 1) // cols
            frame[ya:yb, xa:xb] = np.clip(frame[ya:yb, xa:xb].astype(int) + (10 if self.n % 2 else -10), 0, 255)
        return frame


def test_what_shows_through_a_boards_holes_is_not_the_board_moving():
    """A diamond board whose twelve holes show a scene that changes at every frame: a cell
    read empty for a while on a board whose pieces fall is a hole, and its pixels are not
    the board's (before: the board never rested, and no move was made)."""
    from agent.play.pacing import Motion

    ph, profile = _saga_level(5, 2)
    device = ThroughTheHoles(ph, profile)
    a, b = device.screencap(), device.screencap()
    holes = ph.level.hole_mask()
    moved = Motion(profile.board_bbox, profile.rows, profile.cols, profile.settle.threshold).between(a, b)
    assert int(holes.sum()) == 12 and moved[holes].all() and not moved[~holes].any()
    for frame in (a, b):
        assert (np.array(profile.read(frame).labels)[holes] == ".").all()  # the holes, whatever shows there
    summary = _saga_loop(ph, device, profile, moves=1).run()
    assert summary.moves == 1 and summary.stop_kind == "limit", summary.stop_reason
    assert device.swipes_while_moving == 0


@pytest.mark.parametrize("world, level", [(11, 2), (19, 3)])
def test_cut_corners_that_the_panels_border_crosses_are_holes_not_a_colour(world, level):
    """A board with cut corners over a smooth scene: the board's panel has a border, and
    it runs across the cells of the cut corners. The cut corners look alike (the same
    scene, the same border), yet they are no colour of the board: they are nearer the
    scene beside them than to one another (before: four of them read as a colour kind,
    and on the second world eight; there the corners are so many that they pull down what
    counts as smooth, which is measured against the cells that hold an object)."""
    ph, profile = _saga_level(world, level)
    holes = ph.level.hole_mask()
    labels = np.array(profile.read(ph.screencap()).labels)
    assert int(holes.sum()) == 12
    assert ((labels == ".") == holes).all(), labels


def test_a_crate_of_its_own_look_in_a_block_of_crates_is_no_hole():
    """A block of crates, one of them riveted (no twin on the board): nearer the crates
    it stands among than the scene behind the board, it is one more obstacle, not a hole
    (before: read as a hole, over a scene of about its colour)."""
    ph, profile = _saga_level(3, 1)
    assert not ph.level.hole_mask().any()
    labels = np.array(profile.read(ph.screencap()).labels)
    assert not (labels == ".").any(), labels


@pytest.mark.parametrize("world, level", [(1, 2), (10, 3)])
def test_a_board_whose_hint_glows_over_a_fast_sky_is_played_never_while_it_moves(world, level):
    """Cut corners over a sky that drifts fast, and a hint that glows after a few idle
    seconds: a glow starting right after a swipe is not the move's change (before: the
    move was checked on a board that had not yet reacted, and the next swipe came while
    it moved); the swiped tiles must move first."""
    ph, profile = _saga_level(world, level)
    assert ph.level.hole_mask()[[0, 0, -1, -1], [0, -1, 0, -1]].all()
    ph._motion._speed = 40.0  # type: ignore[union-attr]  # a sky that moves fast
    device = Counting(ph)
    summary = _saga_loop(ph, device, profile, moves=4).run()
    assert summary.moves == 4 and summary.stop_kind == "limit", summary.stop_reason
    assert device.swipes_while_moving == 0



def test_a_profile_grown_from_the_board_just_read_does_not_hold_up_the_move():
    """A look learned from the board at rest is read with at once: the move is chosen on
    that read, not put off for another look at the board (before: a learner that adopted
    something at every look, such as one more exemplar of an empty slot, kept the loop
    reading the same board until every class name was taken, and the run crashed)."""
    phone = SimPhone(Match3Config(variant="classic", move_budget=100), seed=4, clock=ManualClock())
    device = Glow(phone)  # its glowing tile reads unknown now and then: a look to learn
    loop = loop_for(phone, device, moves=6, learn=True)
    grown: list[int] = []

    def learn_looks(frame, read):
        loop.adopt(dataclasses.replace(loop.profile), "a look seen again and again is learned as a class", classes=[])
        grown.append(loop.summary.moves)
        return read

    loop.screens.learn_looks = learn_looks  # type: ignore[method-assign]
    summary = loop.run()
    assert grown, "the learner was never asked"
    assert summary.moves == 6 and summary.stop_kind == "limit", summary.stop_reason
    assert len(grown) <= 3 * summary.moves  # asked about the boards the moves were made on, not again and again
