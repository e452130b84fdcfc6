"""The layers of docs/architecture.md hold: each package imports only what is below it, read from the source."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "meowgent"


def imports() -> dict[str, set[str]]:
    """Every module of meowgent/ (as "meowgent/ui/app.py") and the modules it imports, TYPE_CHECKING ones too."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}: a relative import"
                names.update([node.module or "", *(f"{node.module}.{alias.name}" for alias in node.names)])
        found[path.relative_to(PACKAGE.parent).as_posix()] = names
    return found


def importers(module: str) -> set[str]:
    """The files of meowgent/ that import `module` or anything inside it."""
    return {path for path, names in imports().items() if any(n == module or n.startswith(module + ".") for n in names)}


def under(*folders: str) -> set[str]:
    return {path for path in imports() if path.startswith(tuple(f"meowgent/{folder}/" for folder in folders))}


def test_the_source_is_read():
    """The rules below would hold vacuously if nothing were found."""
    assert "meowgent/llm/client.py" in importers("ollama")
    assert "meowgent/ui/app.py" in importers("gradio")
    assert "meowgent/ui/app.py" in importers("meowgent.agent")
    assert "meowgent/ui/html/export.py" in importers("meowgent.chats")


def test_only_llm_imports_ollama():
    assert importers("ollama") <= under("llm")


def test_only_ui_imports_gradio():
    assert importers("gradio") <= under("ui")


@pytest.mark.parametrize("folder", ["persist", "chats", "reply"])
def test_the_agent_is_above_the_chats_the_store_and_the_reply_readers(folder):
    assert not importers("meowgent.agent") & under(folder)


def test_nothing_outside_ui_imports_ui():
    assert importers("meowgent.ui") <= under("ui")


def test_the_store_knows_nothing_of_the_chats_above_it():
    assert not importers("meowgent.chats") & under("persist")


def test_the_files_package_is_below_the_page_the_chats_and_the_agent():
    """meowgent/files/ serves the page and the gate: it knows no Gradio, no page, no chat service, no agent."""
    assert under("files")
    for above in ("gradio", "meowgent.ui", "meowgent.chats", "meowgent.agent"):
        assert not importers(above) & under("files"), above


def test_the_watch_layer_is_below_the_page():
    """watch/ (links, broadcasts) knows neither Gradio nor the page; only the page and watch/ itself use it."""
    assert under("watch")
    assert not (importers("gradio") | importers("meowgent.ui")) & under("watch")
    assert importers("meowgent.watch") <= under("ui", "watch")


def test_the_top_of_ui_is_the_assembly():
    """Everything else of the page lives in a room that says what it is (html/, routes/, state/, panels/, i18n/)."""
    top = {path for path in imports() if path.startswith("meowgent/ui/") and path.count("/") == 2}
    assert top == {"meowgent/ui/__init__.py", "meowgent/ui/app.py", "meowgent/ui/page.py"}


@pytest.mark.parametrize(
    "above",
    ["gradio", "starlette", "meowgent.ui.state", "meowgent.ui.routes", "meowgent.ui.panels", "meowgent.ui.app"],
)
def test_html_is_pure(above):
    """ui/html/ renders a value as HTML or words: no Gradio, no HTTP, nothing of the page around it."""
    assert under("ui/html")
    assert not importers(above) & under("ui/html"), above


@pytest.mark.parametrize("above", ["meowgent.ui.panels", "meowgent.ui.app", "meowgent.ui.page"])
def test_routes_know_no_panels(above):
    """The HTTP beside Gradio serves with or without the page's panels."""
    assert under("ui/routes")
    assert not importers(above) & under("ui/routes"), above


@pytest.mark.parametrize("above", ["meowgent.ui.panels", "meowgent.ui.routes", "meowgent.ui.app", "meowgent.ui.page"])
def test_the_page_state_knows_no_panels_and_no_routes(above):
    """A frame is made from a snapshot without the components it lands in or the server around it."""
    assert under("ui/state")
    assert not importers(above) & under("ui/state"), above


def test_the_catalogs_know_nothing_of_the_page():
    """i18n/ is data and a formatter: every room of the page words itself with it."""
    found = imports()
    for path in under("ui/i18n"):
        page = {
            name for name in found[path] if name.startswith("meowgent.ui.") and not name.startswith("meowgent.ui.i18n")
        }
        assert not page, path


def module_graph(folder: str) -> dict[str, set[str]]:
    """The files under meowgent/`folder`/ and the files there each imports (a name's longest module prefix)."""
    files = under(folder)
    module_of = {path.removesuffix(".py").removesuffix("/__init__").replace("/", "."): path for path in files}
    graph = {}
    for path in files:
        targets = set()
        for name in imports()[path]:
            parts = name.split(".")
            found = next(
                (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in module_of), None
            )
            if found is not None and module_of[found] != path:
                targets.add(module_of[found])
        graph[path] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: each strongly connected group of more than one file (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_circles_are_found():
    """The finder below finds a circle of three and ignores a chain."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_page_has_no_import_circles():
    """Two modules that need each other are one reason to change split in two; TYPE_CHECKING imports count."""
    assert circles(module_graph("ui")) == []
