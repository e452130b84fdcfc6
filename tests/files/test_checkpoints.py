import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.proccpu import bytes_read
from meowgent.files.checkpoints import CannotUndo, Undone, can_undo, written_path
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool
from tests.files.conftest import CHAT, make_bench


def test_undo_restores_an_edited_file_exactly(bench):
    (bench.workspace / "a.txt").write_bytes(b"one\r\ntwo\xff\n")
    bench.say("edit it")
    call = bench.call("edit_file", path="a.txt", old="two", new="TWO")
    assert bench.file("a.txt") == b"one\r\nTWO\xff\n"
    report = bench.checkpoints.undo(CHAT, call)
    assert report.done == (Undone("a.txt", removed=False),)
    assert bench.file("a.txt") == b"one\r\ntwo\xff\n"


def test_undo_removes_a_created_file_and_a_second_undo_says_it_is_done(bench):
    bench.say("write")
    call = bench.call("write_file", path="new/poem.md", content="roses\n")
    assert bench.checkpoints.undo(CHAT, call).done == (Undone("new/poem.md", removed=True),)
    assert bench.file("new/poem.md") is None
    assert bench.checkpoints.undo(CHAT, call).cannot == (CannotUndo("new/poem.md", "undone"),)


def test_a_file_changed_since_is_left_alone_with_a_diff_until_forced(bench):
    bench.say("write")
    call = bench.call("write_file", path="a.txt", content="agent\n")
    (bench.workspace / "a.txt").write_text("person\n")
    report = bench.checkpoints.undo(CHAT, call)
    assert report.done == ()
    (changed,) = report.changed
    assert changed.path == "a.txt"
    assert "-agent" in changed.diff
    assert "+person" in changed.diff
    assert bench.file("a.txt") == b"person\n"
    assert bench.checkpoints.undo(CHAT, call, force=True).done == (Undone("a.txt", removed=True),)
    assert bench.file("a.txt") is None


def test_undo_since_a_message_restores_three_files(bench):
    for name in ("a", "b", "c"):
        (bench.workspace / name).write_text(f"{name} before\n")
    bench.say("first")
    bench.call("write_file", path="a", content="a first\n")
    point = bench.say("second")
    for name in ("a", "b", "c"):
        bench.call("write_file", path=name, content=f"{name} after\n")
    bench.call("write_file", path="d", content="new\n")
    report = bench.checkpoints.undo_since(CHAT, point)
    assert [undone.path for undone in report.done] == ["d", "c", "b", "a"]
    assert [bench.file(name) for name in "abcd"] == [b"a first\n", b"b before\n", b"c before\n", None]


def test_a_call_that_changes_nothing_leaves_no_checkpoint(bench):
    bench.say("edit")
    bench.call("edit_file", path="missing.txt", old="x", new="y")
    (bench.workspace / "same.txt").write_text("same")
    bench.call("write_file", path="same.txt", content="same")
    assert bench.checkpoints.changes(CHAT) == []


def test_commands_are_never_checkpointed_and_writes_are():
    tools = ToolRegistry.builtins()
    assert not can_undo(tools.get("run_shell"))
    assert can_undo(tools.get("write_file"))
    assert can_undo(tools.get("edit_file"))
    assert not can_undo(tools.get("read_file"))
    assert written_path(tools.get("write_file"), {"path": "x.md", "content": ""}) == "x.md"


