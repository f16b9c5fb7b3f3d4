"""The profile's new keys: package, rules, taught screens; strict, round-tripping, and
old profiles without them still load."""

from __future__ import annotations

import numpy as np
import pytest

from agent.errors import ProfileError
from agent.vision.classify import Exemplar
from agent.vision.features import DEFAULT_PATCH, feature_length
from agent.vision.profile import DeviceProfile, GameProfile, TaughtScreen, dumps_profile, load_profile, save_profile

HASH = "f" * 64


def game(**kw):
    ex = [Exemplar("A", np.arange(feature_length(DEFAULT_PATCH), dtype=float))]
    return GameProfile.from_bbox("match3", 8, 8, (40, 700, 1040, 1700), 1080, 2400, ex, **kw)


def test_round_trip(tmp_path):
    g = game(package="com.example.match", rules={"variant": "classic"},
             screens=(TaughtScreen("offer", HASH, (1080, 2400), "tap", (980, 700), (0.1, 0.3, 0.9, 0.65)),
                      TaughtScreen("ad", "0" * 64, (1080, 2400), "back")))  # fmt: skip
    dev = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": g})
    path = save_profile(dev, tmp_path)
    back = load_profile(path)
    assert back == dev
    text = path.read_text()
    assert 'package = "com.example.match"' in text and "[games.match3.rules]" in text and "[[games.match3.screens]]" in text


def test_old_profiles_load_with_defaults(tmp_path):
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game()}), tmp_path)
    g = load_profile(path).games["match3"]
    assert g.package is None and g.rules == {} and g.screens == ()
    assert "package" not in path.read_text() and "screens" not in path.read_text()


def _with(tmp_path, extra: str):
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game()}), tmp_path)
    text = path.read_text()
    head, rest = text.split("[[games.match3.exemplars]]", 1)
    path.write_text(head + extra + "\n[[games.match3.exemplars]]" + rest)
    return path


SCREEN = '[[games.match3.screens]]\nname = "a"\nphash = "{h}"\nsize = [1080, 2400]\n'.format(h=HASH)


@pytest.mark.parametrize("extra, words", [
    (SCREEN + 'action = "tap"\ntap = [5000, 1]\n', "inside the 1080x2400 screen"),
    (SCREEN + 'action = "tap"\n', "tap: missing"),
    (SCREEN + 'action = "back"\ntap = [1, 1]\n', "remove tap"),
    (SCREEN + 'action = "swipe"\n', '"tap" or "back"'),
    (SCREEN.replace(HASH, "xyz") + 'action = "back"\n', "hex"),
    (SCREEN + 'action = "back"\ncolour = 1\n', "unknown key"),
    (SCREEN + 'action = "back"\nbox = [0.5, 0.1, 0.2, 0.9]\n', "screens[0].box"),
    (SCREEN + 'action = "back"\n' + SCREEN + 'action = "back"\n', "names two screens"),
    (SCREEN.replace("[1080, 2400]", "[1080]") + 'action = "back"\n', "[width, height]"),
    ('[games.match3.rules]\nvariant = 3\n', "rules.variant"),
])  # fmt: skip
def test_bad_screens_are_refused_clearly(tmp_path, extra, words):
    path = _with(tmp_path, extra)
    with pytest.raises(ProfileError) as e:
        load_profile(path)
    assert words in str(e.value), str(e.value)


def test_bad_package(tmp_path):
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game()}), tmp_path)
    text = path.read_text().replace("rows = 8", 'rows = 8\npackage = "not a package"', 1)
    path.write_text(text)
    with pytest.raises(ProfileError, match="package"):
        load_profile(path)


def test_taught_screen_checks_and_scaling():
    with pytest.raises(ValueError):
        TaughtScreen("a", HASH, (10, 10), "tap")
    with pytest.raises(ValueError):
        TaughtScreen("a", HASH, (10, 10), "back", (1, 1))
    t = TaughtScreen("a", HASH, (1080, 2400), "tap", (540, 1200))
    assert t.scaled_tap(720, 1600) == (360, 800)
    assert dumps_profile(DeviceProfile("P", 1080, 2400, None, {"match3": game(screens=(t,))}))
