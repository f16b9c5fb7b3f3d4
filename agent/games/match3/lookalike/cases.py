"""Families of look-alike screens, and the truth of each.

`make_case(family, seed)` draws one screen of a family with its `Truth`; the pair
(family, seed) always gives the same screen (the Generator is seeded from both). Every
screen draws its own phone size, board shape, cell size, colours, piece style, slot
background, gaps, background and HUD (see `common`); the family adds what makes it hard:

- clean: a board at rest;
- live: per-piece light (brightness and a vertical gradient), glowing pieces, specials
  of a colour, maybe a colourless special, a piece wiggling as a hint;
- moving: pieces mid-fall (their cells show two pieces, or a piece and an empty slot),
  some blurred, and score popups over cells: those cells are "?" (not scored), and
  `Truth.covered` says which colours show in each, to tell a misread from a fair read;
- blockers: obstacles in cells, a whole edge row or column and some inside, "#";
- holes: corners cut and maybe a missing centre, ".";
- frosted: the board on a frosted-glass panel reaching a cell or more past it, over a
  blurred picture; the truth box is the board's cells only;
- dialog: a popup over 8-40% of the cells: the screen must be refused;
- dim: the whole screen dimmed under a popup: the screen must be refused.

Boards of real saga games, whose edge is uneven (UNEVEN): the true grid runs to the
board's outline whatever stands on its edge:
- edge_columns: obstacles one per cell (crates, stone, ice) over one or two whole outer
  columns and/or rows, "#";
- crates: obstacles drawn as one object over several cells (2x2 crates, 1x2 and 2x1
  shelves, stone slabs), mostly on the edge; every cell under one is "#";
- frosted_edge: a frosted panel that is barely tinted, has no rim and a feathered edge,
  over a blurred picture or a busy texture;
- cut_corners: corners cut away (staircases, rounded, square) and notches in the outer
  edge, ".", the board's panel often following the outline.

Some families take the live effects too (blockers, holes, frosted), so difficulties mix.

Truth grids: `kinds` has a colour letter per tile ("A".. in the screen's colour order;
a special has its colour's letter), "*" a colourless special, "#" a blocker, "." a hole,
"?" a cell not scored. `looks` names every distinct appearance ("A", "A/lit",
"A/striped", "#crate", "*"), for scoring appearance classes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from agent.games.match3.lookalike.backdrop import BACKGROUNDS, random_colour
from agent.games.match3.lookalike.pieces import (
    BLOCKERS, COLOURLESS, EDGE_BLOCKERS, MARKS, PALETTE, SPANS, STYLES, TileLook, shapes_for,
)  # fmt: skip
from agent.games.match3.lookalike.scene import (
    BLOCKER, COLOURLESS as COLOURLESS_PIECE, HOLE, SLOTS, SPANNED, SPECIAL, TILE, Layout, Piece, Scene, Span, Style, place,
    render,
)  # fmt: skip

FAMILIES = ("clean", "live", "moving", "blockers", "holes", "frosted", "dialog", "dim",
            "edge_columns", "crates", "frosted_edge", "cut_corners")  # fmt: skip
# boards of real saga games, whose edge is uneven (issue 25)
UNEVEN = ("edge_columns", "crates", "frosted_edge", "cut_corners")
REFUSING = ("dialog", "dim")
SIZES = ((1080, 2400), (720, 1600), (1440, 3200), (1080, 1920), (1170, 2532), (800, 1280))
SIZE_WEIGHTS = (0.36, 0.2, 0.2, 0.1, 0.08, 0.06)
UNSCORED, HOLE_LABEL, BLOCKER_LABEL, COLOURLESS_LABEL = "?", ".", "#", "*"

Grid = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Truth:
    """What a reader should find on a look-alike screen."""

    family: str
    seed: int
    screen: tuple[int, int]  # (width, height)
    bbox: tuple[int, int, int, int]  # the cell area [x0, y0, x1, y1], x1/y1 exclusive
    rows: int
    cols: int
    kinds: Grid
    looks: Grid
    refuse: str | None  # why the screen must be refused, or None for a board to read
    # the "?" cells of moving pieces and popups: (row, col, the colour letters showing there)
    covered: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    colours: int = 0  # tile colours on the screen

    @property
    def name(self) -> str:
        return f"{self.family}/{self.seed}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "family": self.family, "seed": self.seed, "screen": list(self.screen), "board_bbox": list(self.bbox),
            "rows": self.rows, "cols": self.cols, "kinds": [list(r) for r in self.kinds],
            "looks": [list(r) for r in self.looks], "refuse": self.refuse,
            "covered": [[r, c, list(k)] for r, c, k in self.covered], "colours": self.colours,
        }  # fmt: skip


@dataclass(frozen=True, eq=False)
class Case:
    truth: Truth
    scene: Scene
    frame: np.ndarray  # BGR uint8


def family_rng(family: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(family.encode()), int(seed)])


def letter(colour: int) -> str:
    return chr(ord("A") + colour)


# -- what every screen draws ----------------------------------------------------------------


@dataclass
class Draft:
    """A screen being made: the scene's parts and the truth's grids, cell by cell."""

    layout: Layout
    style: Style
    pieces: list[list[Piece]]
    kinds: list[list[str]]
    looks: list[list[str]]
    colours: int
    covered: dict[tuple[int, int], tuple[str, ...]]
    spans: list[Span] = field(default_factory=list)

    def set(self, r: int, c: int, piece: Piece, kind: str, look: str) -> None:
        self.pieces[r][c], self.kinds[r][c], self.looks[r][c] = piece, kind, look

    def tiles(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.layout.rows) for c in range(self.layout.cols) if self.pieces[r][c].kind == TILE]


def _colours_at_rest(rng: np.random.Generator, rows: int, cols: int, k: int) -> list[list[int]]:
    """Colours with no three in a row or column, as a board at rest has."""
    grid = [[-1] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            banned = set()
            if c >= 2 and grid[r][c - 1] == grid[r][c - 2]:
                banned.add(grid[r][c - 1])
            if r >= 2 and grid[r - 1][c] == grid[r - 2][c]:
                banned.add(grid[r - 1][c])
            options = [v for v in range(k) if v not in banned]
            grid[r][c] = int(options[int(rng.integers(len(options)))])
    return grid


def common(rng: np.random.Generator, *, frosted: bool = False) -> Draft:
    """Phone, board, tiles and style of a screen of any family."""
    w, h = SIZES[int(rng.choice(len(SIZES), p=np.asarray(SIZE_WEIGHTS) / sum(SIZE_WEIGHTS)))]
    rows, cols = int(rng.integers(6, 11)), int(rng.integers(6, 11))
    margin = float(rng.uniform(1.0, 1.6)) if frosted else 0.0
    hi = int(min(150, 0.94 * w / (cols + 2 * margin), 0.48 * h / (rows + 2 * margin)))
    # boards fill most of a phone's width; the cell follows from the share they take
    want = int(w * rng.uniform(0.55, 0.94) / (cols + 2 * margin))
    cell = int(np.clip(want, min(40, hi), hi))
    k = int(rng.integers(4, 8))
    order = rng.permutation(len(PALETTE))[:k]
    jitter = rng.uniform(0.9, 1.08, (k, 3))
    colours = tuple(tuple(float(v) for v in np.clip(np.asarray(PALETTE[i][1]) * jitter[j], 0, 1)) for j, i in enumerate(order))
    style_name = STYLES[int(rng.integers(len(STYLES)))]
    look = TileLook(style_name, colours, shapes_for(style_name, k, rng), float(rng.uniform(0.76, 0.92)))  # type: ignore[arg-type]
    gap = 0 if rng.random() < 0.4 else int(rng.integers(2, max(3, int(cell * 0.09)) + 1))
    slot_a = random_colour(rng, (0, 120), (20, 90))
    slot_b = tuple(min(1.0, v * 1.35 + 0.04) for v in slot_a)
    style = Style(
        look, SLOTS[int(rng.integers(len(SLOTS)))], (slot_a, slot_b), float(rng.uniform(0.6, 0.9)), gap,  # type: ignore[arg-type]
        "photo" if frosted else BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))],
        frosted=margin, panel=0.0 if frosted or rng.random() < 0.4 else float(rng.uniform(0.1, 0.4)),
    )  # fmt: skip
    layout = place(rng, w, h, rows, cols, cell)
    grid = _colours_at_rest(rng, rows, cols, k)
    return Draft(
        layout, style,
        [[Piece(TILE, grid[r][c]) for c in range(cols)] for r in range(rows)],
        [[letter(grid[r][c]) for c in range(cols)] for r in range(rows)],
        [[letter(grid[r][c]) for c in range(cols)] for r in range(rows)],
        k, {},
    )  # fmt: skip


def _hud_boxes(d: Draft) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    lay = d.layout
    w, h = lay.width, lay.height
    m = int(round(max(d.style.frosted, d.style.panel) * lay.cell)) + int(0.02 * h)
    top_end = max(int(0.03 * h) + 8, min(int(0.14 * h), lay.bbox[1] - m))
    bottom_start = min(int(0.97 * h) - 8, max(int(0.86 * h), lay.bbox[3] + m))
    x0, x1 = int(0.04 * w), int(0.96 * w)
    return (x0, int(0.03 * h), x1, top_end), (x0, bottom_start, x1, int(0.97 * h))


def finish(family: str, seed: int, rng: np.random.Generator, d: Draft, refuse: str | None = None,
           texts: tuple[tuple[str, int, int, float], ...] = (), dialog: tuple[int, int, int, int] | None = None,
           dim: float = 0.0, draw: bool = True) -> Case:  # fmt: skip
    jpeg = int(rng.integers(80, 96)) if rng.random() < 0.5 else 0
    scene = Scene(d.layout, d.style, tuple(tuple(r) for r in d.pieces), texts, dialog, dim, jpeg, _hud_boxes(d),
                  tuple(d.spans))  # fmt: skip
    lay = d.layout
    truth = Truth(
        family, seed, (lay.width, lay.height), lay.bbox, lay.rows, lay.cols,
        tuple(tuple(r) for r in d.kinds), tuple(tuple(r) for r in d.looks), refuse,
        tuple((r, c, k) for (r, c), k in sorted(d.covered.items())), d.colours,
    )  # fmt: skip
    # the truth is made before any painting draws from rng, so it is the same undrawn
    return Case(truth, scene, render(scene, rng) if draw else np.zeros((0, 0, 3), np.uint8))


# -- what families add ----------------------------------------------------------------------


def add_live(rng: np.random.Generator, d: Draft, strength: float = 1.0) -> None:
    """Light, glow, specials, maybe a colourless special, and a hint wiggle."""
    for r, c in d.tiles():
        p = d.pieces[r][c]
        d.pieces[r][c] = Piece(TILE, p.colour, brightness=float(1 + strength * rng.uniform(-0.25, 0.25)),
                               gradient=float(strength * rng.uniform(-0.2, 0.35)))  # fmt: skip
    cells = d.tiles()
    order = rng.permutation(len(cells))
    n = len(cells)
    n_special = max(1, int(round(n * rng.uniform(0.03, 0.10))))
    n_glow = int(round(n * rng.uniform(0.04, 0.12)))
    marks = [MARKS[i] for i in rng.permutation(len(MARKS))[: int(rng.integers(1, 4))]]
    for i in order[:n_special]:
        r, c = cells[i]
        p, m = d.pieces[r][c], marks[int(rng.integers(len(marks)))]
        d.set(r, c, Piece(SPECIAL, p.colour, m, p.brightness, p.gradient), letter(p.colour), f"{letter(p.colour)}/{m}")
    at = n_special
    for i in order[at : at + n_glow]:
        r, c = cells[i]
        p = d.pieces[r][c]
        d.set(r, c, Piece(TILE, p.colour, glow=float(rng.uniform(0.3, 0.55))), letter(p.colour), f"{letter(p.colour)}/lit")
    at += n_glow
    if at < n and rng.random() < 0.5:
        r, c = cells[order[at]]
        kind = COLOURLESS[int(rng.integers(len(COLOURLESS)))]
        d.set(r, c, Piece(COLOURLESS_PIECE, -1, kind), COLOURLESS_LABEL, COLOURLESS_LABEL)
        at += 1
    if at < n:
        r, c = cells[order[at]]
        p = d.pieces[r][c]
        sign = 1 if rng.random() < 0.5 else -1
        d.pieces[r][c] = Piece(TILE, p.colour, brightness=p.brightness, gradient=p.gradient,
                               wiggle=(float(sign * rng.uniform(3, 8)), float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4))))  # fmt: skip


def add_falls(rng: np.random.Generator, d: Draft) -> None:
    """One or two columns falling from the top: every cell from the top to the bottom of
    the fall shows parts of two pieces (or a piece and an empty slot): "?"."""
    lay = d.layout
    for c in rng.permutation(lay.cols)[: int(rng.integers(1, 3))]:
        bottom = int(rng.integers(1, max(2, lay.rows // 2) + 1))
        fall = float(rng.uniform(0.2, 0.6))
        blur = int(lay.cell * rng.uniform(0.1, 0.3)) if rng.random() < 0.5 else 0
        for r in range(bottom + 1):
            p = d.pieces[r][c]
            d.pieces[r][c] = Piece(TILE, p.colour, fall=fall, blur=blur)
        for r in range(bottom + 1):
            showing = {d.kinds[r][c]} | ({d.kinds[r + 1][c]} if r < bottom else set())
            d.covered[(r, int(c))] = tuple(sorted(showing))
            d.kinds[r][c] = d.looks[r][c] = UNSCORED


def score_texts(rng: np.random.Generator, d: Draft) -> tuple[tuple[str, int, int, float], ...]:
    """One to three score popups over the board; the cells they cover are "?"."""
    lay = d.layout
    out = []
    for _ in range(int(rng.integers(1, 4))):
        text = f"{'+' if rng.random() < 0.5 else ''}{int(rng.integers(1, 50)) * 10}"
        r, c = int(rng.integers(lay.rows)), int(rng.integers(lay.cols - 1))
        cx = int(lay.bbox[0] + (c + rng.uniform(0.5, 1.5)) * lay.cell)
        cy = int(lay.bbox[1] + (r + 0.5) * lay.cell)
        px = float(lay.cell * rng.uniform(0.35, 0.6))
        out.append((text, cx, cy, px))
        # the popup's reach (text and outline), generously: any cell it touches is "?"
        half_w, half_h = px * 0.45 * (len(text) + 1), px * 0.9
        for rr in range(lay.rows):
            for cc in range(lay.cols):
                bx0, by0, bx1, by1 = lay.cell_box(rr, cc)
                ix = max(0.0, min(bx1, cx + half_w) - max(bx0, cx - half_w))
                iy = max(0.0, min(by1, cy + half_h) - max(by0, cy - half_h))
                if ix * iy > 0.02 * lay.cell**2 and d.kinds[rr][cc] != UNSCORED:
                    d.covered[(rr, cc)] = (d.kinds[rr][cc],) if d.kinds[rr][cc] not in (HOLE_LABEL, BLOCKER_LABEL) else ()
                    d.kinds[rr][cc] = d.looks[rr][cc] = UNSCORED
    return tuple(out)


def add_blockers(rng: np.random.Generator, d: Draft) -> None:
    lay = d.layout
    kinds = [BLOCKERS[i] for i in rng.permutation(len(BLOCKERS))[: int(rng.integers(1, 3))]]
    edge = kinds[0]
    side = int(rng.integers(4))
    cells = ([(0, c) for c in range(lay.cols)], [(lay.rows - 1, c) for c in range(lay.cols)],
             [(r, 0) for r in range(lay.rows)], [(r, lay.cols - 1) for r in range(lay.rows)])[side]  # fmt: skip
    for r, c in cells:
        d.set(r, c, Piece(BLOCKER, -1, edge), BLOCKER_LABEL, f"#{edge}")
    inner = [(r, c) for r in range(1, lay.rows - 1) for c in range(1, lay.cols - 1)]
    for i in rng.permutation(len(inner))[: int(rng.integers(3, 9))]:
        r, c = inner[i]
        kind = kinds[int(rng.integers(len(kinds)))]
        d.set(r, c, Piece(BLOCKER, -1, kind), BLOCKER_LABEL, f"#{kind}")


def add_holes(rng: np.random.Generator, d: Draft) -> None:
    lay = d.layout
    corners = rng.permutation(4)[: int(rng.integers(1, 5))]
    # two cuts on one edge leave cells between them: every row and column keeps a cell,
    # so the truth's box is the board's true extent
    most = max(1, min(3, (min(lay.rows, lay.cols) - 1) // 2))
    for corner in corners:
        k = int(rng.integers(1, most + 1))
        for i in range(k):
            for j in range(k - i):
                r = i if corner in (0, 1) else lay.rows - 1 - i
                c = j if corner in (0, 2) else lay.cols - 1 - j
                d.set(r, c, Piece(HOLE), HOLE_LABEL, HOLE_LABEL)
    if rng.random() < 0.6:
        hr, hc = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        r0, c0 = (lay.rows - hr) // 2, (lay.cols - hc) // 2
        for r in range(r0, r0 + hr):
            for c in range(c0, c0 + hc):
                d.set(r, c, Piece(HOLE), HOLE_LABEL, HOLE_LABEL)


def add_edge_lines(rng: np.random.Generator, d: Draft) -> None:
    """Obstacles (crates, stone, ice: one per cell) over one or two whole outer columns
    and/or rows, a few inside, and sometimes a second kind mixed into a line."""
    lay = d.layout
    kinds = [EDGE_BLOCKERS[i] for i in rng.permutation(len(EDGE_BLOCKERS))[: int(rng.integers(1, 3))]]
    n_cols, n_rows = ((1, 0), (2, 0), (0, 1), (1, 1), (0, 2), (2, 1))[int(rng.choice(6, p=[0.3, 0.2, 0.15, 0.15, 0.1, 0.1]))]
    lines: list[tuple[str, int]] = []  # ("col" or "row", index)
    for axis, n, size in (("col", n_cols, lay.cols), ("row", n_rows, lay.rows)):
        if n == 1:
            lines.append((axis, 0 if rng.random() < 0.5 else size - 1))
        elif n == 2:
            first = 0 if rng.random() < 0.5 else size - 1
            other = (size - 1 - first) if rng.random() < 0.6 else (1 if first == 0 else size - 2)
            lines += [(axis, first), (axis, other)]
    for axis, i in lines:
        kind = kinds[int(rng.integers(len(kinds)))]
        cells = [(r, i) for r in range(lay.rows)] if axis == "col" else [(i, c) for c in range(lay.cols)]
        for r, c in cells:
            k = kinds[int(rng.integers(len(kinds)))] if len(kinds) > 1 and rng.random() < 0.15 else kind
            d.set(r, c, Piece(BLOCKER, -1, k), BLOCKER_LABEL, f"#{k}")
    inner = [(r, c) for r, c in d.tiles() if 0 < r < lay.rows - 1 and 0 < c < lay.cols - 1]
    for j in rng.permutation(len(inner))[: int(rng.integers(0, 4))]:
        r, c = inner[j]
        k = kinds[int(rng.integers(len(kinds)))]
        d.set(r, c, Piece(BLOCKER, -1, k), BLOCKER_LABEL, f"#{k}")


def add_spans(rng: np.random.Generator, d: Draft) -> None:
    """Obstacles drawn as one object over several cells (2x2 crates, 1x2 and 2x1 shelves,
    stone slabs), most of them on the board's edge or in a corner; sometimes a whole edge
    row of shelves. Every cell under one is "#", each part of it a look of its own."""
    lay = d.layout
    taken = np.zeros((lay.rows, lay.cols), bool)

    def put(kind: str, r: int, c: int, h: int, w: int) -> bool:
        if r < 0 or c < 0 or r + h > lay.rows or c + w > lay.cols or taken[r : r + h, c : c + w].any():
            return False
        taken[r : r + h, c : c + w] = True
        d.spans.append(Span(kind, r, c, h, w))
        for rr in range(r, r + h):
            for cc in range(c, c + w):
                d.set(rr, cc, Piece(SPANNED), BLOCKER_LABEL, f"#{kind}{h}x{w}/{rr - r}{cc - c}")
        return True

    if rng.random() < 0.25:  # a row of shelves along the top or the bottom
        r = 0 if rng.random() < 0.5 else lay.rows - 1
        for c in range(0, lay.cols - 1, 2):
            put("shelf", r, c, 1, 2)
        if lay.cols % 2:
            d.set(r, lay.cols - 1, Piece(BLOCKER, -1, "jar"), BLOCKER_LABEL, "#jar")
            taken[r, lay.cols - 1] = True
    want = int(rng.integers(2, 6))
    placed = 0
    for _ in range(80):
        if placed >= want:
            break
        kind, h, w = SPANS[int(rng.integers(len(SPANS)))]
        if rng.random() < 0.65:  # on the edge: a corner or along an outer line
            side = int(rng.integers(4))
            r = (0, lay.rows - h, int(rng.integers(0, lay.rows - h + 1)), int(rng.integers(0, lay.rows - h + 1)))[side]
            c = (int(rng.integers(0, lay.cols - w + 1)), int(rng.integers(0, lay.cols - w + 1)), 0, lay.cols - w)[side]
        else:
            r, c = int(rng.integers(0, lay.rows - h + 1)), int(rng.integers(0, lay.cols - w + 1))
        placed += put(kind, r, c, h, w)


def add_soft_frost(rng: np.random.Generator, d: Draft) -> None:
    """The frosted panel barely tinted, with no rim and a feathered edge, over a blurred
    picture or a busy texture: where the panel ends hardly shows."""
    background = "texture" if rng.random() < 0.4 else "photo"
    d.style = replace(d.style, soft_frost=True, background=background)


def add_cuts(rng: np.random.Generator, d: Draft) -> None:
    """Corners cut away (staircases, rounded, square notches) and notches in the outer
    edge; each row and column keeps at least two cells, so the truth's box is the board's
    extent. The board's panel follows the outline on most screens."""
    lay = d.layout
    cut = np.zeros((lay.rows, lay.cols), bool)

    def keeps(extra: np.ndarray) -> bool:
        left = ~(cut | extra)
        return bool((left.sum(axis=0) >= 2).all() and (left.sum(axis=1) >= 2).all() and left.sum() >= 0.6 * left.size)

    most = max(1, min(3, (min(lay.rows, lay.cols) - 1) // 2))
    for corner in rng.permutation(4)[: int(rng.integers(2, 5))]:
        shape = ("stair", "round", "square")[int(rng.integers(3))]
        k = int(rng.integers(1, most + 1)) if shape != "square" else int(rng.integers(1, 3))
        if shape == "round":
            k = max(2, k)
        m = np.zeros_like(cut)
        for i in range(k):
            for j in range(k):
                inside = {"stair": i + j < k, "square": True,
                          "round": (k - i - 0.5) ** 2 + (k - j - 0.5) ** 2 > (k - 0.5) ** 2}[shape]  # fmt: skip
                if inside:
                    m[i if corner in (0, 1) else lay.rows - 1 - i, j if corner in (0, 2) else lay.cols - 1 - j] = True
        if keeps(m):
            cut |= m
    for _ in range(int(rng.integers(0, 3))):  # notches in an outer edge, away from the corners
        side = int(rng.integers(4))
        along = lay.cols if side in (0, 1) else lay.rows
        length, depth = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        if along - length < 4:
            continue
        at = int(rng.integers(2, along - length - 1))
        m = np.zeros_like(cut)
        for i in range(depth):
            for j in range(at, at + length):
                m[(i, j) if side == 0 else (lay.rows - 1 - i, j) if side == 1 else (j, i) if side == 2 else (j, lay.cols - 1 - i)] = True
        if keeps(m):
            cut |= m
    for r, c in np.argwhere(cut):
        d.set(int(r), int(c), Piece(HOLE), HOLE_LABEL, HOLE_LABEL)
    if rng.random() < 0.65:
        d.style = replace(d.style, outline=True, panel=max(d.style.panel, float(rng.uniform(0.12, 0.35))))


def _cover(d: Draft, box: tuple[int, int, int, int]) -> int:
    """Mark the cells under `box` (and its shadow) "?"; returns how many."""
    lay = d.layout
    n = 0
    for r in range(lay.rows):
        for c in range(lay.cols):
            bx0, by0, bx1, by1 = lay.cell_box(r, c)
            if bx0 < box[2] + lay.cell // 4 and bx1 > box[0] and by0 < box[3] + lay.cell // 4 and by1 > box[1]:
                d.kinds[r][c] = d.looks[r][c] = UNSCORED
                n += 1
    return n


def make_case(family: str, seed: int, draw: bool = True) -> Case:
    """The screen of `family` (one of FAMILIES) drawn from `seed`, with its truth
    (`draw=False`: the truth and scene only, the frame left empty)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: one of {', '.join(FAMILIES)}")
    rng = family_rng(family, seed)
    d = common(rng, frosted=family in ("frosted", "frosted_edge"))
    lay = d.layout
    texts: tuple[tuple[str, int, int, float], ...] = ()
    if family == "live":
        add_live(rng, d)
    elif family == "moving":
        if rng.random() < 0.5:
            add_live(rng, d, 0.5)
        add_falls(rng, d)
        texts = score_texts(rng, d)
    elif family == "blockers":
        add_blockers(rng, d)
        if rng.random() < 0.4:
            add_live(rng, d)
    elif family == "holes":
        add_holes(rng, d)
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "frosted":
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "edge_columns":
        add_edge_lines(rng, d)
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "crates":
        add_spans(rng, d)
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "frosted_edge":
        add_soft_frost(rng, d)
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "cut_corners":
        add_cuts(rng, d)
        if rng.random() < 0.3:
            add_live(rng, d)
    elif family == "dialog":
        total = lay.rows * lay.cols
        x0, y0, x1, y1 = lay.bbox
        for _ in range(50):
            wc = int(rng.integers(max(3, lay.cols // 2), lay.cols + 1))
            hr = int(rng.integers(2, lay.rows))
            if 0.08 <= wc * hr / total <= 0.4:
                break
        c0, r0 = int(rng.integers(0, lay.cols - wc + 1)), int(rng.integers(0, lay.rows - hr + 1))
        inset = int(lay.cell * 0.3)
        box = (x0 + c0 * lay.cell + inset, y0 + r0 * lay.cell + inset,
               x0 + (c0 + wc) * lay.cell - inset, y0 + (r0 + hr) * lay.cell - inset)  # fmt: skip
        n = _cover(d, box)
        return finish(family, seed, rng, d, f"a dialog over {n} of {total} cells", dialog=box, draw=draw)
    elif family == "dim":
        x0, y0, x1, y1 = lay.bbox
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        bw, bh = int(lay.width * rng.uniform(0.6, 0.85)), int((y1 - y0) * rng.uniform(0.35, 0.7))
        box = (cx - bw // 2, cy - bh // 2, cx + bw // 2, cy + bh // 2)
        _cover(d, box)
        return finish(family, seed, rng, d, "the screen is dimmed under a popup", dialog=box,
                      dim=float(rng.uniform(0.5, 0.7)), draw=draw)  # fmt: skip
    return finish(family, seed, rng, d, texts=texts, draw=draw)


def cases(families: tuple[str, ...] = FAMILIES, per_family: int = 3, seed: int = 0) -> list[tuple[str, int]]:
    """(family, seed) pairs of a benchmark run: `per_family` consecutive seeds from `seed`."""
    return [(f, seed + i) for f in families for i in range(per_family)]
