"""The file tools read_file, write_file and edit_file, called the way the agent calls them: run_tool with a
workspace in tmp_path."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from pathlib import Path

from meowgent.config import Settings
from meowgent.tools.registry import ToolRegistry, run_tool


def call(workspace: Path, name: str, /, **arguments: object) -> str:
    return run_tool(name, arguments, settings=Settings(workspace=workspace))


def leftovers(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".tmp")]


def test_tools_are_registered_with_their_risk() -> None:
    tools = ToolRegistry.builtins().all()
    assert {name: tools[name].risky for name in ("read_file", "list_files", "search_files")} == dict.fromkeys(
        ("read_file", "list_files", "search_files"), False
    )
    assert tools["write_file"].risky
    assert tools["edit_file"].risky
    parameters = tools["read_file"].spec().parameters
    assert parameters["properties"]["offset"]["minimum"] == 0
    assert parameters["required"] == ["path"]


# read_file


def test_read_numbers_lines_and_gives_the_total(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("alpha\nbeta\n\tgamma\n")
    assert call(tmp_path, "read_file", path="notes.md") == (
        "notes.md: 3 lines; showing lines 1-3.\n     1│alpha\n     2│beta\n     3│\tgamma"
    )


def test_read_pages_with_an_offset_hint(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    first = call(tmp_path, "read_file", path="long.txt")
    assert first.startswith("long.txt: 1,000 lines; showing lines 1-400.")
    assert "   400│line 400\n" in first
    assert "line 401" not in first
    assert first.endswith("[600 more lines; call read_file with offset=400 to continue]")
    second = call(tmp_path, "read_file", path="long.txt", offset=400, limit=10)
    assert second.splitlines()[1] == "   401│line 401"
    assert second.endswith("call read_file with offset=410 to continue]")
    last = call(tmp_path, "read_file", path="long.txt", offset=990)
    assert last.splitlines()[-1] == "  1000│line 1000"
    assert "offset=" not in last


def test_read_stops_a_page_at_the_output_limit(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("".join(f"{n:04} " + "x" * 95 + "\n" for n in range(500)))
    text = run_tool("read_file", {"path": "wide.txt"}, settings=Settings(workspace=tmp_path, max_tool_output=5_000))
    assert len(text) <= 5_000
    assert "characters cut" not in text  # the tool paged on its own, the registry did not have to cut
    shown = len(text.splitlines()) - 2
    assert 10 < shown < 50
    assert text.endswith(f"call read_file with offset={shown} to continue]")


def test_read_cuts_very_long_lines(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 5_000 + "\nshort\n")
    text = call(tmp_path, "read_file", path="min.js")
    assert "a" * 2_000 + " … [line cut: 3,000 more bytes; call read_file with byte_offset=2000 to read on]" in text
    assert "     2│short" in text
    assert call(tmp_path, "read_file", path="min.js", byte_offset=4_990) == (
        "min.js: 5,007 bytes; showing bytes 4,990-5,007 (lines are not numbered here).\naaaaaaaaaa\nshort\n"
    )


def test_read_cjk_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "中文.txt").write_bytes("\ufeff你好，世界\r\n日本語のテキスト\r\n".encode())
    assert call(tmp_path, "read_file", path="中文.txt") == (
        "中文.txt: 2 lines; showing lines 1-2.\n     1│你好，世界\n     2│日本語のテキスト"
    )


def test_read_replaces_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 au lait\nok\n")
    assert "     1│caf\ufffd au lait" in call(tmp_path, "read_file", path="latin1.txt")


def test_read_refuses_binary_and_reports_the_size(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00" + bytes(1_991))
    assert call(tmp_path, "read_file", path="image.png") == (
        "Error: image.png is a binary file (2,000 bytes); read_file only handles text."
    )


def test_read_refuses_folders_missing_files_and_paths_outside(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print()\n")
    assert "use list_files" in call(tmp_path, "read_file", path="src")
    missing = call(tmp_path, "read_file", path="src/mian.py")
    assert missing.startswith("Error: src/mian.py does not exist (did you mean 'main.py'?)")
    assert "outside the workspace" in call(tmp_path, "read_file", path="../secret.txt")
    assert "outside the workspace" in call(tmp_path, "read_file", path="/etc/hostname")


def test_read_offset_past_the_end_names_the_line_count(tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text("one\ntwo\nthree\n")
    assert call(tmp_path, "read_file", path="short.txt", offset=3) == (
        "Error: offset 3 is past the end of short.txt, which has 3 lines; use an offset from 0 to 2."
    )


def test_read_validates_arguments(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    assert "'offset': Input should be greater than or equal to 0" in call(
        tmp_path, "read_file", path="a.txt", offset=-1
    )
    assert "missing required argument 'path'" in call(tmp_path, "read_file")
    assert "unknown argument 'lines'" in call(tmp_path, "read_file", path="a.txt", lines=3)


def test_read_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    assert call(tmp_path, "read_file", path="empty.txt") == "empty.txt is empty (0 lines)."


# write_file


def test_write_creates_parent_folders_and_reports_size(tmp_path: Path) -> None:
    result = call(tmp_path, "write_file", path="docs/zh/读我.md", content="# 标题\n正文\n")
    assert result == "Created docs/zh/读我.md: 16 bytes, 2 lines."
    assert (tmp_path / "docs" / "zh" / "读我.md").read_text(encoding="utf-8") == "# 标题\n正文\n"
    assert leftovers(tmp_path / "docs" / "zh") == []


def test_write_replaces_atomically_and_keeps_the_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    assert call(tmp_path, "write_file", path="run.sh", content="echo new") == "Replaced run.sh: 8 bytes, 1 line."
    assert script.read_bytes() == b"echo new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert leftovers(tmp_path) == []


def test_write_gives_a_new_file_the_usual_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    call(tmp_path, "write_file", path="new.txt", content="x")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask


def test_write_through_a_link_inside_replaces_the_target(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    assert call(tmp_path, "write_file", path="alias.txt", content="new") == "Replaced real.txt: 3 bytes, 1 line."
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


def test_write_refuses_folders_paths_outside_and_unencodable_text(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert call(tmp_path, "write_file", path="src", content="x") == (
        "Error: src is a folder; give the path of a file, such as 'src/notes.md'."
    )
    assert "outside the workspace" in call(tmp_path, "write_file", path="../evil.txt", content="x")
    assert not (tmp_path.parent / "evil.txt").exists()
    assert "cannot be written as UTF-8 at position 2" in call(tmp_path, "write_file", path="a.txt", content="ab\ud800")
    assert not (tmp_path / "a.txt").exists()


def test_write_under_a_file_says_it_could_not(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("x")
    assert call(tmp_path, "write_file", path="notes.md/inner.txt", content="x").startswith(
        "Error: could not write notes.md/inner.txt:"
    )


# edit_file


def test_edit_replaces_one_occurrence_and_shows_a_diff(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    print('hi')\n\nmain()\n")
    result = call(tmp_path, "edit_file", path="app.py", old="    print('hi')\n", new="    print('hello')\n")
    assert result.splitlines()[:3] == ["Edited app.py at line 2.", "--- a/app.py", "+++ b/app.py"]
    assert "-    print('hi')\n+    print('hello')" in result
    assert (tmp_path / "app.py").read_text() == "def main():\n    print('hello')\n\nmain()\n"


def test_edit_cjk(tmp_path: Path) -> None:
    (tmp_path / "诗.txt").write_text("床前明月光\n疑是地上霜\n", encoding="utf-8")
    call(tmp_path, "edit_file", path="诗.txt", old="地上霜", new="天上霜")
    assert (tmp_path / "诗.txt").read_text(encoding="utf-8") == "床前明月光\n疑是天上霜\n"


def test_edit_keeps_mode_and_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    target = tmp_path / "mixed.txt"
    target.write_bytes(b"caf\xe9\nold line\n\xff\xfe end\n")
    target.chmod(0o604)
    result = call(tmp_path, "edit_file", path="mixed.txt", old="old line", new="new line")
    assert target.read_bytes() == b"caf\xe9\nnew line\n\xff\xfe end\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert " caf\ufffd" in result  # diff context shows the bad byte as a replacement character
    assert leftovers(tmp_path) == []


def test_edit_matches_crlf_files_with_plain_newlines(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call(tmp_path, "edit_file", path="win.txt", old="one\ntwo\n", new="1\n2\n")
    assert (tmp_path / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_ambiguous_gives_the_count_and_lines(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    assert call(tmp_path, "edit_file", path="x.py", old="x = 1", new="x = 3") == (
        "Error: old appears 3 times in x.py (at lines 1, 3, 4); "
        "include more of the surrounding lines in old so that it matches exactly once."
    )
    assert (tmp_path / "x.py").read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"


def test_edit_missing_old_with_hints(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("if x:\n\treturn 1\n")
    assert call(tmp_path, "edit_file", path="f.py", old="nothing like it", new="y") == (
        "Error: old does not appear in f.py; read the file again with read_file and copy the text exactly."
    )
    spaces = call(tmp_path, "edit_file", path="f.py", old="if x:\n    return 1", new="y")
    assert "it does if spaces, tabs and line breaks are ignored" in spaces
    numbered = call(tmp_path, "edit_file", path="f.py", old="     1│if x:", new="y")
    assert "line-number prefixes" in numbered


def test_the_hints_read_a_huge_old_in_linear_time(tmp_path: Path) -> None:
    """200,000 line breaks: ten times the 20,000 that took 2.5 s (and 248 s at this size) with a backtracking regex."""
    (tmp_path / "f.py").write_text("if x:\n\treturn 1\n")
    for old in ("\n" * 200_000 + "     1│if x:", "\n" * 200_000 + "z"):
        answer = call(tmp_path, "edit_file", path="f.py", old=old, new="y")
        assert ("line-number prefixes" in answer) == old.endswith("if x:")


def test_edit_refuses_empty_or_unchanged_text_binary_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.bin").write_bytes(b"a\x00b")
    assert "old is empty" in call(tmp_path, "edit_file", path="a.txt", old="", new="x")
    assert "nothing to change" in call(tmp_path, "edit_file", path="a.txt", old="a", new="a")
    assert call(tmp_path, "edit_file", path="b.bin", old="a", new="c") == (
        "Error: b.bin is a binary file (3 bytes); edit_file only handles text."
    )
    assert "(write_file creates files)" in call(tmp_path, "edit_file", path="c.txt", old="a", new="c")
    assert "outside the workspace" in call(tmp_path, "edit_file", path="/etc/hosts", old="a", new="c")


def test_edit_caps_a_long_diff(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("start\n" + "old\n" * 2_000)
    result = call(tmp_path, "edit_file", path="big.txt", old="start\n" + "old\n" * 2_000, new="new\n" * 2_000)
    assert "characters cut" in result
    assert len(result) < 4_500
    assert (tmp_path / "big.txt").read_text() == "new\n" * 2_000


def test_an_edit_too_big_to_compare_says_its_diff_is_rough(tmp_path: Path) -> None:
    """difflib took 50 s on 170 KB of these lines; this is ten times that, compared within a bounded work."""
    (tmp_path / "big.txt").write_text("keep\n" + "x\n" * 850_000 + "end\n")
    result = call(tmp_path, "edit_file", path="big.txt", old="x\n" * 850_000, new="x\ny\n" * 990)
    assert result.startswith("Edited big.txt at line 2. The change is too big to compare line by line, so the diff")
    assert result.splitlines()[1:4] == ["--- a/big.txt", "+++ b/big.txt", "@@ -1,850002 +1,1982 @@"]
    assert (tmp_path / "big.txt").read_text() == "keep\n" + "x\ny\n" * 990 + "end\n"


# ---- issue 13: hard links, swapped folders, runaway reads ----


def test_a_file_with_another_hard_link_is_not_read_or_edited(linked: Path) -> None:
    read = call(linked, "read_file", path="linked.txt")
    assert read.startswith("Error: linked.txt has 2 hard links")
    assert "API_KEY" not in read
    assert call(linked, "edit_file", path="linked.txt", old="outside", new="x").startswith("Error: linked.txt has 2")
    assert (linked.parent / "outside.txt").read_text() == "API_KEY=outside\n"


def test_writing_over_a_hard_link_leaves_the_other_name_alone(linked: Path) -> None:
    assert call(linked, "write_file", path="linked.txt", content="new\n").startswith("Replaced linked.txt")
    assert (linked.parent / "outside.txt").read_text() == "API_KEY=outside\n"


def _swap_forever(folder: Path, away: Path, link_to: Path, stop: threading.Event) -> None:
    """Swap `folder` for a symbolic link to `link_to` and back, as fast as possible, until told to stop."""
    while not stop.is_set():
        folder.rename(away)
        with contextlib.suppress(FileExistsError):  # a write made the missing folder again meanwhile
            folder.symlink_to(link_to)
            folder.unlink()
        while away.exists():  # put the real one back, over whatever a write made meanwhile
            try:
                away.rename(folder)
            except OSError:
                shutil.rmtree(folder, ignore_errors=True)
        time.sleep(0)  # let the reader in at every point of the cycle, also on a busy machine


def test_a_folder_swapped_for_a_link_between_check_and_open_never_leads_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text("SECRET outside\n")
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "docs" / "note.txt").write_text("inside\n")
    stop = threading.Event()
    swapper = threading.Thread(target=_swap_forever, args=(workspace / "docs", workspace / ".docs-away", outside, stop))
    swapper.start()
    try:
        results = [call(workspace, "read_file", path="docs/note.txt") for _ in range(2_000)]
        writes = [call(workspace, "write_file", path="docs/new.txt", content="x") for _ in range(200)]
        searches = [call(workspace, "search_files", pattern="S.CRET|inside") for _ in range(100)]
    finally:
        stop.set()
        swapper.join()
    assert not any("SECRET" in result for result in results + searches)
    assert not (outside / "new.txt").exists(), writes
    assert "inside" in call(workspace, "read_file", path="docs/note.txt")  # the same read works once it holds still


def test_a_huge_single_line_is_read_in_a_window_with_flat_memory(tmp_path: Path) -> None:
    import tracemalloc

    huge = tmp_path / "huge.txt"
    with huge.open("wb") as file:  # 300 MB, sparse: text first, then one endless line of zero bytes
        file.write(b"a" * 10_000)
        file.truncate(300 * 1024 * 1024)
    tracemalloc.start()
    try:
        text = call(tmp_path, "read_file", path="huge.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024, f"{peak:,} bytes"
    assert text.startswith("huge.txt: 1 line; showing lines 1-1.\n     1│" + "a" * 2_000 + " … [line cut: ")
    assert "byte_offset=2000 to read on]" in text
    window = call(tmp_path, "read_file", path="huge.txt", byte_offset=9_990)
    assert window.startswith("huge.txt: 314,572,800 bytes; showing bytes 9,990-")
    assert window.endswith("to continue]")


def test_a_byte_window_starts_and_ends_on_whole_characters(tmp_path: Path) -> None:
    (tmp_path / "cjk.txt").write_text("你好世界" * 10)  # 3 bytes each
    text = call(tmp_path, "read_file", path="cjk.txt", byte_offset=1)
    assert text.splitlines()[1].startswith("好世界你好")  # the cut first character is skipped
    assert "showing bytes 3-120" in text
