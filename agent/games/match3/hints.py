"""What match-3 rules say about where pieces lie at rest, for calibration to tell blockers by."""

from __future__ import annotations

from agent.vision.roles import RoleHints

# At rest no colour lies three in a line, levels place their obstacles by design, and
# tiles fall past obstacles into the cells a match cleared.
ROLE_HINTS = RoleHints(run_length=3, symmetric_layouts=True, falls=True)
