"""The colour a piece of unknown look probably has, from its hue beside the board's colours.

A special the profile never saw (a striped tile, a wrapped one, a tile under a sparkle)
reads unknown until its look has come back often enough to be learned; it still
matches as the colour it is drawn in. Judged as calibration judges a rare look
(agent.vision.newlooks): beside every colour kind the board shows, a look inside one
kind's hue territory is that colour; a look of many hues or of none near enough (a
crate, a hole's background) has no guess. A guess is only a guess: the player swaps by
it as a trial, and what the game does tells (a colour bomb whose sparks lean to one
colour is guessed that colour, and the game takes its swap all the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.newlooks import judge
from agent.vision.profile import GameProfile
from agent.vision.samples import sample_board

Cell = tuple[int, int]

# Roles whose classes are no colour to compare with (a hole, a bare layer, a blocker, a
# colour bomb), and a class whose kind is not known yet.
_NOT_COLOURS = ("hole", "layer", "blocker", "colourless")


def guess_kinds(frame: np.ndarray, profile: GameProfile, labels: Sequence[Sequence[str]],
                cells: Iterable[Cell]) -> dict[Cell, str]:  # fmt: skip
    """`cells` (of a board read with `profile`, as `labels`) -> the colour kind each one's
    hue joins; a cell that joins none is left out."""
    wanted = sorted(set(cells))
    if not wanted:
        return {}
    rows, cols = profile.rows, profile.cols
    samples = sample_board(frame, profile.board_bbox, rows, cols)
    known: dict[str, list[np.ndarray]] = {}
    for r, row in enumerate(labels):
        for c, v in enumerate(row):
            if v in (EMPTY_LABEL, UNKNOWN_LABEL) or profile.role_of(v) in _NOT_COLOURS:
                continue
            kind = profile.kind_of(v)
            if kind not in (EMPTY_LABEL, UNKNOWN_LABEL, "#"):
                known.setdefault(kind, []).append(samples.lab[r * cols + c])
    if len(known) < 2:
        return {}  # a hue territory is measured against the nearest other colour
    # each cell a look of its own: one guess never leans on another
    looks = {f"~{i}": [samples.lab[r * cols + c]] for i, (r, c) in enumerate(wanted) if 0 <= r < rows and 0 <= c < cols}
    verdicts = judge(known, looks, set(), samples.margin)
    out: dict[Cell, str] = {}
    for i, cell in enumerate(wanted):
        got = verdicts.get(f"~{i}")
        if got is not None and got.joined and not got.colourless and got.kind in known:
            out[cell] = got.kind
    return out


__all__ = ["guess_kinds"]
