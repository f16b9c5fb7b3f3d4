"""Match-3 behind the `Game` protocol: swaps chosen by a solver (the plan library's
multi-swap plans by default), swiped one swap at a time and each checked on screen."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.clock import Clock
from agent.games.base import (
    BoardRead,
    Check,
    Decision,
    Gesture,
    Learned,
    NoMove,
    Option,
    Settings,
    Status,
    StatusReader,
    Swipe,
)
from agent.games.match3.board import EMPTY, MAX_TYPES, UNKNOWN, Board, Move
from agent.games.match3.goal_board import (
    blocker_cells, blockers_of, bomb_cells, bombs_of, guesses_of, looks_of, unknown_looks, with_blockers,
)  # fmt: skip
from agent.games.match3.goal_play import GOAL_MODES, Aim, aim_for, goal_choice, made_by
from agent.games.match3.hints import ROLE_HINTS
from agent.games.match3.hud import MAX_STEPS
from agent.games.match3.reader import colour_kinds, label_types, read_board
from agent.games.match3.rules import VARIANTS, Match3Config, find_groups
from agent.games.match3.solver import SOLVERS, Choice, Solver, candidate_moves, evaluate, make_solver
from agent.games.match3.verify import at_rest, check_outcome
from agent.vision.goal import Goal
from agent.vision.grid import cell_centers
from agent.vision.hue_guess import guess_kinds
from agent.errors import ProfileError
from agent.vision.profile import GameProfile


def swipe_points(profile: GameProfile, move: Move) -> tuple[int, int, int, int]:
    centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)
    (r1, c1), (r2, c2) = move.cells()
    x1, y1 = (int(v) for v in centers[r1, c1])
    x2, y2 = (int(v) for v in centers[r2, c2])
    return x1, y1, x2, y2


def _swaps_after(choice: Choice) -> int:
    n, nxt = 0, choice.then
    while nxt is not None:
        n, nxt = n + 1, nxt.then
    return n


def config_for(profile: GameProfile, variant: str, start_steps: int = 30) -> Match3Config:
    """The rules for the board the profile describes: its size and its number of tile kinds."""
    types = label_types(profile).values()
    # Colour ids may skip letters (a profile of kinds A, C, F): the rules need every id.
    n_types = max(3, max(types, default=0) + 1)
    return Match3Config(variant=variant, rows=profile.rows, cols=profile.cols, n_types=min(n_types, 8),  # type: ignore[arg-type]
                        start_steps=start_steps)  # fmt: skip


def kind_ids(profile: GameProfile) -> dict[str, int]:
    """The profile's colour kinds (a goal's colour) -> the rules' colour ids."""
    return {profile.kind_of(lbl): i for lbl, i in label_types(profile).items()}


# A cell is taken for immovable (a blocker the calibration did not see as one) once this
# many swipes that should have moved it did nothing, while other swipes were taken.
IMMOVABLE_AFTER = 2
# A look of unknown kind is tried beside the goal's colour when the best swap does less
# than this for the goal (a colour bomb takes every tile of it, a dozen or more).
GOAL_FOR_A_TRY = 4
# Unknown pieces whose colour is guessed by hue, at most: more is a board partly hidden
# (a banner, a fade), whose hues say nothing of its pieces.
MAX_GUESSED = 12
# A trial swap of two cells is made this many times on a board at most, whatever the
# screen seemed to say of it (a taken try changes the pieces there; the same try again and
# again is a misreading).
MAX_TRIALS = 2
MAX_PROBES = 3  # probes of the rules that may come to nothing (ignored swipes) before it stops trying
PLAYER_VARIANTS: tuple[str, ...] = ("auto", *VARIANTS)
SCENES: tuple[str, ...] = ("plain", "saga")


Cell = tuple[int, int]
_SIDES = (("U", (-1, 0)), ("D", (1, 0)), ("L", (0, -1)), ("R", (0, 1)))


def _sides(cell: Cell, shape: tuple[int, ...]) -> list[tuple[str, int, int]]:
    """The cells beside `cell` inside a board of `shape`: (direction, row, column)."""
    out = []
    for d, (dr, dc) in _SIDES:
        rr, cc = cell[0] + dr, cell[1] + dc
        if 0 <= rr < shape[0] and 0 <= cc < shape[1]:
            out.append((d, rr, cc))
    return out


def _swap_try(a: np.ndarray, cell: Cell, d: str, other: Cell) -> Choice:
    """A swap that clears nothing the rules can foresee: its prediction is the swapped board."""
    swapped = a.copy()
    swapped[cell], swapped[other] = a[other], a[cell]
    return Choice(Move(cell[0], cell[1], d), 0, 0, 1, 0, (0, 0), Board(swapped))


