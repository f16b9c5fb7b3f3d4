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

from agent.vision.cover import find_panels
from agent.vision.grid import BBox, Frac, bbox_to_frac, frac_to_bbox
from agent.vision.lattice import Lattice
from agent.vision.locate import BoardFind
from agent.vision.ocr import UNAVAILABLE, Ocr, Region, Word, flat_regions, ink_crop, ocr_unavailable_reason
from agent.vision.profile import GameProfile, TaughtScreen

ScreenKind = Literal["board", "covered", "card", "other_app", "unknown"]

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
    kind: Literal["tap", "back", "launch"]
    point: tuple[int, int] | None
    label: str
    why: str


@dataclass(frozen=True)
class ScreenVerdict:
    kind: ScreenKind
    action: Action | None
    reason: str
    words: tuple[Word, ...] = ()
    taught: str | None = None
    refused: tuple[str, ...] = ()  # buttons seen and refused (a price, Buy, Share, Install...)


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


def _button(words: list[Word], box: tuple[int, int, int, int], shape: Region | None) -> Button:
    ws = sorted(words, key=lambda w: w.box[0])
    sure = [w.text for w in ws if w.conf >= SURE] or [w.text for w in ws]
    return Button(" ".join(sure), box, shape, " ".join(w.text for w in ws))


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
        if abs(cx - px1) <= reach and abs(cy - py0) <= reach:
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


def classify_screen(
    frame: np.ndarray, profile: GameProfile, *, board_readable: bool, foreground: str | None, ocr: Ocr | None
) -> ScreenVerdict:
    """What the settled frame shows and what to do about it (see the module docstring)."""
    h, w = frame.shape[:2]
    if foreground is not None and profile.package is not None and foreground != profile.package:
        return ScreenVerdict(
            "other_app", Action("launch", None, profile.package, f"{foreground} is in front, not the game"),
            f"another app is in front ({foreground}); the game is {profile.package}",
        )  # fmt: skip
    regions = flat_regions(frame)
    covering = cover_boxes(frame, profile, regions)
    if board_readable and not covering:
        return ScreenVerdict("board", None, "the board was read and nothing covers it")
    taught = match_taught(frame, profile.screens)
    if taught is not None:
        if taught.action == "back":
            action = Action("back", None, "Back", f"taught screen {taught.name!r}")
        else:
            action = Action("tap", taught.scaled_tap(w, h), taught.name, f"taught screen {taught.name!r}")
        return ScreenVerdict("covered" if covering else "card", action, f"the taught screen {taught.name!r}",
                             taught=taught.name)  # fmt: skip
    kind: ScreenKind = "covered" if covering or board_readable else "card"
    what = "a dialog covers the board" if kind == "covered" else "no board on the screen"
    if ocr is None:
        return ScreenVerdict("unknown", None, f"{what}; {ocr_unavailable_reason() or UNAVAILABLE}")
    words = ocr.words(frame)
    # (a shape of nearly the whole screen is its background, not a panel)
    panels = [r.box for r in regions if PANEL_AREA * w * h <= r.area <= 0.9 * w * h] + covering
    buttons = group_words(words, regions, float(w * h))
    bad = [b for b in buttons if forbidden(b.all_text)]
    # a button with a price or Buy right beside it (text just under or over it, not on
    # it) is that price's button too: "Continue" over "$0.99"
    bad += [b for b in buttons
            if b not in bad and b.shape is not None and any(o.shape is None and _beside(b.box, o.box) for o in bad)]
    refused = tuple(b.all_text for b in bad)
    refused_boxes = [b.box for b in bad]
    # best rank first; then a word on a button shape before loose text; then the lowest
    # on the screen (a dialog's buttons are below its title and text)
    candidates: list[tuple[int, bool, float, Button]] = []
    for b in buttons:
        if b in bad:
            continue
        rank = safe_rank(b.text)
        if rank is None:
            continue
        if rank == 0 and _norm(b.text) in ("x", "×", "✕", "✖") and not _near_close_spot(b.box, panels, w, h):
            continue  # a lone letter x elsewhere is likely a misread icon or tile
        if b.shape is None and not _loose_ok(b, panels, words, w, h):
            continue
        if "?" in b.text or (b.shape is not None and _title_band(b.shape.box, panels)):
            continue  # a question or a title ("Continue?") asks; the answer is a button
        candidates.append((rank, b.shape is None, -b.box[1], b))
    close = find_close(frame, regions, panels)
    if close is not None and not any(_inside(_centre(close.box), rb) for rb in refused_boxes):
        candidates.append((0, False, -close.box[1], Button("X", close.box, close)))
    evidence = words or covering or panels
    if candidates:
        best = min(candidates, key=lambda c: c[:3])[3]
        point = _centre(_word_box(best, words) or best.box)
        return ScreenVerdict(kind, Action("tap", point, best.text, f"{what}; the safest button is {best.text!r}"),
                             f"{what}; tapping {best.text!r}", tuple(words), refused=refused)  # fmt: skip
    if not evidence:
        return ScreenVerdict("unknown", None, f"{what}, and no text or dialog on it", tuple(words), refused=refused)
    if kind == "card" and not panels and not refused:
        return ScreenVerdict("unknown", None, f"{what}, no dialog and no button on it: an unknown screen",
                             tuple(words))  # fmt: skip
    return ScreenVerdict(kind, Action("back", None, "Back", "no safe button; trying Back"),
                         f"{what}; no safe button" + (f" (refused: {', '.join(refused)})" if refused else ""),
                         tuple(words), refused=refused)  # fmt: skip


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
