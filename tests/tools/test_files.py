"""The file tools, called the way the agent calls them: run_tool with a workspace in tmp_path."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.tools.files import MAX_MATCHES, _ripgrep, _search
from meowgent.tools.registry import ToolRegistry, run_tool
from meowgent.tools.spec import ToolError

needs_rg = pytest.mark.skipif(_ripgrep() is None, reason="ripgrep (rg) is not installed")
BACKENDS = [pytest.param("rg", marks=needs_rg), "python"]


def call(workspace: Path, name: str, /, **arguments: object) -> str:
    return run_tool(name, arguments, settings=Settings(workspace=workspace))


def search(workspace: Path, pattern: str, backend: str, **options: object) -> str:
    """_search the way search_files calls it, with the backend forced; errors come back as text like run_tool."""
    try:
        return _search(workspace, pattern, max_chars=30_000, backend=backend, **options)  # type: ignore[arg-type]
    except ToolError as exc:
        return f"Error: {exc}"


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


# list_files


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project with folders the tools must skip and links in and out."""
    for name in ["README.md", "src/app.py", "src/util/text.py", "src/util/data.json", "docs/a.txt", "docs/b.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"needle in {name}\n")
    for skipped in [".git/config", "node_modules/pkg/index.js", ".venv/lib/x.py", "venv/y.py", "src/__pycache__/a.pyc"]:
        (tmp_path / skipped).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped).write_text("needle hidden\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "env" / "site.py").write_text("needle in a venv\n")
    (tmp_path / "empty").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n")
    (tmp_path / "out_dir").symlink_to(outside)
    (tmp_path / "out_file.txt").symlink_to(outside / "secret.txt")
    (tmp_path / "docs_link").symlink_to("docs")
    return tmp_path


def test_list_is_tree_ordered_and_skips_what_it_should(project: Path) -> None:
    assert call(project, "list_files") == "\n".join(
        [
            "11 entries in the workspace match '**/*'; showing 1-11:",
            "README.md",
            "docs/",
            "docs/a.txt",
            "docs/b.txt",
            "docs_link/",
            "empty/",
            "src/",
            "src/app.py",
            "src/util/",
            "src/util/data.json",
            "src/util/text.py",
        ]
    )


def test_list_patterns(project: Path) -> None:
    assert call(project, "list_files", pattern="*.py").splitlines()[1:] == ["src/app.py", "src/util/text.py"]
    assert call(project, "list_files", pattern="src/*.py").splitlines()[1:] == ["src/app.py"]
    assert call(project, "list_files", pattern="**/*.{json,md}").splitlines()[1:] == ["README.md", "src/util/data.json"]
    assert call(project, "list_files", path="src", pattern="util/*").splitlines() == [
        "2 entries in src match 'util/*'; showing 1-2:",
        "src/util/data.json",
        "src/util/text.py",
    ]
    assert call(project, "list_files", pattern="[ab].txt").splitlines()[1:] == ["docs/a.txt", "docs/b.txt"]
    assert call(project, "list_files", pattern="*.rs").startswith("Nothing in the workspace matches '*.rs'")


@pytest.mark.parametrize("pattern", ["../*", "/etc/*", "src/../../*", "**/../**"])
def test_list_refuses_patterns_that_leave_the_folder(project: Path, pattern: str) -> None:
    assert "must stay inside the folder searched" in call(project, "list_files", pattern=pattern)


def test_list_refuses_bad_paths(project: Path) -> None:
    assert "use read_file" in call(project, "list_files", path="README.md")
    assert "does not exist (did you mean 'docs'?)" in call(project, "list_files", path="doc")
    assert "outside the workspace" in call(project, "list_files", path="out_dir")
    assert "outside the workspace" in call(project, "list_files", path="..")
    assert "has a '[' without its ']'" in call(project, "list_files", pattern="[ab.txt")
    assert call(project, "list_files", path="empty").startswith("Nothing in empty matches")


def test_list_shows_names_that_are_not_utf8_with_a_replacement_character(tmp_path: Path) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    assert call(tmp_path, "list_files").splitlines()[1:] == ["caf\ufffd.txt"]


def test_list_pages(tmp_path: Path) -> None:
    for n in range(250):
        (tmp_path / f"f{n:03}.txt").write_text("")
    first = call(tmp_path, "list_files")
    assert first.splitlines()[0] == "250 entries in the workspace match '**/*'; showing 1-200:"
    assert first.splitlines()[-2] == "f199.txt"
    assert first.endswith("[50 more; call list_files with offset=200 to continue]")
    rest = call(tmp_path, "list_files", offset=200).splitlines()
    assert rest[0] == "250 entries in the workspace match '**/*'; showing 201-250:"
    assert rest[1:] == [f"f{n:03}.txt" for n in range(200, 250)]
    assert "past the end: 250 entries match" in call(tmp_path, "list_files", offset=250)


# search_files: both backends


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_format_and_skips(project: Path, backend: str) -> None:
    (project / "image.bin").write_bytes(b"needle\x00\x01")
    (project / "huge.txt").write_bytes(b"needle\n" + b"x" * (2 * 1024 * 1024))
    assert search(project, "needle", backend) == "\n".join(
        [
            "6 matching lines for 'needle' in the workspace:",
            "README.md:1: needle in README.md",
            "docs/a.txt:1: needle in docs/a.txt",
            "docs/b.txt:1: needle in docs/b.txt",
            "src/app.py:1: needle in src/app.py",
            "src/util/data.json:1: needle in src/util/data.json",
            "src/util/text.py:1: needle in src/util/text.py",
        ]
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_path_glob_and_single_file(project: Path, backend: str) -> None:
    assert search(project, r"needle in \S+\.py", backend, path="src", glob="*.py").splitlines()[1:] == [
        "src/app.py:1: needle in src/app.py",
        "src/util/text.py:1: needle in src/util/text.py",
    ]
    assert search(project, "needle", backend, path="src", glob="util/*.json").splitlines()[1:] == [
        "src/util/data.json:1: needle in src/util/data.json"
    ]
    assert search(project, "needle", backend, path="src/util/text.py") == (
        "1 matching line for 'needle' in src/util/text.py:\nsrc/util/text.py:1: needle in src/util/text.py"
    )
    assert search(project, "needle", backend, path="docs", glob="*.md") == "No matches for 'needle' in docs."


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_text_cjk_invalid_utf8_crlf_and_long_lines(tmp_path: Path, backend: str) -> None:
    (tmp_path / "zh.md").write_text("第一行\n你好，世界\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 world, ok\n")
    (tmp_path / "win.txt").write_bytes(b"a world\r\nb\r\n")
    (tmp_path / "wide.txt").write_text("world " + "y" * 1_000 + "\n")
    assert search(tmp_path, "世界$", backend) == "1 matching line for '世界$' in the workspace:\nzh.md:2: 你好，世界"
    assert search(tmp_path, "world$", backend).splitlines()[1:] == ["win.txt:1: a world"]
    lines = search(tmp_path, "world", backend).splitlines()
    assert lines[1] == "bad.txt:1: caf\ufffd world, ok"
    assert lines[2] == "wide.txt:1: world " + "y" * 294 + " …"


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_caps_the_number_of_matches(tmp_path: Path, backend: str) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 500)
    lines = search(tmp_path, "hit", backend).splitlines()
    assert lines[0].startswith(f"Showing the first {MAX_MATCHES} matching lines for 'hit' in the workspace; there are")
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1] == f"many.txt:{MAX_MATCHES}: hit"


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_refuses_bad_input(project: Path, backend: str) -> None:
    (project / "blob.bin").write_bytes(b"\x00" * 10)
    assert search(project, "(a", backend).startswith(
        "Error: '(a' is not a valid regular expression: missing ), unterminated subpattern at position 0."
    )
    assert "pattern is empty" in search(project, "", backend)
    assert "outside the workspace" in search(project, "x", backend, path="../")
    assert "outside the workspace" in search(project, "x", backend, path="out_file.txt")
    assert "must stay inside the folder" in search(project, "x", backend, glob="../*.py")
    assert "blob.bin is a binary file (10 bytes); search_files only handles text" in search(
        project, "x", backend, path="blob.bin"
    )
    assert "does not exist" in search(project, "x", backend, path="nope")


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_stops_a_catastrophic_regex_in_time(tmp_path: Path, backend: str) -> None:
    (tmp_path / "a.txt").write_text("a" * 60 + "!\n")
    started = time.monotonic()
    result = search(tmp_path, "(a+)+$", backend, timeout=1.0)
    assert time.monotonic() - started < 5
    if backend == "rg":  # linear time: it simply finishes
        assert result == "No matches for '(a+)+$' in the workspace."
    else:
        assert result.startswith("Error: search_files stopped after 1 seconds without finishing.")


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_stop_button(tmp_path: Path, backend: str) -> None:
    (tmp_path / "a.txt").write_text("a" * 60 + "!\n")
    stop = threading.Event()
    stop.set()
    result = search(tmp_path, "(?<=a)(a+)+$", backend, stop=stop, timeout=30.0)  # look-behind: Python for both
    assert result == "Error: search_files was stopped."