def _trial_choice(board: Board, view: Board, avoided: set[tuple[int, int]] | frozenset[tuple[int, int]],
                  tried: set[frozenset[tuple[int, int]]] | None = None) -> Choice | None:  # fmt: skip
    """With no swap that matches by colour: a piece of unknown kind among tiles (a colour
    bomb the calibration never saw, played by swapping it) swapped with a tile beside it,
    to see what the game does with it. Only a piece with tiles on three sides or more: a
    cell at the board's edge read unknown is more often what shows through a hole. A swap
    the game refused (`tried`: its two cells) is not made again, but the piece's other
    sides are (a striped piece swaps only into a match of its colour)."""
    tried = tried or set()
    a = board.cells
    best: tuple[int, Choice] | None = None
    for r, c in zip(*np.nonzero(a == UNKNOWN)):
        cell = (int(r), int(c))
        if cell in avoided:
            continue
        tiles = [(d, rr, cc) for d, rr, cc in _sides(cell, a.shape) if view.cells[rr, cc] >= 0]
        if len(tiles) < 3:
            continue
        for d, rr, cc in tiles:
            if frozenset((cell, (rr, cc))) in tried:
                continue
            # A striped piece is swapped only into a match of its colour: first where it
            # lands beside two tiles of one kind in a line (a match if that is its colour);
            # a colour bomb swaps with anything, so any side is tried last.
            lined = _lines_through(view.cells, (rr, cc), cell)
            if best is None or lined > best[0]:
                best = (lined, _swap_try(a, cell, d, (rr, cc)))
    return None if best is None else best[1]


