"""The rules of a commercial-style match-3 game, as pure functions.

Classic rules: a swap is taken only if it makes a match (or moves a colour bomb);
otherwise it is undone. Runs of 3+ clear; a run of 4 leaves a striped special (it
clears its row or column when it is cleared), a run of 5 or an L/T shape leaves a
colour bomb (swapped with a tile it clears every tile of that colour). Blockers sit in
cells, never move nor match, take a hit from a match beside them or a striped line
through them, and break after their hits. Holes never hold anything. Tiles fall
straight down their column over holes and blockers into the next free playable cell;
refills come in from the top. Cascades run until nothing matches; a board with no
matching swap is reshuffled. Every random draw comes from the Generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

NO_COLOUR = -1
# specials
PLAIN, STRIPED_ROW, STRIPED_COL, BOMB = 0, 1, 2, 3
POINTS_PER_TILE = 20
POINTS_PER_BLOCKER = 50
Cell = tuple[int, int]


@dataclass(frozen=True, eq=False)
class Board:
    """One board: per cell its colour (NO_COLOUR for none), special, blocker hits left
    (0: no blocker) and whether it is a hole. Arrays are never changed once made."""

    colour: np.ndarray  # int8 (rows, cols)
    special: np.ndarray  # int8
    blocker: np.ndarray  # int8
    hole: np.ndarray  # bool

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.colour.shape[0]), int(self.colour.shape[1])

    def is_tile(self, r: int, c: int) -> bool:
        return bool(not self.hole[r, c] and self.blocker[r, c] == 0
                    and (self.colour[r, c] >= 0 or self.special[r, c] == BOMB))  # fmt: skip

    def playable(self) -> np.ndarray:
        """Cells a tile can rest in: no hole, no blocker."""
        return ~self.hole & (self.blocker == 0)

    def kinds(self) -> list[str]:
        """Rows in kinds notation: a colour letter (A.. in colour order) per tile and
        special of that colour, "*" colourless, "#" blocker, "." hole or empty."""
        rows, cols = self.shape
        out = []
        for r in range(rows):
            line = []
            for c in range(cols):
                if self.hole[r, c]:
                    line.append(".")
                elif self.blocker[r, c] > 0:
                    line.append("#")
                elif self.special[r, c] == BOMB:
                    line.append("*")
                elif self.colour[r, c] >= 0:
                    line.append(chr(ord("A") + int(self.colour[r, c])))
                else:
                    line.append(".")
            out.append("".join(line))
        return out

    def copy_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.colour.copy(), self.special.copy(), self.blocker.copy(), self.hole.copy()

    def same(self, other: Board) -> bool:
        return all(np.array_equal(a, b) for a, b in zip(self.copy_arrays(), other.copy_arrays()))


def make_board(colour: np.ndarray, special: np.ndarray, blocker: np.ndarray, hole: np.ndarray) -> Board:
    for a in (colour, special, blocker, hole):
        a.setflags(write=False)
    return Board(colour, special, blocker, hole)


@dataclass(frozen=True)
class Cluster:
    """Cells of one colour that clear together (runs sharing cells)."""

    colour: int
    cells: frozenset[Cell]
    longest: int
    across: bool  # has a run along a row
    down: bool  # has a run down a column
    longest_across: bool  # the longest run is along a row


@dataclass(frozen=True)
class Phase:
    """One wave of a cascade: what cleared, what it left, and how tiles fell."""

    before: Board
    cleared: frozenset[Cell]
    created: tuple[tuple[int, int, int, int], ...]  # (r, c, colour, special) left behind
    hits: frozenset[Cell]  # blockers hit
    broken: frozenset[Cell]  # blockers that broke
    after_clear: Board  # cleared cells empty, specials placed, blockers hit
    after: Board  # after the fall and the refill
    sources: np.ndarray  # (rows, cols) row each tile of `after` fell from (refills < 0); -999 none
    points: int
    depth: int


@dataclass(frozen=True)
class Outcome:
    """What a swap did."""

    move: tuple[Cell, Cell]
    applied: bool  # False: undone (it matched nothing)
    phases: tuple[Phase, ...] = ()
    points: int = 0
    board: Board | None = None  # the board at rest afterwards (None when undone)
    shuffled_from: Board | None = None  # the board before a reshuffle, when one was needed
    swapped: Board | None = None  # the board right after the two tiles traded places
    tiles_cleared: int = 0
    blockers_broken: int = 0
    specials_made: tuple[int, ...] = field(default_factory=tuple)


# -- matches ------------------------------------------------------------------------


def _matchable(b: Board) -> np.ndarray:
    return ~b.hole & (b.blocker == 0) & (b.colour >= 0)


def clusters(b: Board) -> list[Cluster]:
    """Every group of 3+ in a row or column, runs of one colour that share a cell joined."""
    rows, cols = b.shape
    ok = _matchable(b)
    col = b.colour
    runs: list[tuple[list[Cell], int, bool]] = []
    for r in range(rows):
        c = 0
        while c < cols:
            if not ok[r, c]:
                c += 1
                continue
            e = c + 1
            while e < cols and ok[r, e] and col[r, e] == col[r, c]:
                e += 1
            if e - c >= 3:
                runs.append(([(r, k) for k in range(c, e)], int(col[r, c]), True))
            c = e
    for c in range(cols):
        r = 0
        while r < rows:
            if not ok[r, c]:
                r += 1
                continue
            e = r + 1
            while e < rows and ok[e, c] and col[e, c] == col[r, c]:
                e += 1
            if e - r >= 3:
                runs.append(([(k, c) for k in range(r, e)], int(col[r, c]), False))
            r = e
    # union runs that share a cell (they have the same colour by construction)
    parent = list(range(len(runs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Cell, int] = {}
    for i, (cells, _, _) in enumerate(runs):
        for cell in cells:
            if cell in owner:
                parent[find(i)] = find(owner[cell])
            else:
                owner[cell] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(runs)):
        groups.setdefault(find(i), []).append(i)
    out = []
    for members in groups.values():
        group: set[Cell] = set()
        longest, across, down, longest_across = 0, False, False, False
        for i in members:
            rc, _, is_across = runs[i]
            group.update(rc)
            across |= is_across
            down |= not is_across
            if len(rc) > longest:
                longest, longest_across = len(rc), is_across
        out.append(Cluster(runs[members[0]][1], frozenset(group), longest, across, down, longest_across))
    out.sort(key=lambda k: min(k.cells))
    return out


def _run_through(col: np.ndarray, ok: np.ndarray, r: int, c: int) -> bool:
    if not ok[r, c]:
        return False
    rows, cols = col.shape
    v = col[r, c]
    n = 1
    k = c - 1
    while k >= 0 and ok[r, k] and col[r, k] == v:
        n, k = n + 1, k - 1
    k = c + 1
    while k < cols and ok[r, k] and col[r, k] == v:
        n, k = n + 1, k + 1
    if n >= 3:
        return True
    n = 1
    k = r - 1
    while k >= 0 and ok[k, c] and col[k, c] == v:
        n, k = n + 1, k - 1
    k = r + 1
    while k < rows and ok[k, c] and col[k, c] == v:
        n, k = n + 1, k + 1
    return n >= 3


def adjacent(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def can_swap(b: Board, a: Cell, o: Cell) -> bool:
    """Both cells on the board, next to each other, and both hold a tile."""
    rows, cols = b.shape
    inside = all(0 <= p[0] < rows and 0 <= p[1] < cols for p in (a, o))
    return inside and adjacent(a, o) and b.is_tile(*a) and b.is_tile(*o)


def swapped(b: Board, a: Cell, o: Cell) -> Board:
    colour, special, blocker, hole = b.copy_arrays()
    for arr in (colour, special):
        arr[a], arr[o] = arr[o], arr[a]
    return make_board(colour, special, blocker, hole)


def takes_effect(b: Board, a: Cell, o: Cell) -> bool:
    """A legal swap the game keeps: it moves a colour bomb or makes a match."""
    if not can_swap(b, a, o):
        return False
    if b.special[a] == BOMB or b.special[o] == BOMB:
        return True
    s = swapped(b, a, o)
    ok = _matchable(s)
    return _run_through(s.colour, ok, *a) or _run_through(s.colour, ok, *o)


def legal_swaps(b: Board) -> list[tuple[Cell, Cell]]:
    rows, cols = b.shape
    out = []
    for r in range(rows):
        for c in range(cols):
            for o in ((r, c + 1), (r + 1, c)):
                if o[0] < rows and o[1] < cols and can_swap(b, (r, c), o):
                    out.append(((r, c), o))
    return out


def matching_swaps(b: Board) -> list[tuple[Cell, Cell]]:
    """Every swap the game would keep, in reading order."""
    return [m for m in legal_swaps(b) if takes_effect(b, *m)]


def has_move(b: Board) -> bool:
    return any(takes_effect(b, *m) for m in legal_swaps(b))


# -- one move -----------------------------------------------------------------------


def _blast(b: Board, start: set[Cell]) -> set[Cell]:
    """`start` plus everything the specials among them set off, to a fixed point."""
    rows, cols = b.shape
    done: set[Cell] = set()
    todo = list(start)
    out = set(start)
    while todo:
        cell = todo.pop()
        if cell in done:
            continue
        done.add(cell)
        r, c = cell
        sp = int(b.special[r, c])
        extra: list[Cell] = []
        if sp == STRIPED_ROW:
            extra = [(r, k) for k in range(cols)]
        elif sp == STRIPED_COL:
            extra = [(k, c) for k in range(rows)]
        elif sp == BOMB:
            extra = _colour_cells(b, _commonest(b))
        for e in extra:
            if not b.hole[e] and e not in out:
                out.add(e)
                todo.append(e)
    return out


def _colour_cells(b: Board, colour: int) -> list[Cell]:
    ok = _matchable(b) & (b.colour == colour)
    return [(int(r), int(c)) for r, c in zip(*np.nonzero(ok))]


def _commonest(b: Board) -> int:
    ok = _matchable(b)
    if not ok.any():
        return NO_COLOUR
    return int(np.bincount(b.colour[ok].astype(np.int64)).argmax())


def _fall(colour: np.ndarray, special: np.ndarray, blocker: np.ndarray, hole: np.ndarray, colours: int,
          rng: np.random.Generator) -> np.ndarray:
    """Tiles fall down their column into the free playable cells, refills from the top,
    in place; returns where each tile came from (row; refills negative)."""
    rows, cols = colour.shape
    sources = np.full((rows, cols), -999, np.int32)
    for c in range(cols):
        slots = [r for r in range(rows) if not hole[r, c] and blocker[r, c] == 0]
        items = [(r, int(colour[r, c]), int(special[r, c])) for r in slots
                 if colour[r, c] >= 0 or special[r, c] == BOMB]  # fmt: skip
        new = len(slots) - len(items)
        top = slots[0] if slots else 0
        fresh = [(top - new + j, int(rng.integers(colours)), PLAIN) for j in range(new)]
        for r in slots:
            colour[r, c], special[r, c] = NO_COLOUR, PLAIN
        for r, (src, v, sp) in zip(slots, fresh + items):
            colour[r, c], special[r, c] = v, sp
            sources[r, c] = src
    return sources


def _phase(b: Board, forced: set[Cell], moved: tuple[Cell, ...], depth: int, colours: int,
           rng: np.random.Generator) -> Phase | None:
    """Clear what matches on `b` (and `forced`), place the specials, hit blockers, fall."""
    groups = clusters(b)
    if not groups and not forced:
        return None
    matched: set[Cell] = set(forced)
    created: list[tuple[int, int, int, int]] = []
    for g in groups:
        matched |= g.cells
        kind = PLAIN
        if g.longest >= 5 or (g.across and g.down):
            kind = BOMB
        elif g.longest == 4:
            kind = STRIPED_ROW if g.longest_across else STRIPED_COL
        if kind == PLAIN:
            continue
        at = next((m for m in moved if m in g.cells), None)
        if at is None:
            ordered = sorted(g.cells)
            at = ordered[len(ordered) // 2]
        created.append((at[0], at[1], NO_COLOUR if kind == BOMB else g.colour, kind))
    cleared = _blast(b, matched)
    colour, special, blocker, hole = b.copy_arrays()
    rows, cols = b.shape
    hits: set[Cell] = set()
    for r, c in cleared:
        if blocker[r, c] > 0:
            hits.add((r, c))
            continue
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols and blocker[rr, cc] > 0:
                hits.add((rr, cc))
    tiles = {cell for cell in cleared if blocker[cell] == 0 and not hole[cell]}
    for cell in tiles:
        colour[cell], special[cell] = NO_COLOUR, PLAIN
    broken = set()
    for cell in hits:
        blocker[cell] -= 1
        if blocker[cell] == 0:
            broken.add(cell)
    for r, c, v, sp in created:
        colour[r, c], special[r, c] = v, sp
    after_clear = make_board(colour.copy(), special.copy(), blocker.copy(), hole.copy())
    sources = _fall(colour, special, blocker, hole, colours, rng)
    after = make_board(colour, special, blocker, hole)
    points = (len(tiles) * POINTS_PER_TILE + len(broken) * POINTS_PER_BLOCKER) * depth
    sources.setflags(write=False)
    return Phase(b, frozenset(tiles), tuple(created), frozenset(hits), frozenset(broken), after_clear, after,
                 sources, points, depth)  # fmt: skip


def cascade(b: Board, colours: int, rng: np.random.Generator, forced: set[Cell] | None = None,
            moved: tuple[Cell, ...] = ()) -> list[Phase]:
    """Phases until nothing matches (the first may clear `forced` cells too)."""
    phases: list[Phase] = []
    depth = 1
    extra = set(forced or ())
    while True:
        p = _phase(b, extra, moved if depth == 1 else (), depth, colours, rng)
        if p is None:
            return phases
        phases.append(p)
        b = p.after
        depth += 1
        extra = set()


def play(b: Board, a: Cell, o: Cell, colours: int, rng: np.random.Generator) -> Outcome:
    """The swap of the tiles at `a` and `o` as the game plays it."""
    if not takes_effect(b, a, o):
        return Outcome((a, o), False)
    s, forced = _start(b, a, o)
    phases = cascade(s, colours, rng, forced, (a, o))
    final = phases[-1].after if phases else s
    shuffled_from = None
    if not has_move(final):
        shuffled_from = final
        final = reshuffle(final, rng)
    made = tuple(sp for p in phases for _, _, _, sp in p.created)
    return Outcome((a, o), True, tuple(phases), sum(p.points for p in phases), final, shuffled_from, s,
                   sum(len(p.cleared) for p in phases), sum(len(p.broken) for p in phases), made)  # fmt: skip


def _start(b: Board, a: Cell, o: Cell) -> tuple[Board, set[Cell]]:
    """The board once the two tiles traded places, and what a colour bomb clears."""
    s = swapped(b, a, o)
    forced: set[Cell] = set()
    bomb_a, bomb_o = b.special[a] == BOMB, b.special[o] == BOMB
    if bomb_a and bomb_o:
        forced = {(int(r), int(c)) for r, c in zip(*np.nonzero(b.playable() & ((b.colour >= 0) | (b.special == BOMB))))}
    elif bomb_a or bomb_o:
        # after the swap the bomb sits in the other cell, the tile it met in its own
        bomb_at, other = (o, a) if bomb_a else (a, o)
        target = int(s.colour[other])
        forced = {bomb_at} | set(_colour_cells(s, target))
        # the bomb itself is set off as a blast of its target colour, not of the commonest
        s = _defuse(s, bomb_at)
    return s, forced


def first_wave(b: Board, a: Cell, o: Cell, colours: int) -> Phase | None:
    """What a kept swap clears at once, before anything falls in (None: undone)."""
    if not takes_effect(b, a, o):
        return None
    s, forced = _start(b, a, o)
    # the refill is no part of the first wave's clearing: any stream will do
    return _phase(s, forced, (a, o), 1, colours, np.random.default_rng(0))


def _defuse(b: Board, cell: Cell) -> Board:
    colour, special, blocker, hole = b.copy_arrays()
    special[cell] = PLAIN
    colour[cell] = NO_COLOUR
    # an empty cell with no tile: it is cleared by the forced set all the same
    return make_board(colour, special, blocker, hole)


# -- boards and shuffles ---------------------------------------------------------------


def fill(hole: np.ndarray, blocker: np.ndarray, colours: int, rng: np.random.Generator, tries: int = 200) -> Board:
    """A start board: no match anywhere, at least one matching swap."""
    rows, cols = hole.shape
    for _ in range(tries):
        colour = np.full((rows, cols), NO_COLOUR, np.int8)
        for r in range(rows):
            for c in range(cols):
                if hole[r, c] or blocker[r, c] > 0:
                    continue
                banned = set()
                if c >= 2 and colour[r, c - 1] == colour[r, c - 2] >= 0:
                    banned.add(int(colour[r, c - 1]))
                if r >= 2 and colour[r - 1, c] == colour[r - 2, c] >= 0:
                    banned.add(int(colour[r - 1, c]))
                choices = [k for k in range(colours) if k not in banned]
                colour[r, c] = choices[int(rng.integers(len(choices)))]
        b = make_board(colour, np.zeros((rows, cols), np.int8), blocker.astype(np.int8).copy(), hole.copy())
        if has_move(b):
            return b
    raise ValueError("no start board with a move: too few playable cells for the colours")


def reshuffle(b: Board, rng: np.random.Generator, tries: int = 200) -> Board:
    """The same tiles in new places (blockers and holes stay): no match, a move."""
    cells = [(int(r), int(c)) for r, c in zip(*np.nonzero(b.playable()))]
    content = [(int(b.colour[x]), int(b.special[x])) for x in cells]
    for _ in range(tries):
        order = rng.permutation(len(cells))
        colour, special, blocker, hole = b.copy_arrays()
        for cell, i in zip(cells, order):
            colour[cell], special[cell] = content[int(i)]
        nb = make_board(colour, special, blocker, hole)
        if not clusters(nb) and has_move(nb):
            return nb
    colours = int(max(v for v, _ in content)) + 1 if content else 1
    return fill(b.hole, b.blocker, max(3, colours), rng)
