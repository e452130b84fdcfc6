"""The search tools list_files and search_files, with both backends of search_files (ripgrep and Python's re)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from meowgent.config import default_workspace
from meowgent.tools.grep import MAX_MATCHES, ripgrep_executable
from meowgent.tools.search import _search
from meowgent.tools.spec import ToolError
from tests.tools.test_files import call

needs_rg = pytest.mark.skipif(ripgrep_executable(default_workspace()) is None, reason="ripgrep (rg) is not installed")
BACKENDS = [pytest.param("rg", marks=needs_rg), "python"]


def search(workspace: Path, pattern: str, backend: str, **options: object) -> str:
    """_search the way search_files calls it, with the backend forced; errors come back as text like run_tool."""
    try:
        return _search(workspace, pattern, max_chars=30_000, backend=backend, **options)  # type: ignore[arg-type]
    except ToolError as exc:
        return f"Error: {exc}"


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


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_skips_hard_links(linked: Path, backend: str) -> None:
    found = search(linked, "API_KEY", backend)
    assert "mine.txt:1: API_KEY=mine" in found
    assert "API_KEY=outside" not in found
    assert "hard links" in search(linked, "API_KEY", backend, path="linked.txt")
