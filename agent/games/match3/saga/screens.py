"""Drawing the saga game's screens on uint8 BGR images: text, buttons, panels, the
header, popups and cards, the interstitial ad and the other apps.

Text is drawn with OpenCV's Hershey fonts, thick and large, white on dark or coloured
rounded buttons, so a real OCR engine reads it as it reads a game's own buttons. Each
button is laid out once (`Button.box`) and both drawn and hit-tested from that box.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive)
BGR = tuple[int, int, int]

FONT = cv2.FONT_HERSHEY_DUPLEX
WHITE: BGR = (255, 255, 255)
INK: BGR = (40, 30, 30)
GREEN: BGR = (60, 170, 40)
BLUE: BGR = (200, 120, 30)
ORANGE: BGR = (30, 140, 240)
RED: BGR = (50, 50, 210)
GREY: BGR = (120, 120, 120)


@dataclass(frozen=True)
class Button:
    label: str
    action: str  # what a tap does (see SagaPhone._act)
    box: Box
    colour: BGR = GREEN
    forbidden: bool = False  # a purchase, a share, an install: never the right answer
    round_: bool = False  # a round close button

    def hit(self, x: int, y: int) -> bool:
        x0, y0, x1, y1 = self.box
        return x0 <= x < x1 and y0 <= y < y1


@dataclass(frozen=True)
class Popup:
    """A dialog or card: a panel with a title, lines of text and buttons."""

    kind: str  # "daily", "offer", "tip", "complete", "failed", "done"
    title: str
    lines: tuple[str, ...]
    buttons: tuple[Button, ...]
    box: Box
    back_closes: bool  # Back closes what has an X or an OK
    dim: bool  # the screen behind is darkened
    band: BGR = BLUE


def rounded(img: np.ndarray, box: Box, radius: int, colour: BGR) -> None:
    """A filled rounded rectangle, in place."""
    x0, y0, x1, y1 = box
    r = int(max(0, min(radius, (x1 - x0) // 2, (y1 - y0) // 2)))
    cv2.rectangle(img, (x0 + r, y0), (x1 - 1 - r, y1 - 1), colour, -1)
    cv2.rectangle(img, (x0, y0 + r), (x1 - 1, y1 - 1 - r), colour, -1)
    if r > 0:
        for cx, cy in ((x0 + r, y0 + r), (x1 - 1 - r, y0 + r), (x0 + r, y1 - 1 - r), (x1 - 1 - r, y1 - 1 - r)):
            cv2.circle(img, (cx, cy), r, colour, -1, cv2.LINE_AA)


def shade(colour: BGR, k: float) -> BGR:
    return (int(min(255, colour[0] * k)), int(min(255, colour[1] * k)), int(min(255, colour[2] * k)))


def text_in(img: np.ndarray, text: str, box: Box, colour: BGR = WHITE, outline: BGR | None = INK,
            height: float = 0.5, align: str = "centre") -> None:
    """`text` fitted into `box`: its letters `height` of the box tall at most, never wider than the box."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    (tw, th), _ = cv2.getTextSize(text, FONT, 1.0, 2)
    scale = min(bh * height / max(th, 1), bw * 0.9 / max(tw, 1))
    t = max(2, int(round(scale * 2.2)))
    (tw, th), _ = cv2.getTextSize(text, FONT, scale, t)
    x = x0 + (bw - tw) // 2 if align == "centre" else x0 + int(bw * 0.04)
    y = y0 + (bh + th) // 2
    if outline is not None:
        cv2.putText(img, text, (x, y), FONT, scale, outline, t + max(2, t), cv2.LINE_AA)
    cv2.putText(img, text, (x, y), FONT, scale, colour, t, cv2.LINE_AA)


