"""Colour kinds: the appearance classes a player sees as one colour.

Calibration splits cells by how they look, so on a live frame one gem colour comes out
as several classes: the plain tile, a lit one, a shaded one, a special with a mark on
it, one caught mid-spin or half-way into its cell. A player matches them all as one
colour. This module groups the classes of one calibration into kinds, from the screen
alone.

What stays the same across those looks is the hue of the piece's coloured pixels:
lighting and shading scale a colour, glow blends it with white, a mark covers part of
the piece, and none of that moves its hue. So each class is described by

- its cells' object pixels (the piece on top, without the slot it sits in; see
  `agent.vision.layers.object_mask`; a tile that fills its cell is all pixels),
- the share of them that are coloured (RGB chroma, max - min, at least CHROMA_MIN), and
- the hue histogram of the coloured ones, compared by earth mover's distance on the hue
  circle (degrees), which moves gracefully with a shifted hue where bin-by-bin measures
  jump. The hue is HSV's: blending with white or black keeps it exactly, and exchanging
  red and blue reflects it, so every distance, and every decision, is the same whether
  a frame came as BGR or RGB.

A class whose object pixels are mostly grey (white, grey or black pieces) has no hue to
speak of: it is *achromatic* and compared only with other achromatic classes, by the
mean Lab colour of its object pixels. Lit gems of other colours keep their coloured
pixels, so they stay chromatic and never fall into the white kind.

Which classes are the kinds? A colour that is on the board as plain tiles occurs many
times; its variants are a few cells each. Classes of at least ANCHOR_MIN cells and a
quarter of the largest class are *anchors*: each is a kind of its own and two anchors
are never merged (two frequent classes of one hue are different tiles to the game: a
cracked and a plain blocker). A smaller class joins the anchor nearest in its
signature only when both hold:

- it lies inside that anchor's territory: nearer than half the distance from the anchor
  to the nearest other anchor (the scale of "a different colour" on this very screen;
  by the triangle inequality it is then nearer this anchor than any other);
- it is at most RATIO times as far from it as from the second-nearest anchor. A colour
  with no anchor of its own (a lone cyan beside blue, a pink beside red) sits between
  two anchors; a variant sits on one. Measured: variants on the 20 Bejeweled Blitz
  crops at most 0.32, lone colours on the synthetic boards at least 0.48.

Anything else (a multicoloured special, a piece mid-fall between two colours, a tile
covered by a score) stays a kind of its own: an unmerged variant costs a class, a wrong
merge a misread board.

Each class also gets its role (agent.vision.roles): anchors are tiles, joined classes
specials of their colour, an unjoined class of many hues at once a colourless special,
and, where the game's rules say where matchable pieces cannot lie (`RoleHints`), classes
that lie there are blockers, "#" in the kinds view.

Empty cells and holes are ".", unknown cells "?", in both views.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.cluster import CLASS_NAMES
from agent.vision.layers import object_mask
from agent.vision.roles import (
    BLOCK_SHARE, MIN_SYMMETRIC, MULTICOLOUR, MULTICOLOUR_SHARE, RUN_SHARE, SPAN_CELLS, SYMMETRY_CHANCE, RoleHints,
    colour_name, hue_resultant, in_blocks, in_runs, kind_for, spanning_groups, symmetry_chance,
)  # fmt: skip

CHROMA_MIN = 0.12  # max - min of RGB in [0, 1]: a pixel less colourful than this is grey (white, black, glow)
ACHROMATIC_SHARE = 0.25  # a class with fewer coloured object pixels than this has no hue
MIN_OBJECT = 0.15  # an object mask covering less of the cell than this is noise: use every pixel
HUE_BINS = 36
ANCHOR_MIN = 3  # cells: never an anchor with fewer (three make a match)
ANCHOR_SHARE = 0.25  # ... nor with fewer than this share of the largest class's cells
TERRITORY = 0.5  # of the distance to the nearest other anchor
RATIO = 0.4  # at most this share of the distance to the second-nearest anchor (see _joins)


@dataclass(frozen=True)
class Kind:
    """One colour kind: its letter (that of its largest class; "#" for the blockers),
    the classes in it, and what it looks like (a representative BGR of its pieces, for a
    legend)."""

    letter: str
    classes: tuple[str, ...]
    bgr: tuple[int, int, int]
    achromatic: bool
    cells: int


@dataclass(frozen=True)
class KindMap:
    """Class letter -> kind letter (the colour's, whatever the role), the role and a
    plain name of every class, and the kinds. Labels it does not know ('.', '?', a class
    it was not made with) map to themselves."""

    of_class: dict[str, str]
    kinds: list[Kind] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    bgr: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # per class, for legends

    def kind_of(self, label: str) -> str:
        """The class's letter in the kinds view: its colour, "#" blocker, "." no tile."""
        return kind_for(label, self.roles.get(label), self.of_class.get(label))

    def grid(self, labels: Sequence[Sequence[str]]) -> list[list[str]]:
        return [[self.kind_of(v) for v in row] for row in labels]


@dataclass(frozen=True)
class _Signature:
    hue: np.ndarray  # (HUE_BINS,) normalised histogram of the coloured object pixels
    share: float  # coloured share of the object pixels
    lab: np.ndarray  # (views, 3) mean Lab of the object pixels, in each view

    @property
    def achromatic(self) -> bool:
        return self.share < ACHROMATIC_SHARE


def _object_mask(views: Sequence[np.ndarray], i: int, margin: int) -> np.ndarray:
    """Where cell i's piece is, inside the margin: the object in every view (so the same
    whichever channel order came first), or the whole inner cell when that is too small
    to be a piece (a tile that fills its cell has no object of its own)."""
    s = views[0].shape[1]
    mask = np.logical_and.reduce([object_mask(v[i]) for v in views])[margin : s - margin, margin : s - margin]
    return mask if mask.mean() >= MIN_OBJECT else np.ones_like(mask)


def hexagon_hue(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, 3) colours in [0, 1] -> (hue in degrees [0, 360), chroma max - min) of HSV.

    HSV's hue rather than Lab's because exchanging red and blue reflects it exactly
    (h -> 240 - h), so distances between hues, and every decision made on them, are the
    same whichever channel order a frame came in."""
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    mx, mn = rgb.max(axis=1), rgb.min(axis=1)
    c = mx - mn
    safe = np.where(c > 0, c, 1.0)
    h = np.where(mx == r, ((g - b) / safe) % 6.0, np.where(mx == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0))
    return (h * 60.0) % 360.0, c


def _cell_signature(rgb: np.ndarray, labs: list[np.ndarray]) -> tuple[np.ndarray, float, np.ndarray]:
    """One cell's object pixels (RGB, and Lab in each view) -> (hue histogram, coloured
    share, mean Lab per view stacked)."""
    hue, chroma = hexagon_hue(rgb)
    coloured = chroma >= CHROMA_MIN
    # bins centred on multiples of the bin width: the red-blue reflection then maps bins
    # onto bins, and the pure hues a renderer draws (0, 60, 120 ...) sit mid-bin
    bins = np.floor(hue[coloured] * (HUE_BINS / 360.0) + 0.5).astype(np.int64) % HUE_BINS
    hist = np.bincount(bins, minlength=HUE_BINS).astype(np.float64)
    total = hist.sum()
    return (hist / total if total else hist), float(coloured.mean()), np.stack([lab.mean(axis=0) for lab in labs])


def _class_signatures(flat: list[str], views: Sequence[np.ndarray], margin: int, names: list[str]) -> dict[str, _Signature]:
    """Per class: the mean of its cells' signatures, each cell weighted alike."""
    s = views[0].shape[1]
    per_cell = {}
    for i, v in enumerate(flat):
        if v not in names:
            continue
        mask = _object_mask(views, i, margin)
        labs = [view[i][margin : s - margin, margin : s - margin][mask] for view in views]
        rgb = cv2.cvtColor(labs[0].reshape(1, -1, 3).astype(np.float32), cv2.COLOR_Lab2RGB).reshape(-1, 3)
        per_cell[i] = _cell_signature(rgb.astype(np.float64).clip(0.0, 1.0), labs)
    out = {}
    for name in names:
        sigs = [per_cell[i] for i, v in enumerate(flat) if v == name]
        hue = np.mean([h for h, _, _ in sigs], axis=0)
        total = hue.sum()
        out[name] = _Signature(hue / total if total else hue, float(np.mean([c for _, c, _ in sigs])),
                               np.mean([m for _, _, m in sigs], axis=0))  # fmt: skip
    return out


