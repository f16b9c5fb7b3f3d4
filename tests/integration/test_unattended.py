"""The commercial-style game, unattended, through the real adb server: `agent sim serve
--scene saga` (screencap latency, levels of other shapes, specials, blockers, holes,
popups, ads, another app), then `agent calibrate`, then `agent play --launch`, each its
own process, as a user runs them (what `agent bench unattended` measures)."""

from __future__ import annotations

import pytest

from agent.cli.bench.unattended import pick_seeds, run_seed
from agent.play.journal import read_journal

pytestmark = pytest.mark.integration


class _Quiet:
    def update(self, text: str) -> None:
        pass


def test_levels_in_a_row_from_calibrate_then_play(tmp_path):
    seed = pick_seeds(0, 1, 2)[0]
    r = run_seed(seed, levels=2, latency_ms=150, max_moves=80, work=tmp_path, status=_Quiet())
    # the game's own count
    assert r.levels_completed >= 2, r
    assert r.swipes_while_moving == 0 and r.forbidden_taps == 0
    assert r.dialogs_closed == r.dialogs_shown and r.dialogs_shown >= 1
    assert r.accepted_share >= 0.9
    # the agent's journal: it found the next level's board, dismissed screens, learned the rules
    records = read_journal(r.journal)
    kinds = [x["type"] for x in records]
    assert kinds[0] == "start" and kinds[-1] == "stop"
    assert records[0]["device"]["capture"]["mode"] in ("raw", "gzip", "png")
    assert any(x["type"] == "profile" and "board is now" in x["reason"] for x in records)
    assert any(x["type"] == "dismissed" and x["changed"] for x in records)
    taps = [x for x in records if x["type"] == "dismissed" and x["kind"] == "tap"]
    assert all(x["label"].lower() not in ("buy", "share", "install") for x in taps)
    learned = [x for x in records if x["type"] == "learned"]  # the new board kept in the profile
    assert learned and learned[-1]["profile"].endswith(".toml") and learned[-1]["rows"] >= 3
