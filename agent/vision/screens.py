"""Which screen the agent is on, and what to do about it.

`classify_screen` sorts a settled frame into one of:
- other_app: the profile names the game's package and another app is in front: launch it;
- board: the loop read the board and no dialog covers it: play;
- a screen a person taught (`agent screens add`), matched by a perceptual hash: its action;
- covered (a dialog over the board) or card (no board: level complete, out of moves, an
  offer, an ad): a button that dismisses it, found by reading its text, or Back;
- unknown: none of these: no action (the loop saves the frame and stops).

Choosing a button. Words are grouped into buttons: the words on one flat-coloured shape
(`agent.vision.ocr.flat_regions`) belong together, and words outside any button shape
are grouped by text line. A group whose text holds a forbidden word (buy, share,
install, watch an ad...) or a price is refused, with all its words, and listed in the
verdict's `refused`: a "Continue" beside "$0.99" on one button spends money. Of the rest,
a group made of safe words only (with a few fillers such as "tap to") is a candidate;
the close X first, then next/continue/ok/collect and the like, then retry. A close X
with no readable text is found by its glyph: a small round or square shape near a
panel's top-right corner (or the screen's top corners) holding two crossing diagonals.
Never chosen: a title band (a shape as wide as its panel, at its top) or a question
("Continue?": its answer is a button), a shape with a price or Buy just under or over
it, and text on no shape outside any panel unless read surely and away from the edges.

Screens never seen (by what they show, not by one game's list):
- words are judged by meaning (`agent.vision.words`): safe ways on in many forms, ranked
  going on > playing again > dismissing; forbidden: a price (a currency sign, decimals, a
  number beside a coin/gem/cash icon found in the image, `agent.vision.prices`, "+5 moves
  900" on a button), Buy, Get, Install, Watch, Share, Invite, Rate, Quit, Give up, Exit, Leave;
- the dialog that matters (`ScreenVerdict.panel`, `agent.vision.dim`): the panel with most
  words and buttons; when the screen around it is dimmed, words outside it belong to what is
  behind and are never tapped;
- an ad (`kind="ad"`): a countdown in a screen corner, or an install button outside any
  dialog; its close control (an X or arrow glyph, `agent.vision.glyphs`, or the word Close
  or Skip in a corner) is tapped once shown, else the action is "wait" (Back last);
- the level map (`kind="map"`): level numbers on badges along a path; the biggest is the
  current level's node (then a Play button);
- an intro card (`kind="intro"`): a dialog with Play/Start and a level number or a goal;
- `outcome` (won/lost) and `level` from the dialog's words; `buttons` lists everything seen
  with its verdict and why; `ranked` every safe action, best first; `blocked` says why when
  every way on is forbidden (the action is then Back, the last try).
When no way on is read on the dialog, its coloured button shapes are read again one by one,
each by its own luminance (`TesseractOcr.read_crops`): a gradient face has no flat colour.

Taught screens are hashed on the dialog (the panel holding the taught tap point, inside
its rounded corners; the whole frame when there is no panel), so a dialog over a board
is known again when the board under it has changed; the crop is stored as fractions
(`TaughtScreen.box`) and taken at the same place on the frame being matched.
Every size is a share of the frame, so nothing depends on one phone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from agent.vision import words as W
from agent.vision.cover import find_panels
from agent.vision.dim import dimmed_outside, find_panel, flood_panels
from agent.vision.glyphs import find_glyphs
from agent.vision.grid import BBox, Frac, bbox_to_frac, frac_to_bbox
from agent.vision.lattice import Lattice
from agent.vision.locate import BoardFind
from agent.vision.map_nodes import MAP_BAND, MAP_SPAN, PROMINENT, UNREAD_INK, badge_path, current_node, number_badge
from agent.vision.ocr import (
    UNAVAILABLE, Ocr, Region, Word, flat_regions, ink_crop, merge_words, ocr_unavailable_reason,
)  # fmt: skip
from agent.vision.prices import icon_beside
from agent.vision.profile import GameProfile, TaughtScreen
from agent.vision.words import Meaning

ScreenKind = Literal["board", "covered", "card", "other_app", "unknown", "map", "intro", "ad"]
Verdict = Literal["safe", "forbidden", "other"]

# Perceptual hash: imagehash.phash with this hash size (HASH_SIZE**2 bits).
HASH_SIZE = 16
# A taught screen matches a frame whose hash differs in at most this share of the bits:
# noise, a blinking glow or a changed number flip a few percent, another screen about half.
TAUGHT_SHARE = 0.12
ASPECT_SLACK = 0.02
CORNER_INSET = 0.12  # of a panel's shorter side: its rounded corners, left out of its hash  # a taught screen is matched on frames of the same aspect ratio only

# Panels (dialog faces) are flat shapes of at least this share of the frame's area;
# a button shape is at most BUTTON_AREA of it.
PANEL_AREA = 0.05
BUTTON_AREA = 0.08
# A close button's side is this share of the frame's width.
CLOSE_SIZE = (0.025, 0.16)
CORNER_REACH = 0.25  # of the panel's shorter side: how far from its corner a close X may sit
SCREEN_CORNER = (0.2, 0.12)  # of the frame's width and height: the screen's top corners
DIALOG_CELLS = 3.0  # a dialog over the board covers at least this many cells
DIALOG_INK = 0.4  # and at most this share of it is text and icons
TITLE_WIDTH = 0.9  # of its panel's width: a shape this wide at a panel's top is its title band
EDGE_SHARE = 0.05  # of the frame's size: text this near the edge is not tapped unless on a panel
LOOSE_SURE = 0.85
LINE_GAP = 1.5  # word heights: words closer than this on one line belong together
AD_CORNER = (0.3, 0.12)  # of the frame's width and height: where an ad's countdown and close sit
UNREAD_AREA = 0.002  # of the frame: smaller inked shapes are icons, not buttons to read again
UNREAD_MAX = 8  # shapes read again, at most
PLAY_WORDS = (["play"], ["start"], ["let's"], ["lets"], ["let"])  # a button starting a level
MAP_STEP = 0.06  # of the frame's height: two level nodes are at least this far apart
BADGE = 0.3  # of the frame's width: a level node's badge is at most this wide
NODE_LABEL = "level node"  # a map's node tapped for its shape alone (no number, no Play read on it)

SAFE_RANK = {
    "close": 0, "x": 0, "×": 0, "✕": 0, "✖": 0,
    "next": 1, "continue": 1, "ok": 1, "okay": 1, "collect": 1, "claim": 1, "got it": 1, "resume": 1,
    "done": 1, "skip": 1, "later": 1, "no thanks": 1, "not now": 1, "maybe later": 1, "back": 1, "play": 1,
    "start": 1, "cancel": 1, "dismiss": 1, "yes": 1, "tap to continue": 1,
    "retry": 2, "try again": 2, "replay": 2, "restart": 2,
}  # fmt: skip
FILLER = {"tap", "to", "the", "level", "now", "game", "on", "again", "it", "thanks", "no", "not", "maybe"}
FORBIDDEN = {
    "buy", "purchase", "pay", "subscribe", "subscription", "share", "invite", "install", "download", "rate",
    "watch", "ad", "ads", "video", "trial", "store", "shop", "vip", "premium",
    "usd", "eur", "gbp", "jpy", "inr", "krw", "rub",
}  # fmt: skip
# A price: a currency sign next to a number, or a number with two decimals (4,99 / 0.99).
PRICE = re.compile(r"[$€£¥₹₩]|\d+[.,]\d\d\b|\b(usd|eur|gbp|jpy)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    kind: Literal["tap", "back", "launch", "wait"]  # wait: look again later (an ad's close not shown yet)
    point: tuple[int, int] | None
    label: str
    why: str


@dataclass(frozen=True)
class SeenButton:
    """A button (or a line of text) seen on the screen and what it was judged to be."""

    text: str
    box: BBox
    verdict: Verdict  # safe: a way on; forbidden: never tapped; other: a title, a label, behind the dialog
    why: str  # "a price: '900' beside a currency icon", "safe word 'continue'"


@dataclass(frozen=True)
class ScreenVerdict:
    kind: ScreenKind
    action: Action | None
    reason: str
    words: tuple[Word, ...] = ()
    taught: str | None = None
    refused: tuple[str, ...] = ()  # buttons seen and refused (a price, Buy, Share, Install...)
    buttons: tuple[SeenButton, ...] = ()  # every button seen, with its verdict
    ranked: tuple[Action, ...] = ()  # every safe action, best first (`action` is the first)
    panel: BBox | None = None  # the dialog that matters: judge "did the screen change" there
    outcome: Literal["won", "lost"] | None = None  # what a level's end card says
    level: int | None = None  # the level number read on a card, an intro or the map
    countdown: int | None = None  # an ad's countdown, when one is read
    blocked: str | None = None  # the only ways on are forbidden: why (Back is the last try)

    def __post_init__(self) -> None:
        # `ranked` always starts with `action` (a launch, a taught tap, a Back)
        if self.action is not None and (not self.ranked or self.ranked[0] != self.action):
            object.__setattr__(self, "ranked", (self.action,) + tuple(a for a in self.ranked if a != self.action))


# -- perceptual hash ----------------------------------------------------------------------


def screen_hash(frame: np.ndarray) -> str:
    """A perceptual hash of the frame as hex (imagehash.phash of a downscaled grey copy)."""
    import imagehash
    from PIL import Image

    grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape[:2]
    f = 256 / max(h, w)
    small = cv2.resize(grey, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)
    return str(imagehash.phash(Image.fromarray(small), hash_size=HASH_SIZE))


def hash_distance(a: str, b: str) -> int:
    """Differing bits of two hashes of one length (ValueError for hashes of other sizes)."""
    if len(a) != len(b):
        raise ValueError(f"hashes of different sizes ({len(a)} and {len(b)} hex digits)")
    return int(int(a, 16) ^ int(b, 16)).bit_count()


def _part(frame: np.ndarray, box: Frac | None) -> np.ndarray:
    if box is None:
        return frame
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = frac_to_bbox(box, w, h)
    return frame[y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)]


def teach_screen(frame: np.ndarray, name: str, tap: tuple[int, int] | None) -> TaughtScreen:
    """A taught screen of `frame`: tap `tap`, or press Back when None. What is hashed is
    the dialog (the smallest panel holding the tap point, or the largest panel for
    Back), so the screen is known again over another board; a screen with no panel is
    hashed whole."""
    h, w = frame.shape[:2]
    panels = [r for r in flat_regions(frame) if PANEL_AREA * w * h <= r.area <= 0.9 * w * h]
    if tap is not None:
        holding = [r for r in panels if r.contains(*tap)]
        chosen = min(holding, key=lambda r: r.area) if holding else None
    else:
        chosen = max(panels, key=lambda r: r.area) if panels else None
    box = None
    if chosen is not None:
        # inside the panel's rounded corners (they show what is behind it)
        x0, y0, x1, y1 = chosen.box
        m = int(CORNER_INSET * min(x1 - x0, y1 - y0))
        box = bbox_to_frac((x0 + m, y0 + m, x1 - m, y1 - m), w, h)
    return TaughtScreen(name, screen_hash(_part(frame, box)), (w, h), "tap" if tap is not None else "back", tap, box)


def match_taught(frame: np.ndarray, screens: tuple[TaughtScreen, ...]) -> TaughtScreen | None:
    """The taught screen the frame is (the nearest within TAUGHT_SHARE), or None."""
    if not screens:
        return None
    h, w = frame.shape[:2]
    digests: dict[Frac | None, str] = {}
    best: tuple[int, TaughtScreen] | None = None
    for sc in screens:
        sw, sh = sc.size
        if abs(sw / sh - w / h) > ASPECT_SLACK * (w / h):
            continue
        if sc.box not in digests:
            digests[sc.box] = screen_hash(_part(frame, sc.box))
        digest = digests[sc.box]
        if len(sc.phash) != len(digest):
            continue
        d = hash_distance(digest, sc.phash)
        if d <= TAUGHT_SHARE * 4 * len(digest) and (best is None or d < best[0]):
            best = (d, sc)
    return None if best is None else best[1]


# -- words into buttons ----------------------------------------------------------------------


def _norm(text: str) -> str:
    t = text.lower().replace("×", " × ").replace("✕", " ✕ ")
    t = re.sub(r"[^\w$€£¥₹₩×✕✖.,+ ]|_", " ", t)
    # a token of punctuation alone is a button's outline or a speck read as text
    return " ".join(tok for tok in t.split() if re.search(r"[\w$€£¥₹₩×✕✖]", tok.replace("_", ""))).strip(" .,")


# Words read with less confidence than this do not spoil a button's safe text (a blob
# or icon read as "Gp" beside "Share"), but still count when looking for a price.
SURE = 0.6


@dataclass(frozen=True)
class Button:
    text: str  # its words read with confidence
    box: tuple[int, int, int, int]
    shape: Region | None  # the flat shape the words are on, if any
    all_text: str = ""  # every word on it, however unsure
    sure: bool = True  # at least one of its words was read with confidence


def _button(words: list[Word], box: tuple[int, int, int, int], shape: Region | None) -> Button:
    ws = sorted(words, key=lambda w: w.box[0])
    sure = [w.text for w in ws if w.conf >= SURE]
    return Button(" ".join(sure or [w.text for w in ws]), box, shape, " ".join(w.text for w in ws), bool(sure))


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def group_words(words: list[Word], regions: list[Region], frame_area: float) -> list[Button]:
    """Words that belong together: those on one button-sized flat shape, and the others
    by text line."""
    shapes = [r for r in regions if r.area <= BUTTON_AREA * frame_area]
    groups: dict[int, list[Word]] = {}
    loose: list[Word] = []
    for wd in words:
        cx, cy = (wd.box[0] + wd.box[2]) / 2, (wd.box[1] + wd.box[3]) / 2
        holders = [i for i, r in enumerate(shapes) if r.contains(cx, cy)]
        if holders:
            groups.setdefault(min(holders, key=lambda i: shapes[i].area), []).append(wd)
        else:
            loose.append(wd)
    out = [_button(g, shapes[i].box, shapes[i]) for i, g in groups.items()]
    # loose words: one line, close together
    parent = list(range(len(loose)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(loose):
        for j in range(i + 1, len(loose)):
            b = loose[j]
            ha, hb = a.box[3] - a.box[1], b.box[3] - b.box[1]
            overlap = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
            gap = max(a.box[0], b.box[0]) - min(a.box[2], b.box[2])
            if overlap > 0.5 * min(ha, hb) and gap < LINE_GAP * max(ha, hb):
                parent[find(i)] = find(j)
    lines: dict[int, list[Word]] = {}
    for i, wd in enumerate(loose):
        lines.setdefault(find(i), []).append(wd)
    for g in lines.values():
        out.append(_button(g, _union([w.box for w in g]), None))
    return out


def forbidden(text: str) -> bool:
    """A price or a word of buying, sharing, installing, or an ad."""
    t = _norm(text)
    if PRICE.search(t):
        return True
    return any(w in FORBIDDEN for w in t.split())


def safe_rank(text: str) -> int | None:
    """How good a dismissal the text is (0 best), or None when it is not one: every word
    must be a safe word or a filler, and one at least safe."""
    t = _norm(text)
    if not t:
        return None
    if t in SAFE_RANK:
        return SAFE_RANK[t]
    words = t.split()
    ranks: list[int] = []
    i = 0
    while i < len(words):
        for n in (3, 2, 1):  # longest phrase first: "tap to continue", "no thanks"
            phrase = " ".join(words[i : i + n])
            if len(words) - i >= n and phrase in SAFE_RANK:
                ranks.append(SAFE_RANK[phrase])
                i += n
                break
        else:
            if words[i] not in FILLER:
                return None
            i += 1
    return min(ranks) if ranks else None


# -- the close X ----------------------------------------------------------------------------


def is_cross(binary: np.ndarray) -> bool:
    """Whether black ink on white shows an X: two crossing diagonal strokes, and
    nothing along the plus between their arms."""
    ink = binary == 0
    if not ink.any():
        return False
    ys, xs = np.nonzero(ink)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    bw, bh = x1 - x0, y1 - y0
    if bw < 5 or bh < 5 or not 0.6 <= bw / bh <= 1.6:
        return False
    patch = cv2.resize(ink[y0:y1, x0:x1].astype(np.float32), (32, 32), interpolation=cv2.INTER_AREA) > 0.5
    v, u = np.mgrid[-1:1:32j, -1:1:32j]
    r = np.maximum(np.abs(u), np.abs(v))
    diag = (np.abs(np.abs(u) - np.abs(v)) < 0.2) & (r < 0.85)
    plus = ((np.abs(u) < 0.15) & (np.abs(v) > 0.5)) | ((np.abs(v) < 0.15) & (np.abs(u) > 0.5))
    if patch[diag].mean() < 0.6 or patch[plus].mean() > 0.15:
        return False
    for su in (-1, 1):  # every arm drawn
        for sv in (-1, 1):
            arm = diag & (np.sign(u) == su) & (np.sign(v) == sv) & (r > 0.4)
            if patch[arm].mean() < 0.5:
                return False
    return True


def _near_close_spot(box: tuple[int, int, int, int], panels: list[tuple[int, int, int, int]], w: int, h: int) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    for px0, py0, px1, py1 in panels:
        reach = CORNER_REACH * min(px1 - px0, py1 - py0)
        if (abs(cx - px1) <= reach or abs(cx - px0) <= reach) and abs(cy - py0) <= reach:
            return True
    top = cy <= SCREEN_CORNER[1] * h
    return top and (cx <= SCREEN_CORNER[0] * w or cx >= (1 - SCREEN_CORNER[0]) * w)


def find_close(frame: np.ndarray, regions: list[Region], panels: list[tuple[int, int, int, int]]) -> Region | None:
    """A close button drawn as an X glyph near a panel's top-right corner or the
    screen's top corners, or None."""
    h, w = frame.shape[:2]
    for r in sorted(regions, key=lambda r: r.area):
        bw, bh = r.box[2] - r.box[0], r.box[3] - r.box[1]
        if not CLOSE_SIZE[0] * w <= max(bw, bh) <= CLOSE_SIZE[1] * w or not 0.7 <= bw / bh <= 1.45:
            continue
        if _near_close_spot(r.box, panels, w, h) and is_cross(ink_crop(frame, r)):
            return r
    return None


