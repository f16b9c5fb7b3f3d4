"""Junqi behind the `Game` protocol: only solved (`agent solve --game junqi`), not yet
played on a phone, and without a simulated phone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.games.junqi.board import Board

if TYPE_CHECKING:
    from agent.games.junqi.solve import JunqiSolver


class JunqiGame:
    name = "junqi"
    title = "junqi (land battle chess: a piece's legal moves and routes along the rails)"
    screen = None
    sim = None

    @property
    def solver(self) -> JunqiSolver:
        from agent.games.junqi.solve import JunqiSolver

        return JunqiSolver()

    def parse_board(self, text: str) -> Board:
        return Board.parse(text)

    def format_board(self, board: Board) -> str:
        return str(board)


GAME = JunqiGame()
