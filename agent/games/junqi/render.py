"""A picture of a Junqi board (cv2): roads, railways, camps, headquarters, the mountains
on the front, the pieces, and optionally a route or the destinations of a piece."""

from __future__ import annotations

from typing import Iterable

import cv2
import numpy as np

from agent.games.junqi.board import Board
from agent.games.junqi.moves import Destination
from agent.games.junqi.pieces import Side
from agent.games.junqi.topology import Station, StationKind

# BGR colours.
PAPER = (205, 228, 242)
ROAD = (110, 110, 110)
RAIL = (35, 35, 35)
RAIL_INNER = (235, 235, 235)
MOUNTAIN = (60, 95, 130)
SIDE_COLOURS = {Side.RED: (40, 40, 200), Side.BLUE: (170, 90, 20)}
ROUTE = (0, 140, 255)
START_RING = (40, 170, 40)
GOAL_RING = (200, 40, 200)
MOVE_RING = (0, 200, 230)
ATTACK_RING = (0, 0, 230)

STEP_X, STEP_Y, MARGIN, FRONT_GAP, CAPTION_H = 72, 56, 54, 36, 30


class _Layout:
    def __init__(self, board: Board) -> None:
        t = board.topology
        self.front = t.front_after_row
        gap = FRONT_GAP if self.front is not None else 0
        self.width = 2 * MARGIN + (t.cols - 1) * STEP_X
        self.height = 2 * MARGIN + (t.rows - 1) * STEP_Y + gap + CAPTION_H

    def xy(self, s: Station) -> tuple[int, int]:
        r, c = s
        gap = FRONT_GAP if self.front is not None and r > self.front else 0
        return MARGIN + c * STEP_X, MARGIN + r * STEP_Y + gap


def render_board(
    board: Board,
    route: Iterable[Station] | None = None,
    destinations: Iterable[Destination] = (),
    caption: str = "",
) -> np.ndarray:
    """The board as a BGR image; `route` is drawn as arrows, `destinations` as rings."""
    t = board.topology
    lay = _Layout(board)
    img = np.full((lay.height, lay.width, 3), PAPER, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX

    for link in t.links:
        a, b = (lay.xy(s) for s in sorted(link))
        if link in t.rail_segments:
            cv2.line(img, a, b, RAIL, 7, cv2.LINE_AA)
            cv2.line(img, a, b, RAIL_INNER, 2, cv2.LINE_AA)
        else:
            cv2.line(img, a, b, ROAD, 2, cv2.LINE_AA)
    if lay.front is not None:
        for c in range(t.cols):
            top, bottom = (lay.front, c), (lay.front + 1, c)
            if frozenset((top, bottom)) not in t.links:  # blocked by the mountains
                (x, y0), (_, y1) = lay.xy(top), lay.xy(bottom)
                ym = (y0 + y1) // 2
                peak = np.array([[x - 22, ym + 12], [x, ym - 14], [x + 22, ym + 12]], np.int32)
                cv2.fillPoly(img, [peak], MOUNTAIN, cv2.LINE_AA)

    # The route runs under the stations and pieces; its arrow head and rings go on top.
    pts = [lay.xy(s) for s in (route or ())]
    for a, b in zip(pts, pts[1:]):
        cv2.line(img, a, b, ROUTE, 5, cv2.LINE_AA)

    for s in t.stations:
        x, y = lay.xy(s)
        kind = t.kind(s)
        if kind is StationKind.CAMP:
            cv2.circle(img, (x, y), 19, PAPER, -1, cv2.LINE_AA)
            cv2.circle(img, (x, y), 19, ROAD, 2, cv2.LINE_AA)
        elif kind is StationKind.HEADQUARTERS:
            cv2.ellipse(img, (x, y), (26, 17), 0, 0, 360, PAPER, -1, cv2.LINE_AA)
            cv2.ellipse(img, (x, y), (26, 17), 0, 0, 360, ROAD, 2, cv2.LINE_AA)
            cv2.ellipse(img, (x, y), (21, 12), 0, 0, 360, ROAD, 1, cv2.LINE_AA)
        else:
            cv2.rectangle(img, (x - 18, y - 11), (x + 18, y + 11), PAPER, -1)
            cv2.rectangle(img, (x - 18, y - 11), (x + 18, y + 11), ROAD, 1)
        piece = board[s]
        if piece is not None:
            cv2.rectangle(img, (x - 16, y - 10), (x + 16, y + 10), SIDE_COLOURS[piece.side], -1)
            (tw, th), _ = cv2.getTextSize(piece.char, font, 0.55, 2)
            cv2.putText(img, piece.char, (x - tw // 2, y + th // 2), font, 0.55, (255, 255, 255), 2, cv2.LINE_AA)

    for r in range(t.rows):
        cv2.putText(img, str(r), (6, lay.xy((r, 0))[1] + 5), font, 0.45, ROAD, 1, cv2.LINE_AA)
    for c in range(t.cols):
        cv2.putText(img, str(c), (lay.xy((0, c))[0] - 5, 16), font, 0.45, ROAD, 1, cv2.LINE_AA)

    for d in destinations:
        cv2.circle(img, lay.xy(d.station), 24, ATTACK_RING if d.attack else MOVE_RING, 3, cv2.LINE_AA)
    if len(pts) >= 2:
        # The arrow stops at the goal's ring so it does not hide the piece there.
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        length = max(1.0, float(np.hypot(x1 - x0, y1 - y0)))
        tip = (int(round(x1 - (x1 - x0) * 24 / length)), int(round(y1 - (y1 - y0) * 24 / length)))
        cv2.arrowedLine(img, pts[-2], tip, ROUTE, 5, cv2.LINE_AA, tipLength=0.5)
        cv2.circle(img, pts[0], 24, START_RING, 3, cv2.LINE_AA)
        cv2.circle(img, pts[-1], 24, GOAL_RING, 3, cv2.LINE_AA)
    if caption:
        cv2.putText(img, caption, (8, lay.height - 10), font, 0.45, (30, 30, 30), 1, cv2.LINE_AA)
    return img

