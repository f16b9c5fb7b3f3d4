"""`agent bench screens`: the screens between boards (cards, maps, ads) of generated game
styles, classified with OCR and scored by what the agent would tap."""

from __future__ import annotations

import json
import time
from typing import List

import typer

from agent.cli.app import choice_list, console, say, seed_option
from agent.cli.plans import _progress


def _kinds(values: list[str]) -> tuple[str, ...]:
    from agent.games.match3.saga.cards_bench import KINDS

    out: list[str] = []
    for v in values:
        for name in choice_list("--kind", v, KINDS):
            if name not in out:
                out.append(name)
    return tuple(out) or KINDS


def bench_screens(
    screens: int = typer.Option(48, "--screens", min=1, max=100_000, help="Screens drawn, the kinds in turn."),
    seed: int = seed_option("The corpus's seed: each screen's game style, size and level are drawn from it."),
    kind: List[str] = typer.Option([], "--kind", help="A screen kind, or a comma list (repeatable; default all): "
                                   "the card kinds, map, ad_before, ad_after."),
    failures: bool = typer.Option(False, "--failures", help="Also list each screen not left the right way."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Cards, level maps and ads in generated game styles (agent.games.match3.saga.cards),
    classified with Tesseract: per kind, the right way on chosen (the tap lands on the
    screen's way on, or the agent waits while an ad counts down), forbidden taps (target 0),
    taps on nothing, Back pressed, the right screen kind and outcome, the level read where
    one is shown, and seconds per screen."""
    from agent.games.match3.saga.cards_bench import run_corpus
    from agent.vision.ocr import default_ocr, ocr_unavailable_reason

    kinds = _kinds(kind)
    ocr = default_ocr()
    if ocr is None:
        say(f"error: {ocr_unavailable_reason()}", err=True)
        raise typer.Exit(1)
    t0 = time.perf_counter()
    with _progress(as_json) as update:
        res = run_corpus(screens, seed, ocr, kinds, progress=lambda done, n: update("screens", done, n))
    elapsed = time.perf_counter() - t0
    names = ("n", "right_action", "forbidden_taps", "missed_taps", "backs", "nothing", "right_kind", "right_outcome",
             "level_read", "level_shown")  # fmt: skip
    if as_json:
        print(json.dumps({"kinds": {r.kind: {k: getattr(r, k) for k in names} | {"failures": r.failures}
                                    for r in res.rows},
                          "totals": {k: res.total(k) for k in names}, "seconds": round(elapsed, 1)}))  # fmt: skip
        return
    console.print(res.table())
    console.print(f"{res.total('right_action')} of {res.n} screens left the right way; "
                  f"{res.total('forbidden_taps')} forbidden taps (target 0); levels read {res.total('level_read')} "
                  f"of {res.total('level_shown')} shown; {elapsed:.0f} s")  # fmt: skip
    if failures:
        for r in res.rows:
            for f in r.failures:
                console.print(f"  {f}")
