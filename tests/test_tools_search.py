from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentcli.tools.base import ToolError
from agentcli.tools.grep import GrepTool
from agentcli.tools.registry import run_tool
from agentcli.tools.walk import matches
from tests.test_tools_support import call, make_ctx


def _tree(root: Path, files: dict[str, str], base_mtime: float = 1_700_000_000) -> None:
    """Create files; later entries get newer mtimes, so 'newest first' is predictable."""
    for i, (rel, text) in enumerate(files.items()):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        os.utime(p, (base_mtime + i, base_mtime + i))


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.pyc", False),
        ("**/*.ts", "x.ts", True),
        ("src/**/*.ts", "src/a/b.ts", True),
        ("src/**/*.ts", "lib/src/b.ts", False),
        ("*.{ts,tsx}", "ui/app.tsx", True),
        ("src/*.ts", "src/a/b.ts", False),
        ("file?.txt", "file1.txt", True),
        ("[ab].md", "c.md", False),
    ],
)
def test_glob_semantics_follow_ripgrep(pattern, path, expected):
    assert matches(pattern, path) is expected


def test_glob_newest_first_skipping_ignored_folders(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    _tree(
        ctx.directory,
        {
            "old.py": "",
            "pkg/mid.py": "",
            "node_modules/dep/x.py": "",
            ".git/hook.py": "",
            "notes.md": "",
            "new.py": "",
        },
    )
    res = call(ctx, "glob", {"pattern": "**/*.py"})
    d = ctx.directory
    assert res.output.splitlines() == [str(d / "new.py"), str(d / "pkg/mid.py"), str(d / "old.py")]
    assert res.metadata == {"count": 3, "truncated": False}
    assert call(ctx, "glob", {"pattern": "*.rs"}).output == "No files found"


def test_glob_respects_root_gitignore_and_caps_at_100(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    _tree(ctx.directory, {".gitignore": "secret/\n*.log\n", "secret/a.txt": "", "x.log": "", "y.txt": ""})
    assert call(ctx, "glob", {"pattern": "*"}).output.splitlines() == [
        str(ctx.directory / "y.txt"),
        str(ctx.directory / ".gitignore"),
    ]
    _tree(ctx.directory, {f"many/f{i:03}.txt": "" for i in range(150)})
    res = call(ctx, "glob", {"pattern": "many/*.txt"})
    assert res.metadata == {"count": 100, "truncated": True}
    assert res.output.splitlines()[0] == str(ctx.directory / "many/f149.txt")
    assert "Results are truncated" in res.output
    with pytest.raises(ToolError, match="not a directory"):
        call(ctx, "glob", {"pattern": "*", "path": "y.txt"})


def _grep_cases(ctx):
    _tree(
        ctx.directory,
        {
            "a.py": "import os\nERROR here\n",
            "b.ts": "let x = 1 // ERROR\n",
            "bin.dat": "ERROR\x00binary",
            "c.py": "nothing\nERROR one\nERROR two\n",
        },
    )


@pytest.mark.parametrize("use_rg", [False, True], ids=["python", "ripgrep"])
def test_grep_groups_by_file_newest_first(tmp_path, use_rg):
    if use_rg and not shutil.which("rg"):
        pytest.skip("ripgrep (rg) is not on PATH; the pure-Python fallback is tested instead")
    ctx, _ = make_ctx(tmp_path)
    _grep_cases(ctx)
    tool = GrepTool(use_ripgrep=use_rg)
    res = run_tool(tool, {"pattern": "ERROR\\s+\\w+"}, ctx)
    d = ctx.directory
    assert res.output == "\n".join(
        [
            "Found 3 matches",
            f"{d / 'c.py'}:",
            "  Line 2: ERROR one",
            "  Line 3: ERROR two",
            "",
            f"{d / 'a.py'}:",
            "  Line 2: ERROR here",
        ]
    )
    res = run_tool(tool, {"pattern": "ERROR", "include": "*.{ts,tsx}"}, ctx)
    assert res.output.splitlines()[1] == f"{d / 'b.ts'}:"
    assert res.metadata["matches"] == 1
    assert run_tool(tool, {"pattern": "absent_word"}, ctx).output == "No files found"


def test_grep_caps_at_100_and_rejects_bad_regex(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "many.txt").write_text("hit\n" * 150)
    tool = GrepTool(use_ripgrep=False)
    res = run_tool(tool, {"pattern": "hit"}, ctx)
    assert res.output.startswith("Found 150 matches (showing the first 100)")
    assert res.output.count("  Line ") == 100
    assert res.metadata == {"matches": 150, "truncated": True}
    with pytest.raises(ToolError, match="Invalid regex pattern"):
        run_tool(tool, {"pattern": "(unclosed"}, ctx)
    with pytest.raises(ToolError, match="Search path not found"):
        run_tool(tool, {"pattern": "x", "path": "nowhere"}, ctx)


def test_list_draws_a_tree_without_noise(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    _tree(
        ctx.directory,
        {
            "README.md": "",
            "src/main.py": "",
            "src/util/helpers.py": "",
            "node_modules/x/index.js": "",
            "__pycache__/m.pyc": "",
            "docs/guide.md": "",
            "app.log": "",
        },
    )
    res = call(ctx, "list", {"ignore": ["*.log", "docs/"]})
    assert res.output == "\n".join(
        [
            f"{ctx.directory}/",
            "  src/",
            "    util/",
            "      helpers.py",
            "    main.py",
            "  README.md",
        ]
    )
    assert res.metadata == {"count": 3, "truncated": False}
    with pytest.raises(ToolError, match="Directory not found"):
        call(ctx, "list", {"path": "missing"})
