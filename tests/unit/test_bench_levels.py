"""`agent bench levels`' figures from the games' counts: a game meets its targets, and the
goal-aware player is compared with the goal-blind one per goal-level attempt (both stop at
K levels won, the one that loses more having played more attempts)."""

from __future__ import annotations

from agent.cli.bench.levels import GameRun, _totals


def _run(world: int, player: str, won: int, lost: int, goal_won: int, goal_played: int, **kw: int) -> GameRun:
    r = GameRun(world, player, levels_won=won, levels_lost=lost, goal_levels_won=goal_won,
                goal_levels_played=goal_played, swipes_accepted=kw.get("taken", 40))  # fmt: skip
    r.swipes_ignored = kw.get("ignored", 0)
    return r


def test_goal_levels_are_compared_per_attempt():
    runs = [_run(1, "aware", 3, 1, 2, 3), _run(1, "greedy", 3, 5, 2, 7),
            _run(2, "aware", 3, 0, 3, 3), _run(2, "greedy", 2, 6, 2, 8)]
    t = _totals(runs, 3)
    assert (t["goal_levels_won_aware"], t["goal_levels_played_aware"]) == (5, 6)
    assert (t["goal_levels_won_greedy"], t["goal_levels_played_greedy"]) == (4, 15)
    assert t["goal_ratio"] == round((5 / 6) / (4 / 15), 2)  # not 5 / 4: the greedy one played 15 attempts


def test_a_game_meets_its_targets_only_with_k_levels_won_and_swipes_taken():
    assert _run(1, "aware", 3, 2, 1, 2).met(3)
    assert not _run(1, "aware", 2, 0, 1, 1).met(3)
    assert not _run(1, "aware", 3, 0, 1, 1, taken=18, ignored=2).met(3)  # 90% of swipes taken
    assert _totals([_run(1, "aware", 3, 0, 0, 0)], 3)["goal_ratio"] is None  # no goal level played


def test_the_card_a_run_stopped_on_is_not_a_screen_left_behind():
    r = _run(1, "aware", 3, 0, 0, 0)
    r.screens_shown, r.screens_left = {"complete": 3, "ad": 1}, {"complete": 2, "ad": 1}
    assert r.screens_unleft == 1
    r.end_screen = "complete"  # the run stopped on its third level's card, by --levels 3
    assert r.screens_unleft == 0
    r.screens_left = {"complete": 2, "ad": 0}
    assert r.screens_unleft == 1  # the ad was left in front: that one counts


def test_a_bench_written_to_a_log_says_each_game_as_it_ends_with_the_count_and_the_time(monkeypatch):
    import re

    from typer.testing import CliRunner

    import agent.cli.bench.levels as bench
    from agent.cli import app

    def played(world, player, levels, *args, **kwargs):
        return _run(world, player, 3, world, 1, 1 + world) if world != 6 else GameRun(world, player, error="no adb")

    monkeypatch.setattr(bench, "run_game", played)
    r = CliRunner().invoke(app, ["bench", "levels", "--games", "2", "--first-world", "5", "--parallel", "1"])
    assert r.exit_code == 0, r.output
    said = re.findall(r"^\[(\d)/4 done, \d+ s\] world (\d), (\w+): (.*)$", r.stdout, re.M)
    assert [(n, w, p) for n, w, p, _ in said] == [("1", "5", "aware"), ("2", "5", "greedy"), ("3", "6", "aware"),
                                                  ("4", "6", "greedy")]  # fmt: skip
    assert said[0][3].startswith("3 levels won, 5 lost, 40 of 40 swipes taken, 0 forbidden taps; met every target")
    assert said[2][3] == "failed: no adb"