# -- the verdict ----------------------------------------------------------------------------


def _board_find(profile: GameProfile, w: int, h: int) -> BoardFind:
    bbox = frac_to_bbox(profile.board_frac, w, h)
    x0, y0, x1, y1 = bbox
    px, py = (x1 - x0) / profile.cols, (y1 - y0) / profile.rows
    return BoardFind(
        bbox, profile.rows, profile.cols, (px, py), 1.0,
        np.ones((profile.rows, profile.cols), bool), np.zeros((profile.rows, profile.cols), bool),
        Lattice(float(x0), float(y0), px, py, profile.cols, profile.rows),
    )  # fmt: skip


def _dialogs_over_board(regions: list[Region], profile: GameProfile, w: int, h: int) -> list[tuple[int, int, int, int]]:
    """Flat shapes over the board that hold little (a dialog's face with its text), at
    least DIALOG_CELLS cells big and smaller than the board: a board's own backing shows
    its tiles, so most of it is not face."""
    x0, y0, x1, y1 = frac_to_bbox(profile.board_frac, w, h)
    cell = (x1 - x0) * (y1 - y0) / (profile.rows * profile.cols)
    out = []
    for r in regions:
        bx0, by0, bx1, by1 = r.box
        ox = max(0, min(x1, bx1) - max(x0, bx0)) * max(0, min(y1, by1) - max(y0, by0))
        if ox >= DIALOG_CELLS * cell and r.area < 0.9 * (x1 - x0) * (y1 - y0) and r.ink <= DIALOG_INK:
            out.append(r.box)
    return out


