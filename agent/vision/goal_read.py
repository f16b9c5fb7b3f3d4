"""Reading a level's goal off a screen: an intro card's words, the header's goal badge.

Games say a goal in a few ways: "Collect 12", "Collect 12 red", "Break 20 boxes",
"Clear 20 crates", "Reach 5000 points", "Target 3000", "Score 3000 to win"; the header
shows what is left as a number beside the goal piece's icon ("12", "12 left") or counts
up ("3/12"). The words come from OCR (`agent.vision.ocr.Word`s); the icon beside the
number is matched against the board's own classes (the profile's exemplars), which
gives the colour kind to collect, or a blocker for a goal of breaking them. A colour
named in words is matched to the class whose colour has that name.

Nothing is guessed: a count that cannot be read is None, and a collect goal whose colour
cannot be told is returned without one (`Goal.playable` is then False: it is played as
a level without a goal).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from agent.vision.features import cell_features
from agent.vision.goal import Goal, GoalKind
from agent.vision.grid import frac_to_bbox
from agent.vision.ocr import Word, flat_regions
from agent.vision.profile import GameProfile
from agent.vision.roles import colour_name

Box = tuple[int, int, int, int]

COLLECT_VERBS = ("collect", "gather", "get", "find", "match", "clear", "pop", "free")
BREAK_VERBS = ("break", "smash", "destroy", "crack", "clear", "remove", "free", "open")
SCORE_VERBS = ("reach", "target", "goal", "score", "earn", "get", "make")
BLOCKER_NOUNS = ("box", "boxes", "crate", "crates", "block", "blocks", "blocker", "blockers", "ice", "jelly",
                 "jellies", "stone", "stones", "rock", "rocks", "wall", "walls", "cage", "cages", "chain", "chains",
                 "brick", "bricks", "barrel", "barrels", "jar", "jars", "glass", "obstacle", "obstacles")  # fmt: skip
COLOUR_WORDS = {"red": "red", "green": "green", "blue": "blue", "yellow": "yellow", "orange": "orange",
                "purple": "purple", "violet": "purple", "pink": "pink", "magenta": "pink", "white": "white",
                "cyan": "cyan", "teal": "cyan", "brown": "brown", "black": "black", "grey": "grey", "gray": "grey"}  # fmt: skip
POINT_WORDS = ("points", "point", "pts")

# The icon beside a goal's number: within this many of the number's heights of it, and
# this many of them on a side (a piece drawn small or large beside a line of text).
ICON_REACH = 6.0
ICON_SIDE = (0.6, 4.5)
INK_DELTA = 22.0  # Lab delta E from the face it is on: the icon's (and text's) pixels
# A matched icon lies inside its class's territory: nearer it than this share of the way
# to the nearest other colour kind of the same profile (by the triangle inequality, it
# is then nearer that kind than any other), as agent.vision.kinds joins a class to a colour.
TERRITORY = 0.5
RATIO = 0.5
PIECE_FILLS = (0.8, 0.9, 1.0)
LINE_HEIGHTS = 1.6  # the words of one line differ in height by at most this factor  # a piece in a cell fills about this share of its side: tried each


# -- lines of words ---------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    words: tuple[Word, ...]

    @property
    def box(self) -> Box:
        return (min(w.box[0] for w in self.words), min(w.box[1] for w in self.words),
                max(w.box[2] for w in self.words), max(w.box[3] for w in self.words))  # fmt: skip

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def lines_of(words: Sequence[Word]) -> list[Line]:
    """Words grouped into lines: on one height (their middles within half a word's
    height), of about one size, and near each other (a gap under three heights), left
    to right."""
    rows: list[list[Word]] = []
    for w in sorted(words, key=lambda w: (w.centre[1], w.box[0])):
        h = max(1, w.box[3] - w.box[1])
        for row in rows:
            last = row[-1]
            lh = max(1, last.box[3] - last.box[1])
            # one line's words are about one height: a picture read as letters is not of it
            if abs(last.centre[1] - w.centre[1]) < 0.5 * max(h, lh) and 1 / LINE_HEIGHTS <= h / lh <= LINE_HEIGHTS:
                row.append(w)
                break
        else:
            rows.append([w])
    out: list[Line] = []
    for row in rows:
        row.sort(key=lambda w: w.box[0])
        part = [row[0]]
        for w in row[1:]:
            h = max(1, part[-1].box[3] - part[-1].box[1], w.box[3] - w.box[1])
            if w.box[0] - part[-1].box[2] > 3 * h:
                out.append(Line(tuple(part)))
                part = []
            part.append(w)
        out.append(Line(tuple(part)))
    return out


# -- what the words say -----------------------------------------------------------------


@dataclass(frozen=True)
class GoalWords:
    """A goal as its words say it. `kind=None`: the icon beside the count decides (a bare
    count, "Clear 20"); `score_or_icon`: a target word ("Target 3000", "Goal 12") is a
    score goal unless a piece's icon stands beside its number."""

    kind: GoalKind | None
    target: int | None
    left: int | None
    colour_word: str | None  # a colour named in the words ("red")
    noun: bool  # a blocker's noun was named ("boxes")
    number: Box  # the count's box (where its icon is looked for)
    line: Line
    score_or_icon: bool = False