def button(img: np.ndarray, b: Button) -> None:
    x0, y0, x1, y1 = b.box
    h = y1 - y0
    if b.round_:
        c = ((x0 + x1) // 2, (y0 + y1) // 2)
        cv2.circle(img, c, h // 2, shade(b.colour, 0.6), -1, cv2.LINE_AA)
        cv2.circle(img, c, h // 2 - max(2, h // 14), b.colour, -1, cv2.LINE_AA)
        k = h // 5
        t = max(3, h // 9)
        cv2.line(img, (c[0] - k, c[1] - k), (c[0] + k, c[1] + k), WHITE, t, cv2.LINE_AA)
        cv2.line(img, (c[0] - k, c[1] + k), (c[0] + k, c[1] - k), WHITE, t, cv2.LINE_AA)
        return
    rounded(img, (x0, y0 + h // 12, x1, y1), h // 3, shade(b.colour, 0.6))  # the button's edge below it
    rounded(img, (x0, y0, x1, y1 - h // 12), h // 3, b.colour)
    rounded(img, (x0 + h // 6, y0 + h // 20, x1 - h // 6, y0 + h // 7), h // 16, shade(b.colour, 1.25))
    text_in(img, b.label, (x0, y0, x1, y1 - h // 12), WHITE, None, 0.45)


def popup(img: np.ndarray, p: Popup) -> None:
    """The panel, its title band, its lines and buttons, in place."""
    x0, y0, x1, y1 = p.box
    w, h = x1 - x0, y1 - y0
    r = max(8, w // 18)
    off = max(4, w // 60)
    sy0, sy1, sx0, sx1 = y0 + off, min(img.shape[0], y1 + off), x0 + off, min(img.shape[1], x1 + off)
    img[sy0:sy1, sx0:sx1] = (img[sy0:sy1, sx0:sx1] * 0.55).astype(np.uint8)
    rounded(img, p.box, r, (236, 244, 250))
    band = int(h * 0.2) if p.lines or p.buttons else h
    rounded(img, (x0, y0, x1, y0 + band), r, p.band)
    cv2.rectangle(img, (x0, y0 + band - r), (x1 - 1, y0 + band - 1), p.band, -1)
    text_in(img, p.title, (x0 + w // 10, y0, x1 - w // 10, y0 + band), WHITE, None, 0.42)
    if p.lines:
        top = y0 + band + h // 30
        below = [b.box[1] for b in p.buttons if b.box[1] > top]
        bottom = min(below) - h // 30 if below else y1 - h // 20
        step = (bottom - top) / len(p.lines)
        for i, line in enumerate(p.lines):
            text_in(img, line, (x0 + w // 12, int(top + i * step), x1 - w // 12, int(top + (i + 1) * step)),
                    (70, 50, 40), None, min(0.5, 0.5 * 110 / max(step, 1)))  # fmt: skip
    for b in p.buttons:
        button(img, b)


def dim(img: np.ndarray, k: float = 0.45) -> np.ndarray:
    return cv2.convertScaleAbs(img, alpha=k)


# -- the header ------------------------------------------------------------------------


def header_boxes(width: int, height: int) -> dict[str, Box]:
    """Where the header's four panels are: LEVEL, TARGET on top, MOVES, SCORE below."""
    m = int(width * 0.04)
    gap = int(width * 0.03)
    pw = (width - 2 * m - gap) // 2
    ph = int(height * 0.036)
    y0 = int(height * 0.035)
    out = {}
    for i, name in enumerate(("level", "target", "moves", "score")):
        r, c = divmod(i, 2)
        x = m + c * (pw + gap)
        y = y0 + r * (ph + gap // 2)
        out[name] = (x, y, x + pw, y + ph)
    return out


def header_base(img: np.ndarray) -> None:
    """The header's panels without their numbers."""
    h, w = img.shape[:2]
    for box in header_boxes(w, h).values():
        x0, y0, x1, y1 = box
        rounded(img, (x0 + 3, y0 + 4, x1 + 3, y1 + 4), (y1 - y0) // 3, (15, 10, 10))
        rounded(img, box, (y1 - y0) // 3, (70, 40, 45))


def header_text(img: np.ndarray, level: int, target: int, moves: int, score: int) -> None:
    h, w = img.shape[:2]
    boxes = header_boxes(w, h)
    for name, text in (("level", f"LEVEL {level}"), ("target", f"TARGET {target}"), ("moves", f"MOVES {moves}"),
                       ("score", f"SCORE {score}")):  # fmt: skip
        text_in(img, text, boxes[name], WHITE, None, 0.55)


# -- whole screens -------------------------------------------------------------------------


def ad_screen(width: int, height: int, rng: np.random.Generator) -> tuple[np.ndarray, Button, Button]:
    """A full-screen interstitial ad (without its close button) and its Install and X buttons."""
    t = np.linspace(0, 1, height, dtype=np.float32)[:, None, None]
    a = np.array(rng.integers(60, 200, 3), np.float32)
    b = np.array(rng.integers(60, 200, 3), np.float32)
    img = (a * (1 - t) + b * t).repeat(width, 1)
    noise = cv2.resize(rng.random((height // 40 + 2, width // 40 + 2), dtype=np.float32), (width, height))
    img = np.clip(img * (0.85 + 0.3 * noise[..., None]), 0, 255).astype(np.uint8)
    cx, cy = width // 2, int(height * 0.4)
    cv2.circle(img, (cx, cy), int(width * 0.25), (40, 200, 250), -1, cv2.LINE_AA)
    cv2.circle(img, (cx, cy), int(width * 0.18), (30, 90, 220), -1, cv2.LINE_AA)
    text_in(img, "KINGDOM BUILDER", (int(width * 0.08), int(height * 0.12), int(width * 0.92), int(height * 0.2)), WHITE, INK, 0.6)
    text_in(img, "Build your empire today!", (int(width * 0.1), int(height * 0.6), int(width * 0.9), int(height * 0.66)),
            WHITE, INK, 0.5)  # fmt: skip
    install = Button("Install", "install", (int(width * 0.2), int(height * 0.72), int(width * 0.8), int(height * 0.8)),
                     GREEN, forbidden=True)  # fmt: skip
    s = int(width * 0.1)
    close = Button("X", "close_ad", (width - int(width * 0.04) - s, int(height * 0.03), width - int(width * 0.04),
                                     int(height * 0.03) + s), (90, 90, 90), round_=True)  # fmt: skip
    button(img, install)
    return img, install, close


def app_screen(width: int, height: int, title: str, rows: list[tuple[str, str]], bar: BGR) -> np.ndarray:
    """Another app: a title bar and a list."""
    img = np.full((height, width, 3), 250, np.uint8)
    bar_h = int(height * 0.07)
    img[: int(height * 0.03)] = shade(bar, 0.7)
    img[int(height * 0.03) : int(height * 0.03) + bar_h] = bar
    text_in(img, title, (int(width * 0.05), int(height * 0.03), int(width * 0.7), int(height * 0.03) + bar_h), WHITE,
            None, 0.45, "left")  # fmt: skip
    row_h = int(height * 0.09)
    y = int(height * 0.03) + bar_h
    for i, (name, line) in enumerate(rows):
        r = row_h // 3
        cv2.circle(img, (int(width * 0.05) + r, y + row_h // 2), r, shade(bar, 0.6 + 0.1 * (i % 4)), -1, cv2.LINE_AA)
        x = int(width * 0.05) + 3 * r
        text_in(img, name, (x, y + row_h // 10, int(width * 0.9), y + row_h // 2), (30, 30, 30), None, 0.6, "left")
        text_in(img, line, (x, y + row_h // 2, int(width * 0.95), y + row_h - row_h // 10), (110, 110, 110), None, 0.5,
                "left")  # fmt: skip
        y += row_h
        cv2.line(img, (x, y), (width, y), (220, 220, 220), 2)
    return img
