"""The layers of docs/architecture.md hold: each package imports only what is below it, read from the source."""

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "meowgent"


@functools.cache  # the source does not change during a run; parsing all of it for each rule took 100 s of CPU
def imports() -> dict[str, set[str]]:
    """Every module of meowgent/ (as "meowgent/ui/app.py") and the modules it imports, TYPE_CHECKING ones too.
    Read-only: every test shares the one result."""
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


def module_file(name: str) -> str | None:
    """The file of meowgent/ that an imported name stands for: the deepest module it names, None outside meowgent/."""
    parts = name.split(".")
    while parts and parts[0] == "meowgent":
        for candidate in (Path(*parts).with_suffix(".py"), Path(*parts, "__init__.py")):
            if (PACKAGE.parent / candidate).is_file():
                return candidate.as_posix()
        parts.pop()
    return None


def import_graph() -> dict[str, set[str]]:
    """Every file of meowgent/ and the files of meowgent/ it imports (in a function or under TYPE_CHECKING too)."""
    graph = {}
    for path, names in imports().items():
        graph[path] = {found for name in names if (found := module_file(name)) not in (None, path)}
    return graph


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The groups of modules that import each other, directly or through others (each group as one set)."""
    reach = {module: reachable(graph, module) for module in graph}
    return {
        frozenset({module} | {other for other in found if module in reach[other]})
        for module, found in reach.items()
        if module in found
    }


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules `start` imports, directly or not (itself only if a circle leads back to it)."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def a_circle(graph: dict[str, set[str]], members: frozenset[str]) -> list[str]:
    """One way round a circle, from its first member back to it: the imports a reader would follow."""
    start = min(members)
    paths = {start: [start]}
    todo = [start]
    while todo:
        module = todo.pop(0)
        for imported in sorted(graph[module] & members):
            if imported == start:
                return [*paths[module], start]
            if imported not in paths:
                paths[imported] = [*paths[module], imported]
                todo.append(imported)
    raise AssertionError(f"{sorted(members)} is not a circle")


def test_circles_are_found():
    """The check below would pass vacuously if it could not see a circle, a long one or one through a package."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == {frozenset({"a", "b", "c"}), frozenset({"e"})}
    assert a_circle(graph, frozenset({"a", "b", "c"})) == ["a", "b", "c", "a"]
    assert module_file("meowgent.tools.ToolRegistry") == "meowgent/tools/__init__.py"
    assert module_file("meowgent.policy.actions.Rule") == "meowgent/policy/actions.py"
    assert module_file("gradio.Blocks") is None
    assert "meowgent/policy/actions.py" in import_graph()["meowgent/policy/commands.py"]


def test_no_module_imports_itself_through_others():
    """A circle means neither side can be read, tested or moved alone: what both need belongs below them."""
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles: " + "; ".join(" -> ".join(a_circle(graph, c)) for c in sorted(found, key=min))
