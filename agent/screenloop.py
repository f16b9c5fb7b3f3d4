"""What every game's play loop does with the screen the same way: log to the journal,
wait for a still board, wait for the board to change after an action."""

from __future__ import annotations

from typing import Any

import numpy as np

from agent.device.base import Device
from agent.device.clock import Clock
from agent.journal import Journal
from agent.loopstats import LoopStats
from agent.vision.profile import GameProfile
from agent.vision.settle import wait_for_change, wait_until_still


class ScreenLoop:
    """A base for play loops; the subclass sets these in its __init__."""

    device: Device
    profile: GameProfile
    clock: Clock
    journal: Journal | None
    summary: LoopStats
    options: Any  # the loop's options; `_wait_for_change` needs its `change_timeout_s`

    def _log(self, kind: str, **fields: object) -> None:
        if self.journal is not None:
            self.journal.write(kind, t=round(self.clock.now(), 4), **fields)

    def _settle(self) -> tuple[np.ndarray, bool]:
        """A frame once the board is still (or the settle timeout passed), and whether it is."""
        p = self.profile
        s = wait_until_still(self.device.screencap, p.board_bbox, p.rows, p.cols, self.clock, p.settle)
        self.summary.settle_s.append(s.waited_s)
        return s.frame, s.still

    def _wait_for_change(self, before: np.ndarray) -> bool:
        p = self.profile
        return wait_for_change(self.device.screencap, before, p.board_bbox, p.rows, p.cols, self.clock, p.settle,
                               self.options.change_timeout_s)  # fmt: skip
