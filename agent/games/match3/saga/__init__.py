"""A commercial-style match-3 game on the simulated phone: classic rules, specials,
blockers, holes, a level sequence, dialogs, cards, ads and another app in front.

Modules: `rules` (pure rules), `levels` (the level sequence of a seed), `looks` (tile
sprites cut from the shared real shots, or drawn), `screens` (drawing text, buttons,
popups, the header, the ad and the other apps), `phone` (the SagaPhone device).
The family of games: `family` (SagaWorld, world_of: world 0 is the game above),
`goals` (a level's goal, its progress, a goal-focused player), `goal_levels` (a world's
levels and their goals), `header` (a world's header), `motion` (an animated backdrop),
`cards` (the card painter), `goal_bench` (how goal levels play for two players).
"""

from agent.games.match3.saga.family import SagaWorld, world_of
from agent.games.match3.saga.phone import SagaPhone, SagaTiming

__all__ = ["SagaPhone", "SagaTiming", "SagaWorld", "world_of"]
