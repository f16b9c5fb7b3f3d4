"""The phase search (agent.vision.phase.best_phase) scores its 16 x 16 coarse phases
from one sampling of the area: the scores are border_variance's at each phase, on
lattices of any size and from any start."""

from __future__ import annotations

import numpy as np
import pytest

from agent.games.match3.lookalike import make_case
from agent.vision.lattice import Lattice, blurred_for
from agent.vision.periodicity import lab_image
from agent.vision.phase import _coarse_scores, border_variance


@pytest.mark.parametrize("cols,rows,x0,y0", [(2, 2, 3.0, 5.5), (6, 5, 20.3, 31.7), (9, 11, 0.4, 12.9)])
def test_the_coarse_phases_score_as_border_variance_does(cols, rows, x0, y0):
    case = make_case("clean", 3)
    bx0, by0, bx1, by1 = case.truth.bbox
    pitch = (bx1 - bx0) / case.truth.cols
    blur = blurred_for(lab_image(case.frame[by0:by1, bx0:bx1]), pitch, pitch)
    got = _coarse_scores(blur, x0, y0, pitch, pitch, cols, rows, 16)
    want = np.array([[border_variance(blur, Lattice(x0 + i * pitch / 16, y0 + j * pitch / 16, pitch, pitch, cols, rows))
                      for i in range(16)] for j in range(16)])  # fmt: skip
    assert np.allclose(got, want, atol=1e-5)

