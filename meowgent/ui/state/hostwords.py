"""Where models run, in plain words: the model picker's "qwen3 · gpu-box", the status line's health of each host and
the host that answers.

Pure: `HostPool.statuses()` and the listed `ModelInfo`s in, the page's language out. The local Ollama is not named
by its address but as "this computer", a word of the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from meowgent.llm.hosts import HostStatus
from meowgent.llm.pins import Pinned, pinned
from meowgent.llm.types import ModelInfo
from meowgent.ui.i18n import en, t
from meowgent.ui.state.models import model_label


def where(host: str, *, local: bool, language: str) -> str:
    """A host as the picker names it: its short name, or "this computer"."""
    return t(language, "this_computer") if local else host


def picker_choices(
    models: Iterable[ModelInfo], *, local: frozenset[str] = frozenset(), language: str
) -> list[tuple[str, str]]:
    """(label, name) per model name, in listing order: a model on several hosts is one choice (the pool picks the
    host), labelled with every host it runs on, followed by a "qwen3 · gpu-box" choice per host that pins it there.
    `local`: the names of the hosts on this computer."""
    hosts: dict[str, list[str]] = {}
    first: dict[str, ModelInfo] = {}
    for info in models:
        first.setdefault(info.name, info)
        named = hosts.setdefault(info.name, [])
        if info.host is not None and info.host not in named:
            named.append(info.host)
    separator = t(language, "where_separator")
    choices = []
    for name, info in first.items():
        places = {host: where(host, local=host in local, language=language) for host in hosts[name]}
        label = model_label(info)
        choices.append((" · ".join([label, separator.join(places.values())]) if places else label, name))
        if len(places) > 1:
            choices += [(f"{name} · {place}", pinned(name, host)) for host, place in places.items()]
    return choices


def answered_by(answering: Pinned, *, local: frozenset[str], language: str) -> str:
    """The status line's model: "`qwen3:latest`, answered by gpu-box" (the model alone when no host serves it)."""
    if answering.host is None:
        return f"`{answering.model}`"
    host = where(answering.host, local=answering.host in local, language=language)
    return t(language, "answered_by", model=answering.model, host=host)


def local_host(statuses: Iterable[HostStatus]) -> frozenset[str]:
    """The name of the one host on this computer, which the page calls "this computer"; none when several are
    (two local servers on different ports keep their names, so they can be told apart)."""
    local = [status.name for status in statuses if status.local]
    return frozenset(local) if len(local) == 1 else frozenset()


def host_state(status: HostStatus, language: str, *, local: bool = False) -> str:
    """One host's health: "🟢 gpu-box", "🟢 gpu-box (2 answering)" or "🔴 gpu-box: can't be reached"."""
    name = where(status.name, local=local, language=language)
    if status.healthy:
        if status.running:
            return t(language, "host_running", name=name, running=status.running)
        return t(language, "host_ok", name=name)
    kind = status.kind or "unreachable"
    key = f"host_down_{kind}"
    if key not in en.TEXT:
        return t(language, "host_down_other", name=name, kind=kind)
    return t(language, key, name=name)


def hosts_line(statuses: Sequence[HostStatus], language: str) -> str:
    """The status line's row of every host's health."""
    local = local_host(statuses)
    states = t(language, "host_separator").join(
        host_state(status, language, local=status.name in local) for status in statuses
    )
    return t(language, "hosts_line", hosts=states)
