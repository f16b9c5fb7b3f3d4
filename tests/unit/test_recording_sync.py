"""A recording kept on a phone's node, copied to the driver as it grows: the copy read at
any moment is whole, and once the run has ended it is the recording, frame for frame."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.farm.recording_sync import Chunk, Cursor, apply_chunk, next_chunk
from agent.play.recording import INDEX, Recorder, RecordOptions, Recording, frames_dir


def _frames(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (240, 120, 3), dtype=np.uint8)
    out = []
    for i in range(n):
        f = base.copy()
        y = int(rng.integers(0, 200))
        f[y : y + 30, 10:60] = rng.integers(0, 255, 3, dtype=np.uint8)  # a part that changed
        out.append(f)
    return out


def _sync(node: Recorder, driver_dir, cursor: Cursor, most: int) -> tuple[Cursor, int]:
    calls = 0
    while True:
        chunk = next_chunk(node.folder, cursor, most)
        cursor = apply_chunk(driver_dir, chunk, cursor)
        calls += 1
        if not chunk.more:
            return cursor, calls


def _same(a_dir, b_dir) -> None:
    a, b = Recording.open_folder(a_dir), Recording.open_folder(b_dir)
    assert a.ids() == b.ids() and a.ids()
    for fid in a.ids():
        assert np.array_equal(a.frame(fid), b.frame(fid)), fid


@pytest.mark.parametrize("most", [1, 20_000, 8 << 20])
def test_a_copy_made_while_frames_are_written_ends_as_the_recording(tmp_path, most):
    node = Recorder(tmp_path / "node" / "phone.jsonl", "all", RecordOptions(lossless=True))
    driver = frames_dir(tmp_path / "driver" / "phone.jsonl")
    cursor = Cursor()
    for i, f in enumerate(_frames(30)):
        node.add(f, "rest", float(i), i)
        if i % 7 == 3:
            cursor, _ = _sync(node, driver, cursor, most)
            if (driver / INDEX).exists():
                Recording.open_folder(driver)  # whole at every moment: every line's pictures are there
    node.close()
    cursor, calls = _sync(node, driver, cursor, most)
    _same(node.folder, driver)
    if most == 1:
        assert calls > 1  # a chunk at a time
    # nothing left: the next ask is empty, and the copy is unchanged
    assert next_chunk(node.folder, cursor, most).empty


def test_the_files_no_line_names_travel_too_and_only_once(tmp_path):
    node = Recorder(tmp_path / "node" / "phone.jsonl", "all")
    for i, f in enumerate(_frames(4)):
        node.add(f, "rest", float(i), i)
    node.close()
    (node.folder / "profile-0.toml").write_text("[x]\n")
    (node.folder / "stop-000003.png").write_bytes(b"png")
    (node.folder / ".000009.jpg.tmp").write_bytes(b"half")  # being written: not a file yet
    driver = frames_dir(tmp_path / "driver" / "phone.jsonl")
    cursor, _ = _sync(node, driver, Cursor(), 8 << 20)
    assert (driver / "profile-0.toml").read_text() == "[x]\n" and (driver / "stop-000003.png").exists()
    assert not list(driver.glob(".*"))
    assert {"profile-0.toml", "stop-000003.png"} <= cursor.others
    assert next_chunk(node.folder, cursor).empty


def test_an_index_that_is_not_the_one_copied_is_sent_anew(tmp_path):
    node = Recorder(tmp_path / "node" / "phone.jsonl", "all", RecordOptions(lossless=True))
    for i, f in enumerate(_frames(6)):
        node.add(f, "rest", float(i), i)
    node.close()
    driver = frames_dir(tmp_path / "driver" / "phone.jsonl")
    cursor, _ = _sync(node, driver, Cursor(), 8 << 20)
    # the node's index was cut short (a run that died, cut to its whole lines) and grew again
    lines = (node.folder / INDEX).read_bytes().splitlines(keepends=True)
    (node.folder / INDEX).write_bytes(b"".join(lines[:2]))
    chunk = next_chunk(node.folder, cursor)
    assert chunk.index_whole and chunk.index_at == 0
    cursor = apply_chunk(driver, chunk, cursor)
    assert (driver / INDEX).read_bytes() == b"".join(lines[:2])
    _same(node.folder, driver)


def test_a_torn_last_line_is_not_sent_until_it_is_whole(tmp_path):
    node = Recorder(tmp_path / "node" / "phone.jsonl", "all")
    for i, f in enumerate(_frames(3)):
        node.add(f, "rest", float(i), i)
    node.close()
    whole = (node.folder / INDEX).read_bytes()
    with open(node.folder / INDEX, "ab") as f:
        f.write(b'{"id":3,"file":"000003.jp')
    chunk = next_chunk(node.folder, Cursor())
    assert chunk.index_lines == whole


def test_a_name_that_would_leave_the_folder_is_never_written(tmp_path):
    driver = tmp_path / "driver" / "phone.frames"
    line = json.dumps({"id": 0, "file": "../evil.jpg"}).encode() + b"\n"
    apply_chunk(driver, Chunk({"../evil.jpg": b"x", ".hidden": b"y"}, 0, line, False), Cursor())
    assert not (tmp_path / "driver" / "evil.jpg").exists() and not (driver / ".hidden").exists()


def test_no_folder_on_the_node_is_nothing_to_send(tmp_path):
    chunk = next_chunk(tmp_path / "none.frames", Cursor())
    assert chunk.empty and not chunk.more
    assert apply_chunk(tmp_path / "driver.frames", chunk, Cursor()) == Cursor()
    assert not (tmp_path / "driver.frames").exists()
