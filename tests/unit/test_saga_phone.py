"""The saga phone: swipes in clock time, levels and cards, popups, the Back key,
forbidden buttons, the hint wiggle, capture latency, another app in front."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytest

from agent.device.base import AppControl, Device
from agent.device.clock import ManualClock
from agent.games.match3.saga.levels import greedy_move
from agent.games.match3.saga.phone import CHAT_PACKAGE, STORE_PACKAGE, SagaPhone, SagaTiming, Script, draw_scripts
from agent.games.match3.saga.rules import Cell, legal_swaps, matching_swaps, takes_effect

SIZE = (540, 1200)  # small frames keep the file fast; the layout scales with the screen
LEVELS = 5
OK_ACTIONS = ("collect", "close", "ok")


def seed_where(test: Callable[[list[Script]], bool]) -> int:
    return next(s for s in range(200) if test(draw_scripts(s, LEVELS)))


def phone(seed: int, **kw: object) -> SagaPhone:
    return SagaPhone(seed=seed, size=SIZE, clock=ManualClock(), levels=LEVELS, **kw)  # type: ignore[arg-type]


def clock(ph: SagaPhone) -> ManualClock:
    c = ph.clock
    assert isinstance(c, ManualClock)
    return c


def tap_button(ph: SagaPhone, action: str) -> None:
    b = next(b for b in ph.buttons if b.action == action)
    x0, y0, x1, y1 = b.box
    ph.tap((x0 + x1) // 2, (y0 + y1) // 2)


def dismiss(ph: SagaPhone) -> None:
    while ph.screen_kind == "dialog":
        tap_button(ph, next(b.action for b in ph.buttons if b.action in OK_ACTIONS))


def swipe(ph: SagaPhone, a: Cell, o: Cell, ms: int = 100) -> None:
    ph.swipe(*ph.cell_centre(*a), *ph.cell_centre(*o), ms)


def settle(ph: SagaPhone) -> None:
    clock(ph).advance(max(0.0, ph.settles_at - ph.clock.now()) + 0.001)


def greedy_until(ph: SagaPhone, done: Callable[[], bool], moves: int = 40) -> None:
    for _ in range(moves):
        if done():
            return
        dismiss(ph)
        if ph.screen_kind != "board":
            return
        m = greedy_move(ph.board, ph.level.colours, np.random.default_rng(0))
        assert m is not None
        swipe(ph, *m)
        settle(ph)
    assert done()


def plain_seed() -> int:
    return seed_where(lambda s: not s[0].daily and not s[0].offer)


def test_it_is_a_device_with_app_control():
    ph = phone(plain_seed())
    assert isinstance(ph, Device) and isinstance(ph, AppControl)
    frame = ph.screencap()
    assert frame.shape == (SIZE[1], SIZE[0], 3) and frame.dtype == np.uint8
    assert ph.screen_kind == "board" and ph.foreground() == ph.package
    t = ph.truth()
    assert t["tiles"] in ("real shots", "drawn") and t["level"] == 1 and t["moves_left"] == ph.level.moves
    assert "level 1" in ph.status_line() and t["tiles"] in repr(ph)
    kinds = ph.board_kinds
    assert len(kinds) == ph.level.rows and all(len(r) == ph.level.cols for r in kinds)
    x0, y0, x1, y1 = ph.board_bbox
    assert 0 <= x0 < x1 <= SIZE[0] and 0 <= y0 < y1 <= SIZE[1]


def test_a_matching_swipe_is_accepted_and_animates_in_clock_time():
    ph = phone(plain_seed())
    before_kinds = ph.board_kinds
    rest = ph.screencap()
    a, o = matching_swaps(ph.board)[0]
    t0 = ph.clock.now()
    swipe(ph, a, o, ms=100)
    assert ph.truth()["swipes_accepted"] == 1 and ph.truth()["moves_left"] == ph.level.moves - 1
    assert np.array_equal(ph.frame_at(t0), rest), "the finger is still down: nothing moved yet"
    mid_swap = ph.frame_at(t0 + 0.1 + ph.timing.swap_ms / 2000)
    assert not np.array_equal(mid_swap, rest)
    total = ph.animation_ms()
    assert total >= ph.timing.swap_ms + ph.timing.clear_ms + ph.timing.fall_ms
    assert ph.animating
    clock(ph).advance(0.1 + total / 1000 + 0.001)
    assert not ph.animating
    after = ph.screencap()
    assert ph.board_kinds != before_kinds
    assert not np.array_equal(after, rest) and not np.array_equal(after, mid_swap)
    assert ph.truth()["score"] > 0


def test_a_swap_that_matches_nothing_animates_and_is_undone():
    ph = phone(plain_seed())
    kinds = ph.board_kinds
    rest = ph.screencap()
    a, o = next(m for m in legal_swaps(ph.board) if not takes_effect(ph.board, *m))
    t0 = ph.clock.now()
    swipe(ph, a, o, ms=0)
    assert ph.truth()["swipes_undone"] == 1 and ph.truth()["moves_left"] == ph.level.moves
    assert ph.animation_ms() == pytest.approx(2 * ph.timing.swap_ms)
    assert not np.array_equal(ph.frame_at(t0 + ph.timing.swap_ms / 1000), rest)
    settle(ph)
    assert ph.board_kinds == kinds and np.array_equal(ph.screencap(), rest)


def test_a_swipe_while_the_board_moves_is_counted_and_ignored():
    ph = phone(plain_seed())
    a, o = matching_swaps(ph.board)[0]
    swipe(ph, a, o)
    kinds = ph.board_kinds
    m2 = matching_swaps(ph.board)[0]
    swipe(ph, *m2)
    t = ph.truth()
    assert t["swipes_while_moving"] == 1 and t["swipes_accepted"] == 1 and ph.board_kinds == kinds
    settle(ph)
    ph.swipe(5, 5, 100, 5, 50)  # above the board
    x, y = ph.cell_centre(0, 0)
    ph.swipe(x, y, x + 3, y, 50)  # too short
    assert ph.truth()["swipes_ignored"] == 2 and ph.truth()["swipes_while_moving"] == 1


def next_level(ph: SagaPhone) -> None:
    """Play the level to its card, and get past everything to the next level's board."""
    level = ph.level.number
    greedy_until(ph, lambda: ph.screen_kind != "board" and ph.screen_kind != "dialog")
    for _ in range(10):
        kind = ph.screen_kind
        if kind == "other_app":
            ph.launch(ph.package)
        elif kind == "ad":
            clock(ph).advance(ph.timing.ad_close_after_ms / 1000)
            tap_button(ph, "close_ad")
        elif kind == "card":
            tap_button(ph, "next")
        elif kind == "dialog":
            dismiss(ph)
        elif ph.level.number > level:
            return
    raise AssertionError("did not get to the next level")