@needs_rg
def test_backends_agree(project: Path) -> None:
    (project / "mixed.txt").write_bytes("\ufeffneedle bom\r\nαβγ needle\n\n  indented needle\nlast".encode())
    (project / "weird name [1].txt").write_text("needle with a strange name\n")
    (project / os.fsdecode(b"latin1-\xe9.txt")).write_text("needle in a file whose name is not UTF-8\n")
    cases = [
        ("needle", {}),
        ("^$", {}),
        (r"(?i)NEEDLE\s+\w+$", {}),
        ("needle", {"glob": "**/*.txt"}),
        ("needle", {"glob": "*.{py,json}"}),
        ("needle", {"path": "docs_link"}),
        (r"(?<=in )src", {}),  # look-behind: ripgrep refuses it, so both end up in Python
    ]
    for pattern, options in cases:
        assert search(project, pattern, "rg", **options) == search(project, pattern, "python", **options), pattern


def test_search_files_tool_uses_the_same_format(project: Path) -> None:
    assert call(project, "search_files", pattern="needle", path="docs") == (
        "2 matching lines for 'needle' in docs:\ndocs/a.txt:1: needle in docs/a.txt\ndocs/b.txt:1: needle in docs/b.txt"
    )
    assert call(project, "search_files", pattern="[", path="docs").startswith(
        "Error: '[' is not a valid regular expression: unterminated character set"
    )