def cover_boxes(frame: np.ndarray, profile: GameProfile, regions: list[Region] | None = None) -> list[BBox]:
    """The boxes of dialogs over the profile's board, by shapes alone (no OCR): the
    panels `agent.vision.cover.find_panels` finds, else flat shapes over the board that
    hold little (see `_dialogs_over_board`). Empty when nothing covers it."""
    h, w = frame.shape[:2]
    try:
        found = [p.bbox for p in find_panels(frame, _board_find(profile, w, h))]
    except (ValueError, cv2.error):  # a board box that does not fit this frame
        found = []
    if found:
        return found
    return _dialogs_over_board(flat_regions(frame) if regions is None else regions, profile, w, h)


def _centre(box: tuple[int, int, int, int]) -> tuple[int, int]:
    return ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def _clean(words: list[Word]) -> list[Word]:
    """The words worth judging: some letter or digit in them, and no unsure reading spanning
    far more than a line (a picture read as "uw" across a button and its neighbours)."""
    out = [wd for wd in words if re.search(r"[0-9A-Za-z$€£¥₹₩×✕✖]", wd.text)]
    sure = [wd.box[3] - wd.box[1] for wd in out if wd.conf >= 0.8]
    if sure:
        line = float(np.median(sure))
        out = [wd for wd in out if wd.conf >= 0.9 or wd.box[3] - wd.box[1] <= 2.2 * line]
    return out


