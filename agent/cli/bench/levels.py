"""`agent bench levels`: level after level on a family of saga games the agent has never seen.

For each of N members of the simulated saga family (`agent.games.match3.saga.family`:
other art, screen sizes, header layouts and words, goal kinds, flows, timings), the game
is served on the wire behind a private real adb server, calibrated, then played with
`agent play --launch --levels K`, each its own process, as a user runs them; and the same
game is played again by a goal-blind greedy player (`--solver greedy --goal off`) in the
same run. The figures come from both sides: the game's own count (levels won and lost,
each level's goal, forbidden taps, swipes taken, swipes while the board moved, screens
shown and left) and the agent's summary (moves, levels, why it stopped), against issue
25's targets.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from agent.cli.app import console, output_dir, say
from agent.errors import AgentError

PLAYERS = {"aware": (), "greedy": ("--solver", "greedy", "--goal", "off")}
ACCEPTED_TARGET = 0.95
GOAL_RATIO_TARGET = 1.3


@dataclass
class GameRun:
    world: int
    player: str
    levels_won: int = 0
    levels_lost: int = 0
    goal_levels_won: int = 0
    goal_levels_played: int = 0
    moves: int = 0
    levels_played: int = 0
    forbidden_taps: int = 0
    swipes_accepted: int = 0
    swipes_undone: int = 0
    swipes_ignored: int = 0
    swipes_while_moving: int = 0
    screens_shown: dict[str, int] = field(default_factory=dict)
    screens_left: dict[str, int] = field(default_factory=dict)
    agent_levels_won: int = 0
    stop_reason: str = ""
    end_screen: str = ""  # what the game showed when the run ended by its --levels (a card left in front)
    exit_code: int = 0
    play_s: float = 0.0
    error: str = ""
    journal: str = ""

    @property
    def swipes(self) -> int:
        return self.swipes_accepted + self.swipes_undone + self.swipes_ignored

    @property
    def accepted_share(self) -> float:
        return self.swipes_accepted / self.swipes if self.swipes else 0.0

    @property
    def moves_per_level(self) -> float:
        return self.moves / self.levels_played if self.levels_played else 0.0

    @property
    def screens_unleft(self) -> int:
        # (the card a run stopped on, its K levels won, is in front by design: not unleft)
        return sum(max(0, n - self.screens_left.get(k, 0) - (k == self.end_screen))
                   for k, n in self.screens_shown.items())  # fmt: skip

    def met(self, levels: int) -> bool:
        return (self.levels_won >= levels and self.forbidden_taps == 0 and self.swipes_while_moving == 0
                and self.accepted_share >= ACCEPTED_TARGET and not self.error)  # fmt: skip

    def line(self, levels: int) -> str:
        """The game's result in a line, as each game ends."""
        if self.error:
            return f"world {self.world}, {self.player}: failed: {self.error}"
        verdict = "met every target" if self.met(levels) else "missed a target"
        return (f"world {self.world}, {self.player}: {self.levels_won} levels won, {self.levels_lost} lost, "
                f"{self.swipes_accepted} of {self.swipes} swipes taken, {self.forbidden_taps} forbidden taps; "
                f"{verdict} ({self.stop_reason or 'no reason given'})")  # fmt: skip


def _count(d: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in d.items()} if isinstance(d, dict) else {}


