"""Nearest-exemplar classification of board cells.

Distances are root-mean-square differences per feature component (Euclidean distance
divided by sqrt(D)), so they are in Lab units whatever the patch size: 1 is about one
just-noticeable colour step, JPEG and scaling noise is around 1-2, and two different
tile types are usually tens apart. `max_distance` is in the same units.

A cell gets the label of its nearest exemplar, but only if two tests pass:

- margin: confidence = 1 - d1 / d2, where d1 is the distance to the nearest label and
  d2 to the second nearest (a label's distance is that of its nearest exemplar). It is
  1 for an exact match and 0 halfway between two labels; being a ratio it needs no
  tuning per game. Cells under `min_confidence` become "?".
- absolute: a cell farther than its label's bound from that label's exemplars is "?"
  with confidence 0. A tile type never seen during calibration is usually far from all
  exemplars yet may still be much nearer one of them than the others, which the margin
  alone would accept; this bound is what keeps a new tile from being forced into a class.

The bound is per label (see default_max_distances) unless a profile sets one
`max_distance` for all: labels vary by different amounts. The holes of an irregular
board show whatever lies behind it, often a textured picture that differs from hole to
hole, while the cells of one tile type are near copies; and two tile types that are
close to each other (a cracked and a plain blocker) must not tighten the bound of every
other label, the holes' included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np

UNKNOWN_LABEL = "?"
EMPTY_LABEL = "."

# Default absolute bounds, see default_max_distances(). Lab RMS units.
NOISE_FLOOR = 8.0  # never tighter than this: JPEG, scaling and idle shimmer stay inside
SPREAD_FACTOR = 3.0  # how far past the widest calibrated variation of one label a cell may be
# Exemplars of one label closer than this add nothing but noise.
_DUPLICATE = 0.5


@dataclass(frozen=True, eq=False)
class Exemplar:
    """A labelled feature vector. Features are kept at the 4 decimals profiles store,
    so an exemplar written to a profile and read back is equal to the original."""

    label: str
    features: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label or self.label == UNKNOWN_LABEL:
            raise ValueError(f"an exemplar label is a non-empty class name other than '?', got {self.label!r}")
        f = np.round(np.asarray(self.features, dtype=np.float64), 4).astype(np.float32)
        if f.ndim != 1 or f.size == 0:
            raise ValueError(f"exemplar features are a non-empty 1-D vector, got shape {f.shape}")
        if not np.isfinite(f).all():
            raise ValueError("exemplar features must be finite")
        f.setflags(write=False)
        object.__setattr__(self, "features", f)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Exemplar)
            and self.label == other.label
            and self.features.shape == other.features.shape
            and bool(np.array_equal(self.features, other.features))
        )

    def __hash__(self) -> int:
        return hash((self.label, self.features.tobytes()))

    def __repr__(self) -> str:
        return f"Exemplar({self.label!r}, <{self.features.size} features>)"


@dataclass(frozen=True, eq=False)
class Reading:
    """What the classifier made of a board: labels with "?" where unsure, and how sure.

    `distance` is each cell's distance to its nearest exemplar (Lab RMS), kept for
    calibration reports and for tuning max_distance; None when not computed.
    """

    labels: list[list[str]]
    confidence: np.ndarray
    distance: np.ndarray | None = field(default=None)

    @property
    def rows(self) -> int:
        return len(self.labels)

    @property
    def cols(self) -> int:
        return len(self.labels[0]) if self.labels else 0

    @property
    def min_confidence(self) -> float:
        return float(self.confidence.min()) if self.confidence.size else 1.0

    @property
    def unknown_count(self) -> int:
        return sum(row.count(UNKNOWN_LABEL) for row in self.labels)

    @property
    def text(self) -> str:
        return "\n".join("".join(row) for row in self.labels)

    def unknown_cells(self) -> list[tuple[int, int]]:
        return [(r, c) for r, row in enumerate(self.labels) for c, v in enumerate(row) if v == UNKNOWN_LABEL]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Reading)
            and self.labels == other.labels
            and bool(np.array_equal(self.confidence, other.confidence))
        )

    __hash__ = None  # type: ignore[assignment]


def pairwise_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """RMS distance between every row of a (N, D) and every row of b (M, D): (N, M) float64."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"feature lengths disagree: {a.shape} vs {b.shape}")
    # the expansion is fast and float64 keeps its cancellation error far below one Lab unit
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return cast(np.ndarray, np.sqrt(np.clip(sq, 0.0, None) / a.shape[1]))


