"""The generator of match-3 execution plans (seed 000), complete or as the seed printed it.

A plan says: where a window of the board shows `target` for one tile type (1 = a tile of
that type, 0 = anything else), these swaps, each moving one of those tiles one cell,
reach `final`, whose 1s are one elimination of `count` tiles, and no swap before the last
lines up three. Plans are found backwards, as in the seed: from every elimination shape,
every position one to four swaps away that has no three in a row yet, then the shortest
swap sequence forward that never lines up three before the end.

The seed's printed method has defects; `GeneratorOptions` names each one, `FAITHFUL`
keeps them all (for comparison) and `COMPLETE` fixes them all (the library we ship).
Switching one at a time (`ablation`) tells which detail explains which difference.

Tile sets are Python ints used as bitsets on a plane with a row stride of 32 bits, so a
whole set moves with one shift and "three in a row" is three ANDs.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator

from agent.games.match3.plan_library import Plan, PlanLibrary, PlanStep, library_header

GENERATOR_VERSION = "match3-plans 1"
SETUP_MOVES = 4  # the seed works back 1 to 4 swaps from each elimination
DIST_DEPTH = 6  # the shared distance table reaches this far; A* covers the rare rest
GOAL_SIDE_CAP = 20_000  # positions a goal-side search may collect before A* takes over
SEARCH_CAP = 200_000  # states one A* may visit before the plan is given up (never hit)

_STRIDE = 32
_ORIGIN = 12  # plane coordinates run from -12 to 19, far beyond any plan's reach
_STEPS = ((-_STRIDE, "Up"), (_STRIDE, "Down"), (-1, "Left"), (1, "Right"))

Cell = tuple[int, int]
Progress = Callable[[str, int, int], None]


# -- shapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseShape:
    name: str
    rows: tuple[str, ...]
    frame_origin: Cell  # where the seed placed it in its 6x6 frame

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple((r, c) for r, row in enumerate(self.rows) for c, ch in enumerate(row) if ch == "1")

    @property
    def count(self) -> int:
        return len(self.cells)


# The seed's seven eliminations, in the order its generator adds them (p7, p6_1, p5_1,
# p5_2, p5_3, p4_1, p3_1); counts are then processed 3, 4, 5, 6, 7 (its HashMap order).
BASE_SHAPES: tuple[BaseShape, ...] = (
    BaseShape("7 (cross of 5 and 3)", ("11111", "00100", "00100"), (2, 1)),
    BaseShape("6 (4 and 3)", ("1111", "0100", "0100"), (2, 2)),
    BaseShape("L of 5", ("111", "100", "100"), (2, 3)),
    BaseShape("5 in a row", ("11111",), (2, 1)),
    BaseShape("T of 5", ("111", "010", "010"), (2, 2)),
    BaseShape("4 in a row", ("1111",), (2, 2)),
    BaseShape("3 in a row", ("111",), (2, 2)),
)
FRAME = 6

# The eight symmetries of the square as maps of (row, col), with inverses. The seed uses
# the first six (its rotations and two mirror flips), in this order.
_SYMMETRIES: tuple[Callable[[int, int], Cell], ...] = (
    lambda r, c: (r, c),
    lambda r, c: (c, -r),  # rotate 90 clockwise
    lambda r, c: (-r, -c),
    lambda r, c: (-c, r),  # rotate 270 clockwise
    lambda r, c: (-r, c),  # flip vertically (the seed's flipVertically)
    lambda r, c: (r, -c),  # flip horizontally
    lambda r, c: (c, r),  # transpose: missing in the seed
    lambda r, c: (-c, -r),  # anti-transpose: missing in the seed
)
_INVERSE = (0, 3, 2, 1, 4, 5, 6, 7)
SEED_SYMMETRIES = 6


def _frame_symmetry(k: int, r: int, c: int) -> Cell:
    """Symmetry k applied to a cell of the seed's 6x6 frame (the array is transformed,
    so shapes move within the frame as they turn)."""
    n = FRAME - 1
    return ((r, c), (c, n - r), (n - r, n - c), (n - c, r), (n - r, c), (r, n - c), (c, r), (n - c, n - r))[k]


def normalized(cells: Iterable[Cell]) -> tuple[Cell, ...]:
    cells = list(cells)
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


# -- bitsets on the plane -------------------------------------------------------------


def _bit(r: int, c: int) -> int:
    return 1 << ((r + _ORIGIN) * _STRIDE + c + _ORIGIN)


def _mask(cells: Iterable[Cell]) -> int:
    m = 0
    for r, c in cells:
        m |= _bit(r, c)
    return m


def _cell(bit: int) -> Cell:
    i = bit.bit_length() - 1
    return i // _STRIDE - _ORIGIN, i % _STRIDE - _ORIGIN


def _cells(x: int) -> list[Cell]:
    out = []
    while x:
        b = x & -x
        out.append(_cell(b))
        x ^= b
    return out


def _has_run(x: int) -> bool:
    return bool((x & (x >> 1) & (x >> 2)) or (x & (x >> _STRIDE) & (x >> 2 * _STRIDE)))


def _box_mask(r0: int, r1: int, c0: int, c1: int) -> int:
    row = ((1 << (c1 - c0 + 1)) - 1) << (c0 + _ORIGIN)
    m = 0
    for r in range(r0, r1 + 1):
        m |= row << ((r + _ORIGIN) * _STRIDE)
    return m


def _moves(x: int) -> Iterator[tuple[int, int, int]]:
    """Every swap of a tile with an empty neighbour: (new set, tile bit, destination bit),
    tiles in reading order, directions up, down, left, right."""
    rest = x
    while rest:
        b = rest & -rest
        rest ^= b
        for off, _ in _STEPS:
            nb = b << off if off > 0 else b >> -off
            if not x & nb:
                yield x ^ b ^ nb, b, nb


Box = tuple[int, int, int, int]  # r0, r1, c0, c1 inclusive


def _bbox(cells: Iterable[Cell]) -> Box:
    cells = list(cells)
    rs = [r for r, _ in cells]
    cs = [c for _, c in cells]
    return min(rs), max(rs), min(cs), max(cs)


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3])


# -- searching one shape's neighbourhood ------------------------------------------------


class ShapeSearch:
    """Shortest legal swap sequences into one base shape S, for any start position.

    `dist` holds, for every position within DIST_DEPTH swaps of S by a path that never
    lines up three before reaching S, that number of swaps (one breadth-first search,
    shared by every plan of the shape and, through symmetry, of its orientations).
    """

    def __init__(self, shape: BaseShape) -> None:
        self.shape = shape
        self.goal = _mask(shape.cells)
        self.goal_box = _bbox(shape.cells)
        dist = {self.goal: 0}
        frontier = [self.goal]
        for d in range(1, DIST_DEPTH + 1):
            nxt = []
            for x in frontier:
                for y, _, _ in _moves(x):
                    if y not in dist and not _has_run(y):
                        dist[y] = d
                        nxt.append(y)
            frontier = nxt
        self.dist = dist
        self._cache: dict[tuple[int, Box | None], tuple[tuple[int, int], ...] | None] = {}
        self._components: dict[Box, set[int] | None] = {}
        self.abandoned = 0

    def path(self, start: int, region: Box | None) -> tuple[tuple[int, int], ...] | None:
        """The swaps (tile bit, destination bit) of a shortest legal path from `start` to
        the shape: inside `region` if given, else anywhere on the plane, preferring a path
        inside the bounding box of start and goal among the shortest."""
        key = (start, region)
        if key not in self._cache:
            self._cache[key] = self._path(start, region)
        return self._cache[key]

    def _path(self, start: int, region: Box | None) -> tuple[tuple[int, int], ...] | None:
        if region is not None:
            allowed = _box_mask(*region)
            found = self._descend_from(start, allowed)
            if found is not None:
                return found
            side = self._goal_side(region)  # (cached)
            if side is not None and start not in side:
                return None  # the goal's whole component in the region, without the start
            return self._astar(start, allowed)
        snug = _box_mask(*_union(_bbox(_cells(start)), self.goal_box))
        found = self._descend_from(start, snug)
        if found is None:
            found = self._descend_from(start, -1)  # -1: every bit allowed
        if found is None:
            r0, r1, c0, c1 = _union(_bbox(_cells(start)), self.goal_box)
            found = self._astar(start, _box_mask(r0 - 3, r1 + 3, c0 - 3, c1 + 3))
        return found

    def _goal_side(self, region: Box) -> set[int] | None:
        """Every position the goal reaches inside `region` without lining up three, if
        that is a small set (a thin window's usually is); None if it is large. This
        proves a start unreachable far faster than searching from the start."""
        if region not in self._components:
            allowed = _box_mask(*region)
            seen = {self.goal}
            frontier = [self.goal]
            while frontier and len(seen) <= GOAL_SIDE_CAP:
                nxt = []
                for x in frontier:
                    for y, _, nb in _moves(x):
                        if nb & allowed and y not in seen and not _has_run(y):
                            seen.add(y)
                            nxt.append(y)
                frontier = nxt
            self._components[region] = seen if not frontier else None
        return self._components[region]

    def _descend_from(self, start: int, allowed: int) -> tuple[tuple[int, int], ...] | None:
        d = self.dist.get(start)
        if d is None:
            return None
        dead: set[int] = set()
        dist = self.dist

        def descend(x: int, d: int) -> list[tuple[int, int]] | None:
            if d == 0:
                return []
            for y, b, nb in _moves(x):
                if nb & allowed and y not in dead and dist.get(y) == d - 1:
                    rest = descend(y, d - 1)
                    if rest is not None:
                        rest.append((b, nb))
                        return rest
                    dead.add(y)
            return None

        found = descend(start, d)
        return tuple(reversed(found)) if found is not None else None

    def _astar(self, start: int, allowed: int) -> tuple[tuple[int, int], ...] | None:
        """A* inside `allowed`, the distance table as its (exact where known) heuristic;
        used when no shortest path stays inside the region, or the start is far away."""
        far = DIST_DEPTH + 1
        dist = self.dist
        g = {start: 0}
        parent: dict[int, tuple[int, int, int]] = {}
        heap = [(dist.get(start, far), 0, 0, start)]
        seq = 0
        while heap:
            _, neg_g, _, x = heapq.heappop(heap)
            if -neg_g != g[x]:
                continue
            if x == self.goal:
                path = []
                while x != start:
                    x, b, nb = parent[x]
                    path.append((b, nb))
                return tuple(reversed(path))
            if len(g) > SEARCH_CAP:
                self.abandoned += 1
                return None
            for y, b, nb in _moves(x):
                if not nb & allowed or (y != self.goal and _has_run(y)):
                    continue
                ng = g[x] + 1
                if ng < g.get(y, 1 << 30):
                    g[y] = ng
                    parent[y] = (x, b, nb)
                    seq += 1
                    heapq.heappush(heap, (ng + dist.get(y, far), -ng, seq, y))
        return None


# -- the generator ------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratorOptions:
    """Each field is one detail of the seed's method; the defaults are the fixes."""

    all_symmetries: bool = True  # seed: rotations and two mirror flips (6 of 8)
    frame: bool = False  # seed: every shape sits in a 6x6 frame, tiles never come from beyond it
    clip_to_target: bool = False  # seed: the window is the target's bounding box; a final reaching out fails
    claim_before_search: bool = False  # seed: a target is marked seen before its path is searched
    one_final_per_target: bool = False  # seed: a target keeps the first final found for it
    paths_leave_window: bool = True  # seed: the shortest path is searched inside the window only

    @property
    def name(self) -> str:
        return "complete" if self == COMPLETE else "faithful" if self == FAITHFUL else "variant"


COMPLETE = GeneratorOptions()
FAITHFUL = GeneratorOptions(
    all_symmetries=False, frame=True, clip_to_target=True, claim_before_search=True,
    one_final_per_target=True, paths_leave_window=False,
)

# The same details as seed defects, for the ablation table: name -> the seed's setting.
SEED_DETAILS: dict[str, str] = {
    "all_symmetries": "6 of the 8 symmetries (no transposes)",
    "frame": "shapes inside a 6x6 frame",
    "clip_to_target": "window = target's bounding box (final clipped)",
    "claim_before_search": "target marked seen before its search",
    "one_final_per_target": "one final per target (first found)",
    "paths_leave_window": "paths confined to the window",
}


@dataclass(frozen=True)
class Orientation:
    """One placed elimination shape and how it maps onto its base shape's search."""

    count: int
    cells: tuple[Cell, ...]
    base: int  # index into BASE_SHAPES
    symmetry: int  # cells = symmetry(base cells) + offset
    offset: Cell
    frame: bool


def orientations(options: GeneratorOptions) -> list[Orientation]:
    """The shapes to work back from, counts ascending, each base's orientations in the
    seed's order; the seed keeps transformed 6x6 arrays that differ (so a shape may
    appear at several places in its frame), without the frame distinct shapes."""
    n_sym = 8 if options.all_symmetries else SEED_SYMMETRIES
    out: list[Orientation] = []
    for count in range(3, 8):
        for bi, shape in enumerate(BASE_SHAPES):
            if shape.count != count:
                continue
            seen: set[tuple[Cell, ...]] = set()
            for k in range(n_sym):
                if options.frame:
                    r0, c0 = shape.frame_origin
                    cells = tuple(sorted(_frame_symmetry(k, r + r0, c + c0) for r, c in shape.cells))
                    key = cells
                else:
                    cells = normalized(_SYMMETRIES[k](r, c) for r, c in shape.cells)
                    key = cells
                if key in seen:
                    continue
                seen.add(key)
                sym, offset = _locate(shape, cells)
                out.append(Orientation(count, cells, bi, sym, offset, options.frame))
    return out


def _locate(shape: BaseShape, cells: tuple[Cell, ...]) -> tuple[int, Cell]:
    """The symmetry and offset that map the base shape onto `cells`."""
    target = set(cells)
    r_min = min(r for r, _ in cells)
    c_min = min(c for _, c in cells)
    for k, f in enumerate(_SYMMETRIES):
        moved = [f(r, c) for r, c in shape.cells]
        mr = min(r for r, _ in moved)
        mc = min(c for _, c in moved)
        dr, dc = r_min - mr, c_min - mc
        if {(r + dr, c + dc) for r, c in moved} == target:
            return k, (dr, dc)
    raise AssertionError("a shape's orientation is always a symmetry of it")  # pragma: no cover


def _setup_batches(goal: int, frame_mask: int | None, max_moves: int) -> list[list[int]]:
    """The seed's batches: for k = 1..max_moves, the positions exactly k swaps from the
    goal (swaps may undo each other, so: within k, same parity) with no three in a row.
    Within a batch the seed's order is a Java HashSet's (unspecified); ours is sorted."""
    dist = {goal: 0}
    frontier = [goal]
    for d in range(1, max_moves + 1):
        nxt = []
        for x in frontier:
            for y, _, nb in _moves(x):
                if frame_mask is not None and not nb & frame_mask:
                    continue
                if y not in dist:
                    dist[y] = d
                    nxt.append(y)
        frontier = nxt
    clean = sorted(((sorted(_cells(x)), x, d) for x, d in dist.items() if d and not _has_run(x)))
    return [[x for _, x, d in clean if d <= k and (k - d) % 2 == 0] for k in range(1, max_moves + 1)]


def _pattern(cells: Iterable[Cell], box: Box) -> str:
    r0, r1, c0, c1 = box
    grid = [["0"] * (c1 - c0 + 1) for _ in range(r1 - r0 + 1)]
    for r, c in cells:
        if r0 <= r <= r1 and c0 <= c <= c1:
            grid[r - r0][c - c0] = "1"
    return "/".join("".join(row) for row in grid)


_DIRECTION_OF = {(-1, 0): "Up", (1, 0): "Down", (0, -1): "Left", (0, 1): "Right"}


@dataclass
class BuildReport:
    """What a build did beyond its plans: for the README and `agent plans stats`."""

    options: GeneratorOptions
    pre_positions: int = 0  # distinct (shape, start) pairs searched
    claimed_then_failed: int = 0  # targets the seed's early claim blocked after a failed search
    clipped: int = 0  # targets dropped because the final reaches outside the window
    no_path: int = 0  # starts with no legal path (inside the window, for the seed)
    abandoned: int = 0  # searches given up at SEARCH_CAP


_Rank = tuple[int, int, str, str, tuple[PlanStep, ...]]  # steps, window area, target, final, steps


def build_plans(
    options: GeneratorOptions = COMPLETE, progress: Progress | None = None
) -> tuple[PlanLibrary, BuildReport]:
    """Generate the plan library. Deterministic: the same options give the same plans in
    the same order."""
    searches = [ShapeSearch(shape) for shape in BASE_SHAPES]
    report = BuildReport(options)
    frame_mask = _box_mask(0, FRAME - 1, 0, FRAME - 1) if options.frame else None
    chosen: dict[object, tuple[_Rank, Plan]] = {}  # key -> (rank, plan)
    claimed: set[object] = set()
    shapes = orientations(options)
    for i, o in enumerate(shapes):
        if progress:
            progress(f"working back from {BASE_SHAPES[o.base].name}", i, len(shapes))
        goal = _mask(o.cells)
        goal_box = _bbox(o.cells)
        search = searches[o.base]
        inv = _SYMMETRIES[_INVERSE[o.symmetry]]
        fwd = _SYMMETRIES[o.symmetry]
        for batch in _setup_batches(goal, frame_mask, SETUP_MOVES):
            for start in batch:
                start_cells = _cells(start)
                box = _bbox(start_cells) if options.clip_to_target else _union(_bbox(start_cells), goal_box)
                target0 = _pattern(start_cells, box)
                final0 = _pattern(o.cells, box)
                key: object = target0 if options.one_final_per_target else (target0, final0)
                if options.claim_before_search:
                    if key in claimed:
                        continue
                    claimed.add(key)
                elif options.one_final_per_target and key in chosen:
                    continue
                report.pre_positions += 1
                if final0.count("1") != o.count:
                    report.clipped += 1
                    if options.claim_before_search:
                        report.claimed_then_failed += 1
                    continue
                # Search in the base shape's frame: undo the orientation, then redo it.
                dr, dc = o.offset
                base_start = _mask(inv(r - dr, c - dc) for r, c in start_cells)
                region = None
                if not options.paths_leave_window:
                    corners = [inv(r - dr, c - dc) for r in (box[0], box[1]) for c in (box[2], box[3])]
                    region = _bbox(corners)
                path = search.path(base_start, region)
                if path is None:
                    report.no_path += 1
                    if options.claim_before_search:
                        report.claimed_then_failed += 1
                    continue
                steps_cells = []
                for bit, nb in path:
                    (r1, c1), (r2, c2) = _cell(bit), _cell(nb)
                    f1, f2 = fwd(r1, c1), fwd(r2, c2)
                    steps_cells.append(((f1[0] + dr, f1[1] + dc), (f2[0] + dr, f2[1] + dc)))
                window = box
                for a, b in steps_cells:
                    window = _union(window, _bbox((a, b)))
                plan = Plan(
                    count=o.count,
                    target=_pattern(start_cells, window),
                    final=_pattern(o.cells, window),
                    steps=tuple(
                        PlanStep(a[0] - window[0], a[1] - window[2], _DIRECTION_OF[(b[0] - a[0], b[1] - a[1])])
                        for a, b in steps_cells
                    ),
                )
                area = (window[1] - window[0] + 1) * (window[3] - window[2] + 1)
                rank = (len(plan.steps), area, plan.target, plan.final, plan.steps)
                old = chosen.get(key)
                if old is None or (not options.claim_before_search and not options.one_final_per_target
                                   and rank < old[0]):
                    chosen[key] = (rank, plan)
    report.abandoned = sum(s.abandoned for s in searches)
    if progress:
        progress("done", len(shapes), len(shapes))
    plans = sorted((p for _, p in chosen.values()), key=plan_order)
    header = library_header(plans, generator=GENERATOR_VERSION, variant=options.name)
    return PlanLibrary.from_plans(header, plans), report


def plan_order(plan: Plan) -> tuple[int, int, int, int, str, str, tuple[tuple[int, int, str], ...]]:
    return (plan.count, len(plan.steps), plan.height, plan.width, plan.target, plan.final,
            tuple((s.row, s.col, s.direction) for s in plan.steps))


def ablation(progress: Progress | None = None) -> list[tuple[str, str, int]]:
    """Plan counts with one seed detail switched at a time: (detail, which way, total).
    Starting from the faithful method each fix adds plans; starting from the complete
    library each defect removes some."""
    rows: list[tuple[str, str, int]] = []
    for field, label in SEED_DETAILS.items():
        fixed = replace(FAITHFUL, **{field: getattr(COMPLETE, field)})
        broken = replace(COMPLETE, **{field: getattr(FAITHFUL, field)})
        for way, opts in (("seed + this fix", fixed), ("complete + this defect", broken)):
            if progress:
                progress(f"{label}: {way}", len(rows), 2 * len(SEED_DETAILS))
            lib, _ = build_plans(opts)
            rows.append((label, way, len(lib)))
    return rows
