"""Reading the text on a screen: button labels, dialog titles, the header's numbers.

Engine: Tesseract 5 from Debian's packages (`apt-get install tesseract-ocr`), driven
through `pytesseract`. Why this one:
- the ONNX OCR wheels that ship their models (rapidocr_onnxruntime 1.4.4, 15 MB) require
  `opencv-python`, the GUI build, which clashes with our `opencv-python-headless` (both
  install the `cv2` module, the last one installed wins) and needs libGL, which headless
  farm machines lack;
- Tesseract is one apt package, works offline, and gives word boxes and confidences
  (`image_to_data`), which is what choosing a button needs.
When the `tesseract` binary is missing, `default_ocr()` returns None and
`ocr_unavailable_reason()` says how to install it: callers report that, nothing crashes.

Game text is white or coloured on coloured buttons and panels, which one threshold of
the grey image loses (white on yellow is nearly one grey; a dark panel with light
buttons needs two polarities). So `words` reads text where games put it, on flat
shapes (`flat_regions`: a button, a panel, a badge; sizes relative to the image): each
shape's ink against its own face colour becomes black on white, only blobs of about
one character's height drawn with thin strokes are kept (characters; not pieces, pictures or textures,
on which Tesseract spends seconds and reads nothing), scaled to one text height and
read together in one mosaic (one Tesseract run for all). A second run in parallel reads
the whole grey image with Tesseract's adaptive threshold, for text on no flat shape;
each word is kept once, its best reading.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, cast

import cv2
import numpy as np
from scipy import ndimage

UNAVAILABLE = "OCR unavailable: install tesseract-ocr (apt-get install tesseract-ocr)"
# Whole screens are read at most this wide: a phone's button text is 3-6% of the width
# high, which stays 20+ px here, and Tesseract's time grows with the pixel count.
MAX_WIDTH = 720
# Crops whose height is under this are upscaled to it (one line of text, such as a
# header number, reads best at 40-80 px high).
MIN_LINE_HEIGHT = 64
SURE = 0.6  # a reading of the last resort must be at least this sure
SURE_NUMBER = 0.85  # a number read this surely is not read again another way
MIN_CONF = 0.3  # words Tesseract is less sure of than this are noise on game screens
TIMEOUT_S = 10.0
SLOW_RETRY = 3.0  # a reading that timed out is tried once more with this many times the time
CACHE_SIZE = 32
STROKE_SHARE = 0.5  # a character's thickest stroke is at most this share of its height
MAX_GLYPHS = 400
# A rule (see text_ink): longer than this many times its thickness, or filling less than
# this share of a box twice as long as wide or more (a character's strokes fill 0.2 to
# 0.8 of it, a thin slash 0.07); dropped when longer than RULE_LONG characters' height
# (or twice that wide).
RULE_ASPECT = 8.0
RULE_FILL = 0.1
RULE_LONG = 1.5
MIN_TEXT_SHARE = 0.0035  # of the image's height: smaller characters are no label to tap
MAX_STRIP_WIDTH = 2400  # px of one shape's text in the mosaic  # more character-sized blobs than this in one shape is a texture, not text
TEXT_HEIGHT = 36  # px: the character height crops are scaled to for Tesseract
# px: a number's digits are read at these heights, best first; at larger ones Tesseract
# takes a flat-topped 3 for a 5 (OpenCV 5's font); the larger one when the first is unsure
NUMBER_HEIGHTS = (TEXT_HEIGHT, TEXT_HEIGHT * 1.5)
# A slashed 0's two holes sit diagonally, nearer than an 8's stacked ones (about 0.4 of
# its height apart in every font tried) and apart sideways, as an upright 8's are not
SLASH_RISE = 0.32  # of the glyph's height, at most
SLASH_SHIFT = 0.06  # of its width, at least


@dataclass(frozen=True)
class Word:
    text: str
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in the image given (x1, y1 exclusive)
    conf: float  # 0..1

    @property
    def centre(self) -> tuple[int, int]:
        return ((self.box[0] + self.box[2]) // 2, (self.box[1] + self.box[3]) // 2)


class Ocr(Protocol):
    def words(self, image: np.ndarray) -> list[Word]:
        """The words in a BGR image, with boxes in its pixels."""
        ...

    def number(self, image: np.ndarray) -> int | None:
        """The whole number a BGR crop shows (digits only), or None if none is read."""
        ...


def ocr_unavailable_reason() -> str | None:
    """Why OCR cannot run here, or None when it can."""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "OCR unavailable: install pytesseract (pip install pytesseract) and tesseract-ocr"
    if shutil.which("tesseract") is None:
        return UNAVAILABLE
    return None


def default_ocr() -> Ocr | None:
    """The OCR engine, or None when it is not installed (see ocr_unavailable_reason)."""
    if ocr_unavailable_reason() is not None:
        return None
    return TesseractOcr()


@dataclass(frozen=True)
class Region:
    """A flat-coloured shape (a button, a panel, a badge) in image pixels: its box, its
    face colour (Lab), and the share of its outline that is not face (text, icons)."""

    box: tuple[int, int, int, int]
    colour: tuple[float, float, float]
    ink: float
    area: float  # filled outline, image pixels

    def contains(self, x: float, y: float) -> bool:
        return self.box[0] <= x < self.box[2] and self.box[1] <= y < self.box[3]


# Regions are looked for on a copy this wide: button text strokes stay 2+ px there.
SEGMENT_WIDTH = 540
FLAT_GRADIENT = 4.0  # Lab delta E per pixel of that copy: flatter is face
MIN_REGION_SHARE = (0.04, 0.012)  # of the image's width and height: smaller is no button
RETRY_SCALES = (0.6, 1.5)  # a strip read with no sure word is read again at these scales
MAX_RETRIED = 8  # strips read again, at most
MAX_REGIONS = 80  # shapes looked at, largest first
MAX_STRIPS = 24  # shapes with text read
INK_DELTA = 22.0  # Lab delta E from the face colour: text and icons on a face


def _gradient(lab: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
    return np.asarray(np.sqrt((gx * gx + gy * gy).sum(axis=2)) / 8.0)


def _lab(img: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= np.float32(100.0 / 255.0)
    lab[..., 1:] -= np.float32(128.0)
    return lab


def flat_regions(image: np.ndarray) -> list[Region]:
    """Flat-coloured shapes holding something (text, an icon), largest first: the
    buttons and panels of a game's dialogs. Sizes are shares of the image, so the same
    screen at any resolution gives the same regions."""
    h, w = image.shape[:2]
    if h < 8 or w < 8 or image.ndim != 3:
        return []
    s = min(1.0, SEGMENT_WIDTH / w)
    small = image if s == 1.0 else cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))),
                                               interpolation=cv2.INTER_AREA)  # fmt: skip
    small = cv2.GaussianBlur(small, (3, 3), 0)
    lab = _lab(small)
    flat = (_gradient(lab) < FLAT_GRADIENT).astype(np.uint8)
    n, comp, stats, _ = cv2.connectedComponentsWithStats(flat, connectivity=4)
    sh, sw = flat.shape
    min_w, min_h = MIN_REGION_SHARE[0] * sw, MIN_REGION_SHARE[1] * sh
    out = []
    for i in range(1, n):
        x, y, cw, ch, area = (int(v) for v in stats[i])
        if cw < min_w or ch < min_h or area < 0.5 * min_w * min_h:
            continue
        mask = (comp[y : y + ch, x : x + cw] == i).astype(np.uint8)
        # the convex hull, not the outline: a button's text may touch its edge (at small
        # sizes, through the blurred rim), and would then be no hole in the outline
        points = cv2.findNonZero(mask)
        filled = np.zeros_like(mask)
        cv2.fillConvexPoly(filled, cv2.convexHull(points), 1)
        fill = float(filled.sum())
        if fill < 0.7 * cw * ch:  # not a compact shape
            continue
        ink = max(0.0, 1.0 - float(mask.sum()) / fill)
        med = np.median(lab[y : y + ch, x : x + cw][mask > 0], axis=0)
        box = (int(x / s), int(y / s), min(w, int(np.ceil((x + cw) / s))), min(h, int(np.ceil((y + ch) / s))))
        out.append(Region(box, (float(med[0]), float(med[1]), float(med[2])), ink, fill / (s * s)))
    out.sort(key=lambda r: -r.area)
    return out


def ink_crop(image: np.ndarray, region: Region) -> np.ndarray:
    """The region's crop as black ink on white: whatever differs from its face colour."""
    x0, y0, x1, y1 = region.box
    lab = _lab(image[y0:y1, x0:x1])
    d = np.linalg.norm(lab - np.array(region.colour, np.float32), axis=2)
    # halfway to the strongest contrast on it, as a threshold of the text's own
    # contrast would be: antialiased bold letters stay apart
    ink = d > float(np.clip(0.45 * np.percentile(d, 99), INK_DELTA, 2 * INK_DELTA))
    # what touches the crop's border is outside the shape (its corners, the screen
    # around it), not text on it
    n, comp = cv2.connectedComponents(ink.astype(np.uint8), connectivity=8)
    edge = set(np.unique(np.concatenate([comp[0], comp[-1], comp[:, 0], comp[:, -1]])).tolist()) - {0}
    if edge:
        ink &= ~np.isin(comp, list(edge))
    return np.where(ink, 0, 255).astype(np.uint8)


