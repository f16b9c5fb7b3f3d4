"""A seeded family of saga games: `world_of(n)` is game n, world 0 the saga game of old.

Real saga games differ from each other in what they draw and in what they do between
boards. A world fixes, for one game: the tile art (cut from one of the shared real
shots, or drawn), the screen size, the header (its layout and words, how the goal is
shown), the goals its levels ask and whether score levels run until their moves are
spent, the screens between boards (a map, an intro card, a daily bonus, offers priced
in coins, ads with a countdown, a Quit dialog on Back), an animated background, the
animation speed, the hint's look, and how its screenshots behave (a latency to suggest
and whether the phone serves one screenshot at a time).

Worlds 1.. are drawn from their number; the first dozen take turns through the sizes,
art sources and header layouts so that any run of consecutive worlds differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.match3.saga.levels import stream

FAMILY_SIZES: tuple[tuple[int, int], ...] = ((1080, 2400), (720, 1280), (1080, 2340), (1440, 3200), (1080, 1920))
# The shared shots' sets with enough labelled tiles per colour; "bbb" is the old game's.
ART_SOURCES = ("bbb", "starjeweled", "bejeweled3", "pad", "candycrush", "drawn")
HEADER_LAYOUTS = ("badges", "row", "goal_panel", "stacked")
HINTS = ("wiggle", "glow", "sparkle")
BACKDROPS = ("still", "clouds", "sparkles")
MOVES_WORDS = ("MOVES", "Moves", "Moves left", "STEPS")
SCORE_WORDS = ("SCORE", "Score", "Points")
LEVEL_FORMS = ("LEVEL {}", "Level {}", "Lv. {}", "Stage {}")
TARGET_WORDS = ("TARGET", "Target", "Goal")
GAME_PREFIX = "com.puzzleagent.saga"


@dataclass(frozen=True)
class HeaderStyle:
    """How one game's header looks: its layout and its words."""

    layout: str = "legacy"  # "legacy" (the old game's four badges) or one of HEADER_LAYOUTS
    moves_word: str = "MOVES"
    score_word: str = "SCORE"
    level_form: str = "LEVEL {}"
    target_word: str = "TARGET"
    counts_up: bool = False  # a goal shown as "3/12" rather than the number still to go
    panel: tuple[int, int, int] = (70, 40, 45)  # BGR of its badges
    ink: tuple[int, int, int] = (255, 255, 255)


@dataclass(frozen=True)
class SagaWorld:
    """One game of the family (see the module docstring); `world_of` makes them."""

    number: int
    size: tuple[int, int]
    art: str  # one of ART_SOURCES
    art_pick: int  # which of the set's exemplars (0: those nearest each colour's median)
    header: HeaderStyle
    goal_mix: tuple[float, float, float]  # weights of score, collect and break levels
    score_to_end: bool  # score levels run until the moves are spent
    max_colours: int
    cards: bool  # screens drawn by the card painter (False: the old game's popups)
    map: bool
    intro: bool
    quit_dialog: bool  # Back on the board asks "Quit level?"
    daily_p: float
    offer_p: float
    tip_p: float
    ad_p: float
    ad_close_after_s: float
    backdrop: str  # one of BACKDROPS
    speed: float  # animation durations are divided by this
    hint: str  # one of HINTS
    latency_ms: float  # what a phone of this game costs per screenshot (a suggestion)
    serial_captures: bool  # the phone serves one screenshot at a time
    style_seed: int  # the card painter's style is drawn from this

    @property
    def package(self) -> str:
        return GAME_PREFIX if self.number == 0 else f"{GAME_PREFIX}{self.number}"

    def describe(self) -> dict[str, object]:
        """What a report shows of the world (plain values)."""
        w, h = self.size
        return {"world": self.number, "size": f"{w}x{h}", "art": self.art, "header": self.header.layout,
                "moves_word": self.header.moves_word, "goal_mix": list(self.goal_mix),
                "score_to_end": self.score_to_end, "map": self.map, "intro": self.intro,
                "quit_dialog": self.quit_dialog, "backdrop": self.backdrop, "speed": self.speed, "hint": self.hint,
                "ad_close_after_s": self.ad_close_after_s, "latency_ms": self.latency_ms,
                "serial_captures": self.serial_captures}  # fmt: skip


