"""The HTML report of a run folder (`agent report`): one self-contained page of what the
agent saw and did, move by move."""

from __future__ import annotations

from agent.report.html import NO_FRAMES, write_report

__all__ = ["NO_FRAMES", "write_report"]
