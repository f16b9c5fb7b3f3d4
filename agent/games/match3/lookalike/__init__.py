"""Look-alike match-3 screens: hard, varied, realistic screens with their ground truth.

The simulated phone (`agent.games.match3.render`) draws one clean look; real games do
not. This package draws screens deliberately unlike it, to measure vision on screens
the project has never seen (`agent bench unseen`): several phone sizes, board shapes and
cell sizes, piece styles (faceted gems, candies, bevelled squares, outlined icons),
slot backgrounds, gaps, noisy backgrounds and HUDs, and per family what makes real
screens hard (light and specials, falling pieces, blockers, holes, a frosted surround,
dialogs and dimmed screens). Modules: `paint` (drawing primitives), `pieces` (tile
looks, specials, blockers), `backdrop` (backgrounds, HUD, popups), `scene` (a screen
from its description), `cases` (the families and their truth).
"""

from agent.games.match3.lookalike.cases import FAMILIES, REFUSING, UNEVEN, Case, Truth, cases, make_case

__all__ = ["FAMILIES", "REFUSING", "UNEVEN", "Case", "Truth", "cases", "make_case"]
