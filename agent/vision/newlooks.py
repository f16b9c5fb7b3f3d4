"""What a look the profile never saw is, beside the colours the profile already knows.

Calibration decides a rare look's colour from the frame alone (agent.vision.kinds): the
frequent classes are the colours (anchors), and a rare look inside one's hue territory
is a special of it. Later in a run the profile already knows the colours, and the frame
at hand may show one of them only twice (the level has few of them left, or the agent
just turned two into specials); counted afresh it would be no anchor, and its special
would join the nearest other colour. So here every colour kind the profile knows that
shows on the board is an anchor whatever its count (ANCHOR_CELLS of its cells, repeated
when it has fewer), a new look that is a colour of its own too, and the other new looks
are rare (RARE_CELLS of their cells: never an anchor); then the kinds' own rules decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from agent.vision.kinds import ANCHOR_MIN, kinds_of

ANCHOR_CELLS = ANCHOR_MIN + 1
RARE_CELLS = ANCHOR_MIN - 1


@dataclass(frozen=True)
class Verdict:
    """A new look's colour kind (a known kind's letter when it joined one, else its own
    letter), whether it joined one, whether it is of many hues at once (colourless), and
    its colour, for names."""

    kind: str
    joined: bool
    colourless: bool
    bgr: tuple[int, int, int]


def judge(known: Mapping[str, Sequence[np.ndarray]], looks: Mapping[str, Sequence[np.ndarray]], colours: set[str],
          margin: int) -> dict[str, Verdict]:  # fmt: skip
    """`known`: colour kind letter -> sampled cells (s, s, 3, Lab, the frame's order) of
    it on the board; `looks`: new letter -> its cells; `colours`: the new letters that
    are colours of their own. Letters of `known` and `looks` must differ."""
    flat: list[str] = []
    cells: list[np.ndarray] = []
    for k in sorted(known):
        got = list(known[k])
        if got:
            flat += [k] * ANCHOR_CELLS
            cells += [got[i % len(got)] for i in range(ANCHOR_CELLS)]
    for n in sorted(looks):
        got = list(looks[n])
        if not got:
            continue
        take = ANCHOR_CELLS if n in colours else min(RARE_CELLS, len(got))
        flat += [n] * take
        cells += [got[i % len(got)] for i in range(take)]
    if not flat:
        return {}
    km = kinds_of([flat], (np.stack(cells),), margin)
    out = {}
    for n in looks:
        if n not in km.of_class:
            continue
        joined = km.of_class[n]
        out[n] = Verdict(joined, joined != n, km.roles.get(n) == "colourless", km.bgr[joined])
    return out


__all__ = ["ANCHOR_CELLS", "RARE_CELLS", "Verdict", "judge"]