def run_game(world: int, player: str, levels: int, latency_ms: float, max_moves: int, work: Path,
             status: Any, stop: threading.Event | None = None) -> GameRun:  # fmt: skip
    from agent.cli.bench.wire_game import play_on_the_wire
    from agent.games.match3.saga.family import world_of

    w = world_of(world)
    width, height = w.size
    phone_args = ["--scene", "saga", "--world", str(world), "--seed", str(world), "--size", f"{width}x{height}",
                  "--latency-ms", f"{latency_ms:g}"]  # fmt: skip
    play_args = ["--launch", "--levels", str(levels), "--moves", str(max_moves), *PLAYERS[player]]
    out = GameRun(world, player)
    try:
        wp = play_on_the_wire(phone_args, play_args, work, timeout_s=60.0 * levels * 6,
                              status=lambda text: status(f"world {world}, {player}: {text}"), stop=stop)  # fmt: skip
    except AgentError as exc:
        out.error = str(exc)
        return out
    t, s = wp.truth, wp.summary
    records = [r for r in t.get("levels", []) if isinstance(r, dict)]
    goal_records = [r for r in records if r.get("goal_kind", r.get("goal")) not in ("score", None)]
    out.levels_won, out.levels_lost = int(t.get("levels_won", 0)), int(t.get("levels_lost", 0))
    out.goal_levels_played = len(goal_records)
    out.goal_levels_won = sum(1 for r in goal_records if r.get("won"))
    out.moves, out.levels_played = int(s.get("moves", 0)), max(1, len(records))
    out.forbidden_taps = int(t.get("forbidden_taps", 0))
    for k in ("swipes_accepted", "swipes_undone", "swipes_ignored", "swipes_while_moving"):
        setattr(out, k, int(t.get(k, 0)))
    out.screens_shown, out.screens_left = _count(t.get("screens_shown")), _count(t.get("screens_left"))
    out.agent_levels_won = int(s.get("levels_won", 0))
    out.stop_reason, out.exit_code, out.play_s, out.journal = str(s.get("stop_reason", "")), wp.exit_code, wp.play_s, wp.journal
    if s.get("stop_kind") == "limit" and out.agent_levels_won >= levels:
        out.end_screen = str(t.get("screen_detail", ""))
    return out