def test_swipes_on_blockers_and_holes_are_ignored():
    ph = phone(plain_seed())
    next_level(ph)
    assert ph.level.number == 2 and ph.level.blockers, "levels after the first have crates"
    before = ph.truth()
    r, c, _ = ph.level.blockers[0]
    o = (r, c + 1) if c + 1 < ph.level.cols else (r, c - 1)
    swipe(ph, (r, c), o)
    swipe(ph, o, (r, c))  # a tile swiped onto a crate
    t = ph.truth()
    assert [t[k] - before[k] for k in ("swipes_ignored", "swipes_accepted", "swipes_undone")] == [2, 0, 0]  # type: ignore[operator]
    assert ph.board_kinds[r][c] == "#"
    holes = [(rr, cc) for rr, line in enumerate(ph.level.holes) for cc, ch in enumerate(line) if ch == "."]
    if holes:
        swipe(ph, holes[0], (holes[0][0], holes[0][1] + 1 if holes[0][1] + 1 < ph.level.cols else holes[0][1] - 1))
        assert ph.truth()["swipes_ignored"] == before["swipes_ignored"] + 3  # type: ignore[operator]


def test_the_level_completes_shows_its_card_and_next_starts_another_shape():
    seed = seed_where(lambda s: not s[0].ad_after and s[1].switch_after is None)
    ph = phone(seed)
    dismiss(ph)
    first_bbox, first_kinds = ph.board_bbox, ph.board_kinds
    greedy_until(ph, lambda: ph.screen_kind == "card")
    t = ph.truth()
    assert t["levels_completed"] == 1 and int(str(t["score"])) >= int(str(t["target"]))
    assert {b.action for b in ph.buttons} == {"share", "next"}
    card = ph.screencap()
    ph.back()  # the Back key does nothing on a level card
    w, h = SIZE
    ph.tap(w // 2, h - 5)  # off the card's buttons
    assert ph.screen_kind == "card" and ph.truth()["taps_ignored"] == 1
    assert np.array_equal(ph.screencap(), card)
    tap_button(ph, "share")
    assert ph.truth()["forbidden_taps"] == 1 and ph.foreground() == STORE_PACKAGE and ph.screen_kind == "other_app"
    ph.back()  # the store goes back to the game
    assert ph.screen_kind == "card"
    tap_button(ph, "next")
    dismiss(ph)
    assert ph.truth()["level"] == 2 and ph.screen_kind == "board"
    assert ph.board_bbox != first_bbox or len(ph.board_kinds) != len(first_kinds) or ph.level.holes != tuple(
        "o" * len(first_kinds[0]) for _ in first_kinds)  # fmt: skip


def test_out_of_moves_shows_retry_and_a_priced_offer():
    ph = phone(plain_seed())
    ph._level = dataclasses.replace(ph.level, target=10**9, moves=2)
    ph._moves_left = 2
    greedy_until(ph, lambda: ph.screen_kind == "card", moves=3)
    actions = {b.action for b in ph.buttons}
    assert actions == {"buy_moves", "retry"}
    assert any(b.forbidden and "$" in b.label for b in ph.buttons)
    ph.back()
    assert ph.screen_kind == "card" and ph.truth()["back_presses"] == 1
    tap_button(ph, "retry")
    assert ph.screen_kind in ("board", "dialog") and ph.truth()["retries"] == 1 and ph.truth()["score"] == 0


def test_an_offer_closes_with_its_x_or_back_and_buy_is_forbidden():
    seed = seed_where(lambda s: s[0].offer and not s[0].daily)
    ph = phone(seed)
    assert ph.screen_kind == "dialog"
    kinds = ph.board_kinds
    a, o = matching_swaps(ph.board)[0]
    swipe(ph, a, o)  # a dialog is modal: the board takes nothing
    assert ph.truth()["swipes_ignored"] == 1 and ph.board_kinds == kinds
    tap_button(ph, "buy")
    assert ph.truth()["forbidden_taps"] == 1 and ph.screen_kind == "other_app"
    ph.launch(ph.package)
    assert ph.screen_kind == "dialog" and ph.truth()["launches"] == 1
    tap_button(ph, "close")
    assert ph.screen_kind == "board" and ph.truth()["dialogs_closed"] == 1
    ph2 = phone(seed)
    ph2.back()
    assert ph2.screen_kind == "board" and ph2.truth()["dialogs_closed"] == 1 and ph2.truth()["back_presses"] == 1


def test_the_daily_bonus_needs_its_button():
    seed = seed_where(lambda s: s[0].daily)
    ph = phone(seed)
    assert ph.screen_kind == "dialog" and [b.label for b in ph.buttons] == ["Collect"]
    ph.back()
    assert ph.screen_kind == "dialog", "no X and no OK: Back does nothing"
    ph.tap(2, 2)
    assert ph.truth()["taps_ignored"] == 1
    tap_button(ph, "collect")
    assert ph.truth()["dialogs_closed"] == 1


def test_a_tip_shows_mid_level_over_the_board_and_ok_closes_it():
    seeds = [s for s in range(200) if (lambda sc: sc[0].tip_after is not None and not sc[0].daily
                                       and not sc[0].offer)(draw_scripts(s, LEVELS))][:8]  # fmt: skip
    for seed in seeds:
        ph = phone(seed)
        n = ph.script(1).tip_after
        assert n is not None
        for _ in range(n):
            assert ph.screen_kind == "board"
            m = greedy_move(ph.board, ph.level.colours, np.random.default_rng(0))
            assert m is not None
            swipe(ph, *m)
            settle(ph)
            if ph.screen_kind == "card":
                break  # the level completed before its tip: try another seed
        if ph.screen_kind == "card":
            continue
        assert ph.screen_kind == "dialog" and [b.label for b in ph.buttons] == ["OK"]
        x0, y0, x1, y1 = ph._dialogs[0].box
        bx0, by0, bx1, by1 = ph.board_bbox
        assert y0 < by1 and y1 > by0 and not ph._dialogs[0].dim, "over part of the board, not dimming it"
        ph.back()
        assert ph.screen_kind == "board" and ph.truth()["dialogs_closed"] == 1
        return
    raise AssertionError(f"every level of seeds {seeds} completed before its tip")


def test_the_ad_shows_its_x_after_a_while_and_install_is_forbidden():
    seed = seed_where(lambda s: s[0].ad_after and s[1].switch_after is None)
    ph = phone(seed)
    dismiss(ph)
    greedy_until(ph, lambda: ph.screen_kind == "card")
    tap_button(ph, "next")
    assert ph.screen_kind == "ad" and [b.action for b in ph.buttons] == ["install"]
    without_x = ph.screencap()
    ph.back()
    assert ph.screen_kind == "ad"
    clock(ph).advance(ph.timing.ad_close_after_ms / 1000)
    assert {b.action for b in ph.buttons} == {"install", "close_ad"}
    assert not np.array_equal(ph.screencap(), without_x)
    tap_button(ph, "install")
    assert ph.truth()["forbidden_taps"] == 1 and ph.foreground() == STORE_PACKAGE
    ph.launch(ph.package)
    tap_button(ph, "close_ad")
    assert ph.truth()["level"] == 2 and ph.screen_kind in ("board", "dialog")


def test_the_hint_wiggles_after_idle_while_the_board_stays_at_rest():
    ph = phone(plain_seed())
    kinds = ph.board_kinds
    t0 = ph.clock.now()
    early = [ph.frame_at(t0 + dt) for dt in (0.5, 1.0, 2.5)]
    assert all(np.array_equal(early[0], f) for f in early[1:])
    after = t0 + ph.timing.hint_after_ms / 1000
    frames = [ph.frame_at(after + dt) for dt in (0.05, 0.2, 0.35)]
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])
    assert not np.array_equal(frames[1], early[0])
    diff = np.abs(frames[0].astype(int) - frames[1].astype(int)).sum(2) > 0
    ys, xs = np.nonzero(diff)
    cell = (ph.board_bbox[2] - ph.board_bbox[0]) // ph.level.cols
    assert xs.max() - xs.min() <= 2 * cell and ys.max() - ys.min() <= 2 * cell, "one tile moves"
    assert ph.board_kinds == kinds and not ph.animating
    clock(ph).advance(after + 0.1 - ph.clock.now())
    a, o = matching_swaps(ph.board)[0]
    swipe(ph, a, o)
    settle(ph)
    t1 = ph.clock.now()
    assert np.array_equal(ph.frame_at(t1 + 0.1), ph.frame_at(t1 + 0.3)), "a swipe stops the wiggle"