WORLD_0 = SagaWorld(
    number=0, size=(1080, 2400), art="bbb", art_pick=0, header=HeaderStyle(), goal_mix=(1.0, 0.0, 0.0),
    score_to_end=False, max_colours=6, cards=False, map=False, intro=False, quit_dialog=False, daily_p=0.0,
    offer_p=0.0, tip_p=0.0, ad_p=0.0, ad_close_after_s=2.0, backdrop="still", speed=1.0, hint="wiggle",
    latency_ms=0.0, serial_captures=False, style_seed=0,
)  # fmt: skip


def world_of(n: int | SagaWorld) -> SagaWorld:
    """Game `n` of the family (a world passes through). World 0 is the old saga game."""
    if isinstance(n, SagaWorld):
        return n
    n = int(n)
    if n < 0:
        raise ValueError(f"a world is a number >= 0, not {n}")
    if n == 0:
        return WORLD_0
    rng = stream(n, 90)
    # the first worlds take turns through what a test of a dozen should see differ
    size = FAMILY_SIZES[n % len(FAMILY_SIZES)]
    art = ART_SOURCES[(n - 1) % len(ART_SOURCES)]
    layout = HEADER_LAYOUTS[(n - 1) % len(HEADER_LAYOUTS)]
    pick = int(rng.integers(0, 3))
    header = HeaderStyle(
        layout=layout,
        moves_word=MOVES_WORDS[int(rng.integers(len(MOVES_WORDS)))],
        score_word=SCORE_WORDS[int(rng.integers(len(SCORE_WORDS)))],
        level_form=LEVEL_FORMS[int(rng.integers(len(LEVEL_FORMS)))],
        target_word=TARGET_WORDS[int(rng.integers(len(TARGET_WORDS)))],
        counts_up=bool(rng.random() < 0.4),
        panel=_panel_colour(rng),
        ink=(255, 255, 255) if rng.random() < 0.8 else (250, 245, 200),
    )
    mixes = ((0.3, 0.3, 0.4), (0.4, 0.2, 0.4), (0.34, 0.33, 0.33), (0.2, 0.3, 0.5))
    mix = mixes[int(rng.integers(len(mixes)))]
    return SagaWorld(
        number=n, size=size, art=art, art_pick=pick, header=header, goal_mix=mix,
        score_to_end=bool(n % 2 == 1 or rng.random() < 0.5), max_colours=5 if art == "candycrush" else 6,
        cards=True, map=bool(n % 3 != 0), intro=bool(n % 4 != 2), quit_dialog=True,
        daily_p=float(rng.uniform(0.2, 0.5)), offer_p=float(rng.uniform(0.15, 0.4)),
        tip_p=float(rng.uniform(0.0, 0.3)), ad_p=float(rng.uniform(0.3, 0.6)),
        ad_close_after_s=float(np.round(rng.uniform(2.0, 6.0), 1)),
        backdrop=BACKDROPS[n % len(BACKDROPS)], speed=float(np.round(rng.uniform(0.6, 1.6), 2)),
        hint=HINTS[n % len(HINTS)], latency_ms=float(rng.choice([0.0, 150.0, 300.0, 500.0, 800.0])),
        serial_captures=bool(rng.random() < 0.4), style_seed=int(rng.integers(2**31)),
    )  # fmt: skip


def _panel_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    import cv2

    hsv = np.array([[[rng.integers(0, 180), rng.integers(90, 220), rng.integers(50, 120)]]], np.uint8)
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)