def _int(text: str) -> int | None:
    digits = re.sub(r"[,.']", "", text)
    return int(digits) if digits.isdigit() else None


def _clean(text: str) -> str:
    t = text.lower().replace("|", "/").replace("\\", "/")
    t = re.sub(r"(?<=\d)\s*/\s*(?=\d)", "/", t)  # "3 / 12"
    t = re.sub(r"(?<=\d)[,.](?=\d{3}\b)", "", t)  # "5,000"
    return re.sub(r"[^a-z0-9/ ]", " ", t)


def _number_box(line: Line, value: str) -> Box:
    """The box of the word holding `value` (the count), else the line's."""
    for w in line.words:
        if re.sub(r"[^0-9/]", "", w.text) == value:
            return w.box
    for w in line.words:
        if value in re.sub(r"[^0-9/]", "", w.text):
            return w.box
    return line.box


def _count(token: str) -> tuple[int, int | None] | None:
    """(target or left, left) of "12" (12, None) or "3/12" (12, 9)."""
    m = re.fullmatch(r"(\d+)/(\d+)", token)
    if m is not None:
        got, of = int(m.group(1)), int(m.group(2))
        return (of, of - got) if got <= of else None
    n = _int(token)
    return None if n is None else (n, None)


def _verb_kind(verb: str, points: bool, colour: str | None, noun: bool) -> tuple[GoalKind | None, bool] | None:
    """(kind, score_or_icon) a verb before a count says, or None: no goal's verb."""
    if verb in SCORE_VERBS and (points or verb == "reach"):
        return "score", False
    if verb in ("target", "goal"):
        return ("collect", False) if colour else ("break", False) if noun else ("score", True)
    if verb in BREAK_VERBS or verb in COLLECT_VERBS:
        if noun:
            return "break", False
        if colour:
            return "collect", False
        if verb in BREAK_VERBS and verb in COLLECT_VERBS:
            return None, False  # "Clear 20": the icon says which
        return ("break" if verb in BREAK_VERBS else "collect"), False
    return None


def words_goal(line: Line) -> GoalWords | None:
    """The goal one line of words says, or None."""
    tokens = _clean(line.text).split()
    for i, tok in enumerate(tokens[:-1]):
        count = _count(tokens[i + 1])
        if count is None:
            continue
        n, left = count
        nxt = tokens[i + 2 : i + 4]
        colour = next((COLOUR_WORDS[x] for x in nxt if x in COLOUR_WORDS), None)
        noun = any(x in BLOCKER_NOUNS for x in nxt)
        points = bool(nxt) and nxt[0] in POINT_WORDS or " ".join(nxt) == "to win"
        said = _verb_kind(tok, points, colour, noun)
        if said is not None:
            return GoalWords(said[0], n, left, colour, noun, _number_box(line, tokens[i + 1]), line, said[1])
    if len(tokens) in (1, 2) and (count := _count(tokens[0])) is not None:
        if len(tokens) == 1 or tokens[1] in ("left", "more"):
            n, left = count
            # a bare number counts down what is left; "3/12" counts up to the target
            return GoalWords(None, n if left is not None else None, left if left is not None else n, None, False,
                             _number_box(line, tokens[0]), line)  # fmt: skip
    return None


