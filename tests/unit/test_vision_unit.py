"""Unit tests for agent.vision: grid geometry, features, classification and settling.

Boards are drawn with OpenCV: a dark panel, a slot per cell, and for each label a
shape in its own colour, so a test can change a shape or a colour and see what the
reader makes of it.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.vision.classify import (
    Exemplar,
    Reading,
    classify,
    default_max_distances,
    exemplars_from_labels,
    pairwise_distances,
)
from agent.vision.features import FEATURE_VERSION, cell_features, feature_length, stat_weight
from agent.vision.grid import bbox_to_frac, cell_at, cell_boxes, cell_centers, frac_to_bbox
from agent.vision.settle import SettleSettings, board_diff, wait_until_still
from agent.errors import AgentError

SCREEN = (1080, 2400)
BBOX = (40, 700, 1040, 1700)

SHAPES: dict[str, tuple[str, tuple[int, int, int]]] = {
    "A": ("circle", (40, 40, 220)),  # red (BGR)
    "B": ("square", (60, 200, 60)),  # green
    "C": ("triangle", (220, 120, 40)),  # blue
    "D": ("diamond", (40, 210, 230)),  # yellow
    "E": ("hexagon", (200, 60, 170)),  # purple
    "F": ("ring", (30, 140, 250)),  # orange
    "G": ("cross", (235, 235, 235)),  # white
    "H": ("star", (210, 210, 60)),  # cyan
}


def _polygon(kind: str, cx: int, cy: int, r: int) -> np.ndarray:
    if kind == "star":
        a = np.deg2rad(np.arange(10) * 36 - 90)
        rr = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
    else:
        a = np.deg2rad({"triangle": [-90, 30, 150], "diamond": [-90, 0, 90, 180]}.get(kind, np.arange(6) * 60))
        rr = np.full(len(a), r)
    return np.stack([cx + rr * np.cos(a), cy + rr * np.sin(a)], 1).astype(np.int32)


def _draw_tile(img: np.ndarray, kind: str, color: tuple[int, int, int], box: np.ndarray) -> None:
    x0, y0, x1, y1 = (int(v) for v in box)
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    r = int(min(x1 - x0, y1 - y0) * 0.36)
    aa = cv2.LINE_AA
    if kind == "circle":
        cv2.circle(img, (cx, cy), r, color, -1, aa)
    elif kind == "square":
        cv2.rectangle(img, (cx - r + 4, cy - r + 4), (cx + r - 4, cy + r - 4), color, -1, aa)
    elif kind == "ring":
        cv2.circle(img, (cx, cy), r, color, max(3, r // 3), aa)
    elif kind == "cross":
        t = max(3, r // 3)
        cv2.rectangle(img, (cx - r, cy - t), (cx + r, cy + t), color, -1, aa)
        cv2.rectangle(img, (cx - t, cy - r), (cx + t, cy + r), color, -1, aa)
    else:
        cv2.fillPoly(img, [_polygon(kind, cx, cy, r)], color, aa)


def render(labels: list[list[str]], bbox=BBOX, shapes=SHAPES, size=SCREEN) -> np.ndarray:
    w, h = size
    img = np.full((h, w, 3), (40, 30, 25), np.uint8)
    boxes = cell_boxes(bbox, len(labels), len(labels[0]))
    for r, row in enumerate(labels):
        for c, lab in enumerate(row):
            x0, y0, x1, y1 = (int(v) for v in boxes[r, c])
            cv2.rectangle(img, (x0 + 3, y0 + 3), (x1 - 4, y1 - 4), (90, 70, 60), -1)  # the slot
            if lab in shapes:
                _draw_tile(img, *shapes[lab], boxes[r, c])
    return img


def jpeg(img: np.ndarray, quality: int = 70) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def random_labels(seed: int, rows: int = 8, cols: int = 8, alphabet: str = "ABCDEFGH.") -> list[list[str]]:
    rng = np.random.default_rng(seed)
    while True:  # every label present, so learning sees all of them
        labels = rng.choice(list(alphabet), size=(rows, cols))
        if set(labels.ravel()) == set(alphabet):
            return labels.tolist()


def text_of(labels: list[list[str]]) -> str:
    return "\n".join("".join(row) for row in labels)


@pytest.fixture(scope="module")
def learned() -> list[Exemplar]:
    labels = random_labels(1)
    return exemplars_from_labels(cell_features(render(labels), BBOX, 8, 8), labels)


# -- grid -------------------------------------------------------------------------------

GRIDS = [
    (BBOX, 8, 8),
    ((13, 7, 1013, 1004), 8, 8),  # 1000 x 997: cells do not divide evenly
    ((0, 0, 100, 37), 3, 7),
    ((5, 9, 17, 21), 12, 12),  # one pixel per cell
    ((100, 200, 1001, 1303), 9, 10),
]


@pytest.mark.parametrize("bbox,rows,cols", GRIDS)
def test_cell_boxes_tile_the_bbox_exactly(bbox, rows, cols):
    boxes = cell_boxes(bbox, rows, cols)
    assert boxes.shape == (rows, cols, 4)
    x0, y0, x1, y1 = bbox
    assert (boxes[:, 0, 0] == x0).all() and (boxes[:, -1, 2] == x1).all()
    assert (boxes[0, :, 1] == y0).all() and (boxes[-1, :, 3] == y1).all()
    # neighbours share their edge: no gap, no overlap
    assert (boxes[:, 1:, 0] == boxes[:, :-1, 2]).all()
    assert (boxes[1:, :, 1] == boxes[:-1, :, 3]).all()
    # columns line up across rows and rows across columns
    assert (boxes[..., 0] == boxes[0:1, :, 0]).all() and (boxes[..., 1] == boxes[:, 0:1, 1]).all()
    widths = boxes[..., 2] - boxes[..., 0]
    heights = boxes[..., 3] - boxes[..., 1]
    assert widths.min() >= 1 and widths.max() - widths.min() <= 1
    assert heights.min() >= 1 and heights.max() - heights.min() <= 1
    assert int((widths * heights).sum()) == (x1 - x0) * (y1 - y0)


@pytest.mark.parametrize("bbox,rows,cols", GRIDS)
def test_centres_are_inside_their_cell_and_cell_at_inverts(bbox, rows, cols):
    boxes = cell_boxes(bbox, rows, cols)
    centres = cell_centers(bbox, rows, cols)
    assert centres.shape == (rows, cols, 2)
    for r in range(rows):
        for c in range(cols):
            x, y = centres[r, c]
            bx0, by0, bx1, by1 = boxes[r, c]
            assert bx0 <= x < bx1 and by0 <= y < by1
            assert cell_at(bbox, rows, cols, x, y) == (r, c)
            # corners of the cell map back to it too (x1/y1 are exclusive)
            assert cell_at(bbox, rows, cols, bx0, by0) == (r, c)
            assert cell_at(bbox, rows, cols, bx1 - 1, by1 - 1) == (r, c)


def test_cell_centres_are_the_middle_of_even_cells():
    centres = cell_centers((0, 0, 800, 400), 4, 8)
    assert centres[0, 0].tolist() == [49, 49]
    assert centres[3, 7].tolist() == [749, 349]


def test_cell_at_outside_is_none():
    x0, y0, x1, y1 = BBOX
    for x, y in [(x0 - 1, y0), (x0, y0 - 1), (x1, y0), (x0, y1), (-5, -5), (5000, 5000)]:
        assert cell_at(BBOX, 8, 8, x, y) is None
    assert cell_at(BBOX, 8, 8, x1 - 1, y1 - 1) == (7, 7)


def test_grid_rejects_a_bbox_smaller_than_its_cells():
    with pytest.raises(ValueError):
        cell_boxes((0, 0, 5, 100), 8, 8)
    with pytest.raises(ValueError):
        cell_boxes((10, 10, 5, 100), 3, 3)


def test_fractions_round_trip_and_scale():
    frac = bbox_to_frac(BBOX, *SCREEN)
    assert frac_to_bbox(frac, *SCREEN) == BBOX
    assert frac_to_bbox(frac, 1440, 3200) == (53, 933, 1387, 2267)
    assert frac_to_bbox((-0.1, 0.0, 1.2, 1.0), 100, 200) == (0, 0, 100, 200)


# -- features ---------------------------------------------------------------------------


def test_feature_shape_and_length():
    f = cell_features(render(random_labels(2)), BBOX, 8, 8)
    assert f.shape == (64, feature_length(6)) == (64, 3 * 36 + 6 + 9)
    assert f.dtype == np.float32
    assert cell_features(render(random_labels(2)), BBOX, 8, 8, patch=4).shape == (64, feature_length(4))
    assert isinstance(FEATURE_VERSION, int)


def test_features_of_a_flat_colour_are_its_lab_values():
    frame = np.full((300, 300, 3), 255, np.uint8)  # white
    frame[:, 150:] = (0, 0, 255)  # right half red (BGR)
    f = cell_features(frame, (0, 0, 300, 300), 3, 2, patch=2)
    n = 3 * 2 * 2
    white, red = f[0], f[1]
    w = stat_weight(2)
    # patch pixels: L, a, b interleaved; white is L=100, a=b=0
    assert np.allclose(white[:n].reshape(4, 3), [100, 0, 0], atol=0.5)
    assert np.allclose(white[n : n + 3] / w, [100, 0, 0], atol=0.5)  # mean
    assert np.allclose(white[n + 3 :], 0, atol=0.5)  # std and texture of a flat cell
    assert np.allclose(red[n : n + 3] / w, [53.2, 80.1, 67.2], atol=1.0)  # sRGB red in Lab


def test_inset_ignores_cell_borders():
    plain = np.full((400, 400, 3), 128, np.uint8)
    framed = plain.copy()
    for x in range(0, 401, 100):  # a 4 px white grid line between and around cells
        cv2.rectangle(framed, (x - 2, -1), (x + 1, 401), (255, 255, 255), -1)
        cv2.rectangle(framed, (-1, x - 2), (401, x + 1), (255, 255, 255), -1)
    a = cell_features(plain, (0, 0, 400, 400), 4, 4)
    b = cell_features(framed, (0, 0, 400, 400), 4, 4)
    assert pairwise_distances(a, b).diagonal().max() < 0.5
    # without the inset the grid lines show
    c = cell_features(framed, (0, 0, 400, 400), 4, 4, inset=0.0)
    assert pairwise_distances(a, c).diagonal().min() > 2.0


def test_features_barely_move_under_jpeg():
    frame = render(random_labels(3))
    a = cell_features(frame, BBOX, 8, 8)
    b = cell_features(jpeg(frame, 70), BBOX, 8, 8)
    assert pairwise_distances(a, b).diagonal().max() < 2.0


def test_features_reject_bad_input():
    frame = render(random_labels(3))
    with pytest.raises(ValueError, match="outside"):
        cell_features(frame, (40, 700, 1100, 1700), 8, 8)
    with pytest.raises(ValueError, match="BGR"):
        cell_features(frame[..., 0], BBOX, 8, 8)
    with pytest.raises(ValueError, match="inset"):
        cell_features(frame, BBOX, 8, 8, inset=0.5)


# -- classify ---------------------------------------------------------------------------


def test_reads_a_new_board_through_jpeg(learned):
    labels = random_labels(10)
    frame = jpeg(render(labels), 70)
    reading = classify(cell_features(frame, BBOX, 8, 8), 8, 8, learned)
    assert isinstance(reading, Reading)
    assert reading.text == text_of(labels)
    assert reading.unknown_count == 0
    assert reading.min_confidence > 0.8
    assert reading.rows == 8 and reading.cols == 8
    assert reading.confidence.shape == (8, 8)
    assert ((0 <= reading.confidence) & (reading.confidence <= 1)).all()


@pytest.mark.parametrize(
    "seed,rows,cols,bbox",
    [(11, 9, 9, (0, 600, 1080, 1680)), (12, 6, 7, (100, 800, 1000, 1571)), (13, 12, 12, (10, 700, 1070, 1760))],
)
def test_reads_other_board_sizes(seed, rows, cols, bbox):
    first, second = random_labels(seed, rows, cols), random_labels(seed + 100, rows, cols)
    ex = exemplars_from_labels(cell_features(render(first, bbox), bbox, rows, cols), first)
    reading = classify(cell_features(jpeg(render(second, bbox)), bbox, rows, cols), rows, cols, ex)
    assert reading.text == text_of(second)


def test_a_one_pixel_calibration_error_still_reads(learned):
    labels = random_labels(14)
    shifted = (BBOX[0] + 1, BBOX[1] - 1, BBOX[2] + 1, BBOX[3] - 1)
    reading = classify(cell_features(jpeg(render(labels)), shifted, 8, 8), 8, 8, learned)
    assert reading.text == text_of(labels)


@pytest.mark.parametrize(
    "tile,why",
    [
        (("circle", (200, 60, 250)), "a known shape in a new colour (magenta circle)"),
        (("square", (40, 40, 220)), "a new shape in a known colour (red square; A is a red circle)"),
        (("triangle", (40, 40, 220)), "red triangle: C's shape in A's colour"),
        (("circle", (40, 40, 150)), "a darker red circle"),
    ],
)
def test_an_unseen_tile_is_unknown_not_forced_into_a_class(learned, tile, why):
    labels = random_labels(15)
    labels[2][5] = "X"
    shapes = {**SHAPES, "X": tile}
    reading = classify(cell_features(jpeg(render(labels, shapes=shapes)), BBOX, 8, 8), 8, 8, learned)
    assert reading.labels[2][5] == "?", why
    assert reading.confidence[2, 5] < 0.5
    assert reading.unknown_count == 1
    expected = [row[:] for row in labels]
    expected[2][5] = "?"
    assert reading.text == text_of(expected)


def test_a_label_is_as_near_as_its_nearest_exemplar():
    ex = [Exemplar("A", [0.0]), Exemplar("A", [10.0]), Exemplar("B", [6.0])]
    r = classify(np.array([[9.0], [5.5], [1.0]]), 1, 3, ex, min_confidence=0.0, max_distance=100)
    assert r.labels == [["A", "B", "A"]]
    assert r.confidence[0, 0] == pytest.approx(1 - 1 / 3)  # A at 1 (via 10), B at 3


def test_confidence_is_the_margin_and_ambiguous_cells_are_unknown():
    ex = [Exemplar("A", [0.0, 0.0]), Exemplar("B", [10.0, 0.0])]
    feats = np.array([[0.0, 0.0], [5.0, 0.0], [4.0, 0.0], [9.0, 0.0]])
    r = classify(feats, 2, 2, ex, min_confidence=0.5, max_distance=100)
    assert r.confidence[0, 0] == pytest.approx(1.0)
    assert r.confidence[0, 1] == pytest.approx(0.0)  # halfway
    assert r.confidence[1, 0] == pytest.approx(1 - 4 / 6)
    assert r.labels == [["A", "?"], ["?", "B"]]
    assert r.unknown_count == 2
    assert r.min_confidence == pytest.approx(0.0)
    assert r.text == "A?\n?B"
    assert r.unknown_cells() == [(0, 1), (1, 0)]


def test_max_distance_rejects_far_cells_even_with_a_clear_margin():
    ex = [Exemplar("A", [0.0]), Exemplar("B", [100.0])]
    r = classify(np.array([[-30.0], [-3.0], [100.0]]), 1, 3, ex, max_distance=10)
    assert r.labels == [["?", "A", "B"]]
    assert r.confidence[0, 0] == 0.0
    # even when no margin is asked for
    assert classify(np.array([[-30.0]]), 1, 1, ex, min_confidence=0.0, max_distance=10).labels == [["?"]]
    # the margin alone would have accepted it
    assert classify(np.array([[-30.0]]), 1, 1, ex, max_distance=1000).labels == [["A"]]


def test_default_max_distances():
    # labels 40 apart: half of that caps the bound; spreads are tiny, so the floor applies
    ex = [Exemplar("A", [0.0]), Exemplar("A", [0.5]), Exemplar("B", [40.0])]
    assert default_max_distances(ex) == pytest.approx({"A": 8.0, "B": 8.0})
    # a label that varies by 5 allows 3 x 5; one that does not vary keeps the floor
    ex = [Exemplar("A", [0.0]), Exemplar("A", [5.0]), Exemplar("B", [100.0])]
    assert default_max_distances(ex) == pytest.approx({"A": 15.0, "B": 8.0})
    # but never past half the gap to another label
    ex = [Exemplar("A", [0.0]), Exemplar("A", [5.0]), Exemplar("B", [20.0])]
    assert default_max_distances(ex) == pytest.approx({"A": 7.5, "B": 7.5})
    # two labels close together do not tighten the bound of a third far from both
    ex = [Exemplar("A", [0.0]), Exemplar("B", [4.0]), Exemplar(".", [100.0]), Exemplar(".", [110.0])]
    assert default_max_distances(ex) == pytest.approx({"A": 2.0, "B": 2.0, ".": 30.0})


def test_each_label_is_held_to_its_own_bound():
    # "." varies a lot (holes showing a textured background), A and B are close twins
    ex = [Exemplar("A", [0.0]), Exemplar("B", [4.0]), Exemplar(".", [100.0]), Exemplar(".", [110.0])]
    r = classify(np.array([[0.5], [3.8], [125.0], [150.0], [-10.0]]), 1, 5, ex)
    assert r.labels == [["A", "B", ".", "?", "?"]]
    # a profile's one max_distance still applies to every label
    assert classify(np.array([[125.0]]), 1, 1, ex, max_distance=10).labels == [["?"]]


def test_classify_rejects_mismatched_inputs(learned):
    with pytest.raises(ValueError, match="feature rows"):
        classify(np.zeros((63, 114)), 8, 8, learned)
    with pytest.raises(ValueError, match="components"):
        classify(np.zeros((64, 50)), 8, 8, learned)
    with pytest.raises(ValueError, match="no exemplars"):
        classify(np.zeros((64, 114)), 8, 8, [])


def test_exemplars_from_labels_picks_the_medoid_then_diverse_members():
    feats = np.array([[0.0], [1.0], [2.0], [2.0], [30.0], [7.0], [50.0], [50.2], [9.0]])
    labels = [["A", "A", "A"], ["A", "A", "A"], ["B", "B", "?"]]
    ex = exemplars_from_labels(feats, labels, per_label=3)
    a = [float(e.features[0]) for e in ex if e.label == "A"]
    b = [float(e.features[0]) for e in ex if e.label == "B"]
    assert a == [2.0, 30.0, 7.0]  # medoid, then farthest from it, then farthest from both (7 is 5 away)
    assert b == [50.0]  # 50.2 is a near-duplicate; "?" (9.0) is skipped
    assert {e.label for e in ex} == {"A", "B"}


def test_exemplars_from_labels_rejects_mismatch():
    with pytest.raises(ValueError):
        exemplars_from_labels(np.zeros((4, 3)), [["A", "B", "C"]])
    with pytest.raises(ValueError):
        exemplars_from_labels(np.zeros((4, 3)), [["A", "B"], ["C"]])


def test_exemplar_features_are_rounded_and_compared_by_value():
    a = Exemplar("A", np.array([1.23456789, 2.0]))
    assert a.features.tolist() == pytest.approx([1.2346, 2.0])
    assert a == Exemplar("A", [1.2346, 2.0])
    assert a != Exemplar("B", [1.2346, 2.0])
    with pytest.raises(ValueError):
        Exemplar("?", [1.0])


# -- settle -----------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


def _board_with_tile_at(y: int, base: np.ndarray | None = None) -> np.ndarray:
    img = render([["." for _ in range(8)] for _ in range(8)]) if base is None else base.copy()
    cv2.circle(img, (BBOX[0] + 187, y), 50, (40, 40, 220), -1)
    return img


class Frames:
    """A capture function replaying frames; the last one repeats; each capture costs `cost` s."""

    def __init__(self, frames: list[np.ndarray], clock: FakeClock, cost: float = 0.0) -> None:
        self.frames, self.clock, self.cost, self.count = frames, clock, cost, 0

    def __call__(self) -> np.ndarray:
        frame = self.frames[min(self.count, len(self.frames) - 1)]
        self.count += 1
        self.clock.t += self.cost
        return frame


def test_board_diff_is_per_cell():
    a = _board_with_tile_at(BBOX[1] + 62)  # a tile in cell (0, 1)
    b = _board_with_tile_at(BBOX[1] + 62 + 125)  # fallen to (1, 1)
    d = board_diff(a, b, BBOX, 8, 8)
    assert d.shape == (8, 8)
    assert d[0, 1] > 20 and d[1, 1] > 20
    d[0, 1] = d[1, 1] = 0
    assert d.max() < 0.5
    assert board_diff(a, a, BBOX, 8, 8).max() == 0.0


def test_waits_for_motion_to_stop():
    clock = FakeClock()
    base = render([["." for _ in range(8)] for _ in range(8)])
    moving = [_board_with_tile_at(BBOX[1] + 62 + 40 * i, base) for i in range(5)]  # falls for 5 frames
    capture = Frames(moving, clock, cost=0.01)
    s = wait_until_still(capture, BBOX, 8, 8, clock, SettleSettings(poll_ms=40, still_frames=2))
    assert s.still
    # frame 4 is the first of the still run; frames 5 and 6 confirm it
    assert s.captures == 7 == capture.count
    assert s.waited_s == pytest.approx(6 * 0.04 + 7 * 0.01)
    assert np.array_equal(s.frame, moving[-1])
    assert clock.slept == [pytest.approx(0.04)] * 6


def test_a_board_that_never_stops_times_out():
    clock = FakeClock()
    base = render([["." for _ in range(8)] for _ in range(8)])
    frames = [_board_with_tile_at(BBOX[1] + 62 + 7 * i, base) for i in range(30)]
    settings = SettleSettings(poll_ms=50, timeout_s=1.0)
    s = wait_until_still(Frames(frames, clock), BBOX, 8, 8, clock, settings)
    assert not s.still
    assert s.waited_s == pytest.approx(1.0)
    assert s.captures == 21  # one at the start, one after each of the 20 sleeps
    assert np.array_equal(s.frame, frames[20])


def test_motion_outside_the_board_and_jpeg_noise_do_not_count():
    clock = FakeClock()
    base = render(random_labels(17))
    frames = []
    for i in range(6):
        f = jpeg(base, 60 + 7 * i)  # different compression noise every time
        cv2.putText(f, f"{i * 1111}", (50, 300), cv2.FONT_HERSHEY_SIMPLEX, 4, (255, 255, 255), 8)  # a HUD
        frames.append(f)
    s = wait_until_still(Frames(frames, clock), BBOX, 8, 8, clock, SettleSettings(still_frames=3))
    assert s.still and s.captures == 4


def test_a_slow_fade_is_motion_even_if_each_step_is_small():
    clock = FakeClock()
    base = render(random_labels(18)).astype(np.int16)
    frames = [np.clip(base + 3 * i, 0, 255).astype(np.uint8) for i in range(15)]  # 3 levels a frame
    s = wait_until_still(Frames(frames, clock), BBOX, 8, 8, clock, SettleSettings(threshold=4.0, still_frames=2))
    assert s.still
    assert s.captures == 17  # only once the fade has ended: frames 14, 15, 16 look alike


# -- periodicity ----------------------------------------------------------------------------

from agent.vision.cluster import EMPTY_CONTRAST, cluster_cells, cut_height, symmetric_distances  # noqa: E402
from agent.vision.images import ImageError, read_image  # noqa: E402
from agent.vision.lattice import Lattice, sample_cells  # noqa: E402
from agent.vision.locate import refine_period  # noqa: E402
from agent.files import save_png  # noqa: E402
from agent.vision.overlay import GRID, LOW, draw_overlay  # noqa: E402
from agent.vision.periodicity import comb_scores, period_candidates  # noqa: E402


def _acf_of(signal: np.ndarray) -> np.ndarray:
    x = signal - signal.mean()
    n = len(x)
    r = np.correlate(x, x, mode="full")[n - 1 :] / (n - np.arange(n))
    return r / r[0]


def test_the_comb_prefers_the_period_to_its_fractions_and_even_multiples():
    p = 24
    t = np.arange(600)
    v = _acf_of(np.where(t % p < 4, 1.0, 0.0) + 0.05 * np.random.default_rng(0).normal(size=600))
    s = comb_scores(v[None], np.array([p / 2, p, 2 * p, 3 * p], dtype=float), span=1.0, harmonics=1)[0]
    assert s[1] > 0.3
    assert s[0] < 0.1 and s[2] < 0.1  # a fraction and an even multiple
    assert s[3] == pytest.approx(s[1], abs=0.15)  # an odd multiple scores like the period
    # the strict form (weakest of three harmonics) sinks the half period however it is sampled
    strict = comb_scores(v[None], np.array([p / 2, p], dtype=float))[0]
    assert strict[0] < 0.1 < strict[1]


def test_refine_period_finds_the_fundamental_under_a_two_cell_pattern():
    # slots every 30 px, every other one stronger (a checker): the peak at 60 is higher
    t = np.arange(900)
    sig = np.where(t % 30 < 3, 1.0, 0.0) * np.where((t // 30) % 2 == 0, 1.0, 0.45)
    v = _acf_of(sig)
    assert v[60] > v[30]
    assert refine_period(v, 30.0, 8) == pytest.approx(30.0, abs=0.1)
    assert refine_period(v, 60.0, 8) == pytest.approx(30.0, abs=0.1)  # proposed too long
    assert refine_period(v, 90.0, 8) == pytest.approx(30.0, abs=0.1)  # an odd multiple
    # sub-pixel: a period of 30.4 is not a whole number of pixels
    v2 = _acf_of(np.where((t % 30.4) < 3, 1.0, 0.0))
    assert refine_period(v2, 30.0, 8) == pytest.approx(30.4, abs=0.1)


def test_period_candidates_see_a_grid_and_nothing_in_noise():
    labels = random_labels(30, 9, 9)
    frame = render(labels, bbox=(60, 500, 960, 1400))  # 100 px cells
    best = period_candidates(cv2.resize(frame, (540, 1200), interpolation=cv2.INTER_AREA))[0]
    assert best.px == pytest.approx(50, rel=0.05) and best.py == pytest.approx(50, rel=0.05)
    x0, y0, x1, y1 = best.region
    assert x0 < 400 < x1 and y0 < 950 / 2 < y1  # the middle of the board
    noise = np.random.default_rng(3).integers(0, 256, (800, 600, 3), dtype=np.uint8)
    assert all(c.score < best.score / 20 for c in period_candidates(noise))


# -- lattice --------------------------------------------------------------------------------


def test_sample_cells_reads_each_cell_of_a_lattice():
    img = np.zeros((300, 400, 3), np.float32)
    lat = Lattice(x0=10.5, y0=20.25, px=37.5, py=41.0, cols=4, rows=3)
    for r in range(3):
        for c in range(4):
            x0, y0 = lat.x0 + c * lat.px, lat.y0 + r * lat.py
            img[int(np.ceil(y0)) : int(y0 + lat.py), int(np.ceil(x0)) : int(x0 + lat.px)] = (r, c, 7)
    cells = sample_cells(img, lat, sample=8)
    assert cells.shape == (3, 4, 8, 8, 3)
    inner = cells[:, :, 1:-1, 1:-1]
    for r in range(3):
        for c in range(4):
            assert np.allclose(inner[r, c], (r, c, 7), atol=0.5)
    assert lat.sub(1, 1, 2, 2).x0 == pytest.approx(48.0) and lat.scaled(2.0, 5, 0).px == pytest.approx(75.0)


# -- clustering -----------------------------------------------------------------------------


def _blobs(centres, counts, spread, seed=0):
    rng = np.random.default_rng(seed)
    pts = [rng.normal(c, spread, size=(n, len(c))) for c, n in zip(centres, counts)]
    return np.concatenate(pts), np.repeat(np.arange(len(counts)), counts)


def test_the_cut_separates_classes_and_keeps_singletons():
    centres = np.array([[0.0] * 4, [40.0, 0, 0, 0], [0, 35.0, 0, 0], [0, 0, 60.0, 0]])
    pts, truth = _blobs(centres, [20, 15, 10, 1], spread=0.6)
    d = np.sqrt(((pts[:, None] - pts[None]) ** 2).mean(-1))
    ids, t = cut_height(d)
    assert len(set(ids)) == 4
    for k in range(4):  # every true class is exactly one cluster
        assert len(set(ids[truth == k])) == 1
    # all within noise: one class
    same, _ = _blobs(centres[:1], [30], spread=0.6)
    d = np.sqrt(((same[:, None] - same[None]) ** 2).mean(-1))
    assert len(set(cut_height(d)[0])) == 1


def test_symmetric_distances_do_not_depend_on_the_order():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(10, 6)), rng.normal(size=(10, 6))
    assert np.allclose(symmetric_distances(a, b), symmetric_distances(b, a))


def test_cluster_names_classes_in_reading_order_and_marks_empties():
    feats = np.array([[50.0], [10.0], [50.0], [90.0], [10.0], [10.0]])
    d = np.abs(feats - feats.T)
    contrast = np.array([20.0, 0.5, 20.0, 20.0, 0.5, 0.5])  # the 10s are flat: empty slots
    out = cluster_cells(d, 2, 3, contrast)
    assert out.labels == [["A", ".", "A"], ["B", ".", "."]]
    assert out.classes == ["A", "B"]
    holes = np.array([[False, False, False], [True, False, False]])
    assert cluster_cells(d, 2, 3, contrast, holes=holes).labels[1][0] == "."
    assert EMPTY_CONTRAST > 0


# -- overlay and image files ----------------------------------------------------------------


def test_overlay_draws_the_grid_letters_and_low_confidence():
    frame = render(random_labels(31))
    labels = [["A"] * 8 for _ in range(8)]
    labels[2][3] = "?"
    conf = np.ones((8, 8))
    conf[2, 3] = 0.1
    out = draw_overlay(frame, BBOX, labels, conf, low=0.5)
    assert out.shape == frame.shape and out.dtype == np.uint8
    x0, y0, x1, y1 = BBOX
    assert tuple(out[y0 + 300, x0]) == GRID  # the left board edge is a grid line
    cell = out[y0 + 2 * 125 : y0 + 3 * 125, x0 + 3 * 125 : x0 + 4 * 125].reshape(-1, 3)
    assert (cell == LOW).all(axis=1).any()  # the unsure cell is boxed in red
    assert out[10, 10].sum() < frame[10, 10].sum()  # outside the board is dimmed


def test_save_png_is_atomic_and_png_only(tmp_path):
    img = np.zeros((10, 10, 3), np.uint8)
    path = save_png(img, tmp_path / "a" / "o.png")
    assert path.exists() and cv2.imread(str(path)).shape == (10, 10, 3)
    assert [p.name for p in path.parent.iterdir()] == ["o.png"]
    with pytest.raises(AgentError, match="PNG"):
        save_png(img, tmp_path / "o.jpg")


def test_read_image_gives_bgr_whatever_the_file(tmp_path):
    grey = np.full((20, 30), 77, np.uint8)
    cv2.imwrite(str(tmp_path / "g.png"), grey)
    rgba = np.zeros((20, 30, 4), np.uint8)
    rgba[..., 2] = 200
    cv2.imwrite(str(tmp_path / "a.png"), rgba)
    g = read_image(tmp_path / "g.png")
    a = read_image(tmp_path / "a.png")
    assert g.shape == a.shape == (20, 30, 3) and (g == 77).all() and (a[..., 2] == 200).all()
    (tmp_path / "junk.png").write_bytes(b"not an image at all")
    for bad, why in [(tmp_path / "missing.png", "no such file"), (tmp_path / "junk.png", "not an image"), (tmp_path, "folder")]:
        with pytest.raises(ImageError, match=why) as info:
            read_image(bad)
        assert info.value.hint


# -- image files: sized from the header before decoding ---------------------------------------

import os  # noqa: E402
import struct  # noqa: E402
import zlib  # noqa: E402

from agent.vision.images import MAX_PIXELS, image_size  # noqa: E402


@pytest.mark.parametrize("ext, kind", [(".png", "PNG"), (".jpg", "JPEG"), (".bmp", "BMP"), (".webp", "WebP")])
@pytest.mark.parametrize("shape", [(37, 53, 3), (37, 53)], ids=["colour", "grey"])
def test_the_header_gives_the_size_the_decoder_finds(ext, kind, shape):
    img = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    for params in ([], [cv2.IMWRITE_WEBP_QUALITY, 101]) if ext == ".webp" else ([],):  # lossy VP8 and lossless VP8L
        data = cv2.imencode(ext, img, params)[1].tobytes()
        assert image_size(data) == (kind, 53, 37)


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def test_a_pixel_bomb_is_refused_from_its_header(tmp_path, monkeypatch):
    def no_decoding(*args):
        raise AssertionError("decoded a pixel bomb")

    monkeypatch.setattr(cv2, "imdecode", no_decoding)
    side = int(MAX_PIXELS**0.5) + 1
    (tmp_path / "bomb.png").write_bytes(_png_header(side, side) + b"\x00" * 64)
    with pytest.raises(ImageError, match=f"{side}x{side} is [0-9,]+ pixels, more than any screen"):
        read_image(tmp_path / "bomb.png")
    (tmp_path / "none.png").write_bytes(_png_header(0, 10))
    with pytest.raises(ImageError, match="gives a size of 0x10"):
        read_image(tmp_path / "none.png")


def test_broken_image_files_say_what_is_wrong(tmp_path):
    good = cv2.imencode(".png", np.zeros((30, 20, 3), np.uint8))[1].tobytes()
    cases = {
        "empty.png": (b"", "the file is empty"),
        "header.png": (good[:20], "damaged or truncated image header"),
        "half.png": (good[: len(good) - 20], "cannot be decoded"),
        "text.png": (b"hello", "not an image this program reads"),
        "tiff.tif": (b"II*\x00" + b"\x00" * 64, "not an image this program reads"),
    }
    for name, (data, why) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ImageError, match=why):
            read_image(tmp_path / name)


def test_a_huge_file_is_refused_unread_and_a_pipe_is_read(tmp_path):
    import threading

    from agent.vision.images import MAX_FILE_BYTES

    with open(tmp_path / "big.png", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse
    with pytest.raises(ImageError, match="bigger than any screenshot"):
        read_image(tmp_path / "big.png")
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    data = cv2.imencode(".png", np.full((12, 9, 3), 50, np.uint8))[1].tobytes()
    writer = threading.Thread(target=pipe.write_bytes, args=(data,))
    writer.start()
    assert read_image(pipe).shape == (12, 9, 3)  # as `--image <(adb exec-out screencap -p)`
    writer.join()


# -- scoring against labelled shots (agent.vision.scoring) ---------------------------------


def test_scoring_leaves_the_labels_unsure_cells_out_and_never_credits_an_unknown_read():
    from agent.vision.scoring import CellScore, cell_score

    truth = [["R", "G", "?"], ["R", "G", "B"]]
    assert cell_score([["A", "B", "A"], ["A", "B", "C"]], truth) == CellScore(5, 5)  # the "?" cell is not scored
    assert cell_score([["A", "?", "C"], ["A", "B", "C"]], truth) == CellScore(4, 5)  # a "?" read is wrong
    assert cell_score([["A", "B", "C"], ["D", "B", "E"]], truth) == CellScore(4, 5)  # red split: the smaller part lost
    assert cell_score([["A", "A", "C"], ["A", "A", "E"]], truth) == CellScore(3, 5)  # red and green merged
    assert cell_score([["?"]], [["?"]]).share == 1.0  # nothing scored, nothing wrong
    assert CellScore(3, 4) + CellScore(1, 4) == CellScore(4, 8)
    with pytest.raises(ValueError, match="grids differ"):
        cell_score([["A", "B"]], [["R"], ["G"]])


def test_box_overlap():
    from agent.vision.scoring import iou

    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 0, 0], [0, 0, 0, 0]) == 0.0


def _write_bbb(folder, name: str, labels: list[list[str]], image: np.ndarray | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.dat").write_text("\n".join(" ".join(row) for row in labels) + "\n")
    if image is not None:
        cv2.imwrite(str(folder / f"{name}.png"), image)


def test_the_labelled_sets_are_read_and_a_broken_label_is_named(tmp_path):
    import json

    from agent.vision.scoring import LabelsError, bbb_shots, labelled_shots, six_shots

    assert labelled_shots(tmp_path) == []  # no folder: no shots, no error
    labels = random_labels(3, alphabet="ABCDEFG")
    labels[0][0] = "?"
    bbb = tmp_path / "realshots" / "bbb"
    _write_bbb(bbb, "snapshot_1", labels, np.zeros((320, 320, 3), np.uint8))
    (shot,) = bbb_shots(tmp_path)
    assert (shot.set, shot.name, shot.rows, shot.cols, shot.bbox) == ("bbb", "bbb/snapshot_1", 8, 8, (0, 0, 320, 320))
    assert shot.cells == labels and shot.classes == 7
    _write_bbb(bbb, "snapshot_2", labels[:7], np.zeros((320, 320, 3), np.uint8))
    with pytest.raises(LabelsError, match=r"snapshot_2\.dat: 7 rows of \[8\] cells, expected 8 rows of 8"):
        bbb_shots(tmp_path)
    _write_bbb(bbb, "snapshot_2", labels, None)
    (bbb / "snapshot_2.png").unlink()
    with pytest.raises(LabelsError, match="no image snapshot_2.png"):
        bbb_shots(tmp_path)
    (tmp_path / "realshots" / "labels.json").write_text(json.dumps([{"game": "x"}]))
    with pytest.raises(LabelsError, match="labels.json: not a list of labelled shots"):
        six_shots(tmp_path)


def test_the_accuracy_bench_scores_each_shot_and_marks_the_targets(tmp_path):
    import json

    from agent.games.match3.vision_bench import bench_realshots
    from agent.vision.scoring import labelled_shots

    labels = random_labels(3, alphabet="ABCDEFG")
    _write_bbb(tmp_path / "realshots" / "bbb", "snapshot_1", labels, render(labels, bbox=(0, 0, 320, 320), size=(320, 320)))
    board = tmp_path / "realshots" / "board"
    board.mkdir()
    cv2.imwrite(str(board / "board.png"), render(labels, bbox=(20, 60, 340, 380), size=(360, 440)))
    (tmp_path / "realshots" / "blank").mkdir()
    cv2.imwrite(str(tmp_path / "realshots" / "blank" / "blank.png"), np.full((440, 360, 3), 40, np.uint8))
    item = {"game": "board", "file": "board.png", "width": 360, "height": 440, "rows": 8, "cols": 8,
            "board_bbox": [20, 60, 340, 380], "cells": labels}
    blank = {**item, "game": "blank", "file": "blank.png"}
    (tmp_path / "realshots" / "labels.json").write_text(json.dumps([item, blank]))
    seen = []
    report = bench_realshots(labelled_shots(tmp_path), progress=lambda what, done, total: seen.append((done, total)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    good, refused, crop = report.shots
    assert good.grid_exact and good.iou > 0.98 and good.cells.share == 1.0 and good.classes == good.label_classes == 7
    assert crop.name == "bbb/snapshot_1" and crop.grid_exact and crop.cells.share == 1.0 and crop.screen == (320, 320)
    assert refused.grid is None and refused.refused and not refused.grid_exact
    assert refused.cells.right == 0 and refused.cells.scored == 64
    assert report.grids_exact == 2 and report.min_iou == 0.0
    assert report.cells.right == 128 and report.cells.scored == 192
    met = {t.what.split(" on ")[0]: t.met for t in report.targets()}
    assert met == {"grid exact": False, "box IoU >= 0.9": False, "cells right >= 98%": False, "kinds right >= 98%": False}
    out = report.as_dict()
    assert out["totals"]["shots"] == 3 and out["totals"]["refused"] == 1
    assert [s["name"] for s in out["shots"]] == ["board", "blank", "bbb/snapshot_1"]
    assert json.loads(json.dumps(out)) == out


def test_the_accuracy_bench_fills_the_kinds_column_from_the_one_kinds_hook(tmp_path, monkeypatch):
    from agent.games.match3 import vision_bench
    from agent.vision.scoring import labelled_shots

    labels = random_labels(4, alphabet="ABCDEFG")
    _write_bbb(tmp_path / "realshots" / "bbb", "snapshot_1", labels, render(labels, bbox=(0, 0, 320, 320), size=(320, 320)))
    calls = []

    def one_kind(cal, frame):  # every tile one colour: 1 in 7 kinds right at best
        calls.append(frame.shape)
        return [["K" if v not in ".?" else v for v in row] for row in cal.labels]

    monkeypatch.setattr(vision_bench, "kinds_view", lambda: one_kind)
    report = vision_bench.bench_realshots(labelled_shots(tmp_path))
    (shot,) = report.shots
    assert calls == [(320, 320, 3)]
    assert shot.cells.share == 1.0
    most = max(sum(row.count(v) for row in labels) for v in "ABCDEFG")
    assert shot.kinds is not None and shot.kinds.right == most and report.kinds == shot.kinds
    assert report.targets()[-1].met is False and report.as_dict()["shots"][0]["kinds_right"] == most