def test_latency_moves_the_clock_and_the_frame_is_from_capture_start():
    ph = phone(plain_seed(), latency_ms=250.0)
    t0 = ph.clock.now()
    ph.screencap()
    assert ph.clock.now() == pytest.approx(t0 + 0.25)
    a, o = matching_swaps(ph.board)[0]
    t1 = ph.clock.now()
    swipe(ph, a, o, ms=0)
    frame = ph.screencap()
    assert np.array_equal(frame, ph.frame_at(t1)) and ph.clock.now() == pytest.approx(t1 + 0.25)
    with pytest.raises(ValueError):
        phone(0, latency_ms=-1.0)


def test_another_app_comes_in_front_once_and_launch_brings_the_game_back():
    seed = seed_where(lambda s: s[1].switch_after is not None and not s[0].ad_after)
    ph = phone(seed)
    dismiss(ph)
    greedy_until(ph, lambda: ph.screen_kind == "card")
    tap_button(ph, "next")
    greedy_until(ph, lambda: ph.foreground() == CHAT_PACKAGE)
    assert ph.screen_kind == "other_app" and ph.truth()["app_switches"] == 1
    shown = ph.screencap()
    kinds, level, score = ph.board_kinds, ph.truth()["level"], ph.truth()["score"]
    ph.swipe(100, 600, 300, 600, 100)
    assert ph.truth()["swipes_ignored"] == 1 and ph.board_kinds == kinds
    ph.launch("com.other.app")
    assert ph.foreground() == CHAT_PACKAGE
    ph.launch(ph.package)
    assert ph.foreground() == ph.package and ph.truth()["launches"] == 1
    assert ph.board_kinds == kinds and ph.truth()["level"] == level and ph.truth()["score"] == score
    assert not np.array_equal(ph.screencap(), shown)


