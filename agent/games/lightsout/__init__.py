"""Toggle puzzles over GF(2): the turtle of seed 004, Lights Out, and any button-light puzzle.

| module | what it holds |
|---|---|
| `gf2` | bitset vectors and Gauss-Jordan elimination that also yields null and left-null spaces |
| `packed` | bitsets packed in numpy words; GF(2) linear maps tabulated per input byte |
| `puzzle` | `Puzzle`, the built-in puzzles, puzzle files (TOML), board text |
| `solver` | `Solver` / `solver_for`: solvable, one, all, fewest presses, why unsolvable |
| `batch` | `BatchSolver` (vectorised solves) and `lookup_table` (every difference precomputed) |
| `render`, `sim` | the simulated phone's screen and `LightsOutPhone` |
| `reader`, `sim_profile` | reading the lights with a device profile; the sim's profile |
| `game` | the game behind the `Game` protocol: board notation, reader, player, gestures, simulated phone |
| `solve`, `picture`, `bench` | the solver for `agent solve --game lightsout`, its PNG, `agent bench lightsout` |
| `puzzles/` | example puzzle files |
"""

from agent.games.lightsout.puzzle import Puzzle, PuzzleError, builtin, lights_out, load_puzzle, torus, turtle
from agent.games.lightsout.solver import SolveResult, Solver, solver_for

__all__ = [
    "Puzzle", "PuzzleError", "SolveResult", "Solver", "builtin", "lights_out", "load_puzzle", "solver_for",
    "torus", "turtle",
]  # fmt: skip
