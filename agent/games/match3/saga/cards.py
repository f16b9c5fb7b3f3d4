"""The non-board screens of a family of saga games, painted on uint8 BGR images: cards and
dialogs (level complete, failed, out of moves, offers, daily rewards, tips, level intros,
quit questions), the level map between levels and full-screen interstitial ads.

A game's `CardStyle` is drawn once from its seed and says how that game draws all of them:
its palette, its buttons (flat, gradient, pill, outlined, with a shine, with a drop shadow),
its font, its words (one form per meaning, from the several real games use), how much it
dims what is behind a card, its coin icon, where an ad's countdown and close sit. Every
tappable thing is laid out once as a `Tappable` box, drawn from that box and returned, so
the phone hit-tests exactly what was drawn. Text is OpenCV's Hershey fonts (no font files).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 exclusive, screen pixels
BGR = tuple[int, int, int]

CardKind = Literal["complete", "failed", "out_of_moves", "offer", "daily", "tip", "intro", "quit", "done"]
CARD_KINDS: tuple[CardKind, ...] = ("complete", "failed", "out_of_moves", "offer", "daily", "tip", "intro", "quit",
                                    "done")  # fmt: skip

FORBIDDEN_ACTIONS = frozenset({"buy", "buy_moves", "install", "share", "watch_ad", "invite", "rate", "shop", "quit",
                               "give_up"})  # fmt: skip

# Readable Hershey faces only (the script faces are not what games print on buttons).
FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX)
BUTTON_LOOKS = ("flat", "gradient", "pill", "outlined", "shine", "shadow")
CLOSE_GLYPHS = ("x", "circle_x", "arrow")
CORNERS = ("tl", "tr", "bl", "br")
ICONS = ("coin", "gem", "cash")

# The forms of each meaning; a game uses one of each.
WORDS: dict[str, tuple[str, ...]] = {
    "next": ("Next", "Continue", "Tap to continue", "NEXT", "CONTINUE"),
    "retry": ("Retry", "Try again", "Play again", "RETRY"),
    "play": ("Play", "Start", "PLAY", "Let's go"),
    "collect": ("Collect", "Claim", "COLLECT", "Claim reward"),
    "ok": ("OK", "Got it", "Okay", "Close"),
    "decline": ("No thanks", "Later", "Not now", "Skip", "Close"),
    "resume": ("Continue", "Resume", "Keep playing", "Play on"),
    "quit": ("Quit", "Leave", "Exit", "Give up"),
    "give_up": ("Give up", "End level", "Quit"),
    "share": ("Share", "Brag", "SHARE"),
    "watch": ("Watch ad x2", "x2 Watch", "Watch video"),
    "install": ("Install", "Get", "INSTALL NOW", "Play now", "Download"),
    "buy": ("Buy", "BUY", "Get it"),
}
TITLES: dict[str, tuple[str, ...]] = {
    "complete": ("Level Complete!", "Well done!", "Sweet!", "You win!", "Level {n} complete", "Great!"),
    "failed": ("Level failed", "Level {n} failed", "Try again?", "You lost", "Oh no!"),
    "out_of_moves": ("Out of moves!", "No more moves", "Out of moves", "Keep going?"),
    "offer": ("Special offer!", "Booster pack", "Limited deal", "Starter pack"),
    "daily": ("Daily reward", "Daily bonus", "Day {d} reward", "Free gift"),
    "tip": ("Tip", "Did you know?", "Hint", "New!"),
    "intro": ("Level {n}", "LEVEL {n}", "Lv. {n}", "Level {n}"),
    "quit": ("Quit level?", "Leave level?", "Are you sure?", "Exit level?"),
    "done": ("All levels done!", "See you soon", "More levels soon"),
}
TIPS = ("Match 4 for a striped tile", "Match 5 for a colour bomb", "Swap two specials for a blast",
        "Clear the crates next to a match")  # fmt: skip
AD_NAMES = ("KINGDOM BUILDER", "Farm Story", "SPACE WARS", "Puzzle Quest 3", "Dragon City", "Cook It!")
AD_LINES = ("Build your empire today!", "Play with friends", "Free to play", "Over 10M players",
            "Can you beat level 1?")  # fmt: skip
COUNTDOWN_FORMS = ("{n}", "Close in {n}", "Skip in {n}s", "{n}s")


@dataclass(frozen=True)
class CardStyle:
    """How one game draws its non-board screens."""

    panel: BGR  # the card's body
    band: BGR  # the title band (or the title's colour when `banded` is False)
    banded: bool
    ink: BGR  # body text
    primary: BGR  # the way-on button
    secondary: BGR  # other buttons (decline, give up, share)
    price_colour: BGR  # buttons that spend
    button_look: str  # one of BUTTON_LOOKS
    gradient_to: float  # the gradient's far end as a factor of the colour (below 1 darker, above 1 lighter)
    pill: bool  # buttons fully rounded
    font: int
    weight: float  # stroke thickness as a factor
    outline_text: bool  # button words with a dark outline
    button_text: BGR
    words: tuple[tuple[str, str], ...]  # meaning -> the form this game uses
    titles: tuple[tuple[str, str], ...]  # card kind -> title form
    close_glyph: str  # one of CLOSE_GLYPHS
    close_colour: BGR
    close_corner: Literal["tr", "tl"]  # where a card's close sits
    dim: float  # what is behind a card is multiplied by this (1.0: not dimmed)
    icon: str  # one of ICONS: what prices and rewards are shown with
    panel_w: float  # share of the screen's width
    stars: bool  # complete cards show stars
    ad_corner: str  # one of CORNERS
    ad_countdown: str  # one of COUNTDOWN_FORMS
    ad_close_glyph: str  # one of CLOSE_GLYPHS, or "text" (the word Close/Skip)
    map_sky: tuple[BGR, BGR]
    map_path: BGR
    map_node: BGR  # done nodes
    map_current: BGR
    map_play_button: bool  # the map also shows a Play button for the current level
    title_ink: BGR = (60, 40, 40)  # a title's colour on the panel itself (no band): it contrasts with the panel

    def word(self, meaning: str) -> str:
        return dict(self.words)[meaning]

    def title(self, kind: str, level: int) -> str:
        return dict(self.titles)[kind].format(n=level, d=1 + level % 7)


def _hsv(rng: np.random.Generator, h: tuple[int, int] = (0, 180), s: tuple[int, int] = (120, 230),
         v: tuple[int, int] = (150, 240)) -> BGR:  # fmt: skip
    hsv = np.array([[[rng.integers(*h) % 180, rng.integers(*s), rng.integers(*v)]]], np.uint8)
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def card_style(rng: np.random.Generator) -> CardStyle:
    """A game's style drawn from its seed."""
    light = rng.random() < 0.7
    panel = _hsv(rng, s=(10, 60), v=(225, 252)) if light else _hsv(rng, s=(80, 200), v=(60, 110))
    ink = (60, 45, 40) if light else (235, 235, 240)
    primary = _hsv(rng, h=(35, 75), s=(150, 230), v=(150, 220)) if rng.random() < 0.5 else _hsv(rng)
    words = tuple((m, _pick(rng, forms)) for m, forms in WORDS.items())
    titles = tuple((k, _pick(rng, forms)) for k, forms in TITLES.items())
    g = float(rng.uniform(0.45, 0.7)) if rng.random() < 0.6 else float(rng.uniform(1.25, 1.6))
    sky_a = _hsv(rng, s=(60, 160), v=(170, 240))
    return CardStyle(
        panel=panel, band=_hsv(rng), banded=bool(rng.random() < 0.6), ink=ink, primary=primary,
        secondary=_hsv(rng, s=(40, 160), v=(110, 200)), price_colour=_hsv(rng, h=(5, 30)),
        button_look=_pick(rng, BUTTON_LOOKS), gradient_to=g, pill=bool(rng.random() < 0.5),
        font=FONTS[int(rng.integers(len(FONTS)))], weight=float(rng.uniform(0.8, 1.5)),
        outline_text=bool(rng.random() < 0.5), button_text=(255, 255, 255) if rng.random() < 0.85 else (40, 30, 30),
        words=words, titles=titles, close_glyph=_pick(rng, CLOSE_GLYPHS), close_colour=_hsv(rng, h=(0, 10)),
        close_corner="tr" if rng.random() < 0.8 else "tl", dim=float(rng.uniform(0.3, 0.75)) if rng.random() < 0.85 else 1.0,
        icon=_pick(rng, ICONS), panel_w=float(rng.uniform(0.74, 0.9)), stars=bool(rng.random() < 0.6),
        ad_corner=_pick(rng, CORNERS), ad_countdown=_pick(rng, COUNTDOWN_FORMS),
        ad_close_glyph=_pick(rng, CLOSE_GLYPHS + ("text",)),
        map_sky=(sky_a, _hsv(rng, s=(60, 160), v=(120, 220))), map_path=_hsv(rng, s=(30, 90), v=(200, 250)),
        map_node=_hsv(rng, s=(100, 200), v=(150, 220)), map_current=_hsv(rng, h=(10, 40), s=(180, 255), v=(230, 255)),
        map_play_button=bool(rng.random() < 0.4),
        title_ink=shade(_hsv(rng, v=(120, 200)), 0.8) if light else _hsv(rng, s=(30, 120), v=(215, 255)),
    )  # fmt: skip


