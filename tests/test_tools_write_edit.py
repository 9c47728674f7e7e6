from __future__ import annotations

import os

import pytest

from agentcli.tools.base import PermissionDenied, ToolError
from agentcli.tools.edit_match import replace
from tests.test_tools_support import call, make_ctx


def test_write_creates_parents_asks_edit_permission_and_records_mtime(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    res = call(ctx, "write", {"filePath": "deep/dir/new.txt", "content": "hello\n"})
    target = ctx.directory / "deep/dir/new.txt"
    assert target.read_text() == "hello\n"
    assert res.title == "deep/dir/new.txt" and res.metadata["exists"] is False
    (req,) = asker.asked
    assert req.tool == "write" and req.patterns == ["deep/dir/new.txt"]
    assert req.title == f"Create new file: {target}"
    assert "+hello" in req.metadata["diff"]
    assert ctx.file_times.last_read(target) == target.stat().st_mtime


def test_write_refuses_unread_and_stale_files(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    f = ctx.directory / "keep.txt"
    f.write_text("precious")
    with pytest.raises(ToolError, match="You must read file .* before overwriting it"):
        call(ctx, "write", {"filePath": "keep.txt", "content": "lost"})
    assert f.read_text() == "precious" and asker.asked == []

    call(ctx, "read", {"filePath": "keep.txt"})
    f.write_text("changed by someone else")
    os.utime(f, (f.stat().st_atime, f.stat().st_mtime + 5))
    with pytest.raises(ToolError, match="has been modified since it was last read"):
        call(ctx, "write", {"filePath": "keep.txt", "content": "lost"})
    assert f.read_text() == "changed by someone else"

    call(ctx, "read", {"filePath": "keep.txt"})
    call(ctx, "write", {"filePath": "keep.txt", "content": "new"})
    assert f.read_text() == "new"
    assert asker.asked[-1].title.startswith("Overwrite this file:")


def test_write_denied_leaves_no_file(tmp_path):
    ctx, _ = make_ctx(tmp_path, answer="deny")
    with pytest.raises(PermissionDenied, match="The user rejected permission to use this tool call"):
        call(ctx, "write", {"filePath": "x.txt", "content": "x"})
    assert not (ctx.directory / "x.txt").exists()


def _read(ctx, name, text):
    (ctx.directory / name).write_text(text)
    call(ctx, "read", {"filePath": name})
    return ctx.directory / name


def test_edit_exact_with_diff_in_permission_and_summary(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    f = _read(ctx, "m.py", "def f():\n    return 1\n")
    res = call(ctx, "edit", {"filePath": "m.py", "oldString": "return 1", "newString": "return 2"})
    assert f.read_text() == "def f():\n    return 2\n"
    assert res.output == "Edit applied successfully. (+1 -1 lines)"
    (req,) = asker.asked
    assert req.tool == "edit" and req.patterns == ["m.py"]
    assert "-    return 1\n+    return 2\n" in req.metadata["diff"]
    assert res.metadata["filediff"]["additions"] == 1
    # the edit refreshed the read time: a second edit needs no re-read
    call(ctx, "edit", {"filePath": "m.py", "oldString": "return 2", "newString": "return 3"})
    assert "return 3" in f.read_text()


def test_edit_errors_in_opencode_words(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    f = _read(ctx, "d.txt", "a = 1\nb = 1\n")
    with pytest.raises(ToolError, match="No changes to apply: oldString and newString are identical."):
        call(ctx, "edit", {"filePath": "d.txt", "oldString": "a", "newString": "a"})
    with pytest.raises(ToolError, match="Could not find oldString in the file"):
        call(ctx, "edit", {"filePath": "d.txt", "oldString": "zzz", "newString": "y"})
    with pytest.raises(ToolError, match="Found multiple matches for oldString"):
        call(ctx, "edit", {"filePath": "d.txt", "oldString": "= 1", "newString": "= 2"})
    assert f.read_text() == "a = 1\nb = 1\n"
    call(ctx, "edit", {"filePath": "d.txt", "oldString": "= 1", "newString": "= 2", "replaceAll": True})
    assert f.read_text() == "a = 2\nb = 2\n"
    with pytest.raises(ToolError, match="not found"):
        call(ctx, "edit", {"filePath": "nope.txt", "oldString": "a", "newString": "b"})


def test_edit_refuses_stale_file(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    f = ctx.directory / "s.txt"
    f.write_text("x = 1\n")
    with pytest.raises(ToolError, match="You must read file"):
        call(ctx, "edit", {"filePath": "s.txt", "oldString": "1", "newString": "2"})
    call(ctx, "read", {"filePath": "s.txt"})
    f.write_text("x = 5\n")
    os.utime(f, (f.stat().st_atime, f.stat().st_mtime + 5))
    with pytest.raises(ToolError, match="modified since it was last read"):
        call(ctx, "edit", {"filePath": "s.txt", "oldString": "5", "newString": "2"})
    assert f.read_text() == "x = 5\n"


def test_edit_empty_old_string_creates_file(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    call(ctx, "edit", {"filePath": "pkg/new.py", "oldString": "", "newString": "print(1)\n"})
    assert (ctx.directory / "pkg/new.py").read_text() == "print(1)\n"


def test_edit_keeps_crlf_line_endings(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    f = ctx.directory / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call(ctx, "read", {"filePath": "w.txt"})
    call(ctx, "edit", {"filePath": "w.txt", "oldString": "one\ntwo", "newString": "uno\ndos"})
    assert f.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


def test_edit_denied_changes_nothing(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    f = _read(ctx, "k.txt", "keep\n")
    asker.answer = "deny"
    with pytest.raises(PermissionDenied):
        call(ctx, "edit", {"filePath": "k.txt", "oldString": "keep", "newString": "gone"})
    assert f.read_text() == "keep\n"


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # line-trimmed: the model lost trailing spaces / changed indentation width
        ("if x:\n    do()   \n", "if x:\n  do()", "if y:\n    go()", "if y:\n    go()\n"),
        # whitespace-normalised within a line
        ("call(a,   b)\n", "call(a, b)", "call(b, a)", "call(b, a)\n"),
        # indentation-flexible: block given without its indentation
        (
            "class A:\n    def f(self):\n        return 1\n",
            "def f(self):\n    return 1",
            "    def g(self):\n        return 2",
            "class A:\n    def g(self):\n        return 2\n",
        ),
        # escape-normalised: the model sent \\n where the file has a newline
        ('x = "a"\ny = 2\n', 'x = \\"a\\"\\ny = 2', "z = 3", "z = 3\n"),
        # trimmed boundary: stray blank lines around oldString
        ("alpha\nbeta\n", "\nbeta\n\n", "gamma", "alpha\ngamma\n"),
    ],
)
def test_tolerant_matching(content, old, new, expected):
    assert replace(content, old, new) == expected


def test_exact_match_wins_over_fuzzy():
    # "b()" exists exactly once; the trimmed-line strategy must not be reached to pick "  b()".
    assert replace("  b()\nb()x\n", "b()x", "c") == "  b()\nc\n"
