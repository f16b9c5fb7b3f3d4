"""Reading the lights off a screenshot with a device profile.

A Lights Out profile has two classes of cell: on and off. Calibration may name them
"1"/"0" (what the simulated phone's profile uses) or "on"/"off"; any other label
means the profile was made for another game and is refused rather than guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.errors import ProfileError
from agent.games.lightsout.gf2 import from_bits
from agent.vision.classify import UNKNOWN_LABEL, Reading
from agent.vision.profile import GameProfile

ON_LABELS = frozenset({"1", "on"})
OFF_LABELS = frozenset({"0", "off"})


@dataclass(frozen=True)
class LightsRead:
    state: int  # bit r * cols + c set for a light read as on (unknown cells count as off)
    reading: Reading
    confident: bool  # every cell classified, at or above the profile's min_confidence

    @property
    def min_confidence(self) -> float:
        return self.reading.min_confidence

    @property
    def text(self) -> str:
        """The board as '1'/'0' rows, '?' where unsure."""
        return "\n".join(
            "".join("?" if v == UNKNOWN_LABEL else ("1" if v in ON_LABELS else "0") for v in row)
            for row in self.reading.labels
        )


def check_labels(profile: GameProfile) -> None:
    labels = {e.label for e in profile.exemplars}
    stray = sorted(labels - ON_LABELS - OFF_LABELS)
    if stray or not labels & ON_LABELS or not labels & OFF_LABELS:
        raise ProfileError(
            f"the lightsout profile's cell classes are {', '.join(sorted(labels))}; "
            "it needs exactly an on class ('1' or 'on') and an off class ('0' or 'off')",
            hint="recalibrate lightsout with the board showing both lit and unlit cells",
        )


def read_lights(frame: np.ndarray, profile: GameProfile) -> LightsRead:
    reading = profile.read(frame)
    flat = [v for row in reading.labels for v in row]
    state = from_bits(i for i, v in enumerate(flat) if v in ON_LABELS)
    confident = UNKNOWN_LABEL not in flat and reading.min_confidence >= profile.min_confidence
    return LightsRead(state, reading, confident)