@dataclass(frozen=True)
class Tappable:
    label: str  # the text drawn on it ("" for an icon)
    action: str  # what a tap does, for the phone's flow
    box: Box
    forbidden: bool  # spends money or acts for the user: never the right answer

    def hit(self, x: int, y: int) -> bool:
        x0, y0, x1, y1 = self.box
        return x0 <= x < x1 and y0 <= y < y1


@dataclass(frozen=True)
class CardContent:
    kind: CardKind
    level: int
    score: int | None = None  # complete/failed cards show it
    target: int | None = None
    goal_kind: str | None = None  # intro card: "score" | "collect" | "break"
    goal_count: int | None = None
    goal_icon: tuple[np.ndarray, np.ndarray] | None = None  # (bgr uint8 HxWx3, alpha float32 HxW)
    coins: int | None = None  # an offer's coin price ("+5 moves" for 900 coins)


# -- drawing primitives ------------------------------------------------------------------


def shade(colour: BGR, k: float) -> BGR:
    return (int(min(255, colour[0] * k)), int(min(255, colour[1] * k)), int(min(255, colour[2] * k)))


def _mask_rounded(h: int, w: int, r: int) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    r = int(max(0, min(r, w // 2, h // 2)))
    cv2.rectangle(m, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(m, (0, r), (w - 1, h - 1 - r), 255, -1)
    if r > 0:
        for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
            cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m


def _fill(img: np.ndarray, box: Box, r: int, colour: BGR | np.ndarray, alpha: float = 1.0) -> None:
    """A rounded box filled with a colour or an HxWx3 picture, in place (clipped to the image)."""
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    if h <= 0 or w <= 0:
        return
    m = _mask_rounded(h, w, r).astype(np.float32) / 255 * alpha
    src = np.broadcast_to(np.asarray(colour, np.float32), (h, w, 3)) if not isinstance(colour, np.ndarray) or colour.ndim == 1 \
        else colour.astype(np.float32)  # fmt: skip
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(img.shape[1], x1), min(img.shape[0], y1)
    if cx1 <= cx0 or cy1 <= cy0:
        return
    sub = (slice(cy0 - y0, cy1 - y0), slice(cx0 - x0, cx1 - x0))
    a = m[sub][..., None]
    region = img[cy0:cy1, cx0:cx1].astype(np.float32)
    img[cy0:cy1, cx0:cx1] = (region * (1 - a) + src[sub] * a).astype(np.uint8)


def _gradient(h: int, w: int, top: BGR, bottom: BGR, horizontal: bool = False) -> np.ndarray:
    n = w if horizontal else h
    t = np.linspace(0.0, 1.0, max(n, 1), dtype=np.float32)
    a, b = np.asarray(top, np.float32), np.asarray(bottom, np.float32)
    ramp = a[None, :] * (1 - t[:, None]) + b[None, :] * t[:, None]
    if horizontal:
        return np.repeat(ramp[None, :, :], h, 0)
    return np.repeat(ramp[:, None, :], w, 1)


def text(img: np.ndarray, s: str, box: Box, colour: BGR, style: CardStyle, outline: BGR | None = None,
         height: float = 0.5, font: int | None = None) -> Box:  # fmt: skip
    """`s` fitted into `box` (its letters `height` of the box tall at most, never wider than 90% of it),
    centred; returns the box the letters cover."""
    f = style.font if font is None else font
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    (tw, th), _ = cv2.getTextSize(s, f, 1.0, 2)
    scale = max(0.3, min(bh * height / max(th, 1), bw * 0.9 / max(tw, 1)))
    t = max(2, int(round(scale * 2.0 * style.weight)))
    (tw, th), base = cv2.getTextSize(s, f, scale, t)
    x = x0 + (bw - tw) // 2
    y = y0 + (bh + th) // 2
    if outline is not None:
        cv2.putText(img, s, (x, y), f, scale, outline, t + max(3, t), cv2.LINE_AA)
    cv2.putText(img, s, (x, y), f, scale, colour, t, cv2.LINE_AA)
    return x, y - th, x + tw, y + base


def icon(img: np.ndarray, kind: str, centre: tuple[int, int], r: int) -> None:
    """A coin, a gem or a bank note, the currency beside a price or a reward."""
    cx, cy = centre
    if kind == "coin":
        cv2.circle(img, (cx + r // 8, cy + r // 8), r, (10, 60, 110), -1, cv2.LINE_AA)
        cv2.circle(img, (cx, cy), r, (20, 150, 230), -1, cv2.LINE_AA)
        cv2.circle(img, (cx, cy), int(r * 0.72), (40, 200, 255), -1, cv2.LINE_AA)
        cv2.ellipse(img, (cx - r // 4, cy - r // 4), (r // 4, r // 7), -40, 0, 360, (200, 245, 255), -1, cv2.LINE_AA)
    elif kind == "gem":
        pts = np.array([(cx - r, cy - r // 3), (cx - r // 2, cy - r), (cx + r // 2, cy - r), (cx + r, cy - r // 3),
                        (cx, cy + r)], np.int32)  # fmt: skip
        cv2.fillPoly(img, [pts], (200, 60, 220), cv2.LINE_AA)
        cv2.fillPoly(img, [np.array([(cx - r // 2, cy - r // 3), (cx, cy - r), (cx + r // 2, cy - r // 3), (cx, cy + r)],
                                    np.int32)], (240, 140, 250), cv2.LINE_AA)  # fmt: skip
    else:
        w, h = int(r * 1.6), int(r * 0.9)
        cv2.rectangle(img, (cx - w, cy - h), (cx + w, cy + h), (60, 140, 40), -1, cv2.LINE_AA)
        cv2.rectangle(img, (cx - w + r // 5, cy - h + r // 5), (cx + w - r // 5, cy + h - r // 5), (110, 200, 90), 2)
        cv2.circle(img, (cx, cy), h // 2, (60, 140, 40), -1, cv2.LINE_AA)


def draw_button(img: np.ndarray, style: CardStyle, label: str, box: Box, colour: BGR,
                with_icon: bool = False) -> None:  # fmt: skip
    """A button in the game's look, its words (and a currency icon before them) centred."""
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    r = h // 2 if style.pill else h // 4
    look = style.button_look
    txt = style.button_text
    if look == "shadow" or look == "shine":
        _fill(img, (x0 + h // 14, y0 + h // 8, x1 + h // 14, y1 + h // 8), r, (20, 20, 20), 0.55)
    if look == "outlined":
        _fill(img, box, r, shade(colour, 0.55))
        b = max(3, h // 12)
        _fill(img, (x0 + b, y0 + b, x1 - b, y1 - b), max(0, r - b), colour)
    elif look == "gradient":
        far = shade(colour, style.gradient_to)
        _fill(img, box, r, _gradient(h, w, far if style.gradient_to > 1 else colour, colour if style.gradient_to > 1 else far))
    elif look == "shine":
        _fill(img, box, r, _gradient(h, w, shade(colour, 1.3), shade(colour, 0.8)))
        _fill(img, (x0 + h // 5, y0 + h // 14, x1 - h // 5, y0 + h // 3), h // 8, (255, 255, 255), 0.35)
    else:
        _fill(img, (x0, y0 + h // 12, x1, y1), r, shade(colour, 0.6))
        _fill(img, (x0, y0, x1, y1 - h // 12), r, colour)
    outline = shade(colour, 0.35) if style.outline_text else None
    if with_icon:
        ir = int(h * 0.26)
        tb = (x0 + int(h * 0.75), y0, x1 - h // 8, y1)
        text(img, label, tb, txt, style, outline, 0.42)
        icon(img, style.icon, (x0 + int(h * 0.45), (y0 + y1) // 2), ir)
    else:
        text(img, label, box, txt, style, outline, 0.42)


def close_glyph(img: np.ndarray, glyph: str, box: Box, colour: BGR, text_style: CardStyle | None = None) -> None:
    x0, y0, x1, y1 = box
    c = ((x0 + x1) // 2, (y0 + y1) // 2)
    s = min(x1 - x0, y1 - y0)
    t = max(3, s // 9)
    k = s // 5
    if glyph == "circle_x":
        cv2.circle(img, c, s // 2, shade(colour, 0.6), -1, cv2.LINE_AA)
        cv2.circle(img, c, s // 2 - max(2, s // 14), colour, -1, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] - k), (c[0] + k, c[1] + k), (255, 255, 255), t, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] + k), (c[0] + k, c[1] - k), (255, 255, 255), t, cv2.LINE_AA)
    elif glyph == "x":
        k = int(s * 0.3)
        cv2.line(img, (c[0] - k, c[1] - k), (c[0] + k, c[1] + k), (30, 30, 30), t + 4, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] + k), (c[0] + k, c[1] - k), (30, 30, 30), t + 4, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] - k), (c[0] + k, c[1] + k), (240, 240, 240), t, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] + k), (c[0] + k, c[1] - k), (240, 240, 240), t, cv2.LINE_AA)
    elif glyph == "arrow":
        cv2.circle(img, c, s // 2, colour, -1, cv2.LINE_AA)
        k = int(s * 0.22)
        pts = np.array([(c[0] - k // 2, c[1] - k), (c[0] + k, c[1]), (c[0] - k // 2, c[1] + k)], np.int32)
        cv2.fillPoly(img, [pts], (255, 255, 255), cv2.LINE_AA)
    elif text_style is not None:
        _fill(img, box, s // 3, (40, 40, 40), 0.75)
        text(img, "Close" if (x1 - x0) > 2.2 * (y1 - y0) else "X", box, (255, 255, 255), text_style, None, 0.45)


def dim(img: np.ndarray, k: float) -> np.ndarray:
    return cv2.convertScaleAbs(img, alpha=k)


def star(img: np.ndarray, centre: tuple[int, int], r: int, colour: BGR) -> None:
    pts = []
    for i in range(10):
        a = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((centre[0] + rr * math.cos(a), centre[1] + rr * math.sin(a)))
    cv2.fillPoly(img, [np.array(pts, np.int32)], colour, cv2.LINE_AA)


def _paste_sprite(img: np.ndarray, sprite: tuple[np.ndarray, np.ndarray], box: Box) -> None:
    bgr, alpha = sprite
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    if w <= 0 or h <= 0:
        return
    b = cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    a = cv2.resize(alpha.astype(np.float32), (w, h), interpolation=cv2.INTER_AREA)[..., None]
    region = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (region * (1 - a) + b * a).astype(np.uint8)


# -- cards -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    label: str
    action: str
    colour: BGR
    with_icon: bool = False


def _buttons_of(style: CardStyle, c: CardContent, rng: np.random.Generator) -> tuple[list[str], list[list[_Spec]]]:
    """The card's body lines and its rows of buttons (top row first)."""
    w = style.word
    P, S, M = style.primary, style.secondary, style.price_colour
    lines: list[str] = []
    rows: list[list[_Spec]] = []
    coins = c.coins if c.coins is not None else int(rng.choice([500, 700, 900, 1200]))
    if c.kind == "complete":
        if c.score is not None:
            lines.append(f"Score {c.score}" if rng.random() < 0.6 else f"Score: {c.score}")
        if rng.random() < 0.5:
            lines.append(f"+{int(rng.choice([10, 20, 50, 100]))}@")  # a reward beside an icon
        row = [_Spec(w("next"), "next", P)]
        extra = rng.random()
        if extra < 0.3:
            row.insert(0, _Spec(w("share"), "share", S))
        elif extra < 0.5:
            rows.append([_Spec(w("watch"), "watch_ad", M)])
        rows.append(row)
    elif c.kind == "failed":
        if c.score is not None and c.target is not None:
            lines.append(f"Score {c.score} of {c.target}")
        elif c.score is not None:
            lines.append(f"Score {c.score}")
        lines.append("Don't give up!" if rng.random() < 0.3 else "You ran out of moves")
        row = [_Spec(w("retry"), "retry", P)]
        if rng.random() < 0.4:
            row.insert(0, _Spec(w("give_up"), "give_up", S))
        rows.append(row)
    elif c.kind == "out_of_moves":
        lines.append("+5 moves to finish the level" if rng.random() < 0.5 else "Get 5 extra moves")
        rows.append([_Spec(f"+5 moves {coins}" if rng.random() < 0.5 else str(coins), "buy_moves", M, True)])
        rows.append([_Spec(w("decline"), "close", S)] if rng.random() < 0.6 else [])
        if rng.random() < 0.3:
            rows[-1].append(_Spec(w("watch"), "watch_ad", M))
    elif c.kind == "offer":
        lines.append("3 boosters + 500 coins")
        price = _pick(rng, ("$4.99", "$0.99", "4,99 EUR", "US$ 9.99", "1.99"))
        rows.append([_Spec(f"{w('buy')} {price}" if rng.random() < 0.5 else price, "buy", M)])
        rows.append([_Spec(w("decline"), "close", S)] if rng.random() < 0.5 else [])
    elif c.kind == "daily":
        lines.append(f"Day {1 + c.level % 7}")
        lines.append(f"+{int(rng.choice([25, 50, 100, 200]))}@")
        row = [_Spec(w("collect"), "collect", P)]
        if rng.random() < 0.35:
            row.append(_Spec(w("watch"), "watch_ad", M))
        rows.append(row)
    elif c.kind == "tip":
        lines.append(_pick(rng, TIPS))
        rows.append([_Spec(w("ok"), "ok", P)])
    elif c.kind == "intro":
        n = c.goal_count if c.goal_count is not None else int(rng.integers(8, 30))
        if c.goal_kind == "collect":
            lines.append(f"Collect {n}" + ("&" if c.goal_icon is not None else ""))
        elif c.goal_kind == "break":
            lines.append(f"Break {n}" + ("&" if c.goal_icon is not None else ""))
        else:
            lines.append(f"Reach {c.target if c.target is not None else 1000 * n} points")
        if rng.random() < 0.4:
            rows.append([_Spec(f"Booster {coins}", "buy", M, True)])
        rows.append([_Spec(w("play"), "play", P)])
    elif c.kind == "quit":
        lines.append("You will lose a life")
        rows.append([_Spec(w("quit"), "quit", S), _Spec(w("resume"), "resume", P)] if rng.random() < 0.5
                    else [_Spec(w("resume"), "resume", P), _Spec(w("quit"), "quit", S)])  # fmt: skip
    else:  # done
        lines.append("Thanks for playing")
        rows.append([_Spec(w("ok"), "ok", P)])
    return lines, [r for r in rows if r]


def _has_close(c: CardContent, rng: np.random.Generator) -> str | None:
    """The action of the card's close control, if it has one."""
    if c.kind in ("offer", "out_of_moves"):
        return "close"
    if c.kind in ("daily", "tip") and rng.random() < 0.5:
        return "close"
    if c.kind == "quit" and rng.random() < 0.5:
        return "resume"
    if c.kind == "failed" and rng.random() < 0.4:
        return "close"
    return None


def draw_card(style: CardStyle, content: CardContent, behind: np.ndarray,
              rng: np.random.Generator) -> tuple[np.ndarray, tuple[Tappable, ...]]:  # fmt: skip
    """The card over `behind`, dimmed behind as the style says. Deterministic for a given rng state."""
    H, W = behind.shape[:2]
    img = dim(behind, style.dim) if style.dim < 0.99 else behind.copy()
    lines, rows = _buttons_of(style, content, rng)
    close_action = _has_close(content, rng)
    pw = int(W * style.panel_w)
    bh = int(min(W * 0.14, H * 0.06))
    line_h = int(bh * 0.9)
    title_h = int(bh * 1.5)
    stars_h = int(bh * 1.3) if content.kind == "complete" and style.stars else 0
    icon_h = int(bh * 1.6) if content.kind == "intro" and content.goal_icon is not None else 0
    ph = title_h + stars_h + icon_h + len(lines) * line_h + len(rows) * int(bh * 1.35) + int(bh * 1.0)
    x0 = (W - pw) // 2
    cy = int(H * float(rng.uniform(0.42, 0.55)))
    y0 = max(int(H * 0.12), cy - ph // 2)
    x1, y1 = x0 + pw, y0 + ph
    r = max(10, pw // 16)
    # the card's shadow, its body, its title
    _fill(img, (x0 + pw // 60, y0 + pw // 40, x1 + pw // 60, y1 + pw // 40), r, (10, 10, 10), 0.5)
    _fill(img, (x0, y0, x1, y1), r, style.panel)
    title = style.title(content.kind, content.level)
    if style.banded:
        _fill(img, (x0, y0, x1, y0 + title_h), r, style.band)
        cv2.rectangle(img, (x0, y0 + title_h - r), (x1 - 1, y0 + title_h - 1), style.band, -1)
        text(img, title, (x0 + pw // 8, y0, x1 - pw // 8, y0 + title_h), (255, 255, 255), style, shade(style.band, 0.4), 0.4)
    else:
        text(img, title, (x0 + pw // 8, y0, x1 - pw // 8, y0 + title_h), style.title_ink, style,
             (30, 30, 30) if rng.random() < 0.5 else None, 0.45)  # fmt: skip
    y = y0 + title_h + bh // 4
    if stars_h:
        won = int(rng.integers(1, 4))
        for i in range(3):
            cx = (x0 + x1) // 2 + (i - 1) * int(stars_h * 1.1)
            star(img, (cx, y + stars_h // 2), int(stars_h * 0.45), (30, 200, 255) if i < won else (150, 150, 150))
        y += stars_h
    for line in lines:
        box = (x0 + pw // 10, y, x1 - pw // 10, y + line_h)
        if line.endswith("@"):  # a reward: the number beside a currency icon
            lb = text(img, line[:-1], (x0 + pw // 4, y, x1 - pw // 10, y + line_h), style.ink, style, None, 0.55)
            icon(img, style.icon, (lb[0] - int(line_h * 0.45), y + line_h // 2), int(line_h * 0.32))
        elif line.endswith("&"):
            text(img, line[:-1], box, style.ink, style, None, 0.5)
        else:
            text(img, line, box, style.ink, style, None, 0.5)
        y += line_h
    if icon_h and content.goal_icon is not None:
        s = int(icon_h * 0.9)
        cx = (x0 + x1) // 2
        _paste_sprite(img, content.goal_icon, (cx - s // 2, y + (icon_h - s) // 2, cx - s // 2 + s, y + (icon_h - s) // 2 + s))
        y += icon_h
    y += bh // 4
    taps: list[Tappable] = []
    for row in rows:
        n = len(row)
        gap = pw // 16
        bw = min(int(pw * 0.7), (pw - gap * (n + 1)) // n)
        total = n * bw + (n - 1) * gap
        bx = x0 + (pw - total) // 2
        for spec in row:
            box = (bx, y, bx + bw, y + bh)
            draw_button(img, style, spec.label, box, spec.colour, spec.with_icon)
            taps.append(Tappable(spec.label, spec.action, box, spec.action in FORBIDDEN_ACTIONS))
            bx += bw + gap
        y += int(bh * 1.35)
    if close_action is not None:
        s = int(bh * 1.05)
        cxx = x1 - s * 3 // 4 if style.close_corner == "tr" else x0 - s // 4
        box = (cxx, y0 - s // 4, cxx + s, y0 - s // 4 + s)
        close_glyph(img, style.close_glyph, box, style.close_colour)
        taps.append(Tappable("", close_action, box, False))
    return img, tuple(taps)


# -- ads ---------------------------------------------------------------------------------


def _corner_box(corner: str, W: int, H: int, w: int, h: int) -> Box:
    m = int(W * 0.04)
    top = int(H * 0.03)
    x = m if corner in ("tl", "bl") else W - m - w
    y = top if corner in ("tl", "tr") else H - top - h
    return x, y, x + w, y + h


def draw_ad(style: CardStyle, size: tuple[int, int], rng: np.random.Generator, t: float, since: float,
            close_after_s: float) -> tuple[np.ndarray, tuple[Tappable, ...]]:  # fmt: skip
    """A full-screen interstitial ad at time t (shown since `since`): moving content, an Install / Get button
    (forbidden), a countdown in one corner until close_after_s has passed, then the close control there."""
    W, H = size
    # the ad's own look is fixed by the rng state; only its motion depends on t
    a = np.array(rng.integers(40, 220, 3), np.float32)
    b = np.array(rng.integers(40, 220, 3), np.float32)
    name = _pick(rng, AD_NAMES)
    line = _pick(rng, AD_LINES)
    install_word = _pick(rng, WORDS["install"])
    blobs = [(rng.uniform(0.1, 0.9), rng.uniform(0.15, 0.75), rng.uniform(0.06, 0.2), rng.uniform(0.3, 1.2),
              rng.uniform(0, 6.3), tuple(int(v) for v in rng.integers(30, 255, 3))) for _ in range(7)]  # fmt: skip
    dt = t - since
    ph = 0.5 + 0.5 * math.sin(dt * 1.7)
    small = np.linspace(0, 1, 64, dtype=np.float32)[:, None, None]
    img = cv2.resize((a * (1 - small) * (1 - 0.3 * ph) + b * small * (0.7 + 0.3 * ph)).astype(np.uint8).repeat(4, 1),
                     (W, H), interpolation=cv2.INTER_LINEAR)  # fmt: skip
    for bx, by, br, speed, p0, col in blobs:
        cx = int(W * (bx + 0.12 * math.sin(p0 + speed * dt * 2)))
        cy = int(H * (by + 0.06 * math.cos(p0 + speed * dt * 1.5)))
        cv2.circle(img, (cx, cy), int(W * br), col, -1, cv2.LINE_AA)
    # a "gameplay" strip: squares sliding across where a board would be
    sq = W // 9
    for i in range(12):
        x = int((i * sq * 1.3 + dt * W * 0.25) % (W + sq)) - sq
        yy = int(H * 0.45) + int(sq * 0.6 * math.sin(i + dt * 3))
        cv2.rectangle(img, (x, yy), (x + sq - 6, yy + sq - 6), tuple(int(v) for v in rng.integers(40, 255, 3)), -1)
    text(img, name, (int(W * 0.08), int(H * 0.1), int(W * 0.92), int(H * 0.18)), (255, 255, 255), style, (20, 20, 20), 0.6)
    text(img, line, (int(W * 0.1), int(H * 0.62), int(W * 0.9), int(H * 0.67)), (255, 255, 255), style, (20, 20, 20), 0.5)
    ib = (int(W * 0.2), int(H * 0.74), int(W * 0.8), int(H * 0.8))
    draw_button(img, style, install_word, ib, (60, 170, 40))
    taps = [Tappable(install_word, "install", ib, True)]
    left = close_after_s - dt
    if left > 0:
        n = int(math.ceil(left))
        words = style.ad_countdown.format(n=n)
        (tw, th), _ = cv2.getTextSize(words, style.font, 1.0, 2)
        h = int(W * 0.08)
        w = max(h, int(h * tw / max(th, 1) * 0.55) + h // 2)
        box = _corner_box(style.ad_corner, W, H, w, h)
        _fill(img, box, h // 2, (30, 30, 30), 0.6)
        text(img, words, box, (255, 255, 255), style, None, 0.5)
    else:
        g = style.ad_close_glyph
        s = int(W * 0.09)
        box = _corner_box(style.ad_corner, W, H, int(s * 2.6) if g == "text" else s, s)
        close_glyph(img, g, box, (80, 80, 80), style)
        taps.append(Tappable("Close" if g == "text" else "", "close_ad", box, False))
    return img, tuple(taps)


# -- the map -----------------------------------------------------------------------------


def draw_map(style: CardStyle, size: tuple[int, int], level: int, rng: np.random.Generator,
             t: float) -> tuple[np.ndarray, tuple[Tappable, ...]]:  # fmt: skip
    """The level map: a winding path of level nodes, done ones, locked ones, the current one prominent
    (bigger, brighter, pulsing with t) and tappable; shop/coins buttons that are forbidden; a gear."""
    W, H = size
    img = _gradient(H, W, style.map_sky[0], style.map_sky[1]).astype(np.uint8)
    # scenery: soft blobs (hills, trees)
    for _ in range(10):
        c = (int(rng.integers(0, W)), int(rng.integers(int(H * 0.1), H)))
        cv2.circle(img, c, int(rng.integers(W // 12, W // 4)), shade(style.map_sky[1], float(rng.uniform(0.7, 1.1))), -1,
                   cv2.LINE_AA)  # fmt: skip
    first = max(1, level - int(rng.integers(2, 5)))
    count = 7
    amp = float(rng.uniform(0.18, 0.3))
    phase = float(rng.uniform(0, 6.3))
    pts = []
    for i in range(count):
        yy = int(H * (0.86 - i * 0.11))
        xx = int(W * (0.5 + amp * math.sin(phase + i * 1.1)))
        pts.append((xx, yy))
    cv2.polylines(img, [np.array(pts, np.int32)], False, shade(style.map_path, 0.7), int(W * 0.05), cv2.LINE_AA)
    cv2.polylines(img, [np.array(pts, np.int32)], False, style.map_path, int(W * 0.035), cv2.LINE_AA)
    taps: list[Tappable] = []
    r = int(W * 0.055)
    for i, (xx, yy) in enumerate(pts):
        n = first + i
        if n < level:
            cv2.circle(img, (xx, yy + r // 6), r, shade(style.map_node, 0.5), -1, cv2.LINE_AA)
            cv2.circle(img, (xx, yy), r, style.map_node, -1, cv2.LINE_AA)
            text(img, str(n), (xx - r, yy - r, xx + r, yy + r), (255, 255, 255), style, (40, 40, 40), 0.5)
            for k in range(3):
                star(img, (xx + (k - 1) * r * 2 // 3, yy - r - r // 4), r // 4, (30, 200, 255))
        elif n == level:
            pulse = 1.0 + 0.06 * math.sin(t * 4.0)
            R = int(r * 1.6 * pulse)
            cv2.circle(img, (xx, yy), int(R * 1.25), (255, 255, 255), -1, cv2.LINE_AA)
            cv2.circle(img, (xx, yy), R, style.map_current, -1, cv2.LINE_AA)
            text(img, str(n), (xx - R, yy - R, xx + R, yy + R), (255, 255, 255), style, (30, 30, 30), 0.55)
            box = (xx - int(R * 1.25), yy - int(R * 1.25), xx + int(R * 1.25), yy + int(R * 1.25))
            taps.append(Tappable(str(n), "play_level", box, False))
        else:
            cv2.circle(img, (xx, yy), r, (130, 130, 130), -1, cv2.LINE_AA)
            cv2.circle(img, (xx, yy), int(r * 0.8), (165, 165, 165), -1, cv2.LINE_AA)
            # a padlock
            cv2.rectangle(img, (xx - r // 3, yy - r // 8), (xx + r // 3, yy + r // 3), (90, 90, 90), -1)
            cv2.ellipse(img, (xx, yy - r // 8), (r // 4, r // 4), 0, 180, 360, (90, 90, 90), max(2, r // 10))
    # the top bar: coins with a "+" (the shop), a gear
    bar = int(H * 0.06)
    cb = (int(W * 0.05), int(H * 0.03), int(W * 0.45), int(H * 0.03) + bar)
    _fill(img, cb, bar // 2, (40, 30, 30), 0.8)
    icon(img, style.icon, (cb[0] + bar // 2, (cb[1] + cb[3]) // 2), int(bar * 0.35))
    text(img, str(int(rng.integers(100, 5000))), (cb[0] + bar, cb[1], cb[2] - bar, cb[3]), (255, 255, 255), style, None, 0.5)
    plus = (cb[2] - bar, cb[1] + bar // 8, cb[2] - bar // 8, cb[3] - bar // 8)
    _fill(img, plus, bar // 3, (60, 180, 60))
    text(img, "+", plus, (255, 255, 255), style, None, 0.6)
    taps.append(Tappable("+", "shop", plus, True))
    shop = (int(W * 0.05), int(H * 0.9), int(W * 0.3), int(H * 0.96))
    draw_button(img, style, "Shop", shop, style.price_colour)
    taps.append(Tappable("Shop", "shop", shop, True))
    gear_c = (int(W * 0.9), int(H * 0.03) + bar // 2)
    cv2.circle(img, gear_c, int(bar * 0.45), (120, 120, 120), -1, cv2.LINE_AA)
    cv2.circle(img, gear_c, int(bar * 0.2), (220, 220, 220), -1, cv2.LINE_AA)
    gb = int(bar * 0.5)
    taps.append(Tappable("", "none", (gear_c[0] - gb, gear_c[1] - gb, gear_c[0] + gb, gear_c[1] + gb), False))
    if style.map_play_button:
        pb = (int(W * 0.55), int(H * 0.9), int(W * 0.95), int(H * 0.96))
        draw_button(img, style, f"{style.word('play')} {level}" if rng.random() < 0.5 else style.word("play"), pb,
                    style.primary)  # fmt: skip
        taps.append(Tappable(style.word("play"), "play_level", pb, False))
    return img, tuple(taps)


def backdrop(style: CardStyle, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A game's plain screen behind a card when it is not the board: a gradient with a header of words
    and numbers (the labels a dimmed screen keeps showing, such as a 'Collect' goal)."""
    W, H = size
    img = _gradient(H, W, style.map_sky[1], shade(style.map_sky[0], 0.7)).astype(np.uint8)
    hb = (int(W * 0.04), int(H * 0.03), int(W * 0.96), int(H * 0.1))
    _fill(img, hb, (hb[3] - hb[1]) // 3, (70, 40, 45))
    words = _pick(rng, ("Collect", "Moves", "Score", "Goal", "Level"))
    half = (hb[0] + hb[2]) // 2
    text(img, words, (hb[0], hb[1], half, hb[3]), (255, 255, 255), style, None, 0.5)
    text(img, str(int(rng.integers(0, 40))), (half, hb[1], hb[2], hb[3]), (255, 255, 255), style, None, 0.5)
    return img
