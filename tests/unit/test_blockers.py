"""Blockers known as blockers from what the screen and the game show.

Calibration on a still board (a colour kind never lies three in a line at rest; a block
of one repeated object is no picture behind the board), and in play (a cell that keeps
its look while its column falls is no tile; a new look where a blocker stood is a look
of that blocker), on the saga family's boards and on synthetic ones.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.hints import ROLE_HINTS
from agent.games.match3.saga import SagaPhone
from agent.games.match3.saga.family import world_of
from agent.vision.calibrate import calibrate_frame
from agent.vision.classify import EMPTY_LABEL
from agent.vision.ocr import ocr_unavailable_reason
from test_calibrate import Look, jpeg, random_kinds, synthetic

SAFE = ("play_level", "play", "collect", "ok", "close", "resume", "next")


def board_of(world: int, seed: int, size: tuple[int, int] | None = None, levels: int = 2) -> SagaPhone:
    """The phone of `world` showing its first board at rest."""
    ph = SagaPhone(seed=seed, size=size or world_of(world).size, clock=ManualClock(), levels=levels, world=world)
    for _ in range(10):
        if ph.screen_kind == "board":
            break
        b = sorted((b for b in ph.buttons if not b.forbidden and b.action in SAFE), key=lambda b: SAFE.index(b.action))[0]
        ph.tap((b.box[0] + b.box[2]) // 2, (b.box[1] + b.box[3]) // 2)
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    clock.advance(max(0.0, ph.settles_at - clock.now()) + 0.5)
    assert ph.screen_kind == "board"
    return ph


def learning_handler(profile):
    """The play loop's screen handler on a stand-in loop that learns (`learn_from_move`):
    the loop, whose `profile` is the one adopted last and `why` the reasons, and the handler."""
    from types import SimpleNamespace

    from agent.play.screens import ScreenHandler

    class Loop(SimpleNamespace):
        def adopt(self, p: object, why: str, **fields: object) -> None:
            self.profile = p
            self.why.append(why)

    loop = Loop(profile=profile, options=SimpleNamespace(learn=True), screen=SimpleNamespace(role_hints=ROLE_HINTS),
                pending=None, why=[])  # fmt: skip
    return loop, ScreenHandler(loop)  # type: ignore[arg-type]


def blockers_in(rows: list[str]) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(rows) for c, v in enumerate(row) if v == "#"}


# -- calibration ------------------------------------------------------------------------------


def test_a_crate_block_whose_cracked_looks_join_its_colour_is_blockers():
    """World 6's first board: a 2x2 and a 3x2 block of crates, plain, cracked and banded.
    The plain crate's class has 3 of its 7 cells in a run, its cracked and banded looks
    join its colour (brown, beside the orange gems): the colour kind has most of its cells
    in runs, which no matchable colour has at rest. (Before: an orange tile and two
    orange specials, and the goal's crate icon read as a colour to collect.)"""
    ph = board_of(6, 6)
    truth = blockers_in(ph.board_kinds)
    assert len(truth) == 10
    cal = calibrate_frame(ph.screencap(), hints=ROLE_HINTS)
    kinds = cal.profile.kind_grid(cal.labels)
    assert blockers_in(["".join(row) for row in kinds]) == truth
    tiles = {cal.profile.kind_of(v) for row in cal.labels for v in row} - {"#"}
    assert len(tiles) == ph.level.colours


BLOCK = [(4, 2), (4, 3), (4, 4), (5, 2), (5, 3), (5, 4)]


def _crate(img: np.ndarray, box: tuple[int, int, int, int]) -> None:
    """A flat wooden crate filling its cell: a face, a rim and a diagonal plank."""
    x0, y0, x1, y1 = box
    cv2.rectangle(img, (x0 + 2, y0 + 2), (x1 - 3, y1 - 3), (40, 90, 150), -1)
    cv2.rectangle(img, (x0 + 2, y0 + 2), (x1 - 3, y1 - 3), (25, 55, 95), 2)
    cv2.line(img, (x0 + 4, y1 - 5), (x1 - 5, y0 + 4), (25, 55, 95), 2, cv2.LINE_AA)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_block_of_flat_crates_inside_the_board_is_no_hole(seed):
    """Flat crates are smooth, as holes over a scene out of focus are, and no tile kind
    of the board; but they repeat one another exactly, and two holes show two parts of
    the scene. (Before: the block was six holes, and a crate read as one forever after.)"""
    look = Look(background="soft", holes=[(0, 0), (0, 8)])
    frame, box = synthetic(random_kinds(9, 9, 5, seed=21 + seed), look, seed=seed)
    c = look.cell
    for r, k in BLOCK:
        _crate(frame, (box[0] + k * c, box[1] + r * c, box[0] + (k + 1) * c, box[1] + (r + 1) * c))
    cal = calibrate_frame(jpeg(frame), hints=ROLE_HINTS)
    assert (cal.board.rows, cal.board.cols) == (9, 9)
    got = {cal.labels[r][k] for r, k in BLOCK}
    assert len(got) == 1 and EMPTY_LABEL not in got
    assert cal.labels[0][0] == cal.labels[0][8] == EMPTY_LABEL
    assert cal.profile.role_of(got.pop()) == "blocker"  # and a block of six lies in runs


# -- in play: what never moves ---------------------------------------------------------------

ROLES = {"A": "tile", "B": "tile", "C": "tile", "D": "tile", "X": "tile"}


def _fall(column: str, cleared: int, new: str) -> str:
    """A column (top first) after the cell `cleared` is cleared: what is above falls one
    cell, past any X (a crate), and `new` comes in at the top."""
    cells = list(column)
    movable = [i for i, v in enumerate(cells) if v != "X" and i <= cleared]
    pieces = [cells[i] for i in movable if i != cleared]
    for i, v in zip(movable, [new, *pieces]):
        cells[i] = v
    return "".join(cells)


def _grid(columns: list[str]) -> list[list[str]]:
    return [list(row) for row in zip(*columns)]


def test_a_look_that_keeps_its_place_while_its_column_falls_is_fixed():
    from agent.vision.fixed import STAY_MOVES, FixedLooks, Move

    watch = FixedLooks()
    cols = ["ABXCDA", "BCXDAB", "CDXABC", "DABCDA"]
    # the agent has swapped A, B, C and D with each other: they move
    assert watch.observe(Move(_grid(cols), _grid(cols), ((0, 0), (0, 1)), True, False), ROLES) == []
    assert watch.movable == {"A", "B"}
    found: list[str] = []
    for move in range(STAY_MOVES):
        c = move % len(cols)
        after = list(cols)
        after[c] = _fall(cols[c], 4, "ABCD"[move])  # a match cleared the cell under the crate
        found += watch.observe(Move(_grid(cols), _grid(after), ((5, 0), (5, 1)), True, False), ROLES)
        assert found == ([] if move < STAY_MOVES - 1 else ["X"])
        cols = after
    assert "kept its place" in watch.evidence["X"]


def test_a_colour_the_game_has_moved_is_never_fixed():
    from agent.vision.fixed import STAY_MOVES, FixedLooks, Move

    watch = FixedLooks()
    cols = ["ABXCDA", "BCXDAB", "CDXABC", "DABCDA"]
    watch.observe(Move(_grid(cols), _grid(cols), ((2, 0), (3, 0)), True, False), ROLES)  # X swapped, and taken
    for move in range(2 * STAY_MOVES):
        after = list(cols)
        after[0] = _fall(cols[0], 4, "ABCD"[move % 4])
        assert watch.observe(Move(_grid(cols), _grid(after), ((5, 0), (5, 1)), True, False), ROLES) == []
        cols = after


def test_a_tile_that_kept_its_look_by_chance_but_mostly_fell_is_no_blocker():
    from agent.vision.fixed import STAY_MOVES, FixedLooks, Move

    watch = FixedLooks()
    # B at row 2 of column 0: one move it stays (the B above fell into its place), the
    # others it falls and shows another look
    b = ["ABBCDA", "DCBACD", "CABDAB"]
    for move in range(3 * STAY_MOVES):
        before = b[move % 3]
        after = _fall(before, 4, "D")
        assert watch.observe(Move(_grid([before, "ABCDAB"]), _grid([after, "ABCDAB"]), ((0, 1), (1, 1)), True,
                                  False), {"A": "tile", "B": "tile", "C": "tile", "D": "tile"}) == []  # fmt: skip


def test_swipes_the_game_ignored_on_a_look_beside_pieces_that_move_make_it_fixed():
    from agent.vision.fixed import REFUSED_MOVES, FixedLooks, Move

    watch = FixedLooks()
    board = [list("ABCD"), list("BCXA"), list("CDAB")]
    watch.observe(Move(board, board, ((0, 0), (0, 1)), True, False), ROLES)  # A and B moved
    found = []
    for _ in range(REFUSED_MOVES):
        found += watch.observe(Move(board, board, ((1, 2), (1, 1)), False, True), ROLES)  # X swiped with C
    assert found == []  # C never moved: which of the two refused is not known
    watch.observe(Move(board, board, ((0, 2), (0, 3)), True, False), ROLES)  # C moved
    for _ in range(REFUSED_MOVES):
        found += watch.observe(Move(board, board, ((1, 2), (1, 1)), False, True), ROLES)
    assert found == ["X"]


def test_a_new_look_where_a_blocker_stood_is_a_look_of_that_blocker():
    """A crate hit cracks where it is: the new look shows in cells that held the blocker
    on the board before the move. Judged by its hue alone, this one (drawn as many hues at
    once) would be a colourless special."""
    from dataclasses import replace

    from agent.games.match3.lookalike import make_case
    from agent.games.match3.lookalike.scene import COLOURLESS, Piece, render
    from agent.vision.grow import ClassGrower, relabel

    case = make_case("clean", 1)
    cal = calibrate_frame(case.frame, hints=ROLE_HINTS)
    crate = cal.reading.labels[0][0]
    profile = relabel(cal.profile, crate, crate, "blocker")  # (a look the agent knows as a blocker)
    cells = [(r, c) for r, row in enumerate(cal.reading.labels) for c, v in enumerate(row) if v == crate][:3]
    assert len(cells) == 3

    def frame_with(hit: list[tuple[int, int]], noise: int) -> np.ndarray:
        pieces = [list(r) for r in case.scene.pieces]
        for r, c in hit:
            pieces[r][c] = Piece(COLOURLESS, -1, "rainbow")
        img = render(replace(case.scene, pieces=tuple(tuple(r) for r in pieces)), np.random.default_rng(7))
        return (img.astype(np.int16) + np.random.default_rng(noise).integers(-2, 3, img.shape[:2])[..., None]).clip(
            0, 255).astype(np.uint8)  # fmt: skip

    f1, f2 = frame_with(cells[:2], 1), frame_with(cells[2:], 2)
    for held, role in (({rc: crate for rc in cells}, "blocker"), (None, "colourless")):
        grower = ClassGrower(profile)
        assert grower.observe(f1, profile.read(f1), held) is None
        out = grower.observe(f2, profile.read(f2), held)
        assert out is not None
        (letter,) = sorted(set(out.class_labels) - set(profile.class_labels))
        assert out.role_of(letter) == role
        if held:
            assert out.kinds[letter] == profile.kinds.get(crate, crate)  # the crate's own family


def test_crates_calibration_took_for_a_colour_become_blockers_as_the_board_falls_past_them():
    """World 0's second level scatters crates where tiles could lie, so calibration (and
    finding the board again) takes the crate for a brown tile. Matches under the crates
    make the tiles above fall past them; the play loop's handler sees the crates keep
    their place and makes their look a blocker. No colour is ever made one."""
    from types import SimpleNamespace

    from agent.games.match3.saga import rules as R
    from agent.vision.frames import calibrate_frames
    from agent.vision.relearn import find_again

    ph = board_of(0, 0)
    profile = calibrate_frames([ph.screencap()], "match3", hints=ROLE_HINTS).profile
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    ph._start_level(2, clock.now(), fresh=False)  # the next level, at once
    ph._moves_left = 99
    clock.advance(0.5)
    found = find_again(ph.screencap(), profile, ROLE_HINTS)
    profile = found.profile  # type: ignore[union-attr]
    crates = blockers_in(ph.board_kinds)
    assert crates and not any(profile.role_of(profile.read(ph.screencap()).labels[r][c]) == "blocker" for r, c in crates)

    loop, handler = learning_handler(profile)
    was_crate: set[str] = set()
    for _ in range(8):
        b = ph._board
        under = {(int(r), int(c)) for r, c in np.argwhere(b.blocker > 0)}

        def value(swap: tuple[tuple[int, int], tuple[int, int]]) -> int:
            wave = R.first_wave(b, *swap, ph.level.colours)  # a person's choice: clear under the crates
            return -99 if wave is None else 3 * sum(c == cc and r > cr + 1 for r, c in wave.cleared
                                                    for cr, cc in under) - len(wave.hits)  # fmt: skip

        a, o = max(R.matching_swaps(b), key=value)
        before = loop.profile.read(ph.screencap())
        was_crate |= {before.labels[r][c] for r, c in under}
        ph.swipe(*ph.cell_centre(*a), *ph.cell_centre(*o), 100)
        clock.advance(max(0.0, ph.settles_at - clock.now()) + 0.5)
        assert ph.screen_kind == "board"
        after = loop.profile.read(ph.screencap())
        pending = SimpleNamespace(labels=before.labels, swiped=(a, o), changed=True, text=str(before.labels))
        handler.learn_from_move(pending, SimpleNamespace(reading=after, text=str(after.labels)))
    made = {v for v in loop.profile.class_labels if loop.profile.role_of(v) == "blocker"}
    assert loop.why and made, "the crates' look became a blocker"
    assert made <= was_crate - {"?", "."}
    assert all(loop.profile.role_of(v) == "tile" for v in profile.class_labels if v not in was_crate)


@pytest.mark.parametrize("seed", [1, 5])
def test_a_piece_drawn_over_several_cells_is_a_blocker(seed):
    """A shelf of jars two cells wide, or a crate over four cells, comes out as a look per
    part, each always beside the other: no tile spans cells. (Before: the parts of the
    crate joined the orange colour as specials, the jars were two grey tiles.)"""
    from agent.games.match3.lookalike import make_case

    case = make_case("crates", seed)
    cal = calibrate_frame(case.frame, hints=ROLE_HINTS)
    kinds = cal.profile.kind_grid(cal.reading.labels)
    truth = ["".join(row) for row in case.truth.kinds]
    got = blockers_in(["".join(row) for row in kinds])
    assert got <= blockers_in(truth)  # no tile taken for one
    spanned = {(r, c) for r, row in enumerate(cal.reading.labels) for c, v in enumerate(row)
               if cal.profile.role_of(v) == "blocker"}  # fmt: skip
    assert len(spanned) >= 8 and spanned <= got
    for v in {cal.reading.labels[r][c] for r, c in spanned}:
        assert cal.profile.kinds.get(v, v) == v  # a kind of its own, no colour's


def test_a_look_left_in_a_line_on_a_board_at_rest_is_fixed_unless_the_game_moved_it():
    """The game clears any colour's line of three; a board that rests with a look in one
    shows that look matches nothing (world 7 level 2: a crate block, read as a brown
    tile once a cracked crate in its row read as the crate)."""
    from agent.vision.fixed import FixedLooks, Move

    before = [list("ABCD"), list("BXXA"), list("CDAB")]
    after = [list("ABCD"), list("BXXX"), list("CDAB")]
    watch = FixedLooks()
    watch.observe(Move(before, before, ((0, 0), (0, 1)), True, False), ROLES)
    assert watch.observe(Move(before, after, ((0, 2), (0, 3)), True, False), ROLES) == []  # not at rest: a beat
    assert watch.observe(Move(before, after, ((0, 2), (0, 3)), True, False, lines=3), ROLES) == ["X"]
    assert "in a line" in watch.evidence["X"]
    moved = FixedLooks()
    moved.observe(Move(before, before, ((1, 1), (0, 1)), True, False), ROLES)  # X was swapped, and taken
    assert moved.observe(Move(before, after, ((0, 2), (0, 3)), True, False, lines=3), ROLES) == []


def test_a_block_of_plain_and_cracked_crates_of_two_frequent_looks_is_blockers():
    """World 24's first board: a 3x3 and a 2x4 block of crates, plain and cracked, each
    look frequent enough to be a colour of its own (so never joined into one kind), and
    neither with half its cells in runs. Together they fill squares and lines, as two
    colours never do. (Before: an orange and a brown tile, and 17 crates to match.)"""
    ph = board_of(24, 24)
    truth = blockers_in(ph.board_kinds)
    assert len(truth) == 17
    cal = calibrate_frame(ph.screencap(), hints=ROLE_HINTS)
    assert blockers_in(["".join(row) for row in cal.profile.kind_grid(cal.labels)]) == truth


@pytest.mark.skipif(ocr_unavailable_reason() is not None, reason=str(ocr_unavailable_reason()))
def test_the_goal_beside_a_crate_icon_is_to_break_once_the_crate_is_a_blocker():
    """World 6's header shows a crate and "10". While the crate's look was a tile (before
    calibration knew it, or until play shows it never moves) the count read as a colour to
    collect; with the look a blocker, it is the blockers to break."""
    from agent.play.screens import blockers_from
    from agent.vision.frames import calibrate_frames
    from agent.vision.grow import relabel
    from agent.vision.header import header_reading
    from agent.vision.ocr import default_ocr
    from agent.vision.screen_facts import with_screen_facts

    ph = board_of(6, 6)
    frame = ph.screencap()
    assert ph.true_goal().kind == "break" and ph.true_goal().count == 10
    profile = with_screen_facts(calibrate_frames([frame], "match3", hints=ROLE_HINTS).profile, frame, ph.package)
    crates = [v for v in profile.class_labels if profile.role_of(v) == "blocker"]
    assert crates
    read = header_reading(profile, default_ocr())
    assert read is not None
    goal = read(frame).goal
    assert goal is not None and (goal.kind, goal.left, goal.piece) == ("break", 10, "#"), goal
    as_tiles = profile
    for v in crates:
        as_tiles = relabel(as_tiles, v, crates[0], "tile")
    read = header_reading(as_tiles, default_ocr())
    assert read is not None
    goal = read(frame).goal
    assert goal is not None and goal.kind == "collect" and goal.piece == crates[0], goal
    again = blockers_from(as_tiles, [crates[0]])
    assert all(again.role_of(v) == "blocker" for v in crates)
    read = header_reading(again, default_ocr())
    assert read is not None
    goal = read(frame).goal
    assert goal is not None and (goal.kind, goal.left) == ("break", 10), goal


@pytest.mark.parametrize("world, level", [(6, 2), (7, 2)])
def test_an_outer_line_of_copied_crates_and_cut_corners_under_the_header_are_the_boards(world, level):
    """Boards of the saga family with crates and cut corners, the header's badges just
    above their top row (world 6's level 2: an outer column of a gem and two crates among
    cut corners; world 7: cut corners under the header). A crate beside crates is
    blunt across the seam and plain inside, but an exact copy of another with an outline
    and something in its middle: a cell of the board, so the column is in (before: world
    6's board was read a column short). A cut corner's nearest cells outside are the
    header's badges: a smooth cell nearer some cell around the box than any board cell is
    a hole (before: read as a colour of tiles)."""
    from test_saga_family import level_board

    ph = level_board(world, level)
    frame = ph.screencap()
    profile = calibrate_frame(frame, hints=ROLE_HINTS).profile
    assert (profile.rows, profile.cols) == (ph.level.rows, ph.level.cols)
    read = np.array(profile.read(frame).labels) == EMPTY_LABEL
    assert (read == ph.level.hole_mask()).all(), (read.astype(int), ph.level.hole_mask().astype(int))


def test_looks_that_came_with_a_new_board_are_unproven_until_a_move_moves_them():
    """The cells the loop tells the player to be wary of: those of a special's look first
    seen with a new board (judged by its colour alone), until the game moves it; a new
    colour's tiles are never named (world 8: a new red avoided for a level), and a look
    that proves fixed is a blocker, no piece, and no longer named either."""
    from types import SimpleNamespace

    roles = {"J": "special", "K": "special"}
    profile = SimpleNamespace(class_labels=["A", "B", "G", "J", "K"], role_of=lambda v: roles.get(v, "tile"),
                              kind_of=lambda v: {"J": "A", "K": "B"}.get(v, v))  # fmt: skip
    loop, handler = learning_handler(profile)
    before = [list("ABJA"), list("BAKB"), list("ABJA")]
    assert handler.unproven_cells(before) == frozenset()
    handler.came_with_board(["G", "J", "K"])  # G: a new colour's tile, no suspect
    assert handler.unproven_cells(before) == {(0, 2), (1, 2), (2, 2)}
    assert handler.unproven_cells([list("GGJG")]) == {(0, 2)}
    after = [list("AJBA"), list("BAKB"), list("ABJA")]  # the game swapped J at (0,2) with B at (0,1)
    pending = SimpleNamespace(labels=before, swiped=((0, 2), (0, 1)), changed=True, text=str(before))
    handler.learn_from_move(pending, SimpleNamespace(reading=SimpleNamespace(labels=after), text=str(after)))
    assert handler.unproven_cells(after) == {(1, 2)}
    roles["K"] = "blocker"  # (what two ignored swipes of it would have taught)
    assert handler.unproven_cells(after) == frozenset()


def test_a_break_goals_icon_matched_to_a_look_the_game_has_moved_names_no_blocker():
    """An intro card's crate icon, read before the new board taught the crate's look,
    matched a colour's tile: made a blocker, that colour was unplayable and the level stuck
    (world 23). A look the game has moved is a piece: the goal keeps its count, not the
    match, and its blockers are those the board shows."""
    from types import SimpleNamespace

    from agent.play.loop import PlayLoop
    from agent.vision.goal import Goal

    moved = {"A", "C"}
    logged: list[dict[str, object]] = []
    loop = SimpleNamespace(profile=SimpleNamespace(kind_of=lambda v: {"H": "C"}.get(v, v)),
                           screens=SimpleNamespace(moved_looks=lambda: frozenset(moved)),
                           _goal_icons_doubted=set(), _log=lambda kind, **f: logged.append({"type": kind, **f}))  # fmt: skip
    crate_as_colour = Goal("break", target=8, left=8, piece="C")
    seen = PlayLoop._goal_as_seen(loop, crate_as_colour)  # type: ignore[arg-type]
    assert (seen.kind, seen.target, seen.left, seen.piece) == ("break", 8, 8, None)
    assert PlayLoop._goal_as_seen(loop, crate_as_colour).piece is None  # type: ignore[arg-type]
    assert [e["piece"] for e in logged if e["type"] == "goal_icon"] == ["C"]  # said once
    crate = Goal("break", target=8, left=8, piece="J")  # a look never moved: the goal's blocker
    assert PlayLoop._goal_as_seen(loop, crate) is crate  # type: ignore[arg-type]
    collect = Goal("collect", target=20, left=20, colour="C", piece="C")
    assert PlayLoop._goal_as_seen(loop, collect) is collect  # type: ignore[arg-type]
