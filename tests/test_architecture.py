"""agentcli's import rules (shared/DESIGN.md, "Folders"): no import cycle between modules, and no
import up a floor between folders.

The graph is read from the source with ``ast``, nothing is imported. An import inside a function
counts as much as one at the top of a module: a lazy import is still a dependency (it only runs
later). Imports under ``if TYPE_CHECKING:`` are exempt from every rule here: they never run and
only name the type of what a module is handed (e.g. ui's renderers naming the report they draw).

An edge goes to the module an import names (``from agentcli.store import records`` → the module
``agentcli.store.records``; ``from agentcli.config import Config`` → the package ``agentcli.config``),
not to the parent packages Python also runs on the way, as import-linter and grimp count them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentcli"

# Each module's folder: its subpackage under agentcli/ (cli, session, …), or for a module directly
# under agentcli/ its own name (trust, bus, …). The package's own __init__ is "agentcli".
# What each folder may import besides itself: a folder name, or one module by its full name when
# only that module of a folder is allowed. The floors, top to bottom, of DESIGN.md's table.
MAY_IMPORT: dict[str, set[str]] = {
    "__main__": {"cli"},  # `python -m agentcli`
    "cli": {"*"},  # commands, the REPL, rendering: everything below
    # The ACP server: a front end beside the chat, sharing the CLI's setup and actions, never a command.
    "acp": {
        "session",
        "store",
        "llm",
        "tools",
        "config",
        "trust",
        "trusted_config",
        "ui",
        "private_files",
        "agentcli",
        "agentcli.cli.setup",
        "agentcli.cli.common",
        "agentcli.cli.actions",
        "agentcli.cli.custom_commands",
        "agentcli.cli.chat_input",
    },  # fmt: skip
    "session": {
        "store",
        "llm",
        "tools",
        "plugins",
        "bus",
        "config",
        "trust",
        "redact",
        "private_files",
        "project_layout",
    },  # fmt: skip
    # Plugins get a read-only view of the store and the tool base class, never the session; and the
    # tools' path checks, so that a plugin's file reads ask as the read tool's do.
    "plugins": {"bus", "store", "config", "agentcli.tools.base", "agentcli.tools.common"},
    # Tools see store records (and ids), and the project-layout helper for path checks: not trust.
    "tools": {"agentcli.store.records", "agentcli.store.ids", "project_layout"},
    # The MCP client: its tools are tools, their results records; the SDK stays inside it.
    "mcp": {"agentcli.tools.base", "agentcli.tools.common", "agentcli.store.records", "llm", "agentcli"},
    # ui renders what it is handed: data types only (the records, what a compaction carries, MCP status).
    "ui": {"agentcli.store.records", "agentcli.store.artifacts", "agentcli.mcp.status"},
    # The config as the user's workspace trust allows it: config read, then screened by trust.
    "trusted_config": {"config", "trust", "trust_files", "project_layout"},
    "trust": {"config", "private_files", "project_layout", "trust_files"},
    # The files a project's config reads, found as their readers find them, and their digests.
    "trust_files": {"config", "project_layout"},
    "config": {"private_files"},  # a leaf but for writing the user TOML privately
    "redact": set(),
    "private_files": set(),
    "bus": set(),
    "project_layout": set(),
    "store": set(),
    "llm": set(),
    "demo": set(),
    "agentcli": set(),
}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} imports {self.target} (line {self.line})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "agentcli"


def _resolve(name: str) -> str | None:
    """The agentcli module an imported name belongs to (a module, or the package holding it)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, functions and classes included, except the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _targets(node: ast.AST, module: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            named = ".".join([*base, node.module] if node.module else base)
        else:
            named = node.module or ""
        for alias in node.names:
            full = f"{named}.{alias.name}"
            yield full if full in MODULES else named


def imports_of(module: str) -> list[Import]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: dict[str, Import] = {}
    for node in _nodes(tree):
        for name in _targets(node, module):
            target = _resolve(name) if name.split(".")[0] == "agentcli" else None
            if target and target != module and target not in found:
                found[target] = Import(module, target, node.lineno)  # type: ignore[attr-defined]
    return sorted(found.values(), key=lambda i: i.line)


GRAPH: dict[str, list[Import]] = {m: imports_of(m) for m in MODULES}


def cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one concrete
    circle through it so the message shows where to cut."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for edge in graph[v]:
            w = edge.target
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, component) for component in found]


def _circle(graph: dict[str, list[Import]], component: set[str]) -> list[str]:
    """A shortest way from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for edge in graph[v]:
            if edge.target == start:
                return [*paths[v], start]
            if edge.target in component and edge.target not in paths:
                paths[edge.target] = [*paths[v], edge.target]
                queue.append(edge.target)
    return sorted(component)


def allowed(edge: Import) -> bool:
    here, there = folder(edge.source), folder(edge.target)
    rules = MAY_IMPORT[here]
    return here == there or "*" in rules or there in rules or edge.target in rules


def is_command(module: str) -> bool:
    return folder(module) == "cli" and module.endswith("_cmd")


# ---------------------------------------------------------------------------------- the rules


def test_no_import_cycle_between_agentcli_modules() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_every_module_sits_on_a_floor_of_the_table() -> None:
    unplaced = sorted({folder(m) for m in MODULES} - set(MAY_IMPORT))
    assert not unplaced, f"folders missing from MAY_IMPORT (put them on a floor): {unplaced}"


def test_no_folder_imports_a_folder_above_it() -> None:
    upward = [str(edge) for edges in GRAPH.values() for edge in edges if not allowed(edge)]
    assert not upward, "imports up a floor:\n" + "\n".join(upward)


def test_cli_commands_depend_on_shared_setup_never_on_each_other() -> None:
    # main mounts the commands (each lazily, when it runs); nothing else in cli/ may reach one.
    crossing = [
        str(edge)
        for module, edges in GRAPH.items()
        if folder(module) == "cli" and module != "agentcli.cli.main"
        for edge in edges
        if is_command(edge.target)
    ]
    assert not crossing, "cli modules importing a command module:\n" + "\n".join(crossing)


# ------------------------------------------------------------------- the reader reads what is there


def test_the_graph_counts_lazy_imports_and_skips_type_checking_ones() -> None:
    assert "agentcli.cli.chat_cmd" in {e.target for e in GRAPH["agentcli.cli.main"]}  # in a function
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import agentcli.hinted\nelse:\n    import agentcli.other\n"
        "def f():\n    from agentcli.store import records\n"
    )
    names = {n for node in _nodes(ast.parse(source)) for n in _targets(node, "agentcli.cli.main")}
    assert names == {"typing", "agentcli.other", "agentcli.store.records"}


@pytest.mark.parametrize(
    ("source", "targets", "expected"),
    [
        ("agentcli.a", ["agentcli.b"], []),
        ("agentcli.a", ["agentcli.b", "agentcli.a"], [["agentcli.a", "agentcli.b", "agentcli.a"]]),
    ],
)
def test_a_circle_is_reported_with_its_path(
    source: str, targets: list[str], expected: list[list[str]]
) -> None:
    graph = {
        source: [Import(source, targets[0], 1)],
        targets[0]: [Import(targets[0], t, 1) for t in targets[1:]],
    }
    assert cycles(graph) == expected


MAX_MODULE_LINES = 500  # one screen per concept: a module past this is two concepts


def test_no_module_is_longer_than_a_concept() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