def hue_distance(p: np.ndarray, q: np.ndarray) -> float:
    """Earth mover's distance between two normalised hue histograms on the circle, in
    degrees (the cumulative difference less its median: Werman, Peleg and Rosenfeld)."""
    d = np.cumsum(p - q)
    return float(np.abs(d - np.median(d)).sum() * (360.0 / len(p)))


def lab_distance(a: _Signature, b: _Signature) -> float:
    """Between the mean colours of two classes: RMS over the views, so it is the same
    whichever channel order came first."""
    return float(np.sqrt(np.mean(((a.lab - b.lab) ** 2).sum(axis=1))))


def _distance(a: _Signature, b: _Signature) -> float:
    """Between two classes of one family: hue for coloured ones, mean Lab for grey ones."""
    if a.achromatic and b.achromatic:
        return lab_distance(a, b)
    return hue_distance(a.hue, b.hue)


def _joins(sigs: dict[str, _Signature], anchors: list[str], small: list[str]) -> dict[str, str]:
    """Which small classes join which anchor (see the module docstring)."""
    out: dict[str, str] = {}
    for v in small:
        sv = sigs[v]
        family = [a for a in anchors if sigs[a].achromatic == sv.achromatic]
        if not family:
            continue
        ds = sorted((_distance(sv, sigs[a]), a) for a in family)
        d1, best = ds[0]
        # the scale of "another colour" around this anchor: its nearest other anchor
        # (for a grey anchor, any anchor: by mean Lab, which a hue cannot give)
        others = [a for a in anchors if a != best]
        if not others:
            continue
        sb = sigs[best]
        if sb.achromatic:
            gap = min(lab_distance(sb, sigs[a]) for a in others)
        else:
            coloured = [a for a in others if not sigs[a].achromatic]
            if not coloured:
                continue
            gap = min(hue_distance(sb.hue, sigs[a].hue) for a in coloured)
        if d1 >= TERRITORY * gap:
            continue
        if len(ds) > 1 and d1 > RATIO * ds[1][0]:
            continue
        out[v] = best
    return out