def _bomb_choice(board: Board, view: Board, aim: Aim | None,
                 avoided: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> tuple[Choice, int] | None:  # fmt: skip
    """The best swap of a colour bomb with a tile beside it, and what it does for a
    collect goal (the goal colour's tiles it takes): with the goal's colour when it
    can, else the colour with the most tiles. The prediction leaves every column it clears
    unknown down to its lowest cleared cell (what falls and drops in)."""
    a, cells = board.cells, view.cells
    best: tuple[tuple[int, int], Choice, int] | None = None
    for cell in sorted(bombs_of(board) - set(avoided)):
        for d, rr, cc in _sides(cell, a.shape):
            if cells[rr, cc] < 0 or (rr, cc) in avoided:
                continue
            kind = int(cells[rr, cc])
            cleared = {(int(r), int(c)) for r, c in zip(*np.nonzero(cells == kind))} | {cell}
            for_goal = len(cleared) - 1 if aim is not None and aim.kind == "collect" and aim.colour == kind else 0
            key = (for_goal, len(cleared))
            if best is not None and key <= best[0]:
                continue
            predicted = a.copy()
            for c in {c for _, c in cleared}:
                predicted[: max(r for r, cc2 in cleared if cc2 == c) + 1, c] = EMPTY
            best = (key, Choice(Move(cell[0], cell[1], d), len(cleared), 0, 1, 0, (len(cleared),), Board(predicted)),
                    for_goal)  # fmt: skip
    return None if best is None else (best[1], best[2])


def _look_trial(board: Board, view: Board, colour: int | None, tried: set[str],
                avoided: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> tuple[Choice, str] | None:  # fmt: skip
    """A piece of a look of unknown kind, not tried before, swapped with a tile of
    `colour` beside it (first where it lands in a line with two tiles of one kind), and
    its look."""
    if colour is None:
        return None
    a, cells = board.cells, view.cells
    best: tuple[int, Choice, str] | None = None
    for cell, look in looks_of(board):
        if look in tried or cell in avoided:
            continue
        for d, rr, cc in _sides(cell, a.shape):
            if cells[rr, cc] != colour or (rr, cc) in avoided:
                continue
            lined = _lines_through(cells, (rr, cc), cell)
            if best is None or lined > best[0]:
                best = (lined, _swap_try(a, cell, d, (rr, cc)), look)
    return None if best is None else (best[1], best[2])


def _lines_through(a: np.ndarray, at: tuple[int, int], leaving: tuple[int, int]) -> int:
    """Whether a piece set down at `at` (coming from `leaving`) would lie in a line of three
    with two tiles of one kind beside it, along a row or a column: 1 or 0."""
    rows, cols = a.shape
    r, c = at

    def kind(rr: int, cc: int) -> int:
        if not (0 <= rr < rows and 0 <= cc < cols) or (rr, cc) == leaving:
            return -9
        return int(a[rr, cc])

    for dr, dc in ((0, 1), (1, 0)):
        for pair in ((1, 2), (-1, -2), (-1, 1)):
            k1, k2 = kind(r + pair[0] * dr, c + pair[0] * dc), kind(r + pair[1] * dr, c + pair[1] * dc)
            if k1 >= 0 and k1 == k2:
                return 1
    return 0


def _hue_guesses(frame: np.ndarray, profile: GameProfile, read: Any, unknown: list[Cell]) -> tuple[tuple[Cell, int], ...]:
    """The colour ids that the hues of the board's `unknown` pieces name (a special never
    seen is drawn in its colour), for swaps tried when nothing else matches."""
    ids = kind_ids(profile)
    got = guess_kinds(frame, profile, read.reading.labels, unknown)
    return tuple((rc, ids[k]) for rc, k in sorted(got.items()) if k in ids)


def _guess_choice(config: Match3Config, view: Board, guesses: tuple[tuple[Cell, int], ...],
                  avoided: set[Cell] | frozenset[Cell], tried: set[frozenset[Cell]]) -> Choice | None:  # fmt: skip
    """With no swap that matches by colour: the swap that matches most once each unknown
    piece is read as the colour its hue names (a striped tile is its colour's tile with
    stripes), never one the game refused. A trial: the hue is a guess."""
    a = view.cells.copy()
    for (r, c), k in guesses:
        if a[r, c] == UNKNOWN and (r, c) not in avoided:
            a[r, c] = k
    if np.array_equal(a, view.cells):
        return None
    guessed = Board(a)
    best: Choice | None = None
    for move in candidate_moves(config, guessed):
        pair = move.cells()
        if frozenset(pair) in tried or any(rc in avoided for rc in pair):
            continue
        choice = evaluate(config, guessed, move)
        if choice.tiles_cleared > 0 and (best is None or choice.tiles_cleared > best.tiles_cleared):
            best = choice
    return best


def _masked(board: Board, cells: set[tuple[int, int]]) -> Board:
    """The board with `cells` unknown: the solver neither swaps nor matches them."""
    if not cells:
        return board
    a = board.cells.copy()
    for r, c in cells:
        if board.inside(r, c) and a[r, c] >= 0:
            a[r, c] = UNKNOWN
    return Board(a)


class Match3Player:
    """Asks the solver for a choice (a swap, or the first swap of a plan) and, when the
    screen showed a plan's swap exactly as predicted, plays the plan's next swap; any
    surprise drops the plan and the solver decides afresh.

    The rules are learned by watching (`variant="auto"`): until the game shows otherwise
    only swaps that match are played, since those are moves under every rule set; with no
    matching swap left, one swap that matches nothing is tried: undone, the game plays
    `classic` rules; taken, any swap is a move (`step`). Playing a named variant the game
    contradicts (a set-up swap undone) switches to the rules the screen showed. A cell
    that does not move when swiped, twice, is played as immovable.

    Given the level's goal (`set_goal`: collect a colour, break blockers), the swap is
    chosen by its progress towards the goal first and by the solver second
    (`goal_play.goal_choice`); `goal="off"` plays blind to it (the baseline), counting
    what its swaps did for the goal all the same. `kind_ids` maps the profile's colour
    kinds (a goal's colour) to the rules' colour ids."""

    def __init__(self, config: Match3Config, solver: Solver, variant: str | None = None,
                 kind_ids: Mapping[str, int] | None = None, goal: str = "auto") -> None:  # fmt: skip
        if goal not in GOAL_MODES:
            raise ValueError(f"goal is one of {', '.join(GOAL_MODES)}, not {goal!r}")
        self.solver = solver
        self.pursue_goal = goal == "auto"
        self._kind_ids = dict(kind_ids) if kind_ids is not None else {k: i for i, k in enumerate("ABCDEFGH")}
        self._goal: Goal | None = None
        self._aim: Aim | None = None
        self._goal_made = 0  # what the checked swaps did towards the goal (tiles of its colour, blocker hits)
        self._goal_pending = 0  # ... what the swap awaiting its check should do
        variant = variant or config.variant  # None: the rules the config names
        self.known_variant: str | None = None if variant == "auto" else variant
        # Unknown rules: play what is legal under all of them.
        self.config = config if variant != "auto" else replace(config, variant="classic")
        self._made: Choice | None = None  # the choice whose swipe is awaiting its check
        self._probe = False  # the swipe awaiting its check matches nothing: it tests the rules
        self._probes = 0  # probes that said nothing (the screen never moved): tried again, a few times
        self._probed = False
        self._moved = True  # the screen moved after the last swipe (the loop says; True if it does not)
        self._next: Choice | None = None  # a plan's next swap, once its previous one checked out
        self._refused: dict[tuple[int, int], int] = {}  # cell -> swipes that did not move it
        self._immovable: set[tuple[int, int]] = set()
        self._stale: tuple[str, set[tuple[int, int]]] | None = None  # a board and the cells that just refused
        self._trial = False  # the swipe awaiting its check tries a piece of unknown kind
        self._moved_kinds: set[int] = set()  # kinds the game has swapped on this board: pieces
        self._blamed: set[int] = set()  # kinds that refused a swipe, never seen swapped
        self._tried: set[frozenset[tuple[int, int]]] = set()  # trial swaps the game would not take
        self._trials: dict[frozenset[tuple[int, int]], int] = {}  # trial swaps made, by their two cells
        self._tried_looks: set[str] = set()  # looks of unknown kind swapped once beside a goal's colour
        self._wary: frozenset[tuple[int, int]] = frozenset()  # pieces no move has shown to be pieces (the loop says)
        self._evidence: list[str] = []
        self._learned_rules: dict[str, str] = {}  # what the screen showed, not what was given
        self._counts = {"tiles_cleared": 0, "steps_gained": 0, "steps_spent": 0, "points": 0}

    # -- learning ------------------------------------------------------------------
    def learned(self) -> Learned:
        return Learned(dict(self._learned_rules), tuple(sorted(self._immovable)), tuple(self._evidence))

    def wary_of(self, cells: frozenset[tuple[int, int]]) -> None:
        self._wary = frozenset(cells)

    def reset_board(self) -> None:
        self._refused.clear()
        self._immovable.clear()
        self._tried.clear()
        self._trials.clear()
        self._moved_kinds.clear()
        self._blamed.clear()
        self._stale, self._next = None, None

    def _learn_variant(self, variant: str, why: str) -> None:
        self.known_variant = variant
        self._learned_rules["variant"] = variant
        self.config = replace(self.config, variant=variant)  # type: ignore[arg-type]
        self._next = None
        self._evidence.append(why)

    def adopt(self, profile: GameProfile) -> None:
        """Play on with the profile the run learned since it began: a goal may name a colour
        learned on a later level's board (a grey tile first seen on level 2), and a goal
        whose colour had no id when read is aimed at once it has one."""
        self._kind_ids = kind_ids(profile)
        n_types = config_for(profile, self.config.variant).n_types
        if n_types > self.config.n_types:
            self.config = replace(self.config, n_types=n_types)
        self._aim = aim_for(self._goal, self._kind_ids)

    # -- the level's goal ----------------------------------------------------------
    def set_goal(self, goal: Goal | None) -> None:
        """The goal as last read. Another goal (kind, colour or target), or one with more
        left than before, is a new level's: its count starts again."""
        old = self._goal
        if goal is not None and (old is None or (goal.kind, goal.colour, goal.target) != (old.kind, old.colour, old.target)
                                 or (goal.left is not None and old.left is not None and goal.left > old.left)):  # fmt: skip
            self._goal_made = 0
        self._goal = goal
        self._aim = aim_for(goal, self._kind_ids)

    def goal_progress(self) -> dict[str, object]:
        """{"goal", "colour", "target", "left" (as read), "made" (what the agent's checked
        swaps did towards it: tiles of its colour cleared, or blocker hits; predicted, as
        tiles_cleared is), "pursued"}; {} with no goal."""
        g = self._goal
        if g is None:
            return {}
        return {"goal": g.kind, "colour": g.colour, "target": g.target, "left": g.left, "made": self._goal_made,
                "pursued": self.pursue_goal and self._aim is not None}  # fmt: skip

    # -- deciding ------------------------------------------------------------------
    def _avoided(self, board: Board) -> set[tuple[int, int]]:
        cells = set(self._immovable)
        if self._stale is not None and self._stale[0] == str(board):
            cells |= self._stale[1]  # the same board again: not the swipe it just ignored
        return cells

    def decide(self, board: Board) -> Decision[Move] | NoMove:
        planned, self._next = self._next, None
        aim = self._aim
        # the goal's blockers: those the profile knows, those the goal's icon names, and
        # cells that never moved when swiped
        known_blockers = blockers_of(board) | self._immovable | (aim.blockers_on(board) if aim is not None else frozenset())
        blockers = known_blockers
        if aim is not None and aim.kind == "break" and not blockers:
            # A break goal whose blockers the reading cannot tell: what it could not take
            # for a tile (a crate read as a hole or as unknown) may be them; aiming beside
            # a real hole costs little. (A guess to aim by: the trial swaps below still
            # try such a piece, which may be a colour bomb.)
            rs, cs = np.nonzero(np.isin(board.cells, (EMPTY, UNKNOWN)))
            blockers = frozenset((int(r), int(c)) for r, c in zip(rs, cs))
        # (a goal's piece is no tile to swipe; blind to the goal, the player sees the board as ever)
        pieces = aim.blockers_on(board) if aim is not None and self.pursue_goal else frozenset()
        avoided = self._avoided(board)
        # A line on a board at rest is a misreading (a crate read as a tile of the colour
        # beside it): no game leaves one. Its cells are played around, or any swap at all
        # would look like a match through it (world 11 swiped three swaps the game undid,
        # each "clearing" a cracked crate read as orange in a line of oranges).
        lined = {cell for g in find_groups(board) for cell in g.cells}
        view = _masked(board, avoided | pieces | lined)
        choice = planned
        if choice is None:
            # A cell that refused a swipe once is probably a blocker read as a tile (a
            # second refusal proves it, see _refused_by): swaps elsewhere come first, so
            # that proof costs no move while another swap is there to make.
            suspects = set(self._refused)  # (a cell that moved since is no longer there)
            # ... and first every cell of a kind that refused, never seen swapped: one crate
            # read as a tile of a colour of its own makes its fellows suspects (each would
            # refuse once, before: two refused swipes a level on a level of new crates)
            fellows = {(int(r), int(c)) for k in self._blamed for r, c in zip(*np.nonzero(board.cells == k))}
            # ... and before those, pieces of a look that came with this board and no move has
            # shown to move: judged by colour alone, a crate of a tile's colour passes for a
            # special of it (world 23: two such swipes ignored before it was known a blocker)
            tiers: list[set[Cell]] = []
            for tier in (suspects | fellows | self._wary, suspects | fellows, suspects):
                if tier and tier not in tiers:
                    tiers.append(tier)
            for wary_of in tiers:
                wary = _masked(board, avoided | pieces | lined | wary_of)
                choice = self.solver.choose(self.config, wary)
                if choice is not None:
                    view = wary
                    break
            if choice is None:
                choice = self.solver.choose(self.config, view)
        self._goal_pending = 0
        if aim is not None and self.pursue_goal:
            picked, got = goal_choice(self.config, view, blockers, aim, choice)
            if picked is not choice:
                planned = None  # the plan gives way to the goal
            choice = picked
            self._goal_pending = 0 if got is None else got.made
        elif aim is not None and choice is not None:
            self._goal_pending = made_by(aim, view, choice.move, blockers)
        bomb = _bomb_choice(board, view, aim if self.pursue_goal else None, avoided | known_blockers)
        if bomb is not None:
            better = (bomb[1] > self._goal_pending) if aim is not None and aim.kind == "collect" and self.pursue_goal \
                else (choice is None or bomb[0].tiles_cleared > choice.tiles_cleared)
            if better:
                choice, planned = bomb[0], None
                self._goal_pending = bomb[1] if aim is not None and aim.kind == "collect" else 0
        trial = False
        if aim is not None and aim.kind == "collect" and self.pursue_goal and self.config.variant == "classic":
            # A look no move has shown yet, beside the goal's colour: if it is a colour bomb
            # it takes every tile of that colour (worth more than any match); tried once a look
            curious = _look_trial(board, view, aim.colour, self._tried_looks, avoided | blockers)
            if curious is not None and self._goal_pending < GOAL_FOR_A_TRY:
                self._tried_looks.add(curious[1])
                choice, planned, trial, self._goal_pending = curious[0], None, True, 0
        self._probe = False
        if choice is None and self.config.variant == "classic":
            # Before a probe of the rules: a piece of unknown kind among tiles is the likelier
            # reason nothing matches (a colour bomb), and a game of classic rules takes it
            # where it undoes the probe (world 10: a probe undone, then the bomb taken).
            # First by the colour its hue names, then blind.
            choice = _guess_choice(self.config, view, guesses_of(board), known_blockers | avoided, self._tried)
            if choice is None:
                choice = _trial_choice(board, view, known_blockers | avoided, self._tried)
            trial = choice is not None
        if choice is None and self.known_variant is None and not self._probed:
            choice = self._probe_choice(view)
            self._probe = choice is not None
        self._trial = trial
        if choice is None:
            classic = self.config.variant == "classic"
            why = "no swap makes a match" if classic else "no legal swap"
            # A game reshuffles a board without a match; the loop waits for that.
            return NoMove(f"game over: {why}" if classic else why, finished=classic, wait=True)
        self._made = choice
        self._counts["steps_spent"] += choice.steps_spent
        goal = {"goal_predicted": self._goal_pending} if aim is not None and not self._probe else {}
        return Decision(
            choice.move, str(choice.move), continues_plan=planned is not None,
            fields={"predicted_cleared": choice.tiles_cleared, "predicted_gain": choice.steps_gained,
                    "plan_swaps_left": _swaps_after(choice), **({"probe": True} if self._probe else {}),
                    **({"trial": True} if trial else {}), **goal},
        )  # fmt: skip

    def _probe_choice(self, board: Board) -> Choice | None:
        step = replace(self.config, variant="step")
        moves = candidate_moves(step, board)
        return evaluate(step, board, moves[0]) if moves else None

    # -- checking ------------------------------------------------------------------
    def moved(self, changed: bool) -> None:
        self._moved = changed

    def check(self, before: Board, decision: Decision[Move], after: Board) -> Check:
        choice = self._made
        assert choice is not None and choice.move == decision.move, "check() follows decide()"
        self._made, probe, self._probe = None, self._probe, False
        trial, self._trial = self._trial, False
        c = check_outcome(before, choice, after)
        # What the rules predicted, for a person to compare: cells left to the refill (or
        # unknown) are '?', as the check leaves them out.
        expected = str(choice.predicted).replace(".", "?")
        fields: dict[str, object] = {"known": c.known_cells, "agreeing": c.agreeing, "expected": expected}
        moved, self._moved = self._moved, True
        self._forget_refusals(before, after)
        if probe:
            self._probed = True
            (r1, c1), (r2, c2) = choice.move.cells()
            swapped = after[r1, c1] == before[r2, c2] and after[r2, c2] == before[r1, c1]
            if (c.verdict != "not_applied" and not swapped) or (c.verdict == "not_applied" and not moved):
                # Changed, but not by the swap; or never moved (ignored, not undone): the
                # probe says nothing about the rules. Tried again, a few times.
                self._probes += 1
                self._probed = self._probes >= MAX_PROBES
                why = "the swipe was ignored (the screen never moved)" if c.verdict == "not_applied" else (
                    "the board changed, but not as the probing swap would")  # fmt: skip
                return Check("not_applied" if c.verdict == "not_applied" else "unexpected", why, fields)
            if c.verdict == "not_applied":
                self._learn_variant("classic", f"swap {choice.move}, which matches nothing, was undone: only "
                                               "swaps that match are moves (classic rules)")  # fmt: skip
            else:
                self._learn_variant("step", f"swap {choice.move}, which matches nothing, was taken: any swap is a "
                                            "move (step rules)")  # fmt: skip
            return Check("rules_changed", self._evidence[-1], {**fields, "variant": self.known_variant})
        if c.verdict == "not_applied" and moved and choice.tiles_cleared == 0 and self.config.variant == "step":
            self._learn_variant("classic", f"set-up swap {choice.move}, which matches nothing, was not taken: only "
                                           "swaps that match are moves (classic rules)")  # fmt: skip
            return Check("rules_changed", self._evidence[-1], {**fields, "variant": "classic"})
        if trial:
            # What the game did with the piece is the answer, not a move that failed its
            # prediction: taken (a colour bomb clears a colour, agent.vision.bombs), or not
            # (a striped piece swaps only into a match). A refused swap is not tried again,
            # wherever the board's reading goes (a look learned meanwhile changes its text).
            pair = frozenset(choice.move.cells())
            self._trials[pair] = self._trials.get(pair, 0) + 1
            if c.verdict != "not_applied":
                if self._trials[pair] >= MAX_TRIALS:
                    # (whatever the screen showed: a try made again and again is no try)
                    self._tried.add(pair)
                return Check(c.verdict, f"the game took the trial swap {choice.move}", fields, trial=True)
            self._tried.add(frozenset(choice.move.cells()))
            return Check("not_applied", f"the game did not take the trial swap {choice.move}: "
                         "it is not tried again", fields, trial=True)  # fmt: skip
        if c.verdict == "not_applied":
            self._refused_by(before, choice.move)
            if moved:  # seen moving and coming back: undone, not ignored
                self._suspect_partners(before, choice.move)
            self._blame(before, choice.move)
            fields["immovable"] = [list(rc) for rc in sorted(self._immovable)]
        elif c.verdict == "as_predicted":
            # Verified with the rest of the plan before its first swap.
            self._next = choice.next_on(after)
        if c.ok:
            for cell in choice.move.cells():
                self._refused.pop(cell, None)  # it moved
                if before[cell] >= 0:
                    self._moved_kinds.add(before[cell])
            self._blamed -= self._moved_kinds
            self._counts["tiles_cleared"] += choice.tiles_cleared
            self._counts["steps_gained"] += choice.steps_gained
            self._counts["points"] += choice.points
            self._goal_made += self._goal_pending
        self._goal_pending = 0
        return Check(c.verdict, c.detail, fields)

    def _blame(self, board: Board, move: Move) -> None:
        """The kind a refused swipe suspects: of its two cells' kinds, one the game never
        swapped on this board; of two such, the rarer on the board (a crate comes a few at
        a time, a colour everywhere)."""
        kinds = [board[rc] for rc in move.cells() if board[rc] >= 0 and board[rc] not in self._moved_kinds]
        if kinds:
            self._blamed.add(min(kinds, key=lambda k: int((board.cells == k).sum())))

    def _forget_refusals(self, before: Board, after: Board) -> None:
        """A cell whose tile turned into a tile of another colour from one board to the
        next holds another piece now (it fell, or was cleared and refilled): the swipes it
        refused were refused to another piece, and no blocker changes colour. (World 2: a
        cell that had refused two swipes at different moments, one of them with the sky
        through a cut corner read as a tile beside it, was played as immovable for the
        rest of the level, and the board's one move with it; the run stopped.)"""
        if before.cells.shape != after.cells.shape:
            return
        a, b = before.cells, after.cells
        rs, cs = np.nonzero((a != b) & (a >= 0) & (b >= 0))
        changed = {(int(r), int(c)) for r, c in zip(rs, cs)}
        for cell in changed & set(self._refused):
            del self._refused[cell]
        freed = sorted(changed & self._immovable)
        if freed:
            self._immovable -= set(freed)
            self._evidence.append(f"cells {', '.join(map(str, freed))} changed colour: no blockers, played again")

    def _suspect_partners(self, board: Board, move: Move) -> None:
        """A matching swap the game swapped and swapped back: its two pieces move, but the
        match it was to make may hold a piece that is no tile (in world 11 a 2x2 crate read
        as four tiles of two colours, whose pair three refused swaps would have lined up).
        The match's other cells are suspects as the swapped ones are: one that a second
        refused match needed is played as immovable, until it changes colour."""
        moved = set(move.cells())
        partners = {cell for g in find_groups(board.swapped(move)) if moved & set(g.cells) for cell in g.cells}
        for cell in sorted(partners - moved):
            self._count_refusal(cell, "was in {n} matches the game would not make: played as immovable "
                                      "(a blocker read as a tile)")  # fmt: skip

    def _refused_by(self, board: Board, move: Move) -> None:
        cells = move.cells()
        # every swipe ignored on this very board, not only the last: two refused moves in a
        # row must not lead back to the first
        same = self._stale is not None and self._stale[0] == str(board)
        self._stale = (str(board), set(cells) | (self._stale[1] if same and self._stale is not None else set()))
        for cell in cells:
            self._count_refusal(cell, "did not move when swiped {n} times: played as immovable (a blocker)")

    def _count_refusal(self, cell: tuple[int, int], why: str) -> None:
        """One more refusal for a cell; at IMMOVABLE_AFTER it is played as immovable, `why`
        ({n}: its refusals) saying so in the evidence."""
        self._refused[cell] = self._refused.get(cell, 0) + 1
        if self._refused[cell] >= IMMOVABLE_AFTER and cell not in self._immovable:
            self._immovable.add(cell)
            self._evidence.append(f"cell {cell} " + why.format(n=self._refused[cell]))

    def at_rest(self, before: Board, after: Board) -> bool:
        return at_rest(before, after)

    def finished(self, board: Board) -> str | None:
        return None  # the header (no steps left) or the solver (no swap) says when it is over

    def counts(self) -> dict[str, int]:
        return dict(self._counts)


class Match3Screen:
    role_hints = ROLE_HINTS
    has_levels = True  # a saga game is levels in a row: a level's end is not the run's (agent.play.levels)
    options = (
        Option("variant", "match3 rules: auto (learned by watching the game), step (any swap costs a step) or "
               "classic (only matching swaps).", choices=PLAYER_VARIANTS, default="auto", sim_default="step"),
        Option("solver", "plan (the plan library's multi-swap plans, each verified on the board), greedy (best "
               "single swap) or random.", choices=SOLVERS, default="plan"),
        Option("goal", "auto (read the level's goal and choose moves by it first) or off (play blind to it: the "
               "baseline a benchmark compares with).", choices=GOAL_MODES, default="auto"),
        Option("steps", "Simulated phone: steps at the start (step variant).", default=30, minimum=1,
               maximum=MAX_STEPS, sim_only=True),
        Option("scene", "Simulated phone: plain (drawn tiles, one board) or saga (a commercial-style game: levels "
               "of other shapes, specials, blockers, holes, dialogs and ads, tiles cut from real screenshots).",
               choices=SCENES, default="plain", sim_only=True),
        Option("world", "Simulated phone, saga scene: which game of the saga family (0: the first saga game; "
               "others differ in art, header words, goals, flows, ads and timings).", default=0, minimum=0,
               maximum=100_000, sim_only=True),
    )  # fmt: skip

    def check_profile(self, profile: GameProfile) -> None:
        # Refused before any move: a board of more kinds than the rules hold would fail on
        # the first frame read, mid-run.
        colours = colour_kinds(profile)
        if len(colours) > MAX_TYPES:
            raise ProfileError(
                f"the {profile.game} profile has {len(colours)} colour kinds "
                f"({', '.join(colours)}); the match-3 rules hold at most {MAX_TYPES}",
                hint="calibrate again on a still board (`agent calibrate --yes`), or give the classes of one "
                     "colour the same kind in the profile",
            )  # fmt: skip

    def read(self, frame: np.ndarray, profile: GameProfile) -> BoardRead[Board]:
        r = read_board(frame, profile)
        # the blockers' cells ride with the board, for a goal of breaking them
        blockers, bombs = blocker_cells(r.reading, profile), bomb_cells(r.reading, profile)
        unknown = [(int(y), int(x)) for y, x in zip(*np.nonzero(r.board.cells == UNKNOWN))
                   if (int(y), int(x)) not in blockers | bombs]  # fmt: skip
        # (the pieces' hues judged only if the player asks: when nothing matches as read)
        guesser = (lambda: _hue_guesses(frame, profile, r, unknown)) if 0 < len(unknown) <= MAX_GUESSED else None
        board = with_blockers(r.board, blockers, bombs, unknown_looks(r.reading, profile), guesser)
        return BoardRead(board, r.reading, r.confident, str(board), r.usable)

    def player(self, profile: GameProfile, settings: Settings, seed: int) -> Match3Player:
        variant = str(settings["variant"])
        learned = profile.rules.get("variant") if variant == "auto" else None
        if learned in VARIANTS:
            variant = str(learned)  # learned on an earlier run, and saved in the profile
        config = config_for(profile, "classic" if variant == "auto" else variant, int(settings["steps"]))
        return Match3Player(config, make_solver(settings["solver"], seed), variant, kind_ids(profile),
                            str(settings.get("goal", "auto")))  # fmt: skip

    def gestures(self, move: Move, profile: GameProfile) -> tuple[Gesture, ...]:
        return (Swipe(*swipe_points(profile, move), profile.swipe_ms),)

    def summary_rows(self, counts: Mapping[str, int]) -> list[tuple[str, str]]:
        return [
            ("tiles cleared", f"{counts.get('tiles_cleared', 0)} (predicted and checked; refill cascades not included)"),
            ("steps gained / spent", f"{counts.get('steps_gained', 0)} / {counts.get('steps_spent', 0)}"),
            ("points (agent's count)", str(counts.get("points", 0))),
        ]


class Match3Sim:
    # A step game ends when its steps run out, but the plan solver gains steps faster than
    # it spends them: without a cap a simulated game could go on forever.
    default_moves = 200

    def phone(self, settings: Settings, seed: int, size: tuple[int, int], clock: Clock, serial: str | None) -> Any:
        from agent.games.match3.sim import SimPhone

        if settings.get("scene") == "saga":
            from agent.games.match3.saga import SagaPhone

            return SagaPhone(seed=seed, size=size, clock=clock, serial=serial or "sim-0",
                             world=int(settings.get("world") or 0))
        config = Match3Config(variant=settings["variant"], start_steps=int(settings["steps"]))
        if serial is None:
            return SimPhone(config=config, seed=seed, size=size, clock=clock)
        return SimPhone(config=config, seed=seed, size=size, clock=clock, serial=serial)

    def save_profile(self, phone: Any, directory: Path) -> tuple[Path, str]:
        if _is_saga(phone):
            from agent.games.match3.saga_profile import calibrated_profile

            return calibrated_profile(phone, directory)
        from agent.games.match3.sim_profile import sim_profile_for_play

        return sim_profile_for_play(phone, directory)

    def true_board(self, phone: Any) -> Board:
        if _is_saga(phone):
            # Blockers and colourless specials match nothing: the notation's unknown.
            return Board.parse("\n".join(row.replace("#", "?").replace("*", "?") for row in phone.board_kinds))
        board: Board = phone.board
        return board

    def status_reader(self, phone: Any) -> StatusReader | None:
        if _is_saga(phone):
            return None  # its header is read as a real game's is: by OCR, where the profile says
        from agent.games.match3.hud import read_hud

        layout = phone.layout

        def read(frame: np.ndarray) -> Status | None:
            hud = read_hud(frame, layout)
            return None if hud is None else Status(moves_left=hud.steps, score=hud.score)

        return read

    def truth(self, phone: Any) -> dict[str, object]:
        if _is_saga(phone):
            return dict(phone.truth())
        s = phone.state
        return {"score": s.score, "tiles_cleared": s.tiles_cleared, "steps_gained": s.steps_gained,
                "steps_left": s.steps_left, "moves": s.moves_made}  # fmt: skip

    def status_line(self, phone: Any) -> str:
        if _is_saga(phone):
            return str(phone.status_line())
        s = phone.state
        left = f"steps left {s.steps_left}" if phone.config.variant == "step" else f"moves {s.moves_made}"
        return f"score {s.score}, {left}" + (", game over" if phone.game_over else "")


def _is_saga(phone: Any) -> bool:
    # The plain phone is cheap to import; the commercial-style one loads its looks.
    from agent.games.match3.sim import SimPhone

    return not isinstance(phone, SimPhone)


class Match3Game:
    name = "match3"
    title = "match-3 (swap tiles, three or more in a row clear)"
    screen = Match3Screen()
    sim = Match3Sim()

    @property
    def solver(self) -> Any:
        from agent.games.match3.solve import Match3Solver

        return Match3Solver()

    def parse_board(self, text: str) -> Board:
        return Board.parse(text)

    def format_board(self, board: Board) -> str:
        return str(board)


GAME = Match3Game()
