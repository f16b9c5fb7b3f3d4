"""A commercial-style match-3 game on the simulated phone: classic rules, specials,
blockers, holes, a level sequence, dialogs, cards, ads and another app in front.

Modules: `rules` (pure rules), `levels` (the level sequence of a seed), `looks` (tile
sprites cut from the shared real shots, or drawn), `screens` (drawing text, buttons,
popups, the header, the ad and the other apps), `phone` (the SagaPhone device).
"""

from agent.games.match3.saga.phone import SagaPhone, SagaTiming

__all__ = ["SagaPhone", "SagaTiming"]
