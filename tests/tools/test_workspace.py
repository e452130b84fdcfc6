"""Workspace.resolve: whatever it returns is inside the root; whatever leads outside is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Workspace


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with links that stay inside, links that lead out, loops and dangling links."""
    base = tmp_path_factory.mktemp("tree")
    (base / "outside" / "dir").mkdir(parents=True)
    (base / "outside" / "secret.txt").write_text("secret")
    root = base / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "file.txt").write_text("x")
    (root / "a" / "b" / "deep.txt").write_text("x")
    links = {
        "in_link": "a",
        "abs_in": str(root / "a" / "b"),
        "out_link": "../outside",
        "abs_out": str(base / "outside"),
        "up_link": "..",
        "file_out": str(base / "outside" / "secret.txt"),
        "loop1": "loop2",
        "loop2": "loop1",
        "self": "self",
        "dangling_in": "nowhere",
        "dangling_out": "../nowhere",
        "a/back": "../..",
        "a/sibling": "../a/b",
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    return root


SAFE_SEGMENTS = [".", "a", "b", "file.txt", "deep.txt", "new", "in_link", "abs_in", "sibling"]
SEGMENTS = [*SAFE_SEGMENTS, "..", "", "out_link", "abs_out", "up_link", "file_out", "loop1", "self"]
SEGMENTS += ["dangling_in", "dangling_out", "back", "outside", "ws", "secret.txt"]


def inside(root: Path, path: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.commonpath([real_root, os.path.realpath(path)]) == real_root


@settings(max_examples=400, deadline=None)
@given(prefix=st.sampled_from(["", "/", "ROOT/", "BASE/"]), parts=st.lists(st.sampled_from(SEGMENTS), max_size=6))
@example(prefix="", parts=["loop1", "..", "out_link"])  # past a loop, realpath went on by the letter
@example(prefix="", parts=["loop1", "", ".."])
def test_resolve_never_returns_a_path_outside_and_refuses_every_escape(
    tree: Path, prefix: str, parts: list[str]
) -> None:
    path = prefix.replace("ROOT", str(tree)).replace("BASE", str(tree.parent)) + "/".join(parts)
    workspace = Workspace(tree)
    expected = os.path.realpath(os.path.join(tree, path))
    try:
        resolved = workspace.resolve(path)
    except ToolError as exc:
        refusal = str(exc)
    else:
        assert inside(tree, str(resolved)), f"{path!r} resolved to {resolved}, outside {tree}"
        assert str(resolved) == expected
        return
    assert "outside the workspace" in refusal or "symlink loop" in refusal


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(SAFE_SEGMENTS), min_size=1, max_size=6))
def test_paths_that_stay_inside_are_accepted(tree: Path, parts: list[str]) -> None:
    path = "/".join(parts)
    assert Workspace(tree).resolve(path) == Path(os.path.realpath(os.path.join(tree, path)))


@pytest.mark.parametrize(
    "path",
    ["../etc/passwd", "/etc/passwd", "a/../../outside", "out_link/secret.txt", "abs_out", "up_link", "file_out"],
)
def test_escapes_are_refused_naming_the_workspace(tree: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace") as caught:
        Workspace(tree).resolve(path)
    assert str(tree) in str(caught.value)
    assert "such as 'notes.md'" in str(caught.value)


def test_a_link_that_leads_out_is_called_a_link(tree: Path) -> None:
    with pytest.raises(ToolError, match=r"symbolic link leads to .*outside"):
        Workspace(tree).resolve("out_link/secret.txt")


@pytest.mark.parametrize("path", ["loop1", "self", "loop2/x"])
def test_symlink_loops_are_refused(tree: Path, path: str) -> None:
    with pytest.raises(ToolError, match="symlink loop"):
        Workspace(tree).resolve(path)


def test_nul_byte_is_refused(tree: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        Workspace(tree).resolve("a/file.txt\0.png")


def test_empty_path_absolute_path_inside_and_links_inside(tree: Path) -> None:
    workspace = Workspace(tree)
    assert workspace.resolve("") == tree
    assert workspace.resolve(".") == tree
    assert workspace.resolve(str(tree / "a" / "file.txt")) == tree / "a" / "file.txt"
    assert workspace.resolve("in_link/b/deep.txt") == tree / "a" / "b" / "deep.txt"
    assert workspace.resolve("dangling_in") == tree / "nowhere"


def test_root_given_through_a_link_is_resolved(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "ws_link").symlink_to(tree)
    workspace = Workspace(tmp_path / "ws_link")
    assert workspace.root == tree
    assert workspace.resolve("a") == tree / "a"


def test_relative_is_posix_and_dot_for_the_root(tree: Path) -> None:
    workspace = Workspace(tree)
    assert workspace.relative(tree / "a" / "b" / "deep.txt") == "a/b/deep.txt"
    assert workspace.relative(tree) == "."
