"""How the family's goal levels play for a goal-focused and a goal-blind greedy player.

`python -m agent.games.match3.saga.goal_bench [SEEDS] [LEVELS] [PLAYS]` draws LEVELS
goal levels of each of SEEDS seeds (collect and break only), plays each PLAYS times
with fresh refills per player within its budget, and prints each player's share of
plays won per goal kind, and the time a level takes to draw.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from agent.games.match3.saga.goal_levels import world_level
from agent.games.match3.saga.goals import SCORE, moves_to_goal


def measure(seeds: int, levels: int, plays: int) -> dict[str, dict[str, float]]:
    won: dict[str, dict[str, list[bool]]] = {}
    draw_s: list[float] = []
    for seed in range(seeds):
        for k in range(2, levels + 2):
            t0 = time.perf_counter()
            lv = world_level(1000 + seed, 1, k, (0.0, 0.5, 0.5), True, 6)
            draw_s.append(time.perf_counter() - t0)
            if lv.goal.kind == SCORE:
                continue
            rng = np.random.default_rng([seed, k, 77])
            for focused in (True, False):
                who = "focused" if focused else "blind"
                for _ in range(plays):
                    got = moves_to_goal(lv.start_board(rng), lv.colours, lv.goal, rng, lv.moves, focused)
                    won.setdefault(lv.goal.kind, {}).setdefault(who, []).append(got is not None)
    out = {kind: {who: float(np.mean(v)) for who, v in by.items()} for kind, by in won.items()}
    out["draw_s"] = {"median": float(np.median(draw_s)), "max": float(np.max(draw_s))}
    return out


def main(argv: list[str]) -> None:
    seeds, levels, plays = (int(a) for a in (argv + ["6", "6", "4"][len(argv):]))
    for kind, shares in measure(seeds, levels, plays).items():
        print(kind, {k: round(v, 3) for k, v in shares.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