PRICE_DIGITS = re.compile(r"\+?\d[\d,.]*\d[km]?")
LABEL = re.compile(r"^\+?\s*[$€£¥@©®o]?\s*\+?\d+$", re.IGNORECASE)


def _judge(frame: np.ndarray, b: Button, words: list[Word]) -> tuple[Verdict, str, Meaning | None]:
    """A group of words by meaning: forbidden (a price, Buy, Install, Quit...), safe (a way
    on), or other (a title, a label, a reward)."""
    text = b.all_text
    t = W.norm(text)
    why = W.forbidden_why(text, on_button=b.shape is not None)
    if why is not None and why.startswith("a price") and b.shape is None and LABEL.match(t.replace(" ", "")) \
            and not re.search(r"\d[.,]\d\d", t):  # fmt: skip
        # a signed number on no button ("+50", a coin misread as "$90"): a reward's label
        return "other", f"a label: {text.strip()!r} on no button", None
    if why is not None:
        return "forbidden", why, None
    # a price in a game's currency has two digits at least ("+5 moves" is what it buys)
    # (a number glued to a word, "go900", as OCR reads a bold button, counts too)
    numbers = [wd for wd in words if _inside(wd.centre, b.box)
               and PRICE_DIGITS.fullmatch(W.GLUED.sub(r"\2", W.norm(wd.text)))]  # fmt: skip
    for wd in numbers:
        face = b.shape.colour if b.shape is not None else None
        if icon_beside(frame, wd.box, face) is not None:
            if b.shape is None and t.startswith("+"):
                return "other", f"a reward: {text.strip()!r} beside a currency icon", None
            return "forbidden", f"a price: {W.norm(wd.text)!r} beside a currency icon", None
    meaning = W.safe_meaning(b.text)
    if meaning is not None:
        return "safe", f"safe word {W.norm(b.text)!r}", meaning
    whole = W.safe_meaning(b.all_text) if b.text != b.all_text else None
    if whole is not None:
        # the unsure words complete the sure ones into a way on ("Let's" read surely, "go 3"
        # not): nothing forbidden is among them, or the whole text was judged so above
        return "safe", f"safe words {W.norm(b.all_text)!r}", whole
    return "other", "no way on", None


def _lines(words: list[Word]) -> list[str]:
    """The words as lines of text, top to bottom, each left to right (a title whose words
    are far apart, "LEVEL   36", is one line)."""
    lines: list[list[Word]] = []
    for wd in sorted(words, key=lambda wd: wd.centre[1]):
        for line in lines:
            top, bottom = min(o.box[1] for o in line), max(o.box[3] for o in line)
            if top <= wd.centre[1] <= bottom:
                line.append(wd)
                break
        else:
            lines.append([wd])
    return [" ".join(o.text for o in sorted(line, key=lambda o: o.box[0])) for line in lines]


def _poisons(text: str) -> bool:
    """Loose text that makes the button just over or under it its own: a price or a word of
    buying, watching or installing ("Continue" over "$0.99"), not a description ("500 coins")."""
    t = W.norm(text)
    return bool(W.PRICE.search(t)) or forbidden(t) and not any(w in ("coins", "gems") for w in t.split())


def _badge(b: Button, w: int) -> bool:
    """Text on a small round or square shape: a level node's badge."""
    if b.shape is None:
        return False
    x0, y0, x1, y1 = b.shape.box
    return 0.7 <= (x1 - x0) / max(1, y1 - y0) <= 1.45 and x1 - x0 <= BADGE * w


def _grow(box: BBox, by: float) -> BBox:
    m = int(by * min(box[2] - box[0], box[3] - box[1]))
    return box[0] - m, box[1] - m, box[2] + m, box[3] + m


def _corner_spots(w: int, h: int) -> list[BBox]:
    sw, sh = int(AD_CORNER[0] * w), int(AD_CORNER[1] * h)
    return [(0, 0, sw, sh), (w - sw, 0, w, sh), (0, h - sh, sw, h), (w - sw, h - sh, w, h)]


def _panel_spots(panel: BBox) -> list[BBox]:
    x0, y0, x1, y1 = panel
    r = int(CORNER_REACH * min(x1 - x0, y1 - y0))
    return [(x1 - r, y0 - r, x1 + r, y0 + r), (x0 - r, y0 - r, x0 + r, y0 + r)]


@dataclass
class _Cand:
    button: SeenButton
    meaning: Meaning
    point: tuple[int, int]
    outside: bool  # outside the dialog (on a screen that is not dimmed)
    loose: bool  # text on no button shape, or a glyph


def _order(c: _Cand) -> tuple[bool, bool, int, int]:
    # inside the dialog first; then words on a button shape before glyphs and loose text
    # (a line saying "Tap to keep playing" is no button); then going on before playing again
    # before dismissing; then the lowest (a dialog's buttons are below its text)
    return (c.outside, c.loose, W.PREFERENCE[c.meaning], -c.button.box[1])


def _tap(c: _Cand, what: str) -> Action:
    return Action("tap", c.point, c.button.text, f"{what}; {c.button.why}")


@dataclass
class _Look:
    groups: list[Button]
    judged: dict[int, tuple[Verdict, str, Meaning | None]]
    bad: list[Button]
    panel: BBox | None
    seen: list[SeenButton]
    cands: list[_Cand]
    dimmed: bool = False  # the screen around the dialog is dimmed: what is outside it is behind

    def behind(self, box: BBox) -> bool:
        """`box` lies under the dimmed overlay, outside the dialog: it belongs to what is behind."""
        return self.dimmed and self.panel is not None and not _inside(_centre(box), _grow(self.panel, 0.04))