def test_an_mcp_write_with_a_path_is_checkpointed(bench):
    def write(_context, path, content):
        (bench.workspace / path).write_text(content)
        return "ok"

    external = ExternalTool(
        "fs__write_file",
        "write",
        {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        write,
        group="fs",
    )
    assert written_path(external, {"path": "m.txt", "content": "x"}) == "m.txt"
    bench.gate._registry.register_external([external], group="fs")
    bench.say("mcp")
    call = bench.call("fs__write_file", path="m.txt", content="from mcp")
    assert bench.file("m.txt") == b"from mcp"
    assert bench.checkpoints.undo(CHAT, call).done == (Undone("m.txt", removed=True),)


def test_the_cap_prunes_the_oldest_and_undo_says_why(tmp_path):
    bench = make_bench(tmp_path, cap=2_500)
    bench.say("big")
    first = bench.call("write_file", path="a", content="a" * 1_000)
    bench.call("write_file", path="a", content="b" * 1_000)
    bench.call("write_file", path="a", content="c" * 1_000)
    assert bench.checkpoints.undo(CHAT, first).cannot == (CannotUndo("a", "not_kept"),)
    blobs = [path for path in (tmp_path / "data" / "checkpoints").iterdir() if not path.name.startswith(".")]
    assert sum(path.stat().st_size for path in blobs) <= 2_500


def test_undo_tells_a_file_grown_to_8_gb_changed_since_by_its_size_without_reading_it(bench):
    bench.say("write")
    call = bench.call("write_file", path="big.bin", content="agent\n")
    os.truncate(bench.workspace / "big.bin", 8 << 30)
    started = bytes_read()
    report = bench.checkpoints.undo(CHAT, call)
    assert bytes_read() - started < 5_000_000  # the diff's bounded look, not 8 GB
    assert [changed.path for changed in report.changed] == ["big.bin"]
    assert report.done == ()


def test_marks_count_lines_against_the_first_checkpoint(bench):
    (bench.workspace / "a.txt").write_text("1\n2\n3\n")
    bench.say("go")
    bench.call("edit_file", path="a.txt", old="2\n", new="two\nzwei\n")
    bench.call("write_file", path="b.txt", content="x\ny\n")
    marks = bench.checkpoints.marks(CHAT)
    assert (marks["a.txt"].created, marks["a.txt"].added, marks["a.txt"].removed) == (False, 2, 1)
    assert (marks["b.txt"].created, marks["b.txt"].added, marks["b.txt"].removed) == (True, 2, 0)


_FILES = ("a.txt", "sub/b.txt")
_TEXT = st.text(alphabet="xy\n", max_size=12)
_STEP = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(_FILES), _TEXT),
    st.tuples(st.just("edit"), st.sampled_from(_FILES), _TEXT),
    st.tuples(st.just("undo"), st.just(""), st.just("")),
    st.tuples(st.just("turn"), st.just(""), st.just("")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEP, max_size=14), pick=st.integers(min_value=0))
def test_any_writes_edits_and_undos_come_back_to_the_exact_bytes_of_a_chosen_message(steps, pick):
    with tempfile.TemporaryDirectory() as root:
        bench = make_bench(Path(root))
        points = [(bench.say("turn 0"), {name: None for name in _FILES})]
        calls: list[str] = []
        for kind, name, text in steps:
            if kind == "turn":  # undos reach back within a turn: an older one would change a later point
                points.append((bench.say("turn"), {name: bench.file(name) for name in _FILES}))
                calls.clear()
            elif kind == "write":
                calls.append(bench.call("write_file", path=name, content=text))
            elif kind == "edit" and (old := bench.file(name)):
                calls.append(bench.call("edit_file", path=name, old=old.decode(), new=text + "!"))
            elif kind == "undo" and calls:
                before = {name: bench.file(name) for name in _FILES}
                report = bench.checkpoints.undo(CHAT, calls.pop())
                assert not report.changed
                if not report.done:  # the call changed nothing: nothing to undo
                    assert {name: bench.file(name) for name in _FILES} == before
        message, snapshot = points[pick % len(points)]
        report = bench.checkpoints.undo_since(CHAT, message)
        assert not report.changed
        assert {name: bench.file(name) for name in _FILES} == snapshot


def blobs_of(bench) -> Path:
    return bench.workspace.parent / "data" / "checkpoints"


def test_a_blob_swapped_for_a_link_out_or_other_bytes_is_never_restored(tmp_path):
    """Blobs are read through descriptors, not following a link, and checked against their hash."""
    bench = make_bench(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("API_KEY=outside\n")
    for name, swap in (
        ("linked.txt", lambda blob: blob.symlink_to(outside)),
        ("other.txt", lambda blob: blob.write_text("API_KEY=planted\n")),
        ("fifo.txt", os.mkfifo),
    ):
        (bench.workspace / name).write_text("mine\n")
        bench.say("edit")
        call = bench.call("write_file", path=name, content="agent\n")
        blob = blobs_of(bench) / hashlib.sha256(b"mine\n").hexdigest()
        blob.unlink()
        swap(blob)
        report = bench.checkpoints.undo(CHAT, call)
        assert report.done == ()
        assert report.cannot == (CannotUndo(name, "not_kept"),)
        assert bench.file(name) == b"agent\n"
        blob.unlink()
    assert outside.read_text() == "API_KEY=outside\n"


def test_a_checkpoints_folder_swapped_for_a_link_out_gets_nothing_and_keeps_its_mode(tmp_path):
    bench = make_bench(tmp_path)
    bench.say("write")
    bench.call("write_file", path="a.txt", content="one\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    elsewhere.chmod(0o755)
    shutil.rmtree(blobs_of(bench))
    blobs_of(bench).symlink_to(elsewhere)
    call = bench.call("write_file", path="a.txt", content="two\n")
    assert bench.file("a.txt") == b"two\n"  # the write itself goes on, without a checkpoint
    assert list(elsewhere.iterdir()) == []
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755
    assert bench.checkpoints.undo(CHAT, call).done == ()