def goal_words(words: Sequence[Word]) -> list[GoalWords]:
    return [g for line in lines_of(words) if (g := words_goal(line)) is not None]


# -- the icon ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IconMatch:
    label: str  # the profile class it matched
    kind: str  # its colour kind ("#" for a blocker)
    role: str
    box: Box  # the icon's square on the frame
    distance: float  # to the class (Lab RMS over the piece's middle)
    reach: float  # the class's territory: the match counts when distance < reach


def _centre_index(patch: int) -> np.ndarray:
    lo, hi = patch // 4, patch - patch // 4
    idx = [3 * (r * patch + c) + k for r in range(lo, hi) for c in range(lo, hi) for k in range(3)]
    return np.array(idx, np.int64)


def _references(profile: GameProfile) -> dict[str, np.ndarray]:
    """Each class's exemplars as the middle of their piece: (n, d) Lab values."""
    idx = _centre_index(profile.patch)
    refs: dict[str, list[np.ndarray]] = {}
    for e in profile.exemplars:
        if e.label in (".", "?") or profile.kind_of(e.label) == ".":
            continue
        refs.setdefault(e.label, []).append(np.asarray(e.features, np.float32)[idx])
    return {k: np.stack(v) for k, v in refs.items()}


def _rms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.sqrt(((a - b) ** 2).mean(axis=-1)))


def _kind_reach(profile: GameProfile, refs: dict[str, np.ndarray]) -> dict[str, float]:
    """Per colour kind, TERRITORY of the distance from it to the nearest other kind."""
    kinds: dict[str, list[np.ndarray]] = {}
    for label, r in refs.items():
        kinds.setdefault(profile.kind_of(label), []).append(r)
    stacked = {k: np.concatenate(v) for k, v in kinds.items()}
    out: dict[str, float] = {}
    for k, a in stacked.items():
        others = [float(_rms(a[:, None, :], b[None, :, :]).min()) for j, b in stacked.items() if j != k]
        out[k] = TERRITORY * min(others) if others else 0.0
    return out


def match_icon(frame: np.ndarray, box: Box, profile: GameProfile) -> IconMatch | None:
    """The class a piece drawn in `box` (a square about the size of a cell) is, or None
    when it lies in no class's territory."""
    refs = _references(profile)
    if not refs:
        return None
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    f = cell_features(frame, (x0, y0, x1, y1), 1, 1, inset=profile.inset, patch=profile.patch)[0]
    v = f[_centre_index(profile.patch)]
    dists = {label: float(_rms(r, v[None, :]).min()) for label, r in refs.items()}
    label = min(dists, key=lambda k: dists[k])
    kind = profile.kind_of(label)
    reach = _kind_reach(profile, refs).get(kind, 0.0)
    d1 = dists[label]
    d2 = min((d for lbl, d in dists.items() if profile.kind_of(lbl) != kind), default=float("inf"))
    # inside its kind's territory; or, a piece drawn small on another face, nearer its
    # kind than the kinds are to each other and RATIO times nearer it than any other
    if not (d1 < reach or (d1 < 2 * reach and d1 <= RATIO * d2)):
        return None
    return IconMatch(label, kind, profile.role_of(label), (x0, y0, x1, y1), d1, reach)


