"""What every game's play loop measures about itself: checks, decision and settle times."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass
class LoopStats:
    """Base of every play summary; its lists stay out of `as_dict` (the means go in)."""

    checks: Counter = field(default_factory=Counter)
    decision_ms: list[float] = field(default_factory=list)
    settle_s: list[float] = field(default_factory=list)

    @property
    def mean_decision_ms(self) -> float:
        return float(np.mean(self.decision_ms)) if self.decision_ms else 0.0

    @property
    def mean_settle_ms(self) -> float:
        return 1000.0 * float(np.mean(self.settle_s)) if self.settle_s else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("decision_ms")
        d.pop("settle_s")
        d["checks"] = dict(self.checks)
        d["mean_decision_ms"] = round(self.mean_decision_ms, 3)
        d["mean_settle_ms"] = round(self.mean_settle_ms, 1)
        return d