def bench_levels(
    games: int = typer.Option(12, "--games", min=1, max=200, help="Members of the saga family to play."),
    levels: int = typer.Option(3, "--levels", min=1, max=20, help="Levels each game must win in a row."),
    first_world: int = typer.Option(0, "--first-world", min=0, max=100_000, help="The family's members from here on."),
    latency_ms: float = typer.Option(150.0, "--latency-ms", min=0.0, max=5000.0, help="The phones' screencap latency."),
    max_moves: int = typer.Option(200, "--max-moves", min=1, max=5000, help="Each play's move cap."),
    parallel: int = typer.Option(1, "--parallel", min=1, max=8, help="Games played at once (each its own phone and adb server)."),
    greedy: bool = typer.Option(True, "--greedy/--no-greedy", help="Also play every game with a goal-blind greedy player."),
    keep: Optional[Path] = typer.Option(None, "--keep", help="Keep each game's profiles, journals and logs here."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Play N members of the saga family on the wire, K levels each, with the goal-aware
    player and a goal-blind greedy one, and print what the games and the agent counted."""
    if keep is not None:
        output_dir(keep, "--keep")
    jobs = [(w, p) for w in range(first_world, first_world + games) for p in (("aware", "greedy") if greedy else ("aware",))]
    results: dict[tuple[int, str], GameRun] = {}
    start = time.monotonic()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="puzzle-agent-levels-") as tmp:
        root = keep if keep is not None else Path(tmp)
        with console.status("starting") as spinner:
            lines: dict[tuple[int, str], str] = {}

            def show(key: tuple[int, str], text: str) -> None:
                with lock:
                    lines[key] = text
                    spinner.update(f"[{len(results)}/{len(jobs)} done, {time.monotonic() - start:.0f} s] "
                                   + " | ".join(lines.values()))  # fmt: skip

            stop = threading.Event()

            def one(job: tuple[int, str]) -> None:
                w, p = job
                r = run_game(w, p, levels, latency_ms, max_moves, root / f"world-{w}-{p}", lambda t: show(job, t), stop)
                with lock:
                    results[job] = r
                    lines.pop(job, None)
                    if not as_json and not console.is_terminal:
                        # a log (nohup, CI) gets no spinner: a line a game, with the count and the time
                        say(f"[{len(results)}/{len(jobs)} done, {time.monotonic() - start:.0f} s] {r.line(levels)}")

            pool = ThreadPoolExecutor(max_workers=parallel)
            try:
                list(pool.map(one, jobs))
            except BaseException:
                # A stop signal reaches this thread only: the games' threads stop their
                # calibrations and plays (each its clean stop), the games not begun are not.
                stop.set()
                spinner.update("stopping the games being played")
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    _report([results[j] for j in jobs], levels, latency_ms, as_json, time.monotonic() - start)


def _totals(runs: list[GameRun], levels: int) -> dict[str, Any]:
    aware = [r for r in runs if r.player == "aware"]
    greedy = [r for r in runs if r.player == "greedy"]
    swipes = sum(r.swipes for r in aware)
    goal_aware, goal_greedy = sum(r.goal_levels_won for r in aware), sum(r.goal_levels_won for r in greedy)
    tries_aware, tries_greedy = sum(r.goal_levels_played for r in aware), sum(r.goal_levels_played for r in greedy)
    # Both players stop at K levels won (or the move cap): the greedy one, losing more, plays
    # more attempts to get there. Goal levels won are compared per attempt, as over the same
    # number of attempts of the same levels.
    rate_aware = goal_aware / tries_aware if tries_aware else None
    rate_greedy = goal_greedy / tries_greedy if tries_greedy else None
    return {
        "games": len(aware), "levels_target": levels,
        "games_meeting_targets": sum(r.met(levels) for r in aware),
        "levels_won": sum(r.levels_won for r in aware), "levels_lost": sum(r.levels_lost for r in aware),
        "forbidden_taps": sum(r.forbidden_taps for r in runs),
        "accepted_share": round(sum(r.swipes_accepted for r in aware) / swipes, 4) if swipes else 0.0,
        "swipes_while_moving": sum(r.swipes_while_moving for r in aware),
        "screens_shown": sum(sum(r.screens_shown.values()) for r in aware),
        "screens_unleft": sum(r.screens_unleft for r in aware),
        "goal_levels_won_aware": goal_aware, "goal_levels_won_greedy": goal_greedy,
        "goal_levels_played_aware": tries_aware, "goal_levels_played_greedy": tries_greedy,
        "goal_ratio": round(rate_aware / rate_greedy, 2) if rate_aware is not None and rate_greedy else None,
        "errors": sum(1 for r in runs if r.error),
    }  # fmt: skip


def _report(runs: list[GameRun], levels: int, latency_ms: float, as_json: bool, elapsed_s: float) -> None:
    totals = _totals(runs, levels)
    if as_json:
        print(json.dumps({"latency_ms": latency_ms, "levels": levels, "totals": totals, "elapsed_s": round(elapsed_s, 1),
                          "games": [asdict(r) | {"accepted_share": round(r.accepted_share, 4), "met": r.met(levels)}
                                    for r in runs]}))  # fmt: skip
        return
    t = Table(title=f"levels on the saga family through the real adb server ({latency_ms:g} ms screencaps)",
              title_justify="left")  # fmt: skip
    for col in ("world", "player", "won/lost", "goal levels won", "moves/level", "forbidden", "taken", "moving",
                "screens left", "stop"):  # fmt: skip
        t.add_column(col, justify="left" if col == "stop" else "right")
    for r in runs:
        shown = sum(r.screens_shown.values())
        t.add_row(str(r.world), r.player, f"{r.levels_won}/{r.levels_lost}",
                  f"{r.goal_levels_won}/{r.goal_levels_played}", f"{r.moves_per_level:.1f}", str(r.forbidden_taps),
                  f"{100 * r.accepted_share:.0f}%", str(r.swipes_while_moving), f"{shown - r.screens_unleft}/{shown}",
                  (r.error or r.stop_reason)[:60])  # fmt: skip
    console.print(t, width=max(console.width, 150))
    ratio = totals["goal_ratio"]
    say(f"goal-aware player: {totals['games_meeting_targets']}/{totals['games']} games met every target "
        f"({levels} levels won, 0 forbidden taps, >= 95% swipes taken, 0 while moving); "
        f"levels won {totals['levels_won']}, lost {totals['levels_lost']}; swipes taken "
        f"{100 * totals['accepted_share']:.1f}%; screens left {totals['screens_shown'] - totals['screens_unleft']}/"
        f"{totals['screens_shown']}; forbidden taps (both players) {totals['forbidden_taps']}")
    say(f"goal levels won per attempt: goal-aware {totals['goal_levels_won_aware']} of "
        f"{totals['goal_levels_played_aware']}, goal-blind greedy {totals['goal_levels_won_greedy']} of "
        f"{totals['goal_levels_played_greedy']}: x{ratio if ratio is not None else '-'} (target x{GOAL_RATIO_TARGET})"
        f"; {elapsed_s / 60:.1f} min")
