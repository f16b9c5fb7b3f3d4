"""Every feature module that adds commands to the CLI, imported for that side effect.
Add one line per module."""

from __future__ import annotations

import agent.cli_solve  # noqa: F401  (agent solve)
import agent.cli_lines  # noqa: F401  (agent bench lines)
import agent.cli_lightsout  # noqa: F401  (agent bench lightsout)
import agent.cli_adb  # noqa: F401  (agent sim serve, agent bench capture)
import agent.cli_farm  # noqa: F401  (agent farm, agent bench farm)
import agent.cli_vision  # noqa: F401  (agent calibrate, agent read, agent bench vision)
import agent.cli_plans  # noqa: F401  (agent plans build|verify|stats, agent bench solve|play)
