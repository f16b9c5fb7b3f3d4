"""Per-move charts as inline SVG: no library and no script, so a report opens anywhere.

A chart is one series of numbers by move: a line through the moves that have a value
(gaps where a move has none), a dot per move with its value as a tooltip, the median as
a dashed line, and the axis labelled from 0 to a round maximum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 380, 140
_LEFT, _RIGHT, _TOP, _BOTTOM = 40, 8, 8, 22  # room for the axis labels


@dataclass(frozen=True)
class Series:
    """One quantity per move: `points` are (move index, value or None)."""

    key: str  # the journal field, e.g. "capture_ms"
    title: str
    unit: str
    points: Sequence[tuple[int, float | None]]

    @property
    def values(self) -> list[float]:
        return [v for _, v in self.points if v is not None]


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= value (1 for 0)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def line_chart(series: Series, colour: str = "#2f6fb3", width: int = WIDTH, height: int = HEIGHT) -> str:
    """The SVG markup of one chart (a string to embed in HTML as it is: every text in it
    is escaped here)."""
    label = escape(f"{series.title} ({series.unit}) per move")
    values = series.values
    head = (f'<svg class="chart" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{label}" data-series="{escape(series.key)}">')  # fmt: skip
    if not values:
        return (f'{head}<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" class="empty">'
                f"no {escape(series.title)} recorded</text></svg>")  # fmt: skip
    moves = [i for i, _ in series.points]
    lo_x, hi_x = min(moves), max(moves)
    top = nice_ceiling(max(values))
    plot_w, plot_h = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + (plot_w * (i - lo_x) / (hi_x - lo_x) if hi_x > lo_x else plot_w / 2)

    def y(v: float) -> float:
        return _TOP + plot_h * (1 - max(0.0, v) / top)

    parts = [head]
    for frac in (0.0, 0.5, 1.0):
        gy = y(top * frac)
        parts.append(f'<line class="grid" x1="{_LEFT}" y1="{gy:.1f}" x2="{width - _RIGHT}" y2="{gy:.1f}"/>')
        parts.append(f'<text class="axis" x="{_LEFT - 4}" y="{gy + 4:.1f}" text-anchor="end">{_fmt(top * frac)}</text>')
    base = height - 6
    parts.append(f'<text class="axis" x="{_LEFT}" y="{base}" text-anchor="start">move {lo_x}</text>')
    if hi_x > lo_x:
        parts.append(f'<text class="axis" x="{width - _RIGHT}" y="{base}" text-anchor="end">move {hi_x}</text>')
    # One polyline per run of moves with a value: a move without one is a gap, not a zero.
    run: list[str] = []
    runs: list[list[str]] = [run]
    for i, v in series.points:
        if v is None:
            run = []
            runs.append(run)
        else:
            run.append(f"{x(i):.1f},{y(v):.1f}")
    for r in runs:
        if len(r) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{" ".join(r)}"/>')
    mid = median(values)
    parts.append(f'<line class="median" x1="{_LEFT}" y1="{y(mid):.1f}" x2="{width - _RIGHT}" y2="{y(mid):.1f}">'
                 f"<title>median {escape(_fmt(mid))} {escape(series.unit)}</title></line>")  # fmt: skip
    radius = 2.5 if len(values) <= 60 else 1.6
    unit = escape(series.unit)
    for i, v in series.points:
        if v is not None:
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="{radius}" fill="{colour}">'
                         f"<title>move {i}: {escape(_fmt(v))} {unit}</title></circle>")  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def summary_of(series: Series) -> dict[str, float] | None:
    """Median, 95th percentile and maximum of the values (None when there are none)."""
    values = sorted(series.values)
    if not values:
        return None
    p95 = values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)]
    return {"median": median(values), "p95": p95, "max": values[-1], "n": float(len(values))}
