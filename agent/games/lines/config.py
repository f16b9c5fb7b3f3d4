"""What a game of Color Lines is made of, and the two presets.

`seed` is the game of seed 003: 8x8, five colours plus a rainbow ball that stands for
any colour, three new balls after a move that removes nothing. `classic` is the 9x9
Lines game: seven colours, the next three colours shown in advance, and lines scored
10 + 2(n-5)^2 for n balls.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_COLORS = 9
SCORINGS = ("per_ball", "classic")


@dataclass(frozen=True)
class LinesConfig:
    rows: int = 8
    cols: int = 8
    colors: int = 5
    wildcard: bool = True
    # Chance that a new ball is the rainbow ball. The seed draws ball ids 1-6 with no
    # stated bias, so its preset gives the rainbow ball the same share as each colour.
    wildcard_weight: float = 1 / 6
    line_length: int = 5
    spawn_count: int = 3
    initial_balls: int = 5
    preview: bool = False
    scoring: str = "per_ball"

    def __post_init__(self) -> None:
        if not (3 <= self.rows <= 16 and 3 <= self.cols <= 16):
            raise ValueError(f"board size must be 3..16 on each side, got {self.rows}x{self.cols}")
        if not (1 <= self.colors <= MAX_COLORS):
            raise ValueError(f"colors must be 1..{MAX_COLORS}, got {self.colors}")
        if not (2 <= self.line_length <= max(self.rows, self.cols)):
            raise ValueError(f"line_length must be 2..{max(self.rows, self.cols)}, got {self.line_length}")
        if not (1 <= self.spawn_count <= self.rows * self.cols):
            raise ValueError(f"spawn_count must be 1..{self.rows * self.cols}, got {self.spawn_count}")
        if not (0 <= self.initial_balls < self.rows * self.cols):
            raise ValueError(f"initial_balls must be 0..{self.rows * self.cols - 1}, got {self.initial_balls}")
        if not (0.0 <= self.wildcard_weight < 1.0):
            raise ValueError(f"wildcard_weight must be in [0, 1), got {self.wildcard_weight}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {self.scoring!r}")

    def points(self, removed: int) -> int:
        """Points for removing `removed` balls in one resolution."""
        if removed <= 0:
            return 0
        if self.scoring == "classic":
            extra = max(0, removed - self.line_length)
            return 10 + 2 * extra * extra
        return removed

    def with_(self, **changes: object) -> "LinesConfig":
        return replace(self, **changes)  # type: ignore[arg-type]


PRESETS: dict[str, LinesConfig] = {
    "seed": LinesConfig(),
    "classic": LinesConfig(
        rows=9, cols=9, colors=7, wildcard=False, wildcard_weight=0.0, line_length=5, spawn_count=3,
        initial_balls=5, preview=True, scoring="classic",
    ),
}


def preset(name: str) -> LinesConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}") from None