def test_the_same_seed_plays_the_same_game():
    seed = plain_seed()
    a, b = phone(seed), phone(seed)
    for _ in range(3):
        m = matching_swaps(a.board)[0]
        swipe(a, *m)
        swipe(b, *m)
        settle(a)
        settle(b)
        assert a.board_kinds == b.board_kinds
    assert np.array_equal(a.screencap(), b.screencap())
    assert phone(seed + 1).board_kinds != a.board_kinds or phone(seed + 1).level != a.level


def test_timing_rejects_negative_values():
    with pytest.raises(ValueError):
        SagaTiming(swap_ms=-1)
    with pytest.raises(ValueError):
        SagaPhone(levels=0)


def test_without_shots_the_tiles_are_drawn(tmp_path):
    ph = phone(plain_seed(), shots=tmp_path)
    assert ph.truth()["tiles"] == "drawn"
    frame = ph.screencap()
    x0, y0, x1, y1 = ph.board_bbox
    assert frame[y0:y1, x0:x1].std() > 20


def _ocr_words(img: np.ndarray) -> str:
    pytesseract = pytest.importorskip("pytesseract")
    try:
        text = pytesseract.image_to_string(img, config="--psm 7")
    except pytesseract.TesseractNotFoundError:
        pytest.skip("no tesseract binary")
    return "".join(ch for ch in str(text).lower() if ch.isalnum() or ch in "$+.")


