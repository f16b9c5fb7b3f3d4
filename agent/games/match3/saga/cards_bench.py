"""A generated corpus of non-board screens, classified and scored.

`run_corpus(n, seed)` draws `n` screens with `cards.py` across seeded game styles (every card
kind, the level map, an ad before and after its countdown), over a plain backdrop or over a
board frame, asks `agent.vision.screens.classify_screen` about each, and counts per kind: the
right action chosen (a tap on a tappable whose action is the way on, or a wait while an ad
counts down), taps on forbidden tappables (the target is 0), taps on nothing, the right
screen kind, the right outcome (won/lost) and the level number read where one is shown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

import numpy as np

from agent.games.match3.saga import cards as C

if TYPE_CHECKING:
    from agent.vision.profile import GameProfile

# What a tap must do for the screen to be left the right way.
RIGHT: dict[str, frozenset[str]] = {
    "complete": frozenset({"next"}),
    "failed": frozenset({"retry"}),
    "out_of_moves": frozenset({"close"}),
    "offer": frozenset({"close"}),
    "daily": frozenset({"collect", "close"}),
    "tip": frozenset({"ok", "close"}),
    "intro": frozenset({"play"}),
    "quit": frozenset({"resume"}),
    "done": frozenset({"ok"}),
    "map": frozenset({"play_level"}),
    "ad_after": frozenset({"close_ad"}),
}
KINDS = C.CARD_KINDS + ("map", "ad_before", "ad_after")
SIZES = ((1080, 2400), (1080, 2340), (720, 1600), (1440, 3120), (1080, 1920))


@dataclass(frozen=True)
class Screen:
    """One drawn screen and what is true of it."""

    kind: str  # a card kind, "map", "ad_before" or "ad_after"
    frame: np.ndarray
    taps: tuple[C.Tappable, ...]
    level: int
    board: tuple[int, int, int, int] | None  # the board's box when a board is behind
    style_seed: int


@dataclass
class Row:
    kind: str
    n: int = 0
    right_action: int = 0
    forbidden_taps: int = 0
    missed_taps: int = 0  # taps on no tappable
    backs: int = 0
    nothing: int = 0  # no action
    right_kind: int = 0
    right_outcome: int = 0
    level_read: int = 0  # the level number read where the screen shows it
    level_shown: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CorpusResult:
    rows: tuple[Row, ...]

    def total(self, name: str) -> int:
        return sum(int(getattr(r, name)) for r in self.rows)

    @property
    def n(self) -> int:
        return self.total("n")

    def table(self) -> str:
        cols = ("n", "right_action", "forbidden_taps", "missed_taps", "backs", "nothing", "right_kind",
                "right_outcome", "level_read", "level_shown")  # fmt: skip
        head = f"{'kind':<13}" + "".join(f"{c[:11]:>12}" for c in cols) + f"{'s/screen':>10}"
        lines = [head]
        for r in self.rows:
            lines.append(f"{r.kind:<13}" + "".join(f"{getattr(r, c):>12}" for c in cols)
                         + f"{r.seconds / max(1, r.n):>10.2f}")  # fmt: skip
        lines.append(f"{'total':<13}" + "".join(f"{self.total(c):>12}" for c in cols)
                     + f"{sum(r.seconds for r in self.rows) / max(1, self.n):>10.2f}")  # fmt: skip
        return "\n".join(lines)


@lru_cache(maxsize=8)
def _board_frame(i: int, size: tuple[int, int]) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A board screen to draw cards over: a look-alike board, resized to `size`."""
    import cv2

    from agent.games.match3.lookalike.cases import make_case

    c = make_case("clean", i)
    w, h = size
    fh, fw = c.frame.shape[:2]
    img = cv2.resize(c.frame, (w, h), interpolation=cv2.INTER_AREA)
    x0, y0, x1, y1 = c.truth.bbox
    return img, (int(x0 * w / fw), int(y0 * h / fh), int(x1 * w / fw), int(y1 * h / fh))