def _bgr(lab: np.ndarray) -> tuple[int, int, int]:
    px = np.asarray(lab, dtype=np.float32).reshape(1, 1, 3)
    b, g, r = (cv2.cvtColor(px, cv2.COLOR_Lab2BGR).reshape(3) * 255.0).clip(0, 255).round().astype(int)
    return int(b), int(g), int(r)


def kinds_of(labels: Sequence[Sequence[str]], views: Sequence[np.ndarray], margin: int = 0,
             hints: RoleHints | None = None) -> KindMap:  # fmt: skip
    """Group a calibration's classes into colour kinds.

    `labels` the classes per cell (rows x cols; "." and "?" are no class), `views` the
    cells' sampled Lab images (n, s, s, 3), the frame read in one or more channel orders
    with the first in the frame's own (BGR) order (the kinds' legend colours come from
    it), `margin` samples of each cell's border to leave out (see
    agent.vision.calibrate.CellSamples). With both orders the result is the same
    whichever is first, colours aside. `hints` (the game's, see agent.vision.roles) let
    blockers be told by where they lie; without them no class is a blocker."""
    flat = [v for row in labels for v in row]
    if not views:
        raise ValueError("kinds need the cells' pixels: at least one view")
    counts: dict[str, int] = {}
    for v in flat:
        if v not in (EMPTY_LABEL, UNKNOWN_LABEL):
            counts[v] = counts.get(v, 0) + 1
    names = sorted(counts)
    if not names:
        return KindMap({})
    for view in views:
        if len(view) != len(flat):
            raise ValueError(f"{len(flat)} labels for {len(view)} cells in a view")
    sigs = _class_signatures(flat, views, margin, names)
    floor = max(ANCHOR_MIN, ANCHOR_SHARE * max(counts.values()))
    anchors = [n for n in names if counts[n] >= floor]
    small = [n for n in names if counts[n] < floor]
    joins = _joins(sigs, anchors, small)
    of_class = {n: n for n in names} | joins
    roles = {n: "tile" if n in anchors or n not in joins else "special" for n in names}
    for n in small:
        sig = sigs[n]
        if n not in joins and not sig.achromatic and sig.share >= MULTICOLOUR_SHARE and hue_resultant(sig.hue) < MULTICOLOUR:
            roles[n] = "colourless"
    if hints is not None:
        blockers = _blockers(labels, names, counts, sigs, anchors, of_class, hints)
        for n in blockers:
            roles[n] = "blocker"
            if of_class[n] not in blockers:
                # joined to a colour by its hue, it is no look of that colour: a kind of
                # its own (else every later look of that colour would be taken for it)
                of_class[n] = n
    bgr = {n: _bgr(sigs[n].lab[0]) for n in names}
    kinds = []
    for letter in sorted(set(of_class.values())):
        members = tuple(n for n in names if of_class[n] == letter)
        sig = sigs[letter]
        kinds.append(Kind(letter, members, bgr[letter], sig.achromatic, sum(counts[n] for n in members)))
    return KindMap(of_class, kinds, roles, _names(names, roles, of_class, bgr), bgr)