def _lab(img: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= np.float32(100.0 / 255.0)
    lab[..., 1:] -= np.float32(128.0)
    return lab


def _stray(text: str) -> bool:
    t = text.strip()
    return len(t) <= 1 and not t.isdigit()


def icon_boxes(frame: np.ndarray, near: Box, text_h: int, words: Sequence[Word], avoid: Box | None = None) -> list[Box]:
    """Squares where a piece may be drawn near `near` (a goal's number): compact blobs
    of what differs from the face they lie on (the badge or card holding the number,
    which holds its icon too), neither words nor the face's edge, nor inside `avoid`
    (the board) unless on that badge or card, nearest first."""
    H, W = frame.shape[:2]
    reach = int(ICON_REACH * text_h)
    wx0, wy0 = max(0, near[0] - reach), max(0, near[1] - reach)
    wx1, wy1 = min(W, near[2] + reach), min(H, near[3] + reach)
    if wx1 - wx0 < 8 or wy1 - wy0 < 8:
        return []
    crop = frame[wy0:wy1, wx0:wx1]
    lab = _lab(crop)
    cx, cy = (near[0] + near[2]) / 2, (near[1] + near[3]) / 2
    holders = [r for r in flat_regions(frame) if r.contains(cx, cy) and r.area < 0.5 * W * H]
    holder = min(holders, key=lambda r: r.area) if holders else None
    # the screen around the badge, as the window's rim shows it (the face, when no flat
    # region holds the number)
    beyond = np.median(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]), axis=0)
    face = np.array(holder.colour, np.float32) if holder is not None else beyond
    ink = (np.linalg.norm(lab - face, axis=2) > INK_DELTA).astype(np.uint8)
    pad = max(1, text_h // 6)
    for wd in words:
        bx0, by0, bx1, by1 = wd.box
        if by1 - by0 > 1.5 * text_h or _stray(wd.text):
            continue  # no line of text this tall, or a lone sign: OCR read a picture (the icon itself) as letters
        ink[max(0, by0 - pad - wy0) : max(0, by1 + pad - wy0), max(0, bx0 - pad - wx0) : max(0, bx1 + pad - wx0)] = 0
    k = max(1, text_h // 8)
    ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    # a piece that fills its badge's height touches the badge's rim and shadow, thin lines
    # that join it to the badge's outline when no flat region was found for the badge
    # (its face the colour of the screen around it): opened, the thin lines go
    o = max(3, text_h // 5)
    masks = [ink, cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (o, o)))]
    if holder is not None:
        # a piece as tall as its badge touches the badge's edge, and so the screen around
        # it: looked for inside the badge too (off its rim, where its round corners are),
        # and in its rows or its columns (a piece may split a badge's face in two, and
        # the face found be the part with the number)
        hx0, hy0, hx1, hy1 = holder.box
        rows = slice(max(0, hy0 + pad - wy0), max(0, hy1 - pad - wy0))
        cols = slice(max(0, hx0 + pad - wx0), max(0, hx1 - pad - wx0))
        for part in ((rows, cols), (rows, slice(None)), (slice(None), cols)):
            inside = np.zeros_like(ink)
            inside[part] = 1
            masks.append(np.minimum(ink, inside))
    lo, hi = ICON_SIDE[0] * text_h, ICON_SIDE[1] * text_h
    found: list[tuple[float, Box]] = []
    for mask in masks:
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        for i in range(1, n):
            x, y, cw, ch, area = (int(v) for v in stats[i])
            side = max(cw, ch)
            if not lo <= side <= hi or min(cw, ch) < 0.5 * side or area < 0.3 * cw * ch:
                continue
            # what runs to the window's edge is the face's outline or the screen beyond it
            if x == 0 or y == 0 or x + cw >= mask.shape[1] or y + ch >= mask.shape[0]:
                continue
            if np.linalg.norm(np.median(lab[labels == i], axis=0) - beyond) < INK_DELTA:
                # of the screen beyond the badge: a strip of sky beside its edge cut out by
                # the badge's rows or columns, a patch of a textured backdrop that the face's
                # colour broke off the rest; no piece, however like one it looks
                continue
            box = (int(wx0 + x), int(wy0 + y), int(wx0 + x + cw), int(wy0 + y + ch))
            if any(b == box for _, b in found):
                continue
            mx, my = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            on_board = avoid is not None and avoid[0] <= mx < avoid[2] and avoid[1] <= my < avoid[3]
            if on_board and (holder is None or not holder.contains(mx, my)):
                continue  # a piece of the board, not on the count's badge or card
            found.append((float(np.hypot(wx0 + x + cw / 2 - cx, wy0 + y + ch / 2 - cy)), box))
    found.sort()
    return [b for _, b in found]


def find_icon(frame: np.ndarray, near: Box, text_h: int, words: Sequence[Word], profile: GameProfile) -> IconMatch | None:
    """The nearest piece beside `near` that is one of the profile's classes."""
    h, w = frame.shape[:2]
    board = frac_to_bbox(profile.board_frac, w, h)
    for blob in icon_boxes(frame, near, text_h, words, board):
        best: IconMatch | None = None
        for fill in PIECE_FILLS:
            side = max(blob[2] - blob[0], blob[3] - blob[1]) / fill
            mx, my = (blob[0] + blob[2]) / 2, (blob[1] + blob[3]) / 2
            sq = (int(mx - side / 2), int(my - side / 2), int(mx + side / 2), int(my + side / 2))
            m = match_icon(frame, sq, profile)
            if m is not None and (best is None or m.distance < best.distance):
                best = m
        if best is not None:
            return best
    return None


# -- colours named in words -----------------------------------------------------------------


def class_colours(profile: GameProfile) -> dict[str, str]:
    """Colour kind -> the name of its tiles' colour (from the plain tiles' mean Lab)."""
    p = profile.patch
    out: dict[str, str] = {}
    for e in profile.exemplars:
        if e.label in (".", "?") or profile.role_of(e.label) != "tile":
            continue
        kind = profile.kind_of(e.label)
        if kind in out or kind in (".", "#"):
            continue
        lab = np.asarray(e.features[_centre_index(p)], np.float32).reshape(-1, 3).mean(axis=0)
        out[kind] = colour_name(_bgr(lab))
    return out


def _bgr(lab: np.ndarray) -> tuple[int, int, int]:
    px = np.array([[[lab[0] * 255 / 100, lab[1] + 128, lab[2] + 128]]], np.float32).clip(0, 255).astype(np.uint8)
    b, g, r = cv2.cvtColor(px, cv2.COLOR_Lab2BGR)[0, 0]
    return int(b), int(g), int(r)


def kind_named(profile: GameProfile, colour: str) -> str | None:
    """The colour kind whose tiles are of the colour named, when exactly one is."""
    kinds = [k for k, name in class_colours(profile).items() if name == colour]
    return kinds[0] if len(kinds) == 1 else None


# -- the goal -----------------------------------------------------------------------------


def goal_of(frame: np.ndarray, g: GoalWords, words: Sequence[Word], profile: GameProfile) -> Goal | None:
    """The goal `g` says, with its icon matched where the words leave it open."""
    text = g.line.text
    if g.kind == "score" and not g.score_or_icon:
        return Goal("score", target=g.target, text=text)
    if g.kind == "collect" and g.colour_word is not None:
        kind = kind_named(profile, g.colour_word)
        return Goal("collect", target=g.target, left=g.left, colour=kind, text=text, piece=kind)
    text_h = max(1, g.number[3] - g.number[1])
    # the icon may stand beside the count or before the words ("[icon] Collect 9")
    icon = find_icon(frame, g.number, text_h, words, profile) or find_icon(frame, g.line.box, text_h, words, profile)
    return goal_with_icon(g, icon)


def goal_with_icon(g: GoalWords, icon: IconMatch | None) -> Goal | None:
    """The goal words say, completed by the icon beside its count: the verb decides
    the kind where it names one ("Break 12": break, whatever class its icon matched),
    the icon where the words do not (a bare count, "Clear 20")."""
    text = g.line.text
    piece = None if icon is None else icon.kind
    if g.score_or_icon and icon is None:
        return Goal("score", target=g.target, text=text)
    if g.kind == "break" or (g.kind != "collect" and icon is not None and icon.role == "blocker"):
        return Goal("break", target=g.target, left=g.left, text=text, piece=piece)
    if g.kind == "collect" or icon is not None:
        colour = None if icon is None or icon.role == "blocker" else icon.kind
        return Goal("collect", target=g.target, left=g.left, colour=colour, text=text, piece=piece)
    return None  # a bare count, and no icon beside it: no goal


def read_goal(frame: np.ndarray, words: Sequence[Word], profile: GameProfile) -> Goal | None:
    """The level's goal as a card or a header shows it, from its OCR words; None when
    no words say one. Goals with a verb ("Collect 12") come before bare counts."""
    found = sorted(goal_words(words), key=lambda g: g.kind is None)
    for g in found:
        goal = goal_of(frame, g, words, profile)
        if goal is not None:
            return goal
    return None
