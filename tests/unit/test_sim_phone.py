"""The simulated phone: layout, sprites, header reading, gestures, animation, determinism."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from agent.device.base import Device
from agent.device.clock import ManualClock, RealClock
from agent.games.match3.sim import AnimationTiming, SimPhone
from agent.simphone.sizes import SCREEN_SIZES, parse_size
from agent.errors import GestureError
from agent.games.match3.board import EMPTY, MAX_TYPES, Board, Move
from agent.games.match3.hud import Hud, read_hud
from agent.games.match3.render import (
    DrawTile,
    background,
    layout_for,
    render,
    render_board,
    sprite,
)
from agent.games.match3.rules import Match3Config, apply_move, has_match, matching_swaps, new_game

SIZES = list(SCREEN_SIZES.values())


def centre(phone: SimPhone, r: int, c: int) -> tuple[int, int]:
    x, y = phone.layout.cell_center(r, c)
    return int(x), int(y)


def swipe_move(phone: SimPhone, move: Move, duration_ms: int = 100) -> None:
    x1, y1 = centre(phone, move.row, move.col)
    x2, y2 = centre(phone, *move.other)
    phone.swipe(x1, y1, x2, y2, duration_ms)


def first_clearing_move(board: Board) -> Move:
    move = next(matching_swaps(board), None)
    assert move is not None, "test seed should have a matching swap"
    return move


def inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    return outer[0] <= inner[0] < inner[2] <= outer[2] and outer[1] <= inner[1] < inner[3] <= outer[3]


# -- clock --------------------------------------------------------------------------
def test_manual_clock_moves_only_when_told():
    clock = ManualClock(5.0)
    assert clock.now() == 5.0
    clock.sleep(0.25)
    clock.advance(1)
    clock.sleep(-3)  # like time.sleep(0): returns, changes nothing
    assert clock.now() == pytest.approx(6.25)
    with pytest.raises(ValueError):
        clock.advance(-1)
    real = RealClock()
    assert real.now() <= real.now()


# -- layout -------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES + [(800, 1280), (2400, 1080), (480, 854)])
@pytest.mark.parametrize("shape", [(8, 8), (9, 7), (6, 10), (12, 12)])
def test_layout_fits_every_screen(size, shape):
    w, h = size
    rows, cols = shape
    lay = layout_for(w, h, rows, cols)
    x0, y0, x1, y1 = lay.board_bbox
    screen = (0, 0, w, h)
    assert inside(lay.board_bbox, screen) and inside(lay.panel_bbox, screen)
    assert inside(lay.board_bbox, lay.panel_bbox)
    assert (x1 - x0, y1 - y0) == (cols * lay.cell_px, rows * lay.cell_px)
    assert abs(x0 - (w - x1)) <= 1, "board is centred horizontally"
    assert y0 >= lay.header_bbox[3] and lay.panel_bbox[1] >= lay.header_bbox[3], "board sits below the header"
    for box, panel in ((lay.steps_box, lay.steps_panel), (lay.score_box, lay.score_panel)):
        assert inside(box, panel) and inside(panel, lay.header_bbox)
    assert lay.steps_panel[2] <= lay.score_panel[0]
    # Each cell's centre maps back to the cell.
    for r, c in [(0, 0), (rows - 1, cols - 1), (rows // 2, cols // 3)]:
        assert lay.cell_at(*lay.cell_center(r, c)) == (r, c)
    assert lay.cell_at(x0 - 1, y0) is None and lay.cell_at(x1, y1 - 1) is None


def test_layout_uses_the_limiting_dimension():
    tall, wide = layout_for(1080, 2400), layout_for(2400, 1080)
    assert tall.cell_px * 8 > 0.85 * 1080  # width-limited: nearly full width
    assert wide.cell_px * 8 < 0.8 * 1080  # height-limited: the header takes its share
    with pytest.raises(ValueError):
        layout_for(100, 100)


# -- sprites ------------------------------------------------------------------------
def _body(kind: int, cell: int = 120) -> tuple[np.ndarray, np.ndarray]:
    s = sprite(kind, cell)
    mask = s.alpha > 0.5
    mean = s.bgr[mask].astype(np.float32).mean(axis=0) / 255
    lab = cv2.cvtColor(mean.reshape(1, 1, 3), cv2.COLOR_BGR2Lab)[0, 0]
    return lab, mask


def test_sprites_differ_in_colour_and_shape():
    bodies = [_body(k) for k in range(MAX_TYPES)]
    for (i, (lab_i, m_i)), (j, (lab_j, m_j)) in itertools.combinations(enumerate(bodies), 2):
        delta_e = float(np.linalg.norm(lab_i - lab_j))
        assert delta_e > 30, f"tiles {i} and {j} are only {delta_e:.1f} apart in Lab"
        iou = (m_i & m_j).sum() / (m_i | m_j).sum()
        assert iou < 0.9, f"tiles {i} and {j} have nearly the same shape (IoU {iou:.2f})"


def test_sprites_have_gaps_and_are_cached():
    for k in range(MAX_TYPES):
        s = sprite(k, 100)
        assert s.bgr.shape == (100, 100, 3) and s.alpha.shape == (100, 100)
        # Transparent border all round, so neighbouring tiles never touch.
        assert s.alpha[:3].max() < 0.05 and s.alpha[:, :3].max() < 0.05
        assert s.alpha[50, 50] > 0.99
        assert sprite(k, 100) is s


# -- frames -------------------------------------------------------------------------
def test_render_board_draws_tiles_and_bare_panel_for_empty_cells():
    lay = layout_for(720, 1280)
    rng = np.random.default_rng(3)
    board = new_game(Match3Config(), rng).board
    cells = board.cells.copy()
    cells[2, 5] = EMPTY
    holed = Board(cells)
    full = render_board(lay, board, Hud(10, 0))
    frame = render_board(lay, holed, Hud(10, 0))
    assert frame.shape == (1280, 720, 3) and frame.dtype == np.uint8
    bg = background(lay)
    x0, y0 = lay.board_bbox[:2]
    c = lay.cell_px
    cell = np.s_[y0 + 2 * c : y0 + 3 * c, x0 + 5 * c : x0 + 6 * c]
    assert np.array_equal(frame[cell], bg[cell]), "an empty cell shows the bare panel"
    assert not np.array_equal(full[cell], bg[cell])
    other = np.s_[y0 : y0 + c, x0 : x0 + c]
    assert np.array_equal(frame[other], full[other])


def test_tiles_are_clipped_to_the_board():
    lay = layout_for(1080, 2400)
    x, _ = lay.cell_center(0, 3)
    _, y_above = lay.cell_center(-0.5, 3)  # half a tile above the board, as when dropping in
    frame = render(lay, [DrawTile(1, x, y_above)], Hud(5, 0))
    bg = background(lay)
    top = lay.board_bbox[1]
    plain = render(lay, [], Hud(5, 0))
    assert np.array_equal(frame[:top], plain[:top]), "nothing is drawn above the board"
    assert not np.array_equal(frame[top:], bg[top:])


def test_game_over_card_covers_the_board_centre():
    lay = layout_for(1080, 2400)
    board = new_game(Match3Config(), np.random.default_rng(0)).board
    plain, over = render_board(lay, board, Hud(0, 50)), render_board(lay, board, Hud(0, 50), game_over=True)
    x0, y0, x1, y1 = lay.board_bbox
    cy, cx = (y0 + y1) // 2, (x0 + x1) // 2
    assert not np.array_equal(plain[cy, cx], over[cy, cx])
    assert np.array_equal(plain[y0 : y0 + lay.cell_px], over[y0 : y0 + lay.cell_px]), "only the centre is covered"
    assert read_hud(over, lay) == Hud(0, 50)


# -- HUD ----------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_hud_round_trip(size):
    lay = layout_for(*size)
    board = new_game(Match3Config(), np.random.default_rng(1)).board
    for hud in [Hud(30, 0), Hud(0, 7), Hud(1, 10), Hud(7, 111), Hud(118, 4096), Hud(45, 9876543), Hud(None, 820)]:
        frame = render_board(lay, board, hud)
        assert read_hud(frame, lay) == hud
        # Still readable after the lossy compression a video or screen stream adds.
        ok, jpg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 70])
        assert ok and read_hud(cv2.imdecode(jpg, cv2.IMREAD_COLOR), lay) == hud


def test_hud_unreadable_returns_none():
    lay = layout_for(1080, 2400)
    assert read_hud(np.zeros((2400, 1080, 3), np.uint8), lay) is None
    assert read_hud(np.zeros((100, 100, 3), np.uint8), lay) is None
    assert read_hud(background(lay).copy(), lay) is None  # a header with no numbers


# -- gestures -----------------------------------------------------------------------
def make_phone(**kw) -> SimPhone:
    kw.setdefault("clock", ManualClock())
    kw.setdefault("timing", AnimationTiming.instant())
    return SimPhone(**kw)


def test_sim_phone_is_a_device():
    phone = make_phone(size=(720, 1280), serial="sim-7", model="m")
    assert isinstance(phone, Device)
    assert phone.screen_size() == (720, 1280) and phone.serial == "sim-7" and phone.model == "m"
    frame = phone.screencap()
    assert frame.shape == (1280, 720, 3) and frame.dtype == np.uint8
    assert phone.screencap() is not frame, "every capture is a fresh array"


@pytest.mark.parametrize("move", [Move(3, 3, "R"), Move(3, 3, "L"), Move(3, 3, "U"), Move(3, 3, "D")])
def test_swipe_between_centres_swaps(move):
    config = Match3Config()
    phone = make_phone(config=config, seed=11)
    rng = np.random.default_rng(11)
    expected = apply_move(config, new_game(config, rng), move, rng)
    swipe_move(phone, move)
    assert phone.board == expected.state.board
    assert phone.state == expected.state
    assert phone.gesture_log[-1].move == move and phone.gesture_log[-1].applied
    assert len(phone.outcomes) == 1


def test_swipe_reads_a_gesture_like_a_touch_screen():
    phone = make_phone(seed=2)
    c = phone.layout.cell_px
    x, y = centre(phone, 4, 4)
    start = phone.board
    phone.swipe(x, y, x + c // 3 - 1, y, 50)  # under a third of a cell
    phone.swipe(x, y, x + 3, y + c // 3, 50)  # vertical dominates, still too short
    phone.swipe(x, phone.layout.header_bbox[3] - 5, x, y, 50)  # starts outside the board
    phone.swipe(*centre(phone, 0, 0), centre(phone, 0, 0)[0], 5, 50)  # up from the top row: no neighbour
    assert phone.board == start and not phone.outcomes
    assert [g.move for g in phone.gesture_log] == [None] * 4
    # A short flick from the edge of a cell counts, and goes by the dominant axis.
    x0, y0 = phone.layout.board_bbox[:2]
    phone.swipe(x0 + 4 * c + 2, y0 + 4 * c + 2, x0 + 4 * c + 2 + 5, y0 + 4 * c + 2 + c // 2, 50)
    assert phone.gesture_log[-1].move == Move(4, 4, "D")


def test_swipe_during_animation_does_nothing():
    clock = ManualClock()
    phone = SimPhone(seed=4, clock=clock)  # default timing: moves take time
    move = first_clearing_move(phone.board)
    swipe_move(phone, move, duration_ms=100)
    after_first = phone.state
    assert phone.animating
    clock.advance(0.2)
    assert phone.animating
    swipe_move(phone, Move(0, 0, "R"))
    assert phone.state == after_first and phone.gesture_log[-1].move is None
    clock.advance(phone.settles_at - clock.now())
    assert not phone.animating
    swipe_move(phone, Move(0, 0, "R"))
    assert phone.gesture_log[-1].move == Move(0, 0, "R")


def test_bad_gesture_coordinates_raise():
    phone = make_phone()
    w, h = phone.screen_size()
    for args in [(-1, 10, 10, 10), (10, 10, w, 10), (10, h, 10, 10), (10.5, 10, 20, 10), (10, 10, 20, "5")]:
        with pytest.raises(GestureError):
            phone.swipe(*args, 100)
    for args in [(w, 0), (0, -1), (1.0, 2)]:
        with pytest.raises(GestureError):
            phone.tap(*args)
    with pytest.raises(GestureError):
        phone.swipe(10, 10, 20, 10, -5)
    phone.tap(5, 5)
    assert phone.gesture_log[-1].kind == "tap" and phone.gesture_log[-1].move is None


def test_gesture_log_keeps_the_last_gestures_with_counters_of_all():
    from agent.simphone.phone import GESTURE_LOG_SIZE

    phone = make_phone(size=(720, 1280))
    for i in range(GESTURE_LOG_SIZE + 250):
        phone.tap(i % 720, 3)
    phone.swipe(1, 1, 2, 2, 10)
    assert len(phone.gestures) == GESTURE_LOG_SIZE and len(phone.gesture_log) == GESTURE_LOG_SIZE
    assert (phone.taps, phone.swipes, phone.gesture_count) == (GESTURE_LOG_SIZE + 250, 1, GESTURE_LOG_SIZE + 251)
    assert phone.gestures[0].points == (251, 3)  # 1251 gestures: the first 251 are gone
    assert phone.gesture_log[-1].kind == "swipe"


def test_gesture_log_size_must_be_positive():
    from agent.simphone.phone import SimDevice

    with pytest.raises(ValueError, match="keep_gestures"):
        SimDevice((720, 1280), "m", "s", keep_gestures=0)
    assert SimDevice((720, 1280), "m", "s", keep_gestures=2).gestures.maxlen == 2


@pytest.mark.parametrize("duration", [float("nan"), float("inf"), -1, 60_001, 10**12, "100", None, True])
def test_swipe_duration_must_be_a_bounded_number(duration):
    phone = make_phone()
    with pytest.raises(GestureError, match="0..60000"):
        phone.swipe(10, 10, 20, 20, duration)
    assert phone.swipes == 0 and not phone.gestures
    phone.swipe(10, 10, 20, 20, 60_000)  # the bound itself is a swipe
    assert phone.swipes == 1


# -- animation ----------------------------------------------------------------------
def test_animation_plays_in_clock_time_and_settles_on_the_still_board():
    clock = ManualClock(100.0)
    timing = AnimationTiming()
    phone = SimPhone(seed=5, clock=clock, timing=timing)
    lay = phone.layout
    before = phone.screencap()
    move = first_clearing_move(phone.board)
    swipe_move(phone, move, duration_ms=100)
    outcome = phone.outcomes[-1]
    assert outcome.phases, "a matching swap clears"
    start = 100.1
    total = timing.swap_ms + len(outcome.phases) * (timing.clear_ms + timing.fall_ms)
    assert phone.settles_at == pytest.approx(start + total / 1000)

    # While the finger is down nothing has moved yet.
    assert np.array_equal(phone.screencap(), before)
    clock.advance(0.1)
    f0 = phone.screencap()
    clock.advance(0.05)
    f1 = phone.screencap()
    assert phone.animating
    assert not np.array_equal(f0, f1), "the swap is in motion"

    # Every frame on the way keeps the header clear of tiles.
    bg = background(lay)
    top = lay.board_bbox[1]
    keep = np.ones((top, lay.width), bool)
    for box in (lay.steps_box, lay.score_box):
        keep[box[1] : box[3], box[0] : box[2]] = False
    frames = []
    while clock.now() < phone.settles_at:
        frame = phone.screencap()
        assert np.array_equal(frame[:top][keep], bg[:top][keep])
        frames.append(frame)
        clock.advance(0.03)
    final_still = render_board(lay, phone.board, phone.hud, game_over=phone.game_over)
    assert not any(np.array_equal(f, final_still) for f in frames[:3])
    assert not phone.animating
    assert np.array_equal(phone.screencap(), final_still)
    assert read_hud(phone.screencap(), lay) == Hud(outcome.state.steps_left, outcome.state.score)


def test_hud_counts_up_during_the_cascade():
    clock = ManualClock()
    timing = AnimationTiming()
    phone = SimPhone(seed=5, clock=clock, timing=timing)
    swipe_move(phone, first_clearing_move(phone.board), duration_ms=0)
    lay = phone.layout
    clock.advance(timing.swap_ms / 2000)
    mid_swap = read_hud(phone.screencap(), lay)
    assert mid_swap == Hud(29, 0), "the step is spent as the swap starts, points come with the pop"
    clock.advance(timing.swap_ms / 2000 + timing.clear_ms / 2000)
    assert read_hud(phone.screencap(), lay).score > 0


def test_capture_time_is_spent_on_the_clock():
    clock = ManualClock()
    phone = SimPhone(clock=clock, timing=AnimationTiming(capture_ms=250))
    phone.screencap()
    phone.screencap()
    assert clock.now() == pytest.approx(0.5)


# -- determinism and variants -------------------------------------------------------
def test_same_seed_same_moves_same_game():
    phones = [SimPhone(seed=9, clock=ManualClock(), timing=AnimationTiming()) for _ in range(2)]
    frames: list[list[np.ndarray]] = [[], []]
    for _ in range(4):
        move = first_clearing_move(phones[0].board)
        for p, shots in zip(phones, frames):
            swipe_move(p, move, duration_ms=80)
            p.clock.advance(0.25)
            shots.append(p.screencap())  # mid-animation
            p.clock.advance(p.settles_at - p.clock.now())
            shots.append(p.screencap())
    a, b = phones
    assert len(a.outcomes) == 4
    assert a.board == b.board and a.state == b.state
    assert all(np.array_equal(x, y) for x, y in zip(*frames))
    assert SimPhone(seed=10).board != SimPhone(seed=9).board


def test_classic_non_matching_swap_changes_nothing_and_costs_nothing():
    config = Match3Config(variant="classic")
    clock = ManualClock()
    timing = AnimationTiming()
    phone = SimPhone(config=config, seed=3, clock=clock, timing=timing)
    board = phone.board
    dud = next(
        m
        for m in (Move(r, c, d) for r in range(8) for c in range(7) for d in "R")
        if board[m.row, m.col] != board[m.other] and not has_match(board.swapped(m))
    )
    state, still = phone.state, phone.screencap()
    swipe_move(phone, dud, duration_ms=0)
    assert phone.gesture_log[-1].move == dud and not phone.gesture_log[-1].applied
    assert phone.state == state and not phone.outcomes
    # It slides there and back.
    assert phone.settles_at == pytest.approx(2 * timing.swap_ms / 1000)
    clock.advance(timing.swap_ms / 1000)
    assert not np.array_equal(phone.screencap(), still)
    clock.advance(timing.swap_ms / 1000)
    assert np.array_equal(phone.screencap(), still)
    # the header counts the moves left in the budget, and a dud spends none
    assert read_hud(still, phone.layout) == Hud(config.move_budget, 0)
    # A matching swap is a move.
    good = first_clearing_move(phone.board)
    swipe_move(phone, good, duration_ms=0)
    assert phone.state.moves_made == 1 and phone.gesture_log[-1].applied
    clock.advance(10)
    assert read_hud(phone.screencap(), phone.layout).steps == config.move_budget - 1


def test_game_over_stops_play_and_shows_the_card():
    config = Match3Config(start_steps=1)
    phone = make_phone(config=config, seed=6)
    swipe_move(phone, Move(0, 0, "R"))
    assert phone.game_over == (phone.state.steps_left <= 0)
    assert phone.animating, "the finger is still down"
    phone.clock.advance(0.1)
    assert not phone.animating
    if phone.game_over:
        frame = phone.screencap()
        assert np.array_equal(frame, render_board(phone.layout, phone.board, phone.hud, game_over=True))
        assert not np.array_equal(frame, render_board(phone.layout, phone.board, phone.hud))
        swipe_move(phone, Move(1, 1, "R"))
        assert phone.gesture_log[-1].move is None and len(phone.outcomes) == 1
    else:  # pragma: no cover - only if the seed's first swap made a 4-match
        pytest.fail("pick a seed whose first swap does not give steps back")


def test_parse_size():
    for name, size in SCREEN_SIZES.items():
        assert parse_size(name) == size
    assert parse_size(" 800X1280 ") == (800, 1280)
    for bad in ["1080", "1080x", "x2400", "10x10", "1080*2400", "-1x5"]:
        with pytest.raises(ValueError, match="1080x2400|160"):
            parse_size(bad)
