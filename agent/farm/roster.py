"""What a node's roster of phones compares between two listings (pure: no Ray)."""

from __future__ import annotations

from typing import Any


def roster_diff(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """Phones that joined and left between two listings of a node (by serial; a change of
    state is neither: the farm sees the state itself)."""
    before, after = {d["serial"] for d in old}, {d["serial"] for d in new}
    return [d for d in new if d["serial"] not in before], [d for d in old if d["serial"] not in after]
