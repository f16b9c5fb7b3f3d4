"""What the saga game's tiles look like: cut from the shared real shots, or drawn.

When the shared folder holds the labelled Bejeweled Blitz crops (`realshots/bbb/`,
found from `PUZZLE_AGENT_SHOTS` or `shared/realshots` beside the repository), each
colour's look is cut from them: of all the cells labelled with that colour, the few
closest to the colour's median cell (so a gem at rest, not one mid-spin, glowing or
under a score popup), with a mask cut from the median (what differs from the cell's
background, its largest blob with the holes filled). Nothing cut is written anywhere:
it lives in memory. Without the shots, the looks are drawn (`lookalike.pieces`, faceted
gems). Specials and blockers are drawn over or beside them: a striped special is its
colour's tile with stripes, a colour bomb a dark sphere with sparks, a crate a wooden
box that looks cracked with one hit left (a crate of three hits has iron bands until its first hit).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from agent.games.match3.lookalike.paint import Sprite
from agent.games.match3.lookalike.pieces import PALETTE, TileLook, blocker_sprite, colourless_sprite, tile_sprite
from agent.games.match3.saga.rules import BOMB, PLAIN, STRIPED_COL, STRIPED_ROW

# The colour letters of the crops' labels, in the game's colour order (A, B, C, ...).
SHOT_COLOURS = ("R", "G", "B", "Y", "O", "P", "W")
DRAWN_COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "white")
EXEMPLARS = 3
SHOTS_ENV = "PUZZLE_AGENT_SHOTS"
REAL, DRAWN = "real shots", "drawn"


def shots_dir(shots: Path | None = None) -> Path:
    """Where the shared real shots are (the folder holding `bbb/`): `shots`, else
    $PUZZLE_AGENT_SHOTS, else `shared/realshots` beside the repository this package runs
    from. A `shared` folder (one holding `realshots/`) is taken for its `realshots`."""
    env = os.environ.get(SHOTS_ENV)
    if shots is not None:
        folder = Path(shots)
    elif env:
        folder = Path(env)
    else:
        import agent

        folder = Path(agent.__file__).resolve().parents[2] / "shared" / "realshots"
    if not (folder / "bbb").is_dir() and (folder / "realshots").is_dir():
        return folder / "realshots"
    return folder


@dataclass(frozen=True)
class Cut:
    """One colour's exemplars as cut: BGR uint8 crops and a shared alpha, at the shots' size."""

    crops: tuple[np.ndarray, ...]
    alpha: np.ndarray  # float32 in [0, 1]


def _mask_of(median: np.ndarray) -> np.ndarray:
    n = median.shape[0]
    ring = np.concatenate([median[:2].reshape(-1, 3), median[-2:].reshape(-1, 3),
                           median[:, :2].reshape(-1, 3), median[:, -2:].reshape(-1, 3)])  # fmt: skip
    bg = np.median(ring, 0)
    d = np.abs(median.astype(np.float32) - bg).max(2)
    fg = (d > 40).astype(np.uint8)
    count, lab, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=4)
    if count <= 1:
        return np.zeros((n, n), np.float32)
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    blob = (lab == big).astype(np.uint8) * 255
    # fill holes: what the outside flood does not reach is inside
    flood = blob.copy()
    cv2.floodFill(flood, np.zeros((n + 2, n + 2), np.uint8), (0, 0), 255)
    blob = blob | cv2.bitwise_not(flood)
    blob = cv2.dilate(blob, np.ones((3, 3), np.uint8))  # the dark outline of the piece
    return np.asarray(cv2.GaussianBlur(blob.astype(np.float32) / 255, (3, 3), 0.8), np.float32)


@lru_cache(maxsize=4)
def cut_from_shots(folder: Path) -> dict[str, Cut] | None:
    """Every colour's exemplars cut from `folder`'s bbb crops; None when they are not there."""
    from agent.errors import AgentError
    from agent.vision.images import read_image
    from agent.vision.scoring import BBB_CELL, read_dat

    bbb = folder / "bbb"
    labelled = []
    for dat in sorted(bbb.glob("*.dat")) if bbb.is_dir() else []:
        try:
            labelled.append((read_image(dat.with_suffix(".png")), read_dat(dat)))
        except AgentError:
            continue  # a crop that cannot be read is one exemplar fewer
    crops: dict[str, list[np.ndarray]] = {}
    n = BBB_CELL
    for img, cells in labelled:
        for r, row in enumerate(cells):
            for c, v in enumerate(row):
                crop = img[r * n : (r + 1) * n, c * n : (c + 1) * n]
                if v in SHOT_COLOURS and crop.shape[:2] == (n, n):
                    crops.setdefault(v, []).append(crop)
    if any(len(crops.get(k, ())) < EXEMPLARS for k in SHOT_COLOURS):
        return None
    out = {}
    for k in SHOT_COLOURS:
        stack = np.stack(crops[k]).astype(np.float32)
        median = np.median(stack, 0)
        dist = np.abs(stack - median).mean((1, 2, 3))
        best = np.argsort(dist, kind="stable")[:EXEMPLARS]
        out[k] = Cut(tuple(crops[k][int(i)] for i in best), _mask_of(median.astype(np.uint8)))
    return out


# Names of labelled classes that are specials or overlays, not a colour of their own.
_NOT_A_COLOUR = ("hypercube", "plus", "bubblegum", "bomb", "striped")


@lru_cache(maxsize=8)
def cut_from_labels(folder: Path, game: str, pick: int = 0) -> dict[str, Cut] | None:
    """Each colour class of `game`'s labelled shot (labels.json in `folder`) cut from its
    cells as the bbb crops are: the exemplars nearest the class median, from the
    `pick`-th on (another pick, other exemplars where there are enough), and a mask
    from the median. None when the shot or its labels are not there."""
    import json

    from agent.vision.images import read_image

    try:
        labels = json.loads((folder / "labels.json").read_text())
        entry = next(e for e in labels if e.get("game") == game)
        img = read_image(folder / game / entry["file"])
    except (OSError, ValueError, StopIteration, KeyError):
        return None
    except Exception:  # an unreadable image is no art, not a crash
        return None
    x0, y0, x1, y1 = (int(v) for v in entry["board_bbox"])
    rows, cols = int(entry["rows"]), int(entry["cols"])
    cw, ch = (x1 - x0) / cols, (y1 - y0) / rows
    n = max(16, int(min(cw, ch)))
    crops: dict[str, list[np.ndarray]] = {}
    for r, line in enumerate(entry["cells"]):
        for c, name in enumerate(line):
            if name == "." or any(bad in name for bad in _NOT_A_COLOUR):
                continue
            cx0, cy0 = int(x0 + c * cw), int(y0 + r * ch)
            crop = img[cy0 : cy0 + int(ch), cx0 : cx0 + int(cw)]
            if crop.size:
                crops.setdefault(name, []).append(cv2.resize(crop, (n, n), interpolation=cv2.INTER_AREA))
    out = {}
    for name in sorted(crops, key=lambda k: (-len(crops[k]), k)):
        if len(crops[name]) < 3:
            continue
        stack = np.stack(crops[name]).astype(np.float32)
        median = np.median(stack, 0)
        order = np.argsort(np.abs(stack - median).mean((1, 2, 3)), kind="stable")
        start = min(pick * EXEMPLARS, max(0, len(order) - EXEMPLARS))
        best = order[start : start + EXEMPLARS]
        alpha = _mask_of(median.astype(np.uint8))
        if not 0.2 <= float(alpha.mean()) <= 0.92:  # tiles packed edge to edge: no background to cut away
            alpha = _rounded_mask(n)
        out[name] = Cut(tuple(crops[name][int(i)] for i in best), alpha)
    return out or None


def _rounded_mask(n: int) -> np.ndarray:
    m = np.zeros((n, n), np.uint8)
    r = n // 6
    cv2.rectangle(m, (r, 2), (n - 1 - r, n - 3), 255, -1)
    cv2.rectangle(m, (2, r), (n - 3, n - 1 - r), 255, -1)
    for cx, cy in ((r + 2, r + 2), (n - 3 - r, r + 2), (r + 2, n - 3 - r), (n - 3 - r, n - 3 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return np.asarray(cv2.GaussianBlur(m.astype(np.float32) / 255, (3, 3), 0.8), np.float32)


@dataclass
class TileArt:
    """Sprites of one game at any cell size, made on first use and kept in memory.

    A sprite is (bgr uint8 (n, n, 3), alpha float32 (n, n)); keys are
    ("tile", colour, special, variant), ("blocker", hits) and ("bomb",)."""

    source: str  # REAL or DRAWN
    cuts: dict[str, Cut] | None
    order: tuple[str, ...] = SHOT_COLOURS  # the cuts' keys in colour order
    _cache: dict[tuple[object, ...], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def load(cls, shots: Path | None = None) -> TileArt:
        folder = shots_dir(shots)
        cuts = cut_from_shots(folder) if folder.is_dir() else None
        return cls(REAL if cuts else DRAWN, cuts)

    @classmethod
    def for_world(cls, art: str, pick: int = 0, shots: Path | None = None) -> TileArt:
        """A family world's art: "bbb" as the old game's (other exemplars for another
        pick), another labelled set of the shared shots, or "drawn". Drawn when the
        shots are not there; a set with fewer colours than a level needs lends the
        rest from the drawn looks."""
        folder = shots_dir(shots)
        if art == "drawn" or not folder.is_dir():
            return cls(DRAWN, None)
        if art == "bbb":
            cuts = cut_from_shots(folder)
            if cuts and pick:
                cuts = {k: Cut(v.crops[::-1], v.alpha) for k, v in cuts.items()}
            return cls(REAL if cuts else DRAWN, cuts)
        got = cut_from_labels(folder, art, pick)
        if not got:
            return cls(DRAWN, None)
        return cls(REAL, got, tuple(got))

    @property
    def colours(self) -> int:
        """How many colours the art has of its own."""
        return len(self.order) if self.cuts else len(DRAWN_COLOURS)

    @property
    def variants(self) -> int:
        return EXEMPLARS if self.cuts else 1

    def sprite(self, key: tuple[object, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
        full = (*key, n)
        got = self._cache.get(full)
        if got is None:
            got = self._make(key, n)
            self._cache[full] = got
        return got

    def _make(self, key: tuple[object, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(7)  # the same sparks and grain every time
        if key[0] == "bomb":
            s = colourless_sprite("sphere", n, rng)
            return _u8(s.bgr), s.alpha
        if key[0] == "blocker":
            hits = int(key[1])  # type: ignore[call-overload]
            s = blocker_sprite("crate", n, rng)
            bgr = _u8(s.bgr)
            if hits == 1:
                bgr = _cracked(bgr, n)
            elif hits >= 3:
                bgr = _banded(bgr, n)
            return bgr, s.alpha
        _, colour, special, variant = key
        bgr, alpha = self._tile(int(colour), int(variant), n)  # type: ignore[call-overload]
        if special in (STRIPED_ROW, STRIPED_COL):
            bgr = _striped(bgr, alpha, special == STRIPED_ROW)
        return bgr, alpha

    def _tile(self, colour: int, variant: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.cuts and colour < len(self.order):
            cut = self.cuts[self.order[colour]]
            crop = cut.crops[variant % len(cut.crops)]
            bgr = cv2.resize(crop, (n, n), interpolation=cv2.INTER_CUBIC)
            alpha = cv2.resize(cut.alpha, (n, n), interpolation=cv2.INTER_LINEAR)
            return bgr, np.clip(alpha, 0, 1).astype(np.float32)
        look = _drawn_look()
        s: Sprite = tile_sprite(look, colour % len(look.colours), n)
        return _u8(s.bgr), s.alpha


@lru_cache(maxsize=1)
def _drawn_look() -> TileLook:
    palette = dict(PALETTE)
    colours = tuple(palette[name] for name in DRAWN_COLOURS)
    shapes = ("square", "octagon", "diamond", "hexagon", "pentagon", "triangle", "round")
    return TileLook("gem", colours, shapes, 0.84)


def _u8(img: np.ndarray) -> np.ndarray:
    return np.clip(img * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _striped(bgr: np.ndarray, alpha: np.ndarray, across: bool) -> np.ndarray:
    """Light bands over the piece: along the row it clears, or down its column."""
    n = bgr.shape[0]
    m = np.zeros((n, n), np.uint8)
    w = max(2, n // 12)
    for k in (-1, 0, 1):
        p = int(n / 2 + k * n * 0.2)
        if across:
            cv2.line(m, (0, p), (n - 1, p), 255, w, cv2.LINE_AA)
        else:
            cv2.line(m, (p, 0), (p, n - 1), 255, w, cv2.LINE_AA)
    a = (m.astype(np.float32) / 255 * alpha * 0.85)[..., None]
    out = bgr.astype(np.float32) * (1 - a) + 255.0 * a
    return np.clip(out, 0, 255).astype(np.uint8)


def _cracked(bgr: np.ndarray, n: int) -> np.ndarray:
    """A crate after its first hit: dark cracks across it and a darker face."""
    out = (bgr.astype(np.float32) * 0.8).astype(np.uint8)
    pts = [(int(0.2 * n), int(0.1 * n)), (int(0.45 * n), int(0.45 * n)), (int(0.35 * n), int(0.7 * n)),
           (int(0.6 * n), int(0.92 * n))]  # fmt: skip
    t = max(2, n // 25)
    for p, q in zip(pts, pts[1:]):
        cv2.line(out, p, q, (20, 25, 30), t, cv2.LINE_AA)
    cv2.line(out, pts[1], (int(0.85 * n), int(0.3 * n)), (20, 25, 30), t, cv2.LINE_AA)
    return out


def _banded(bgr: np.ndarray, n: int) -> np.ndarray:
    """A crate that takes three hits: iron bands across it."""
    out = bgr.copy()
    t = max(2, n // 9)
    for y in (int(0.3 * n), int(0.7 * n)):
        cv2.rectangle(out, (int(0.08 * n), y - t // 2), (int(0.92 * n), y + t // 2), (95, 100, 105), -1)
        for x in (int(0.2 * n), int(0.5 * n), int(0.8 * n)):
            cv2.circle(out, (x, y), max(1, t // 3), (200, 205, 210), -1, cv2.LINE_AA)
    return out


def sprite_key(colour: int, special: int, variant: int) -> tuple[object, ...]:
    if special == BOMB:
        return ("bomb",)
    return ("tile", int(colour), int(special) if special != PLAIN else PLAIN, int(variant))