def test_buttons_and_the_header_read_with_a_real_ocr_engine():
    seed = seed_where(lambda s: s[0].daily and s[0].offer)
    ph = phone(seed)
    seen = []
    for _ in range(2):  # the daily bonus, then the offer
        frame = ph.screencap()
        for b in ph.buttons:
            if b.round_:
                continue  # a drawn X, not text
            x0, y0, x1, y1 = b.box
            got = _ocr_words(frame[y0:y1, x0:x1])
            want = "".join(ch for ch in b.label.lower() if ch.isalnum() or ch in "$+.")
            assert want in got, (b.label, got)
            seen.append(b.label)
        tap_button(ph, "collect" if ph.buttons[0].action == "collect" else "close")
    assert seen == ["Collect", "Buy"]
    frame = ph.screencap()
    from agent.games.match3.saga.screens import header_boxes

    boxes = header_boxes(*SIZE)
    x0, y0, x1, y1 = boxes["moves"]
    assert _ocr_words(frame[y0:y1, x0:x1]) == f"moves{ph.level.moves}"
    x0, y0, x1, y1 = boxes["level"]
    assert _ocr_words(frame[y0:y1, x0:x1]) == "level1"


def test_the_shots_folder_comes_from_the_argument_or_the_environment(tmp_path, monkeypatch):
    from agent.games.match3.saga.looks import SHOTS_ENV, shots_dir

    (tmp_path / "realshots" / "bbb").mkdir(parents=True)
    assert shots_dir(tmp_path) == tmp_path / "realshots"
    assert shots_dir(tmp_path / "realshots") == tmp_path / "realshots"
    monkeypatch.setenv(SHOTS_ENV, str(tmp_path / "elsewhere"))
    assert shots_dir() == tmp_path / "elsewhere"
    assert phone(plain_seed(), shots=tmp_path).truth()["tiles"] == "drawn", "a bbb folder without crops"