def text_ink(binary: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The binary with only text-like ink kept, and the text's height; None when the
    ink does not look like text (nothing, or a texture of many specks: Tesseract spends
    seconds on those and reads nothing).

    A character is a blob about as tall as the others: blobs much taller or wider than
    the median character (a picture, an icon, another shape's face) and specks are
    dropped."""
    n, comp, stats, _ = cv2.connectedComponentsWithStats((binary == 0).astype(np.uint8), connectivity=8)
    if n <= 1:
        return None
    hs, ws, areas = stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_AREA]
    big = areas >= 4
    if not big.any():
        return None
    # a character is drawn with strokes: its thickest stroke is a fraction of its size
    # (a solid blob, such as a game piece, is as thick as it is small)
    ink = (binary == 0).astype(np.uint8)
    dist = cv2.distanceTransform(ink, cv2.DIST_L2, 3)
    thick = 2.0 * np.asarray(ndimage.maximum(dist, comp, np.arange(1, n)), float)
    stroked = thick <= STROKE_SHARE * hs + 1.0
    if not (big & stroked).any():
        return None
    # a rule is no character: a line (many times longer than thick) or a curve filling
    # little of its box (a badge's outline, its shadow): Tesseract read a badge's "0/14"
    # between its outline's pieces as "essa".
    long_side, short_side = np.maximum(hs, ws), np.minimum(hs, ws)
    # (a ring fills as little of its box as a curve does, but is as tall as wide: the
    # circle around a close control's X, which without it reads as a 4)
    rules = (long_side >= RULE_ASPECT * short_side) | ((areas < RULE_FILL * hs * ws) & (long_side >= 2 * short_side))
    th = float(np.median(hs[big & stroked]))
    # small solid blobs are kept: the point of a price, the dot of an i
    dots = big & (hs <= 0.4 * th) & (ws <= 0.4 * th)
    keep = (big & stroked | dots) & (hs <= 2.5 * th) & (ws <= 15 * th) & (hs >= 0.12 * th) & (areas >= 0.01 * th * th)
    # (a rule as long as a character or two stays: a slash, a dash, a thin l)
    keep &= ~(rules & ((hs > RULE_LONG * th) | (ws > 2 * RULE_LONG * th)))
    if not keep.any() or keep.sum() > MAX_GLYPHS:
        return None
    lut = np.concatenate([[False], keep])
    out = np.where(lut[comp], 0, 255).astype(np.uint8)
    return out, float(np.median(hs[keep]))


def _text_height(binary: np.ndarray) -> float | None:
    """The median height of the ink blobs (about a character's), or None without ink."""
    n, _, stats, _ = cv2.connectedComponentsWithStats((binary == 0).astype(np.uint8), connectivity=8)
    hs = [int(stats[i, cv2.CC_STAT_HEIGHT]) for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 4]
    return float(np.median(hs)) if hs else None


def ink_height(image: np.ndarray) -> float | None:
    """The height of the characters a BGR crop shows, as the number reader sees its ink
    (what touches the crop's border left out), or None when it shows none: a backdrop's
    specks the digits reader may still take for a digit are a few pixels tall."""
    heights = [t for v in _number_views(image) if (t := _text_height(_off_border(v))) is not None]
    return max(heights) if heights else None


def _iou(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def merge_words(readings: list[list[Word]]) -> list[Word]:
    """Each word once: of overlapping boxes from several readings, the most confident."""
    out: list[Word] = []
    for w in sorted((w for r in readings for w in r), key=lambda w: -w.conf):
        if all(_iou(w.box, o.box) < 0.3 for o in out):
            out.append(w)
    return sorted(out, key=lambda w: (w.box[1], w.box[0]))


def _entries(data: dict[str, list[str]], min_conf: float = MIN_CONF) -> list[tuple[str, tuple[int, int, int, int], float]]:
    """(text, box, confidence 0..1) of each word Tesseract is sure enough of."""
    out = []
    for i, text in enumerate(data.get("text", [])):
        text = str(text).strip()
        try:
            conf = float(data["conf"][i]) / 100.0
            x, y, bw, bh = (int(data[k][i]) for k in ("left", "top", "width", "height"))
        except (KeyError, ValueError, IndexError):
            continue
        if text and conf >= min_conf:
            out.append((text, (x, y, x + bw, y + bh), min(1.0, max(0.0, conf))))
    return out


def _rescaled(strip: tuple[np.ndarray, int, int, float], f: float) -> tuple[np.ndarray, int, int, float]:
    binary, ox, oy, sc = strip
    bh, bw = binary.shape
    out = cv2.resize(binary, (max(1, round(bw * f)), max(1, round(bh * f))),
                     interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)  # fmt: skip
    return np.where(out < 128, 0, 255).astype(np.uint8), ox, oy, sc * f


_Entry = tuple[str, tuple[int, int, int, int], float]  # a word read: text, box, confidence


def _placed(found: list[_Entry], strip: tuple[np.ndarray, int, int, float], w: int, h: int) -> list[Word]:
    """Words read on a strip, in the image's pixels."""
    _, ox, oy, sc = strip
    return [Word(text, _scale_box(box, 1 / sc, ox, oy, w, h), conf) for text, box, conf in found]


def _scale_box(box: tuple[int, int, int, int], f: float, dx: int, dy: int, w: int, h: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = box
    return (
        min(w, max(0, int(x0 * f) + dx)), min(h, max(0, int(y0 * f) + dy)),
        min(w, max(0, int(np.ceil(x1 * f)) + dx)), min(h, max(0, int(np.ceil(y1 * f)) + dy)),
    )  # fmt: skip


class TesseractOcr:
    """Tesseract through pytesseract, with a per-call timeout and a small LRU cache keyed
    by the image's bytes (the loop reads the same settled frame more than once)."""

    def __init__(self, timeout_s: float = TIMEOUT_S, cache_size: int = CACHE_SIZE, lang: str = "eng") -> None:
        self.timeout_s = timeout_s
        # Tesseract's OpenMP threads fight over the cores when two readings run at once
        # (and with the loop's own work): one thread each is faster on 2-4 cores.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        self.lang = lang
        self._cache: OrderedDict[tuple[str, str], object] = OrderedDict()
        self._cache_size = cache_size
        self.failures = 0  # Tesseract runs that failed or timed out
        self.slow = 0  # runs that timed out once and were given longer

    # -- cache ----------------------------------------------------------------------
    def _key(self, what: str, image: np.ndarray) -> tuple[str, str]:
        h = hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16)
        h.update(repr(image.shape).encode())
        return what, h.hexdigest()

    def _cached(self, key: tuple[str, str]) -> object:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        return None

    def _store(self, key: tuple[str, str], value: object) -> None:
        self._cache[key] = value
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    # -- reading ----------------------------------------------------------------------
    def _data(self, grey: np.ndarray, config: str) -> dict[str, list[str]]:
        import pytesseract

        tries = (self.timeout_s, self.timeout_s * SLOW_RETRY)
        for i, timeout in enumerate(tries):
            try:
                data = pytesseract.image_to_data(
                    grey, lang=self.lang, config=config, output_type=pytesseract.Output.DICT, timeout=timeout
                )
                return cast(dict[str, list[str]], data)
            except RuntimeError as exc:
                # A machine busy with other phones (a farm, a bench of two games at once)
                # can take longer than the guard over one full screen: read once more,
                # given longer, rather than see no words (the level's place in the header
                # was missed so at calibration).
                if "timeout" in str(exc).lower() and i + 1 < len(tries):
                    self.slow += 1
                    continue
            except OSError:
                pass
            break
        # Timed out twice, a Tesseract that failed or vanished: no words (the screen is then
        # unknown and the loop stops saying so) rather than a crash; not cached: the next
        # frame tries again
        self.failures += 1
        return {}

    def words(self, image: np.ndarray) -> list[Word]:
        key = self._key("words", image)
        hit = self._cached(key)
        if isinstance(hit, list):
            return list(hit)
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        failures = self.failures
        with ThreadPoolExecutor(max_workers=2) as pool:
            # two Tesseract processes at once: the regions' mosaic and the whole image
            shapes = pool.submit(self._region_words, image)
            whole = pool.submit(self._whole_words, image)
            out = merge_words([shapes.result(), whole.result()])
        if self.failures == failures:
            self._store(key, out)
        return list(out)

    def _whole_words(self, image: np.ndarray) -> list[Word]:
        """Text anywhere, read from the grey image with Tesseract's adaptive threshold."""
        h, w = image.shape[:2]
        scale = 1.0
        if w > MAX_WIDTH:
            scale = MAX_WIDTH / w
        elif h < MIN_LINE_HEIGHT:
            scale = MIN_LINE_HEIGHT / max(1, h)
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        if scale != 1.0:
            grey = cv2.resize(grey, (max(1, round(w * scale)), max(1, round(h * scale))),
                              interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)  # fmt: skip
        data = self._data(grey, "--psm 11 -c thresholding_method=1")
        return [
            Word(t, _scale_box(b, 1 / scale, 0, 0, w, h), c) for t, b, c in _entries(data)
        ]

    def _region_words(self, image: np.ndarray) -> list[Word]:
        """Text on flat shapes (buttons, panels): each shape's ink against its own face
        colour, black on white at one text height, read in one mosaic."""
        h, w = image.shape[:2]
        strips: list[tuple[np.ndarray, int, int, float]] = []  # binary, its frame origin, scale
        regions = flat_regions(image)[:MAX_REGIONS]
        min_text = MIN_TEXT_SHARE * h
        for region in regions:
            if len(strips) >= MAX_STRIPS:
                break
            if not 0.003 <= region.ink <= 0.6:
                continue
            binary = ink_crop(image, region)
            th = _text_height(binary)
            if th is None:
                continue
            x0, y0 = region.box[:2]
            for inner in regions:
                # a button on a panel is read as itself; on the panel it is a blob (a
                # shape no taller than the text is a letter: it stays)
                b = inner.box
                if inner is not region and inner.area < region.area and b[3] - b[1] > 1.8 * th and (
                    b[0] >= region.box[0] and b[1] >= region.box[1] and b[2] <= region.box[2] and b[3] <= region.box[3]
                ):
                    binary[b[1] - y0 : b[3] - y0, b[0] - x0 : b[2] - x0] = 255
            kept = text_ink(binary)
            if kept is None or kept[1] < min_text:
                continue
            binary, th = kept
            # only the part with text: shapes are mostly face
            ys, xs = np.nonzero(binary == 0)
            m = int(th)
            cx0, cy0 = max(0, int(xs.min()) - m), max(0, int(ys.min()) - m)
            cx1, cy1 = min(binary.shape[1], int(xs.max()) + 1 + m), min(binary.shape[0], int(ys.max()) + 1 + m)
            binary = binary[cy0:cy1, cx0:cx1]
            sc = float(np.clip(TEXT_HEIGHT / th, 0.25, 4.0))
            sc = min(sc, MAX_STRIP_WIDTH / binary.shape[1])
            if sc != 1.0:
                bh, bw = binary.shape
                binary = cv2.resize(binary, (max(1, round(bw * sc)), max(1, round(bh * sc))),
                                    interpolation=cv2.INTER_AREA if sc < 1 else cv2.INTER_LINEAR)  # fmt: skip
                binary = np.where(binary < 128, 0, 255).astype(np.uint8)
            strips.append((binary, x0 + cx0, y0 + cy0, sc))
        return self._read_strips(strips, w, h)

    def read_crops(self, image: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> list[Word]:
        """The words on each box (a button), each crop binarised by its own luminance with
        Otsu's threshold in both polarities (text lighter than its face, and darker), so a
        button whose face is a gradient, which no flat face colour describes, is read too.
        All crops in one mosaic: one Tesseract run. Boxes in image pixels."""
        h, w = image.shape[:2]
        strips: list[tuple[np.ndarray, int, int, float]] = []
        for x0, y0, x1, y1 in boxes[:MAX_STRIPS]:
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
            if x1 - x0 < 8 or y1 - y0 < 8:
                continue
            grey = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
            # the face's own shading removed: what stays is the letters' contrast to it
            face = cv2.medianBlur(grey, max(3, (min(grey.shape) // 3) | 1))
            for sign in (1, -1):
                diff = np.clip(sign * (grey.astype(np.int16) - face.astype(np.int16)), 0, 255).astype(np.uint8)
                _, ink = cv2.threshold(diff, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
                if float(diff.max()) < INK_DELTA:
                    continue
                kept = text_ink(_off_border(np.where(ink > 0, 0, 255).astype(np.uint8)))
                if kept is None:
                    continue
                binary, th = kept
                sc = float(np.clip(TEXT_HEIGHT / th, 0.25, 4.0))
                sc = min(sc, MAX_STRIP_WIDTH / binary.shape[1])
                bh, bw = binary.shape
                binary = cv2.resize(binary, (max(1, round(bw * sc)), max(1, round(bh * sc))), interpolation=cv2.INTER_LINEAR)
                strips.append((np.where(binary < 128, 0, 255).astype(np.uint8), x0, y0, sc))
        return self._read_strips(strips, w, h)

    def _read_strips(self, strips: list[tuple[np.ndarray, int, int, float]], w: int, h: int) -> list[Word]:
        """Black-on-white strips (binary, its origin in the image, its scale) read in one mosaic.
        A strip whose words Tesseract was unsure of (a gap where an apostrophe was, "Let s
        go", can leave every word at confidence 0) is read again at other scales, in one
        mosaic a scale, and its surest reading kept."""
        if not strips:
            return []
        out: list[Word] = []
        unsure: list[int] = []
        for i, found in enumerate(self._mosaic(strips)):
            sure = [e for e in found if e[2] >= MIN_CONF]
            if sure:
                out.extend(_placed(sure, strips[i], w, h))
            elif any(any(ch.isalnum() for ch in e[0]) for e in found):
                unsure.append(i)
        unsure = unsure[:MAX_RETRIED]
        best: dict[int, tuple[float, list[_Entry], tuple[np.ndarray, int, int, float]]] = {}
        for f in RETRY_SCALES if unsure else ():
            scaled = [_rescaled(strips[i], f) for i in unsure]
            for i, strip, found in zip(unsure, scaled, self._mosaic(scaled)):
                sure = [e for e in found if e[2] >= MIN_CONF]
                mean = float(np.mean([e[2] for e in sure])) if sure else 0.0
                if sure and (i not in best or mean > best[i][0]):
                    best[i] = (mean, sure, strip)
        for _, sure, strip in best.values():
            out.extend(_placed(sure, strip, w, h))
        return out

    def _mosaic(self, strips: list[tuple[np.ndarray, int, int, float]]) -> list[list[_Entry]]:
        """Each strip's words (text, box in the strip's pixels, confidence), however unsure."""
        pad = TEXT_HEIGHT
        width = max(b.shape[1] for b, _, _, _ in strips) + 2 * pad
        height = sum(b.shape[0] + pad for b, _, _, _ in strips) + pad
        mosaic = np.full((height, width), 255, np.uint8)
        places = []
        y = pad
        for binary, _, _, _ in strips:
            bh, bw = binary.shape
            mosaic[y : y + bh, pad : pad + bw] = binary
            places.append((y, y + bh))
            y += bh + pad
        out: list[list[_Entry]] = [[] for _ in strips]
        for text, (x0, y0, x1, y1), conf in _entries(self._data(mosaic, "--psm 11"), 0.0):
            cy = (y0 + y1) / 2
            for k, (top, bottom) in enumerate(places):
                if top <= cy < bottom:
                    out[k].append((text, (x0 - pad, y0 - top, x1 - pad, y1 - top), conf))
                    break
        return out

    def number(self, image: np.ndarray) -> int | None:
        key = self._key("number", image)
        if key in self._cache:
            self._cache.move_to_end(key)
            hit = self._cache[key]
            return hit if isinstance(hit, int) else None
        failures = self.failures
        value = self._number(image)
        if self.failures == failures:
            self._store(key, value)
        return value

    def _number(self, image: np.ndarray) -> int | None:
        h, w = image.shape[:2]
        if h < 4 or w < 4:
            return None
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        if h < 2 * MIN_LINE_HEIGHT:
            # thresholding an upscaled colour image keeps small digits' shapes
            f = 2 * MIN_LINE_HEIGHT / h
            image = cv2.resize(image, (round(w * f), 2 * MIN_LINE_HEIGHT), interpolation=cv2.INTER_CUBIC)
        best: tuple[float, int] | None = None
        kept = [k for k in (text_ink(_off_border(view)) for view in _number_views(image)) if k is not None]
        for (binary, th), height in ((k, height) for k in kept for height in NUMBER_HEIGHTS):
            read = self._digits(binary, height / th)
            if read is not None and (best is None or read[0] > best[0]):
                best = read
                if best[0] >= SURE_NUMBER:  # another reading costs another Tesseract run
                    break
        if best is None:
            # the grey crop as it is, to Tesseract's own adaptive threshold: bold digits
            # whose counters our threshold closes (a 0 becomes a blob) still read there
            grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
            pad = max(4, grey.shape[0] // 4)
            edge = int(np.median(np.concatenate([grey[0], grey[-1], grey[:, 0], grey[:, -1]])))
            grey = cv2.copyMakeBorder(grey, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=edge)
            data = self._data(grey, "--psm 7 -c thresholding_method=1 -c tessedit_char_whitelist=0123456789")
            found = [("".join(ch for ch in t if ch.isdigit()), c) for t, _, c in _entries(data)]
            digits = "".join(d for d, _ in found)
            if digits and len(digits) <= 12 and min(c for d, c in found if d) >= SURE:
                # (a slashed 0, which the whitelist reading above gave up on, reads as a 4
                # or an 8 here: put right on the glyphs of our own threshold)
                return int(_slashed_zeros(kept[0][0], digits) if kept else digits)
            if kept and not digits:
                # nothing read at all: a bold slashed 0, whose slivers of holes Tesseract
                # takes for no digit, is still one by its two diagonal holes
                n = _glyph_count(kept[0][0])
                if 0 < n <= 3 and _slashed_zeros(kept[0][0], "?" * n) == "0" * n:
                    return 0
        return None if best is None else best[1]

    def _digits(self, binary: np.ndarray, scale: float) -> tuple[float, int] | None:
        """The number in a black-on-white crop scaled by `scale`, with its least sure digit
        group's confidence; None when no digit was read."""
        s = float(np.clip(scale, 0.25, 8.0))
        bh, bw = binary.shape
        binary = cv2.resize(binary, (max(1, round(bw * s)), max(1, round(bh * s))), interpolation=cv2.INTER_LINEAR)
        binary = np.where(binary < 128, 0, 255).astype(np.uint8)
        pad = TEXT_HEIGHT
        binary = cv2.copyMakeBorder(binary, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
        digits, confs = "", []
        # one line of text; failing that, the raw line (Tesseract's line finder misses a
        # lone digit)
        for psm in (7, 13):
            data = self._data(binary, f"--psm {psm} -c tessedit_char_whitelist=0123456789")
            for text, _, conf in _entries(data):
                t = "".join(ch for ch in text if ch.isdigit())
                if t:
                    digits += t
                    confs.append(conf)
            if digits:
                break
        if not digits or len(digits) > 12:
            return None
        return min(confs), int(_slashed_zeros(binary, digits))


def _glyphs(binary: np.ndarray) -> list[np.ndarray]:
    """The ink's shapes of a black-on-white crop (specks left out), left to right, as
    (x, y, w, h, area) rows."""
    ink = (binary == 0).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    return sorted((stats[i] for i in range(1, n) if stats[i][4] >= 0.002 * ink.size), key=lambda st: int(st[0]))


def _glyph_count(binary: np.ndarray) -> int:
    return len(_glyphs(binary))


def _slashed_zeros(binary: np.ndarray, digits: str) -> str:
    """`digits` with the slashed zeros of digital-style fonts put right: Tesseract reads
    one as a 6, 8 or 4. A glyph whose inside a stroke splits into two holes diagonally
    (an 8's are stacked) is a 0. Only when each glyph is one shape, in reading order."""
    ink = (binary == 0).astype(np.uint8)
    glyphs = _glyphs(binary)
    if len(glyphs) != len(digits):
        return digits
    out = list(digits)
    for i, (x, y, gw, gh, _) in enumerate(glyphs):
        if out[i] == "0":
            continue
        glyph = ink[y : y + gh, x : x + gw]
        # the paper around and inside the glyph (label 0 is its ink, the padded corner the outside)
        paper = cv2.connectedComponents(np.pad(1 - glyph, 1, constant_values=1), connectivity=4)[1]
        centres = []
        for k in set(np.unique(paper).tolist()) - {0, int(paper[0, 0])}:
            ys, xs = np.nonzero(paper == k)
            if len(xs) >= 0.01 * gw * gh:
                centres.append((xs.mean() / gw, ys.mean() / gh))
        if len(centres) == 2:
            (ax, ay), (bx, by) = centres
            if abs(ay - by) <= SLASH_RISE and abs(ax - bx) >= SLASH_SHIFT:
                out[i] = "0"
    return "".join(out)


def _off_border(binary: np.ndarray) -> np.ndarray:
    """Black-on-white with the ink that touches the border removed: what a crop cuts
    through is around the number (a badge's edge, the background), not the number."""
    ink = binary == 0
    n, comp = cv2.connectedComponents(ink.astype(np.uint8), connectivity=8)
    edge = set(np.unique(np.concatenate([comp[0], comp[-1], comp[:, 0], comp[:, -1]])).tolist()) - {0}
    if edge:
        ink &= ~np.isin(comp, list(edge))
    return np.where(ink, 0, 255).astype(np.uint8)


def _number_views(image: np.ndarray) -> list[np.ndarray]:
    """Black-on-white views of a crop holding one number: its ink against the colour
    around it (the crop's border), then Otsu's threshold of the grey image both ways."""
    h, w = image.shape[:2]
    lab = _lab(image)
    border = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    face = np.median(border, axis=0)
    ink = np.linalg.norm(lab - face, axis=2) > INK_DELTA
    views = [np.where(ink, 0, 255).astype(np.uint8)]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    _, otsu = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # the text is the minority side
    views.append(np.asarray(otsu if (otsu == 0).mean() < 0.5 else cv2.bitwise_not(otsu), np.uint8))
    return views
