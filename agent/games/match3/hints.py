"""What match-3 rules say about where pieces lie at rest, for calibration to tell blockers by."""

from __future__ import annotations

from agent.vision.roles import RoleHints

# At rest no colour lies three in a line, and levels place their obstacles by design.
ROLE_HINTS = RoleHints(run_length=3, symmetric_layouts=True)
