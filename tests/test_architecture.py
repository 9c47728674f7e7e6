"""agentcli's import rules (docs/architecture.md, "Folders"): no import cycle between modules, and no
import up a floor between folders.

The graph is read from the source with ``ast``, nothing is imported. An import inside a function
counts as much as one at the top of a module: a lazy import is still a dependency (it only runs
later). So does one under ``if TYPE_CHECKING:``: a module that names another's type is written
against it, and a circle through type-only imports is still a circle to read and to change (one
ran through the loop and three helpers that took the whole loop back, unseen while they were exempt).

An edge goes to the module an import names (``from agentcli.store import records`` → the module
``agentcli.store.records``; ``from agentcli.config import Config`` → the package ``agentcli.config``),
not to the parent packages Python also runs on the way, as import-linter and grimp count them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentcli"

# Each module's folder: its subpackage under agentcli/ (cli, session, …), or for a module directly
# under agentcli/ its own name (trust, bus, …). The package's own __init__ is "agentcli".
# What each folder may import besides itself: a folder name, or one module by its full name when
# only that module of a folder is allowed. The floors, top to bottom, of docs/architecture.md's
# table (the test below holds the two equal).
MAY_IMPORT: dict[str, set[str]] = {
    "__main__": {"cli"},  # `python -m agentcli`
    "cli": {"*"},  # commands, the REPL, rendering: everything below
    # The ACP server: a front end beside the chat; what it shares with the CLI is app's, never cli's.
    "acp": {
        "app",
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
    },  # fmt: skip
    # What both front ends share (building a session, the actions, custom commands, attachments).
    "app": {
        "session",
        "store",
        "llm",
        "tools",
        "plugins",
        "mcp",
        "bus",
        "config",
        "trusted_config",
        "ui",
        "private_files",
        "project_layout",
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
    # Plugins get a read-only view of the store and the tool base class (with its params), never the
    # session; and the tools' path checks, so that a plugin's file reads ask as the read tool's do.
    "plugins": {
        "bus",
        "store",
        "config",
        "agentcli.tools.base",
        "agentcli.tools.params",
        "agentcli.tools.common",
    },
    # Tools see store records (and ids), and the project-layout helper for path checks: not trust.
    "tools": {"agentcli.store.records", "agentcli.store.ids", "project_layout"},
    # The MCP client: its tools are tools, their results records; the SDK stays inside it.
    "mcp": {
        "agentcli.tools.base",
        "agentcli.tools.params",
        "agentcli.tools.common",
        "agentcli.store.records",
        "llm",
        "agentcli",
    },
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


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node: functions, classes and ``if TYPE_CHECKING:`` bodies included."""
    return ast.walk(tree)


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


def test_the_graph_counts_lazy_and_type_checking_imports() -> None:
    assert "agentcli.cli.chat_cmd" in {e.target for e in GRAPH["agentcli.cli.main"]}  # in a function
    assert "agentcli.session.runtime" in {e.target for e in GRAPH["agentcli.session.toolset"]}  # type only
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import agentcli.hinted\nelse:\n    import agentcli.other\n"
        "def f():\n    from agentcli.store import records\n"
    )
    names = {n for node in _nodes(ast.parse(source)) for n in _targets(node, "agentcli.cli.main")}
    assert names == {"typing", "agentcli.hinted", "agentcli.other", "agentcli.store.records"}


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


# ------------------------------------------------------------------- the docs' table is the rule

DOCS = ROOT / "docs" / "architecture.md"


def _folder_key(cell: str) -> str:
    """``cli/`` → cli, ``trust.py`` → trust, ``__main__.py`` → __main__, ``__init__.py`` → agentcli."""
    name = cell.removeprefix("agentcli/").removesuffix("/").removesuffix(".py")
    return "agentcli" if name == "__init__" else name


def documented_rules(text: str) -> dict[str, set[str]]:
    """The "Folders" table of docs/architecture.md: each row's folders (first column, in backticks)
    and what they may import (last column: backticked names, "everything below", or "nothing")."""
    section = ("\n" + text).split("\n## Folders", 1)[1].split("\n## ", 1)[0]
    rules: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("folder", "---"):
            continue
        names = set(re.findall(r"`([^`]+)`", cells[-1]))
        may = {"*"} if cells[-1] == "everything below" else names
        for folder_cell in re.findall(r"`([^`]+)`", cells[0]):
            rules[_folder_key(folder_cell)] = may
    return rules


def test_the_docs_folder_table_is_the_rule_the_code_follows() -> None:
    assert documented_rules(DOCS.read_text(encoding="utf-8")) == MAY_IMPORT


def test_the_docs_table_reader_reads_each_kind_of_row() -> None:
    text = (
        "## Folders\n\n| folder | owns | may import |\n| --- | --- | --- |\n"
        "| `cli/` | commands | everything below |\n"
        "| `trust.py` | trust | `config`, `agentcli.tools.base` |\n"
        "| `__init__.py` | the package | nothing |\n\n## The records\n| `x/` | y | `z` |\n"
    )
    assert documented_rules(text) == {
        "cli": {"*"},
        "trust": {"config", "agentcli.tools.base"},
        "agentcli": set(),
    }


MAX_MODULE_LINES = 500  # one screen per concept: a module past this is two concepts


def test_no_module_is_longer_than_a_concept() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