def _blockers(labels: Sequence[Sequence[str]], names: list[str], counts: dict[str, int], sigs: dict[str, _Signature],
              anchors: list[str], of_class: dict[str, str], hints: RoleHints) -> set[str]:  # fmt: skip
    """The classes whose place on the board says they are not matchable (see roles)."""
    rows, cols = len(labels), len(labels[0]) if labels else 0
    board = {(r, c) for r, row in enumerate(labels) for c, v in enumerate(row) if v != EMPTY_LABEL}
    where = {n: {(r, c) for r, row in enumerate(labels) for c, v in enumerate(row) if v == n} for n in names}
    out: set[str] = set()
    if hints.run_length is not None:
        # A colour matches in all its looks (a special lies in a line with its plain
        # tiles as surely as they do), so no colour kind lies n in a line at rest either:
        # a block of crates whose cracked and banded looks joined the crate's colour shows
        # its runs only as a kind.
        for kind in set(of_class.values()):
            members = [n for n in names if of_class[n] == kind]
            cells = set().union(*(where[n] for n in members))
            if len(members) > 1 and len(in_runs(cells, hints.run_length)) >= RUN_SHARE * len(cells):
                out.update(members)
    for n in names:
        cells = where[n]
        if n in out:
            continue
        if hints.run_length is not None and len(in_runs(cells, hints.run_length)) >= RUN_SHARE * len(cells) > 0:
            out.add(n)
        elif hints.symmetric_layouts and len(cells) >= MIN_SYMMETRIC:
            chance = symmetry_chance(cells, board, rows, cols)
            if chance is not None and chance < SYMMETRY_CHANCE:
                out.add(n)
    if hints.run_length is not None:
        # two looks that fill a block together: the plain and the cracked crates of one
        # block (two frequent looks of one hue are never joined into a kind)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if a in out or b in out or min(len(where[a]), len(where[b])) < 2:
                    continue
                both = where[a] | where[b]
                square = in_blocks(both)
                if (len(both) >= SPAN_CELLS and len(square) >= BLOCK_SHARE * len(both)
                        and len(in_runs(both, hints.run_length)) >= RUN_SHARE * len(both)
                        and all(2 * len(where[n] & square) >= len(where[n]) for n in (a, b))):  # fmt: skip
                    out |= {a, b}
    if hints.symmetric_layouts:
        # a piece drawn over several cells is no tile: an obstacle of the level's design
        for group in spanning_groups(where):
            out |= group
        # a rarer look of an obstacle: symmetric itself, and its nearest colour an obstacle
        for n in names:
            if n in out or n in anchors:
                continue
            family = [a for a in anchors if sigs[a].achromatic == sigs[n].achromatic]
            if not family:
                continue
            nearest = min(family, key=lambda a: _distance(sigs[n], sigs[a]))
            if nearest in out and symmetry_chance(where[n], board, rows, cols) is not None:
                out.add(n)
    # every look joined to an obstacle's colour is that obstacle
    out |= {n for n in names if of_class[n] in out}
    return out


def _names(names: list[str], roles: dict[str, str], of_class: dict[str, str],
           bgr: dict[str, tuple[int, int, int]]) -> dict[str, str]:  # fmt: skip
    """A plain name per class ("red tile", "red special", "grey blocker"); a name two
    classes would share gets the class letter."""
    raw = {}
    for n in names:
        role = roles[n]
        colour = "multicolour" if role == "colourless" else colour_name(bgr[of_class[n]])
        raw[n] = f"{colour} {'special' if role == 'colourless' else role}"
    seen: dict[str, int] = {}
    for v in raw.values():
        seen[v] = seen.get(v, 0) + 1
    return {n: v if seen[v] == 1 else f"{v} {n}" for n, v in raw.items()}