def draw_screen(kind: str, seed: int, over_board: bool) -> Screen:
    """The screen of `kind` in the style of game `seed` (its size drawn from the seed too)."""
    rng = np.random.default_rng(seed)
    style = C.card_style(rng)
    size = SIZES[int(rng.integers(len(SIZES)))]
    level = int(rng.integers(1, 60))
    w, h = size
    board = None
    if kind == "map":
        frame, taps = C.draw_map(style, size, level, rng, float(rng.uniform(0, 5)))
    elif kind in ("ad_before", "ad_after"):
        close = float(rng.uniform(3, 8))
        t = float(rng.uniform(0.2, close - 0.3)) if kind == "ad_before" else close + float(rng.uniform(0.1, 3))
        frame, taps = C.draw_ad(style, size, rng, t, 0.0, close)
    else:
        if over_board:
            behind, board = _board_frame(seed % 4, size)
        else:
            behind = C.backdrop(style, size, rng)
        goal = C.CardContent(kind, level, score=int(rng.integers(100, 9000)), target=int(rng.integers(1000, 9000)),  # type: ignore[arg-type]
                             goal_kind=str(rng.choice(["score", "collect", "break"])), goal_count=int(rng.integers(5, 40)))  # fmt: skip
        frame, taps = C.draw_card(style, goal, behind, rng)
    return Screen(kind, frame, taps, level, board, seed)


def _profile(screen: Screen) -> GameProfile:
    from agent.vision.classify import Exemplar
    from agent.vision.features import DEFAULT_PATCH, feature_length
    from agent.vision.profile import GameProfile

    h, w = screen.frame.shape[:2]
    bb = screen.board or (int(w * 0.05), int(h * 0.3), int(w * 0.95), int(h * 0.3) + int(w * 0.9))
    return GameProfile.from_bbox("match3", 8, 8, bb, w, h, [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))])


EXPECTED_KIND = {"intro": ("intro",), "map": ("map",), "ad_before": ("ad",), "ad_after": ("ad",)}
EXPECTED_OUTCOME = {"complete": "won", "failed": "lost", "out_of_moves": "lost"}
LEVEL_SHOWN = ("intro", "map")


def score_screen(screen: Screen, ocr: object, row: Row) -> None:
    from agent.vision.screens import classify_screen

    t0 = time.perf_counter()
    v = classify_screen(screen.frame, _profile(screen), board_readable=False, foreground=None, ocr=ocr)  # type: ignore[arg-type]
    row.seconds += time.perf_counter() - t0
    row.n += 1
    a = v.action
    note = f"{screen.kind} seed={screen.style_seed}: {v.kind} {a.kind if a else None} {a.label if a else ''!r} {v.reason}"
    right = False
    if a is None:
        row.nothing += 1
    elif a.kind == "tap" and a.point is not None:
        hit = [t for t in screen.taps if t.hit(*a.point)]
        if any(t.forbidden for t in hit):
            row.forbidden_taps += 1
            note += " FORBIDDEN"
        if not hit:
            row.missed_taps += 1
        right = any(t.action in RIGHT.get(screen.kind, frozenset()) for t in hit)
    elif a.kind == "back":
        row.backs += 1
    elif a.kind == "wait":
        right = screen.kind == "ad_before"
    if right:
        row.right_action += 1
    else:
        row.failures.append(note)
    if v.kind in EXPECTED_KIND.get(screen.kind, ("card", "covered")):
        row.right_kind += 1
    if getattr(v, "outcome", None) == EXPECTED_OUTCOME.get(screen.kind):
        row.right_outcome += 1
    if screen.kind in LEVEL_SHOWN:
        row.level_shown += 1
        if getattr(v, "level", None) == screen.level:
            row.level_read += 1


def corpus(n: int, seed: int, kinds: tuple[str, ...] = KINDS) -> list[Screen]:
    """`n` screens: `kinds` in turn, every other card over a board."""
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        out.append(draw_screen(kind, seed * 100_003 + i, over_board=(i // len(kinds)) % 2 == 1))
    return out


def run_corpus(n: int, seed: int = 0, ocr: object | None = None, kinds: tuple[str, ...] = KINDS,
               progress: Callable[[int, int], None] | None = None) -> CorpusResult:  # fmt: skip
    """Classify `n` generated screens of `kinds` and count per kind (see the module
    docstring); `progress(done, n)` after each."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"no such screen kind: {', '.join(unknown) or '(none given)'}; the kinds are {', '.join(KINDS)}")
    if ocr is None:
        from agent.vision.ocr import default_ocr

        ocr = default_ocr()
    rows: dict[str, Row] = {k: Row(k) for k in kinds}
    for i, screen in enumerate(corpus(n, seed, kinds)):
        score_screen(screen, ocr, rows[screen.kind])
        if progress is not None:
            progress(i + 1, n)
    return CorpusResult(tuple(r for r in rows.values() if r.n))


if __name__ == "__main__":
    import sys

    res = run_corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 48, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(res.table())
    for r in res.rows:
        for f in r.failures:
            print(" ", f)