def _look(frame: np.ndarray, words: list[Word], regions: list[Region], covering: list[BBox],
          panels: list[BBox]) -> _Look:  # fmt: skip
    """The words grouped into buttons and judged, the dialog, the safe candidates."""
    h, w = frame.shape[:2]
    groups = group_words(words, regions, float(w * h))
    judged = {id(b): _judge(frame, b, words) for b in groups}
    bad = [b for b in groups if judged[id(b)][0] == "forbidden"]
    # a button with a price or Buy right beside it (text just under or over it, not on
    # it) is that price's button too: "Continue" over "$0.99"
    for b in groups:
        if b not in bad and b.shape is not None:
            near = [o for o in bad if o.shape is None and _beside(b.box, o.box) and _poisons(o.all_text)]
            if near:
                judged[id(b)] = ("forbidden", f"beside {near[0].all_text.strip()!r}: {judged[id(near[0])][1]}", None)
                bad.append(b)
    panel = find_panel(frame, regions, words, tuple(covering) + tuple(flood_panels(frame, words)))
    dimmed = panel is not None and dimmed_outside(frame, panel)
    seen: list[SeenButton] = []
    cands: list[_Cand] = []
    for b in groups:
        verdict, why, meaning = judged[id(b)]
        outside = panel is not None and not _inside(_centre(b.box), _grow(panel, 0.04))
        if verdict == "safe" and meaning is not None:
            norm = W.norm(b.text)
            if norm in ("x", "×", "✕", "✖") and not _near_close_spot(b.box, panels, w, h):
                verdict, why = "other", "a lone x away from any corner (an icon or tile misread)"
            elif b.shape is None and not _loose_ok(b, panels, words, w, h):
                verdict, why = "other", "loose text away from any dialog"
            elif "?" in b.text or (b.shape is not None and _title_band(b.shape.box, panels)):
                verdict, why = "other", "a question or a title: its answer is a button"
            elif outside and dimmed:
                verdict, why = "other", "behind the dimmed overlay, outside the dialog"
        sb = SeenButton(b.text or b.all_text, b.box, verdict, why)
        seen.append(sb)
        if sb.verdict == "safe" and meaning is not None:
            point = _centre(_word_box(b, words) or b.box)
            # a shape holding another button is a panel's face: its words are loose text on it
            holder = b.shape is not None and any(o is not b and o.shape is not None and o.shape.area < b.shape.area
                                                 and _inside(_centre(o.box), b.shape.box) for o in groups)  # fmt: skip
            cands.append(_Cand(sb, meaning, point, outside, b.shape is None or holder))
    return _Look(groups, judged, bad, panel, seen, cands, dimmed)