# -- two colours in one class ------------------------------------------------------------------

SPLIT_GAP = 30.0  # degrees of hue between two groups of one class's cells: two colours
SPLIT_MIN = ANCHOR_MIN  # cells in each group: fewer is a variant, not a colour


def _circular_mean(hist: np.ndarray) -> float:
    angles = (np.arange(HUE_BINS) + 0.0) * (2 * np.pi / HUE_BINS)
    return float(np.degrees(np.arctan2((hist * np.sin(angles)).sum(), (hist * np.cos(angles)).sum())) % 360.0)


def _two_hue_groups(hues: np.ndarray) -> np.ndarray | None:
    """Split angles (degrees) into two groups at the two widest gaps on the circle, when
    both gaps are at least SPLIT_GAP and both groups hold SPLIT_MIN: a mask of one group,
    or None (one colour)."""
    order = np.argsort(hues)
    h = hues[order]
    gaps = np.diff(np.concatenate([h, h[:1] + 360.0]))  # gap after each angle, around the circle
    if len(h) < 2 * SPLIT_MIN:
        return None
    a, b = sorted(np.argsort(gaps)[-2:])
    if gaps[a] < SPLIT_GAP or gaps[b] < SPLIT_GAP:
        return None
    group = np.zeros(len(h), bool)
    group[order[a + 1 : b + 1]] = True  # the angles between the two gaps
    if min(group.sum(), (~group).sum()) < SPLIT_MIN:
        return None
    return group


def split_mixed_colours(labels: Sequence[Sequence[str]], views: Sequence[np.ndarray], margin: int = 0) -> list[list[str]]:
    """`labels` with every class that holds two colours split in two.

    The appearance cut is made on whole cells, so where pieces are small beside a bold
    outline and slot, two colours of one shape family (a purple star, a blue moon) can
    fall into one class. Each coloured cell's piece has one hue (lighting, shading, glow
    and marks do not move it), so a class whose cells' hues form two groups apart by
    SPLIT_GAP on both sides, each of SPLIT_MIN cells or more, is two colours; the smaller
    group gets a new letter. Classes are then lettered again in reading order. Grey
    pieces and cells with too few coloured pixels keep their class."""
    flat = [v for row in labels for v in row]
    cols = len(labels[0]) if labels else 0
    names = sorted(set(flat) - {EMPTY_LABEL, UNKNOWN_LABEL})
    if not names:
        return [list(row) for row in labels]
    s = views[0].shape[1]
    out = list(flat)
    fresh = iter(n for n in CLASS_NAMES if n not in names)
    changed = False
    for name in names:
        idx = [i for i, v in enumerate(flat) if v == name]
        if len(idx) < 2 * SPLIT_MIN:
            continue
        hues, ok = [], []
        for i in idx:
            mask = _object_mask(views, i, margin)
            lab = views[0][i][margin : s - margin, margin : s - margin][mask]
            rgb = cv2.cvtColor(lab.reshape(1, -1, 3).astype(np.float32), cv2.COLOR_Lab2RGB).reshape(-1, 3)
            hist, share, _ = _cell_signature(rgb.astype(np.float64).clip(0.0, 1.0), [lab])
            ok.append(share >= ACHROMATIC_SHARE)
            hues.append(_circular_mean(hist))
        coloured = [i for i, good in zip(idx, ok) if good]
        if len(coloured) < 2 * SPLIT_MIN:
            continue
        group = _two_hue_groups(np.array([h for h, good in zip(hues, ok) if good]))
        if group is None:
            continue
        new = next(fresh)
        for i, g in zip(coloured, group):
            if g:
                out[i] = new
        changed = True
    if not changed:
        return [list(row) for row in labels]
    return _reletter([out[r * cols : (r + 1) * cols] for r in range(len(labels))])


def _reletter(labels: list[list[str]]) -> list[list[str]]:
    """Classes lettered A, B, C ... in reading order of their first cell."""
    letters = iter(CLASS_NAMES)
    seen: dict[str, str] = {}
    out = []
    for row in labels:
        line = []
        for v in row:
            if v not in (EMPTY_LABEL, UNKNOWN_LABEL) and v not in seen:
                seen[v] = next(letters)
            line.append(seen.get(v, v))
        out.append(line)
    return out


__all__ = ["Kind", "KindMap", "hexagon_hue", "hue_distance", "kinds_of", "split_mixed_colours"]
