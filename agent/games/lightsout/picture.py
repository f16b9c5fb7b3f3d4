"""A solved board as a picture: the board as the simulated phone draws it, each button
to press ringed and numbered, saved as a PNG."""

from __future__ import annotations


import cv2
import numpy as np

from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import Puzzle, PuzzleError
from agent.games.lightsout.render import FONT, layout_for, render

RING_BGR = (60, 60, 240)  # red: reads on both the yellow and the slate tiles


def draw_solution(puzzle: Puzzle, state: int, presses: int | None) -> np.ndarray:
    """The board `state` with the buttons of `presses` ringed in press order
    (None: unsolvable, said in the header)."""
    if not puzzle.is_grid:
        raise PuzzleError(
            f"a picture needs a grid puzzle; {puzzle.name} has {puzzle.n_buttons} buttons and {puzzle.n_lights} lights",
            hint="drop --png for this puzzle",
        )
    rows, cols = puzzle.light_grid  # type: ignore[misc]
    width = max(720, 40 * cols + 80)
    height = max(1280, 2 * (40 * rows + 80), int(width * 16 / 9))
    layout = layout_for(width, height, rows, cols)
    levels = np.array([(state >> i) & 1 for i in range(rows * cols)], np.float32).reshape(rows, cols)
    n = len(bits(presses or 0))
    caption = "UNSOLVABLE" if presses is None else f"{n} PRESS{'ES' if n != 1 else ''}"
    frame = render(layout, levels, moves=0, solved=False, caption=caption)
    presses = presses or 0
    c = layout.cell_px
    for n, b in enumerate(bits(presses), 1):
        x0, y0, x1, y1 = layout.cell_box(*divmod(b, cols))
        centre = ((x0 + x1) // 2, (y0 + y1) // 2)
        cv2.circle(frame, centre, int(c * 0.36), RING_BGR, max(2, c // 14), cv2.LINE_AA)
        scale = c * 0.3 / 22
        label = str(n)
        (tw, th), _ = cv2.getTextSize(label, FONT, scale, max(1, c // 24))
        cv2.putText(frame, label, (centre[0] - tw // 2, centre[1] + th // 2), FONT, scale, RING_BGR,
                    max(1, c // 24), cv2.LINE_AA)  # fmt: skip
    return frame