# ---- issue 13: hard links, swapped folders, runaway reads ----


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A workspace holding a hard link to a file outside it."""
    (tmp_path / "outside.txt").write_text("API_KEY=outside\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "mine.txt").write_text("API_KEY=mine\n")
    os.link(tmp_path / "outside.txt", workspace / "linked.txt")
    return workspace


def test_a_file_with_another_hard_link_is_not_read_or_edited(linked: Path) -> None:
    read = call(linked, "read_file", path="linked.txt")
    assert read.startswith("Error: linked.txt has 2 hard links")
    assert "API_KEY" not in read
    assert call(linked, "edit_file", path="linked.txt", old="outside", new="x").startswith("Error: linked.txt has 2")
    assert (linked.parent / "outside.txt").read_text() == "API_KEY=outside\n"


def test_writing_over_a_hard_link_leaves_the_other_name_alone(linked: Path) -> None:
    assert call(linked, "write_file", path="linked.txt", content="new\n").startswith("Replaced linked.txt")
    assert (linked.parent / "outside.txt").read_text() == "API_KEY=outside\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_skips_hard_links(linked: Path, backend: str) -> None:
    found = search(linked, "API_KEY", backend)
    assert "mine.txt:1: API_KEY=mine" in found
    assert "API_KEY=outside" not in found
    assert "hard links" in search(linked, "API_KEY", backend, path="linked.txt")


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
