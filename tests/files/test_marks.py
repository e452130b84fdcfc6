"""The Files panel's marks: a stat decides first, a refresh reads a bounded number of bytes, the rest is counted in
the background and remembered until the file changes. Bytes are counted by the kernel (/proc/self/io)."""

import os

from bench.proccpu import bytes_read
from meowgent.files.marks import INLINE_BYTES, Mark
from tests.files.conftest import CHAT, make_bench

EIGHT_GB = 8 << 30


def test_an_8_gb_sparse_file_the_chat_wrote_is_marked_without_reading_it(bench):
    bench.say("write a big one")
    bench.call("write_file", path="big.bin", content="x\n")
    bench.call("write_file", path="small.txt", content="a\nb\n")
    os.truncate(bench.workspace / "big.bin", EIGHT_GB)
    started = bytes_read()
    marks = bench.checkpoints.marks(CHAT)
    assert bench.checkpoints.marks_counted(timeout=30)
    read = bytes_read() - started
    assert marks["big.bin"] == Mark("big.bin", True, None, None)  # "new", no line counts: too large to compare
    assert marks["small.txt"] == Mark("small.txt", True, 2, 0)
    assert read < 1_000_000, f"{read} bytes read for one refresh"  # the store's pages, the small file: not 8 GB


def test_marks_past_a_refreshs_budget_are_pending_then_counted_in_the_background(bench):
    size = 100_000
    text = "".join(f"{number:09}\n" for number in range(size // 10))
    names = [f"f{number}.txt" for number in range(6)]
    bench.say("write six")
    for name in names:
        bench.call("write_file", path=name, content=text)
    first = bench.checkpoints.marks(CHAT)
    counted = [name for name in names if not first[name].pending]
    assert len(counted) == INLINE_BYTES // size
    assert all(first[name] == Mark(name, True, None, None, pending=True) for name in names if name not in counted)
    assert bench.checkpoints.marks_counted(timeout=60)
    started = bytes_read()
    again = bench.checkpoints.marks(CHAT)
    assert bytes_read() - started < INLINE_BYTES  # remembered: a stat each, no file read again
    assert all(again[name] == Mark(name, True, size // 10, 0) for name in names)


def test_a_remembered_mark_is_counted_again_once_the_file_changes(bench):
    (bench.workspace / "a.txt").write_text("1\n2\n3\n")
    bench.say("edit")
    bench.call("edit_file", path="a.txt", old="2\n", new="two\n")
    assert bench.checkpoints.marks(CHAT)["a.txt"] == Mark("a.txt", False, 1, 1)
    (bench.workspace / "a.txt").write_text("1\n2\n3\n")  # the person puts it back
    assert bench.checkpoints.marks(CHAT)["a.txt"] == Mark("a.txt", False, 0, 0)
    (bench.workspace / "a.txt").write_text("1\n2\n3\n4\n5\n")
    assert bench.checkpoints.marks(CHAT)["a.txt"] == Mark("a.txt", False, 2, 0)
    (bench.workspace / "a.txt").unlink()
    assert bench.checkpoints.marks(CHAT)["a.txt"] == Mark("a.txt", False, None, None)


def test_a_first_state_pruned_by_the_cap_is_marked_changed_without_counting(tmp_path):
    bench = make_bench(tmp_path, cap=1_500)
    (bench.workspace / "a.txt").write_text("a" * 1_000)
    bench.say("twice")
    bench.call("write_file", path="a.txt", content="b" * 1_000)
    bench.call("write_file", path="a.txt", content="c" * 1_000)
    assert bench.checkpoints.marks(CHAT)["a.txt"] == Mark("a.txt", False, None, None)
