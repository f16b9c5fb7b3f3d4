"""What surrounds the board on a look-alike screen: backgrounds, the HUD, popups.

Backgrounds are made from noise, in three kinds: a *gradient* (two colours, with a
faint texture), a *texture* (coloured fractal noise, like fabric or stone), and a
*photo* (large blurred blobs of colour over noise, like the out-of-focus picture behind
a game's board). The HUD is what games draw above and below the board: rounded panels
with a level, a score and a move count in assorted fonts, and a row of booster buttons.
A popup is a light rounded panel with a title, a line of text and a button.
"""

from __future__ import annotations

import cv2
import numpy as np

from agent.games.match3.lookalike.paint import (
    FONTS, Box, Colour, blend, ellipse_mask, fractal_noise, outlined_text, rounded_box_mask, text_size, vertical_ramp,
)  # fmt: skip

BACKGROUNDS = ("gradient", "texture", "photo")


def random_colour(rng: np.random.Generator, sat: tuple[int, int] = (60, 200), val: tuple[int, int] = (60, 220)) -> Colour:
    hsv = np.array([[[rng.integers(0, 180), rng.integers(*sat), rng.integers(*val)]]], np.uint8)
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0] / 255.0
    return float(b), float(g), float(r)


def background(rng: np.random.Generator, width: int, height: int, kind: str) -> np.ndarray:
    """A full-screen background of `kind` (see BACKGROUNDS), float32 BGR."""
    a, b = np.asarray(random_colour(rng), np.float32), np.asarray(random_colour(rng), np.float32)
    if kind == "gradient":
        t = vertical_ramp(height, width, 0.0, 1.0)
        if rng.random() < 0.5:
            t = np.clip(t * 0.7 + np.linspace(0, 0.3, width, dtype=np.float32)[None, :], 0, 1)
        img = a[None, None, :] * (1 - t[..., None]) + b[None, None, :] * t[..., None]
        tex = fractal_noise(rng, (height, width), max(8, width // 12), 4)
        img *= (0.9 + 0.2 * tex)[..., None]
        return np.clip(img, 0, 1).astype(np.float32)
    if kind == "texture":
        tex = fractal_noise(rng, (height, width), int(rng.integers(max(6, width // 60), max(8, width // 10))), 5, 0.6)
        img = a[None, None, :] * (1 - tex[..., None]) + b[None, None, :] * tex[..., None]
        return np.clip(img * 0.85, 0, 1).astype(np.float32)
    # photo: blurred blobs at a low resolution, resized up, with detail on top
    sw, sh = max(16, width // 8), max(16, height // 8)
    small = np.empty((sh, sw, 3), np.float32)
    small[:] = a * 0.6
    for _ in range(int(rng.integers(10, 22))):
        c = random_colour(rng, (40, 230), (40, 255))
        centre = (float(rng.uniform(0, sw)), float(rng.uniform(0, sh)))
        axes = (float(rng.uniform(0.05, 0.4) * sw), float(rng.uniform(0.03, 0.25) * sh))
        blend(small, ellipse_mask((sh, sw), centre, axes, float(rng.uniform(0, 180))), c, float(rng.uniform(0.4, 0.9)))
    small = np.asarray(cv2.GaussianBlur(small, (0, 0), max(1.0, sw / 30)), np.float32)
    big = np.asarray(cv2.resize(small, (width, height), interpolation=cv2.INTER_CUBIC), np.float32)
    detail = fractal_noise(rng, (height, width), max(4, width // 80), 3)
    img = big * (np.float32(0.88) + np.float32(0.24) * detail)[..., None]
    return np.clip(img, 0, 1).astype(np.float32)


def frost(img: np.ndarray, box: Box, rng: np.random.Generator, radius: int, soft: bool = False) -> None:
    """A frosted-glass panel over `box` of `img`, in place: what is under it blurred
    (at a low resolution, for speed), lightened, and edged with a light line. `soft`:
    barely lightened, no line, and an edge feathered over a fraction of the panel's
    margin, so the panel melts into a blurred, busy background."""
    x0, y0, x1, y1 = box
    region = img[y0:y1, x0:x1]
    h, w = region.shape[:2]
    f = 4
    small = cv2.resize(region, (max(2, w // f), max(2, h // f)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), float(rng.uniform(3.0, 7.0)))
    glass = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    tint = np.asarray(random_colour(rng, (0, 60), (200, 255)), np.float32)
    amount = float(rng.uniform(0.2, 0.45))
    glass = glass + (tint - glass) * np.float32(amount * (0.25 if soft else 1.0))
    m = rounded_box_mask((h, w), (0, 0, w, h), radius)
    if soft:
        feather = max(1.0, radius * float(rng.uniform(0.5, 1.2)))
        m = cv2.GaussianBlur(rounded_box_mask((h, w), (int(feather), int(feather), w - int(feather), h - int(feather)), radius),
                             (0, 0), feather)  # fmt: skip
        blend(region, m, glass)
        return
    blend(region, m, glass)
    edge = np.clip(m - cv2.erode(m, np.ones((3, 3), np.uint8), iterations=2), 0, 1)
    blend(region, edge, (1.0, 1.0, 1.0), 0.7)


def _panel(img: np.ndarray, box: Box, colour: Colour, opacity: float, radius: int) -> None:
    h, w = img.shape[:2]
    x0, y0, x1, y1 = (int(np.clip(v, 0, m)) for v, m in zip(box, (w, h, w, h)))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return
    sub = img[y0:y1, x0:x1]
    blend(sub, rounded_box_mask(sub.shape[:2], (0, 0, x1 - x0, y1 - y0), radius), colour, opacity)


def _fit_text(img: np.ndarray, text: str, box: Box, font: int, fill: Colour, outline: Colour | None,
              rng: np.random.Generator) -> None:
    x0, y0, x1, y1 = box
    t = max(1, (y1 - y0) // 14)
    scale = 1.0
    tw, th = text_size(text, font, scale, t)
    scale = min((x1 - x0) * 0.85 / max(tw, 1), (y1 - y0) * 0.6 / max(th, 1))
    tw, th = text_size(text, font, scale, t)
    org = (int(x0 + (x1 - x0 - tw) / 2), int(y0 + (y1 - y0 + th) / 2 - th * 0.2))
    outlined_text(img, text, org, font, scale, fill, outline, t)


WORDS = ("LEVEL", "SCORE", "MOVES", "GOAL", "TIME", "STARS", "BEST", "TARGET")


def hud(img: np.ndarray, rng: np.random.Generator, top: Box, bottom: Box) -> None:
    """Panels with words and numbers in `top`, booster buttons in `bottom`."""
    font = FONTS[int(rng.integers(len(FONTS)))]
    panel = random_colour(rng, (30, 180), (30, 120))
    light = random_colour(rng, (0, 80), (200, 255))
    x0, y0, x1, y1 = top
    n = int(rng.integers(2, 5))
    w = (x1 - x0) / n
    for i in range(n):
        b = (int(x0 + i * w + w * 0.05), y0, int(x0 + (i + 1) * w - w * 0.05), y1)
        _panel(img, b, panel, 0.8, (y1 - y0) // 4)
        mid = (b[1] + b[3]) // 2
        word = WORDS[int(rng.integers(len(WORDS)))]
        _fit_text(img, word, (b[0], b[1], b[2], mid), font, light, None, rng)
        _fit_text(img, str(int(rng.integers(0, 10 ** int(rng.integers(1, 6))))), (b[0], mid, b[2], b[3]), font,
                  (1.0, 1.0, 1.0), (0.05, 0.05, 0.08), rng)  # fmt: skip
    x0, y0, x1, y1 = bottom
    k = int(rng.integers(3, 6))
    r = min((y1 - y0) / 2, (x1 - x0) / (2.6 * k))
    for i in range(k):
        cx, cy = x0 + (i + 0.5) * (x1 - x0) / k, (y0 + y1) / 2
        blend(img, ellipse_mask(img.shape[:2], (cx, cy), (r, r)), panel, 0.9)
        blend(img, ellipse_mask(img.shape[:2], (cx, cy), (r * 0.6, r * 0.6)), random_colour(rng, (120, 255), (150, 255)))
        _fit_text(img, str(int(rng.integers(0, 9))), (int(cx + r * 0.2), int(cy + r * 0.2), int(cx + r), int(cy + r)),
                  font, (1.0, 1.0, 1.0), (0.05, 0.05, 0.08), rng)  # fmt: skip


TITLES = ("LEVEL FAILED", "OUT OF MOVES", "GREAT!", "DAILY BONUS", "NEW BOOSTER", "PAUSED", "CONTINUE?")
BUTTONS = ("PLAY", "OK", "RETRY", "CLAIM", "NEXT")


def popup(img: np.ndarray, rng: np.random.Generator, box: Box) -> None:
    """A light rounded panel over `box` with a title, a line of text and a button."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    font = FONTS[int(rng.integers(len(FONTS)))]
    radius = int(min(w, h) * rng.uniform(0.05, 0.15))
    shadow = (x0 + w // 40, y0 + h // 30, x1 + w // 40, y1 + h // 30)
    _panel(img, shadow, (0.0, 0.0, 0.0), 0.35, radius)
    face = random_colour(rng, (0, 70), (215, 255))
    _panel(img, box, face, 1.0, radius)
    band = random_colour(rng, (120, 230), (120, 230))
    _panel(img, (x0, y0, x1, y0 + int(h * 0.22)), band, 1.0, radius)
    _fit_text(img, TITLES[int(rng.integers(len(TITLES)))], (x0, y0, x1, y0 + int(h * 0.22)), font, (1.0, 1.0, 1.0),
              (0.05, 0.05, 0.08), rng)  # fmt: skip
    _fit_text(img, "Tap to keep playing", (x0 + w // 10, y0 + int(h * 0.3), x1 - w // 10, y0 + int(h * 0.5)), font,
              (0.25, 0.22, 0.2), None, rng)  # fmt: skip
    bb = (x0 + w // 4, y0 + int(h * 0.62), x1 - w // 4, y0 + int(h * 0.86))
    _panel(img, bb, random_colour(rng, (150, 255), (150, 230)), 1.0, (bb[3] - bb[1]) // 2)
    _fit_text(img, BUTTONS[int(rng.integers(len(BUTTONS)))], bb, font, (1.0, 1.0, 1.0), (0.05, 0.05, 0.08), rng)