def _stack(exemplars: list[Exemplar]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Exemplar matrix (M, D), the sorted distinct labels, and each exemplar's label index (M,)."""
    if not exemplars:
        raise ValueError("no exemplars to classify with: calibrate this game first")
    lengths = {e.features.size for e in exemplars}
    if len(lengths) != 1:
        raise ValueError(f"exemplar feature lengths disagree: {sorted(lengths)}")
    names = sorted({e.label for e in exemplars})
    index = {n: i for i, n in enumerate(names)}
    mat = np.stack([e.features for e in exemplars])
    return mat, names, np.array([index[e.label] for e in exemplars])


def default_max_distances(exemplars: list[Exemplar]) -> dict[str, float]:
    """The absolute bound of each label, used when a profile does not set one.

    max(NOISE_FLOOR, SPREAD_FACTOR x the label's spread), capped at half the smallest
    distance between an exemplar of the label and one of another label.

    - The spread of a label is how far its most isolated exemplar is from its nearest
      same-label neighbour: the variation calibration actually saw. Exemplars are picked
      by farthest-point sampling (exemplars_from_labels), so every calibrated member of
      the label is within the spread of one of them and a frame read back with its own
      profile passes (unless the cap below bites: then the label is near another one
      and the margin decides). Allowing a few times that (and never less than the
      noise floor) accepts tiles that vary as those did.
    - The cap keeps the bound inside the region where the answer cannot be ambiguous:
      a cell within half the gap of an exemplar of the label is, by the triangle
      inequality, nearer that exemplar than any exemplar of another label.
    """
    mat, names, idx = _stack(exemplars)
    d = pairwise_distances(mat, mat)
    same = idx[:, None] == idx[None, :]
    np.fill_diagonal(d, np.inf)
    nearest_same = np.where(same, d, np.inf).min(axis=1)
    nearest_other = np.where(same, np.inf, d).min(axis=1)
    out: dict[str, float] = {}
    for i, name in enumerate(names):
        mine = idx == i
        spread = nearest_same[mine]
        spread = float(spread[np.isfinite(spread)].max()) if np.isfinite(spread).any() else 0.0
        bound = max(NOISE_FLOOR, SPREAD_FACTOR * spread)
        gap = float(nearest_other[mine].min())
        out[name] = min(bound, 0.5 * gap) if np.isfinite(gap) else bound
    return out


def classify(
    features: np.ndarray,
    rows: int,
    cols: int,
    exemplars: list[Exemplar],
    min_confidence: float = 0.5,
    max_distance: float | None = None,
) -> Reading:
    """Label every cell by its nearest exemplar, "?" where the margin or distance test fails."""
    features = np.asarray(features)
    if features.ndim != 2 or features.shape[0] != rows * cols:
        raise ValueError(f"expected {rows * cols} feature rows for {rows}x{cols}, got shape {features.shape}")
    mat, names, idx = _stack(exemplars)
    if mat.shape[1] != features.shape[1]:
        raise ValueError(
            f"features have {features.shape[1]} components but the exemplars {mat.shape[1]}: "
            "the profile was made with other feature settings"
        )
    if max_distance is None:
        bounds = default_max_distances(exemplars)
        limit = np.array([bounds[n] for n in names])
    else:
        limit = np.full(len(names), float(max_distance))

    d = pairwise_distances(features, mat)  # (N, M)
    member = idx[None, :] == np.arange(len(names))[:, None]  # (L, M)
    per_label = np.where(member[None, :, :], d[:, None, :], np.inf).min(axis=2)  # (N, L)

    order = np.argsort(per_label, axis=1)
    best = order[:, 0]
    d1 = np.take_along_axis(per_label, best[:, None], axis=1)[:, 0]
    if len(names) > 1:
        d2 = np.take_along_axis(per_label, order[:, 1:2], axis=1)[:, 0]
    else:
        d2 = np.full_like(d1, np.inf)  # one label: nothing to be confused with
    with np.errstate(divide="ignore", invalid="ignore"):
        conf = np.where(d2 > 0, 1.0 - d1 / d2, 0.0)
    conf = np.clip(np.nan_to_num(conf, nan=0.0), 0.0, 1.0)

    far = d1 > limit[best]
    conf[far] = 0.0
    unsure = far | (conf < min_confidence)

    label_arr = np.array(names, dtype=object)[best]
    label_arr[unsure] = UNKNOWN_LABEL
    labels = label_arr.reshape(rows, cols).tolist()
    return Reading(labels=labels, confidence=conf.reshape(rows, cols), distance=d1.reshape(rows, cols))


def exemplars_from_labels(
    features: np.ndarray, labels: list[list[str]], per_label: int = 4, per_empty: int | None = None
) -> list[Exemplar]:
    """Exemplars learned from a board whose labels are known ("?" cells are skipped).

    Per label: the medoid (the member with the least total distance to the others, a
    typical tile rather than an average no real tile looks like), then up to
    per_label - 1 more by farthest-point sampling, so the variation actually seen
    (highlights, anti-aliasing, position) is covered. Near-duplicates are not added.

    `per_empty` (default per_label) is the same for "." cells. The holes of an irregular
    board show the picture behind it, a different part in every hole, so they vary far
    more than copies of a tile do and need more exemplars to be covered; flat empty
    slots are near-duplicates of each other and stop at one or two whatever the limit.
    """
    features = np.asarray(features, dtype=np.float32)
    flat = [v for row in labels for v in row]
    widths = {len(row) for row in labels}
    if len(widths) > 1:
        raise ValueError(f"label rows have different lengths {sorted(widths)}")
    if features.ndim != 2 or features.shape[0] != len(flat):
        raise ValueError(f"{len(flat)} labels for {features.shape[0]} feature rows")
    if per_label < 1:
        raise ValueError("per_label must be at least 1")
    out: list[Exemplar] = []
    for name in sorted(set(flat) - {UNKNOWN_LABEL}):
        members = features[[i for i, v in enumerate(flat) if v == name]]
        d = pairwise_distances(members, members)
        chosen = [int(d.sum(axis=1).argmin())]
        nearest = d[chosen[0]].copy()
        limit = per_label if name != EMPTY_LABEL or per_empty is None else max(1, per_empty)
        while len(chosen) < limit:
            far = int(nearest.argmax())
            if nearest[far] < _DUPLICATE:
                break
            chosen.append(far)
            nearest = np.minimum(nearest, d[far])
        out.extend(Exemplar(name, members[i]) for i in chosen)
    return out