def _button_boxes(frame: np.ndarray, panel: BBox) -> list[BBox]:
    """Coloured button-like shapes on a panel, whatever their shading (a gradient face is
    no flat region): compact blobs of a colour far from the panel's face, wide and short."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = max(0, panel[0]), max(0, panel[1]), min(w, panel[2]), min(h, panel[3])
    crop = frame[y0:y1, x0:x1]
    if crop.size == 0:
        return []
    f = min(1.0, 270 / max(1, x1 - x0))
    small = cv2.resize(crop, (max(1, round((x1 - x0) * f)), max(1, round((y1 - y0) * f))), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab).astype(np.float32)
    face = np.median(lab.reshape(-1, 3), axis=0)
    far = (np.linalg.norm(lab - face, axis=2) > 30).astype(np.uint8)
    far = cv2.morphologyEx(far, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, _, stats, _ = cv2.connectedComponentsWithStats(far, connectivity=4)
    out = []
    sh, sw = far.shape
    for i in range(1, n):
        bx, by, bw, bh, area = (int(v) for v in stats[i])
        if bw < 0.18 * sw or bw > 0.98 * sw or bh < 0.02 * h * f or bh > 0.12 * h * f or bw < 1.3 * bh:
            continue
        if area < 0.6 * bw * bh:
            continue
        out.append((x0 + int(bx / f), y0 + int(by / f), x0 + int((bx + bw) / f), y0 + int((by + bh) / f)))
    return out


def _unread_shapes(regions: list[Region], words: list[Word], frame_area: float) -> list[BBox]:
    """Button-sized flat shapes with ink on them (words or a number) and no word read on
    them: wide buttons first, then badges, the biggest of each first."""
    out = []
    for r in regions:
        bw, bh = r.box[2] - r.box[0], r.box[3] - r.box[1]
        if not (UNREAD_AREA * frame_area <= r.area <= BUTTON_AREA * frame_area and UNREAD_INK[0] <= r.ink <= UNREAD_INK[1]):
            continue
        if any(r.contains(*wd.centre) for wd in words):
            continue
        out.append((bw < 1.3 * bh, -r.area, r.box))
    return [box for _, _, box in sorted(out)][:UNREAD_MAX]


def classify_screen(
    frame: np.ndarray, profile: GameProfile, *, board_readable: bool, foreground: str | None, ocr: Ocr | None,
    board_known: bool = True,
) -> ScreenVerdict:
    """What the settled frame shows and what to do about it (see the module docstring).
    `board_known` False: the profile's board box is a stand-in (before any calibration),
    so nothing can be said to lie over a board."""
    h, w = frame.shape[:2]
    if foreground is not None and profile.package is not None and foreground != profile.package:
        return ScreenVerdict(
            "other_app", Action("launch", None, profile.package, f"{foreground} is in front, not the game"),
            f"another app is in front ({foreground}); the game is {profile.package}",
        )  # fmt: skip
    regions = flat_regions(frame)
    covering = cover_boxes(frame, profile, regions) if board_known else []
    if board_readable and not covering:
        return ScreenVerdict("board", None, "the board was read and nothing covers it")
    taught = match_taught(frame, profile.screens)
    if taught is not None:
        if taught.action == "back":
            action = Action("back", None, "Back", f"taught screen {taught.name!r}")
        else:
            action = Action("tap", taught.scaled_tap(w, h), taught.name, f"taught screen {taught.name!r}")
        return ScreenVerdict("covered" if covering else "card", action, f"the taught screen {taught.name!r}",
                             taught=taught.name, ranked=(action,))  # fmt: skip
    kind: ScreenKind = "covered" if covering or board_readable else "card"
    what = "a dialog covers the board" if kind == "covered" else "no board on the screen"
    if ocr is None:
        return ScreenVerdict("unknown", None, f"{what}; {ocr_unavailable_reason() or UNAVAILABLE}")
    words = _clean(ocr.words(frame))
    if covering and board_readable and not any(_inside(_centre(wd.box), c) for wd in words for c in covering):
        # A flat shape over a board read with confidence that holds no word is a stretch of
        # the board itself: its holes showing a flat patch of the scene behind (world 4's
        # 2x2 hole over a drifting sky was taken for a dialog with nothing to tap, and Back
        # was pressed, and the Quit dialog answered, for five minutes).
        return ScreenVerdict("board", None, "the board was read; the flat shape over it holds no word: its own")
    # (a shape of nearly the whole screen is its background, not a panel)
    panels = [r.box for r in regions if PANEL_AREA * w * h <= r.area <= 0.9 * w * h] + covering
    look = _look(frame, words, regions, covering, panels)
    if look.panel is not None and not any(not c.outside for c in look.cands) and hasattr(ocr, "read_crops"):
        # no way on read on the dialog: its buttons read again one by one, each by its own
        # luminance (a gradient face, text in an outline)
        boxes = _button_boxes(frame, look.panel)
        extra = _clean(ocr.read_crops(frame, boxes)) if boxes else []
        if extra:
            words = merge_words([words, extra])
            look = _look(frame, words, regions, covering, panels)
    if not look.cands and hasattr(ocr, "read_crops"):
        # no way on read anywhere (a map, a screen with no dialog): the inked button-sized
        # shapes the whole-screen reading found no word on are read one by one, by their own
        # luminance (white words on a dark green face can vanish from the whole frame's)
        boxes = _unread_shapes(regions, words, float(w * h))
        extra = _clean(ocr.read_crops(frame, boxes)) if boxes else []
        if extra:
            words = merge_words([words, extra])
            look = _look(frame, words, regions, covering, panels)
    groups, bad, panel, seen, cands = look.groups, look.bad, look.panel, look.seen, look.cands
    refused = tuple(b.all_text for b in bad)
    refused_boxes = [b.box for b in bad]
    texts = [b.all_text for b in groups if panel is None or _inside(_centre(b.box), _grow(panel, 0.04))]

    # an ad: a countdown in a corner, or an install button outside any dialog
    corners = _corner_spots(w, h)
    count: int | None = None
    count_box: BBox | None = None  # where a lone number read as the countdown lies
    # (not what lies under a dialog's dimmed overlay: a header's "TARGET" read "GET" is behind)
    installs = [b for b in groups if W.is_install(b.all_text) and not look.behind(b.box)]
    for b in groups:
        n = W.countdown(b.all_text)
        if n is None or not any(_inside(_centre(b.box), c) for c in corners) or n > 60 or look.behind(b.box):
            continue
        if W.explicit_countdown(b.all_text):
            count, count_box = n, None
        elif panel is None and installs and b.sure and not _at_edge(b.box, w, h) and count is None:
            # (a lone number in a corner is a countdown only beside an ad's install button,
            # elsewhere it is the game's header; and only when read surely, clear of the
            # screen's edge: a busy picture's speck cut by the edge reads as a digit too)
            count, count_box = n, b.box
    ad_corner = False
    if count is None and panel is not None and any(W.names_install(b.all_text) for b in installs) \
            and hasattr(ocr, "read_crops"):  # fmt: skip
        # An install button on what looks like a dialog: an ad's own picture can pass for
        # one (a band of its gradient); a countdown in a screen corner, small on its pill and
        # missed by the whole frame's reading, or the close glyph there, says which
        for wd in ocr.read_crops(frame, corners):
            n = W.countdown(wd.text)
            if n is not None and n <= 60 and W.explicit_countdown(wd.text) and not look.behind(wd.box):
                count = n
                words = merge_words([words, [wd]])
                break
        ad_corner = count is not None or any(not look.behind(g) for g, _ in find_glyphs(frame, corners))
    if panel is not None and any(not c.outside for c in cands):
        # a dialog with a way on: only a word that can do nothing but install makes an ad of
        # it from outside ("GET" is also the end of a header's "TARGET", where no dim tells)
        installs = [b for b in installs if W.names_install(b.all_text)]
    if ad_corner or count is not None or (installs and (panel is None or not any(_inside(_centre(b.box), panel) for b in installs))):
        return _ad(frame, seen, cands, corners, count, words, refused, ocr, count_box)

    # the level map: level numbers on badges along a path, one prominent (not numbers
    # under a dialog's dimmed overlay: a board's tiles behind an out-of-moves card read
    # as "4" and "'4" once, and the card's close X was never looked for)
    nodes = [(b, sb) for b, sb in zip(groups, seen)
             if _node_number(b) is not None and sb.verdict == "other" and sb.why == "no way on"
             and MAP_BAND[0] * h <= _centre(b.box)[1] <= MAP_BAND[1] * h and (_badge(b, w) or number_badge(regions, _word_box(b, words) or b.box, w, h) is not None)
             and not look.behind(b.box)]  # fmt: skip
    # (a level's number is on one node: a number read twice is something else, counts on a
    # board's boosters or on its tiles, "4" and "4" beside "6" under an offer)
    numbers = [_node_number(b) for b, _ in nodes]
    nodes = [(b, sb) for (b, sb), n in zip(nodes, numbers) if numbers.count(n) == 1]
    # (a node's size is its badge's: the current level's number can be a flat glyph of its own)
    badges = {id(b): _node_box(b, regions, words, w, h) for b, _ in nodes}
    # (a way on other than Play, on a dialog or anywhere, makes a card of it)
    # (but a lone "x" read where no dialog was found is a speck of the map: a star, a spark;
    # and a word of two letters on no button, outside any dialog, is a picture read as one:
    # a padlock and its path read "Go")
    in_dialog = any(W.norm(c.button.text).split()[:1] not in PLAY_WORDS and (
        not c.outside or c.meaning in ("forward", "retry"))
        and not (panel is None and W.norm(c.button.text) in ("x", "×", "✕", "✖"))
        and not (c.loose and (panel is None or c.outside) and len(W.norm(c.button.text)) <= 2) for c in cands)
    # (and a move counter outside any dialog is a level's header: a board's screen, whose
    # goal badge "62" and a tile read "4" are no map's nodes)
    counter = any(W.move_counter(b.all_text) and not look.behind(b.box) for b in groups)
    if len(nodes) >= 2 and not in_dialog and not counter:  # (a dialog with a way on is a card, whatever numbers are around it)
        ys = [_centre(b.box)[1] for b, _ in nodes]
        xs = [_centre(b.box)[0] for b, _ in nodes]
        sizes = sorted(badges[id(b)][3] - badges[id(b)][1] for b, _ in nodes)
        # three nodes along a path, or two of which one stands out (the current level)
        path = len(nodes) >= 3 and max(ys) - min(ys) >= MAP_SPAN * h and max(xs) - min(xs) >= 0.1 * w
        pair = len(nodes) == 2 and max(ys) - min(ys) >= MAP_STEP * h and sizes[1] >= PROMINENT * sizes[0]
        if path or pair:
            return _map(nodes, badges, cands, seen, words, refused)
    # a map whose other levels are locked (padlocks, no numbers): a path of like round
    # badges and a Play button, with no dialog
    plays = [c for c in sorted(cands, key=_order) if c.meaning == "forward" and not c.outside
             and W.norm(c.button.text).split()[:1] in PLAY_WORDS]  # fmt: skip
    # (a "panel" with no word on it is a picture, no dialog: a map's big round decorations;
    # a forbidden button's words on it (a map's Shop) make no dialog of it either)
    wordless = panel is None or not any(_inside(wd.centre, panel) and wd.conf >= SURE and len(W.norm(wd.text)) >= 3
                                        and not any(_inside(wd.centre, rb) for rb in refused_boxes)
                                        for wd in words)  # fmt: skip
    path = badge_path(regions, w, h) if wordless and not in_dialog else []
    if plays and path:
        named = W.started_level(plays[0].button.text)
        level = named if named is not None else max((_number_of(b) for b, _ in nodes), default=None)
        ranked = tuple(_tap(c, "the level map") for c in plays)
        return ScreenVerdict("map", ranked[0], f"the level map; tapping {ranked[0].label!r}", tuple(words),
                             refused=refused, buttons=tuple(seen), ranked=ranked, level=level)  # fmt: skip
    node = current_node(frame, regions, path, w, h) if path and not cands else None
    if node is not None and not any(_inside(_centre(node.box), rb) for rb in refused_boxes):
        # no Play button, too few numbers read: the node that stands out on the path is the
        # level to play (its number, when read, names the level)
        # (the number read on it is shown, but names no level: a lone small number is
        # misread too often, "2" as "4,", and a wrong level number outlives the level)
        on = [_number_of(b) for b, _ in nodes if _inside(_centre(b.box), node.box)]
        number = on[0] if len(on) == 1 else None
        sb = SeenButton("(node)" if number is None else str(number), node.box, "safe", "the map's prominent level node")
        act = Action("tap", _centre(node.box), NODE_LABEL,
                     "the level map; its prominent node" + (" (no number read)" if number is None else f" ({number}?)"))
        return ScreenVerdict("map", act, "the level map; tapping its prominent node", tuple(words), refused=refused,
                             buttons=tuple(seen) + (sb,), ranked=(act,))  # fmt: skip

    # a dialog's close glyph: an X on a flat badge, or an X or arrow at a panel's top corner
    close = find_close(frame, regions, panels)
    if close is not None and not any(_inside(_centre(close.box), rb) for rb in refused_boxes):
        sb = SeenButton("X", close.box, "safe", "a close X glyph")
        seen.append(sb)
        cands.append(_Cand(sb, "close", _centre(close.box), False, True))
    if panel is not None:
        for gbox, glyph in find_glyphs(frame, _panel_spots(panel)):
            if any(_inside(_centre(gbox), c.button.box) or _inside(c.point, _grow(gbox, 0.5)) for c in cands):
                continue
            if any(_inside(_centre(gbox), rb) for rb in refused_boxes):
                continue
            sb = SeenButton("X" if glyph == "x" else ">", gbox, "safe", f"a close {glyph} glyph at the dialog's corner")
            seen.append(sb)
            cands.append(_Cand(sb, "close", _centre(gbox), False, True))

    level = W.level_of(texts) or W.level_of(_lines([wd for wd in words if panel is None
                                                   or _inside(wd.centre, _grow(panel, 0.04))]))  # fmt: skip
    outcome = W.outcome_of(texts)
    forward = [c for c in cands if c.meaning == "forward" and not c.outside]
    if panel is not None and any(W.norm(c.button.text).split()[:1] in PLAY_WORDS for c in forward
                                 if W.norm(c.button.text)) and (level is not None or W.has_goal(texts)):  # fmt: skip
        kind, what, outcome = "intro", "a level's intro card", None
    evidence = words or covering or panels
    ranked = tuple(_tap(c, what) for c in sorted(cands, key=_order))
    common = dict(words=tuple(words), refused=refused, buttons=tuple(seen), panel=panel, outcome=outcome, level=level)
    if ranked:
        best = ranked[0]
        return ScreenVerdict(kind, best, f"{what}; tapping {best.label!r}", ranked=ranked, **common)  # type: ignore[arg-type]
    if not evidence:
        return ScreenVerdict("unknown", None, f"{what}, and no text or dialog on it", tuple(words), refused=refused)
    if kind == "card" and not panels and not refused:
        return ScreenVerdict("unknown", None, f"{what}, no dialog and no button on it: an unknown screen",
                             tuple(words), buttons=tuple(seen))  # fmt: skip
    blocked = f"the only ways on are forbidden ({'; '.join(sb.why for sb in seen if sb.verdict == 'forbidden')})" \
        if refused else None  # fmt: skip
    back = Action("back", None, "Back", "no safe button; trying Back")
    return ScreenVerdict(kind, back, f"{what}; no safe button" + (f" (refused: {', '.join(refused)})" if refused else ""),
                         ranked=(back,), blocked=blocked, **common)  # type: ignore[arg-type]  # fmt: skip


def _reread(frame: np.ndarray, box: BBox, ocr: Ocr) -> str:
    """The words on one box read again on their own (by the box's own luminance), or ""."""
    read = getattr(ocr, "read_crops", None)
    if read is None:
        return ""
    h = box[3] - box[1]
    found: list[Word] = read(frame, [(box[0] - h // 2, box[1] - h // 4, box[2] + 3 * h, box[3] + h // 4)])
    return " ".join(wd.text for wd in sorted(found, key=lambda wd: wd.box[0]))


def _at_edge(box: BBox, w: int, h: int) -> bool:
    """Whether the box touches the frame's edge (cut by it)."""
    return box[0] <= 1 or box[1] <= 1 or box[2] >= w - 1 or box[3] >= h - 1


def _ad(frame: np.ndarray, seen: list[SeenButton], cands: list[_Cand], corners: list[BBox], count: int | None,
        words: list[Word], refused: tuple[str, ...], ocr: Ocr, count_box: BBox | None = None) -> ScreenVerdict:  # fmt: skip
    """An interstitial ad: its close control (in a corner) once shown, else wait for it.
    A lone number taken for the countdown (`count_box`) that lies on a close glyph is the
    glyph read as a digit (an X reads as a 4 or a 7): the close is there, not a countdown."""
    what = "an ad"
    out: list[SeenButton] = []
    closes: list[_Cand] = []
    for sb in seen:
        in_corner = any(_inside(_centre(sb.box), c) for c in corners)
        if W.is_install(sb.text) or (sb.verdict == "safe" and not in_corner):
            out.append(SeenButton(sb.text, sb.box, "forbidden", "an ad's button: it installs or opens the advertised app"))
            continue
        if sb.verdict == "safe" and W.countdown(sb.text) is None:
            again = _reread(frame, sb.box, ocr)
            n = W.countdown(again)
            if n is not None and len(sb.text.strip()) == 1 and not any(ch.isalpha() for ch in again):
                n = None  # a close glyph read as an X, then on its own as a digit ("» 4"): no countdown
            if n is not None or "in" in W.norm(again).split():
                # read again on its own: "Close in 5", the countdown, not the close yet
                count = n if n is not None else count if count is not None else -1
                out.append(SeenButton(sb.text, sb.box, "other", f"the ad's countdown ({again.strip()!r})"))
                continue
            c = next(c for c in cands if c.button is sb)
            closes.append(_Cand(sb, "close", c.point, False, c.loose))
        out.append(sb)
    for gbox, glyph in find_glyphs(frame, corners):
        if any(_inside(_centre(gbox), c.button.box) for c in closes):
            continue
        sb = SeenButton("X" if glyph == "x" else ">", gbox, "safe", f"the ad's close {glyph} glyph in a corner")
        out.append(sb)
        closes.append(_Cand(sb, "close", _centre(gbox), False, False))
        if count_box is not None and _inside(_centre(count_box), _grow(gbox, 0.25)):
            count = None
    common = dict(words=tuple(words), refused=refused + tuple(b.text for b in out if b.verdict == "forbidden"
                                                              and b.text not in refused),
                  buttons=tuple(out), panel=None, countdown=count)  # fmt: skip
    back = Action("back", None, "Back", "the ad's close control never appeared; trying Back")
    if closes and count is None:  # (while a countdown runs, what looks like a close is not one yet)
        ranked = tuple(_tap(c, what) for c in sorted(closes, key=_order)) + (back,)
        return ScreenVerdict("ad", ranked[0], f"an ad; closing it with {ranked[0].label!r}", ranked=ranked, **common)  # type: ignore[arg-type]
    if count is not None and count < 0:
        common["countdown"] = None
    why = f"the ad's close control (a countdown shows {count})" if count is not None and count >= 0 else \
        "the ad's close control, not shown yet"  # fmt: skip
    wait = Action("wait", None, "wait", f"waiting for {why}")
    return ScreenVerdict("ad", wait, f"an ad; waiting for {why}", ranked=(wait, back), **common)  # type: ignore[arg-type]


def _node_number(b: Button) -> int | None:
    """The level number on a map's node: a number of 1 to 4 digits, alone but for one speck
    read as a letter beside it ("48 a": a star or the badge's rim)."""
    # (a speck glued to it counts the same: the badge's ring read as an "S" before "51")
    numbers: list[int] = []
    specks = 0
    for token in W.norm(b.all_text).split():
        m = re.fullmatch(r"([a-z]?)(\d{1,4})([a-z]?)", token)
        if m is not None:
            numbers.append(int(m.group(2)))
            specks += len(m.group(1)) + len(m.group(3))
        elif len(token) == 1 and token.isalpha():
            specks += 1
        else:
            return None
    return numbers[0] if len(numbers) == 1 and specks <= 1 else None


def _number_of(b: Button) -> int:
    n = _node_number(b)
    assert n is not None  # (only nodes, which have one, are asked)
    return n


def _node_box(b: Button, regions: list[Region], words: list[Word], w: int, h: int) -> BBox:
    """A level number's badge: the round shape it is written on, else the shape OCR grouped
    it on."""
    badge = number_badge(regions, _word_box(b, words) or b.box, w, h)
    return badge.box if badge is not None else b.shape.box if b.shape is not None else b.box


def _map(nodes: list[tuple[Button, SeenButton]], badges: dict[int, BBox], cands: list[_Cand], seen: list[SeenButton],
         words: list[Word], refused: tuple[str, ...]) -> ScreenVerdict:  # fmt: skip
    """The level map: a Play button where there is one (it plays the current level, whichever
    node OCR missed), else the prominent level node (its badge, `badges`, the biggest)."""

    def size(b: Button) -> int:
        box = badges[id(b)]
        return (box[2] - box[0]) * (box[3] - box[1])

    node_b, _ = max(nodes, key=lambda n: (size(n[0]), n[0].box[3] - n[0].box[1]))
    number = _number_of(node_b)
    others = [size(b) for b, _ in nodes if b is not node_b]
    # the map's level is the node that stands out; when OCR missed that one, the biggest node
    # read is a level played before, which names no level
    level: int | None = number if not others or size(node_b) >= PROMINENT * float(np.median(others)) else None
    out = [SeenButton(sb.text, sb.box, "safe" if b is node_b else "other",
                      "the prominent level node" if b is node_b else "a level node") if (b, sb) in nodes else sb
           for b, sb in zip([n[0] for n in nodes], [n[1] for n in nodes])]  # fmt: skip
    rest = [sb for sb in seen if all(sb is not n[1] for n in nodes)]
    node_action = Action("tap", _centre(node_b.box), str(number), f"the level map; level {number} is the prominent node")
    plays = [c for c in sorted(cands, key=_order) if c.meaning == "forward"]
    play_words = [c for c in plays if W.norm(c.button.text).split()[:1] in PLAY_WORDS]
    if play_words:
        named = W.started_level(play_words[0].button.text)
        level = named if named is not None else level
        first = _tap(play_words[0], "the level map")
        ranked = (first, node_action) + tuple(_tap(c, "the level map") for c in plays if c is not play_words[0])
        return ScreenVerdict("map", first, f"the level map; tapping {first.label!r}", tuple(words), refused=refused,
                             buttons=tuple(out + rest), ranked=ranked, level=level)  # fmt: skip
    ranked = (node_action,) + tuple(_tap(c, "the level map") for c in plays)
    return ScreenVerdict("map", node_action, f"the level map; tapping level {number}", tuple(words), refused=refused,
                         buttons=tuple(out + rest), ranked=ranked, level=level)  # fmt: skip


def _beside(box: tuple[int, int, int, int], other: tuple[int, int, int, int]) -> bool:
    """`other` touches `box` from above or below (within half the box's height), over
    the same columns."""
    bh = box[3] - box[1]
    cy = (other[1] + other[3]) / 2
    if box[1] <= cy <= box[3]:  # beside on the same line, or a misread spanning it
        return False
    overlap = min(box[2], other[2]) - max(box[0], other[0])
    if overlap <= 0.3 * min(box[2] - box[0], other[2] - other[0]):
        return False
    gap = max(other[1] - box[3], box[1] - other[3])
    return gap <= 0.5 * bh


def _title_band(box: tuple[int, int, int, int], panels: list[tuple[int, int, int, int]]) -> bool:
    """A shape as wide as the panel it is on, in its top part: a title band, not a button."""
    for p in panels:
        pw, ph = p[2] - p[0], p[3] - p[1]
        if box == p or not (p[0] - 2 <= box[0] and box[2] <= p[2] + 2 and p[1] - 2 <= box[1] and box[3] <= p[3] + 2):
            continue
        if box[2] - box[0] >= TITLE_WIDTH * pw and (box[1] + box[3]) / 2 <= p[1] + 0.35 * ph:
            return True
    return False


def _loose_ok(b: Button, panels: list[tuple[int, int, int, int]], words: list[Word], w: int, h: int) -> bool:
    """Text on no button shape is tapped only inside a panel, or when read surely and
    away from the screen's edges (a speck at the edge read as "ok" is no button)."""
    c = _centre(b.box)
    if any(_inside(c, p) for p in panels):
        return True
    conf = min((wd.conf for wd in words if _inside(wd.centre, b.box)), default=0.0)
    mx, my = EDGE_SHARE * w, EDGE_SHARE * h
    return conf >= LOOSE_SURE and mx <= c[0] <= w - mx and my <= c[1] <= h - my


def _inside(point: tuple[int, int], box: tuple[int, int, int, int]) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _word_box(button: Button, words: list[Word]) -> tuple[int, int, int, int] | None:
    """The box of the button's words (its text's centre is where to tap)."""
    inside = [wd.box for wd in words if _inside(wd.centre, button.box)]
    return _union(inside) if inside else None
