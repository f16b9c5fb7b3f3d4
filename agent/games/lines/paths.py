"""Where a ball can go: 4-connected paths through empty cells."""

from __future__ import annotations

from collections import deque

import numpy as np

from agent.games.lines.board import EMPTY

Cell = tuple[int, int]
_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def shortest_path(board: np.ndarray, src: Cell, dst: Cell) -> list[Cell] | None:
    """The shortest path from `src` to the empty cell `dst` (both ends included), or None.

    Breadth-first search: on a unit-cost grid it finds a shortest path like the seed's
    A*, and ties are broken in a fixed order so the path is deterministic.
    """
    rows, cols = board.shape
    if src == dst or board[dst] != EMPTY:
        return None
    prev: dict[Cell, Cell] = {src: src}
    queue = deque([src])
    while queue:
        r, c = queue.popleft()
        for dr, dc in _STEPS:
            nr, nc = r + dr, c + dc
            if 0 <= nr < rows and 0 <= nc < cols and (nr, nc) not in prev and board[nr, nc] == EMPTY:
                prev[(nr, nc)] = (r, c)
                if (nr, nc) == dst:
                    path = [dst]
                    while path[-1] != src:
                        path.append(prev[path[-1]])
                    return path[::-1]
                queue.append((nr, nc))
    return None


def empty_regions(board: np.ndarray) -> np.ndarray:
    """Label the 4-connected regions of empty cells 1..n (0 for balls)."""
    rows, cols = board.shape
    labels = np.zeros((rows, cols), dtype=np.int32)
    empty = board == EMPTY
    n = 0
    for r in range(rows):
        for c in range(cols):
            if empty[r, c] and not labels[r, c]:
                n += 1
                labels[r, c] = n
                stack = [(r, c)]
                while stack:
                    y, x = stack.pop()
                    for dy, dx in _STEPS:
                        ny, nx = y + dy, x + dx
                        if 0 <= ny < rows and 0 <= nx < cols and empty[ny, nx] and not labels[ny, nx]:
                            labels[ny, nx] = n
                            stack.append((ny, nx))
    return labels


def reachable(board: np.ndarray, src: Cell) -> np.ndarray:
    """The empty cells the ball at `src` can move to."""
    labels = empty_regions(board)
    rows, cols = board.shape
    r, c = src
    near = {int(labels[r + dr, c + dc]) for dr, dc in _STEPS if 0 <= r + dr < rows and 0 <= c + dc < cols}
    near.discard(0)
    return np.isin(labels, list(near)) if near else np.zeros_like(labels, dtype=bool)
