"""Walking a project tree the way ripgrep does for our purposes: glob patterns (``**``, ``{a,b}``),
default-ignored folders, and the root ``.gitignore``. Shared by glob, grep and list."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

# Folders nobody wants searched: dependency caches, VCS data, build output.
IGNORED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".direnv", ".cache",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".vscode", ".next", ".zig-cache",
        "dist", "build", "target", "coverage", "vendor", "bin", "obj",
    }
)  # fmt: skip


def _brace_alternatives(pattern: str) -> list[str]:
    """Expand the first {a,b} group (recursively), as shells and ripgrep globs do."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out.extend(_brace_alternatives(pattern[: m.start()] + alt + pattern[m.end() :]))
    return out


def _translate(pattern: str) -> str:
    """One brace-free glob → a regex over '/'-separated relative paths."""
    i, out = 0, []
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A glob as ripgrep reads it: without a '/', it matches a name at any depth."""
    pattern = pattern.strip()
    anchored = "/" in pattern.rstrip("/")
    alts = [_translate(p.strip("/") if anchored else p.rstrip("/")) for p in _brace_alternatives(pattern)]
    body = "|".join(f"(?:{a})" for a in alts)
    return re.compile(f"^(?:{body})$" if anchored else f"^(?:.*/)?(?:{body})$")


def matches(pattern: str, rel_path: str) -> bool:
    return compile_glob(pattern).match(rel_path) is not None


def _gitignore(root: Path) -> list[str]:
    """Plain patterns of the root .gitignore (negations are not supported and are skipped)."""
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(("#", "!"))]


def walk_files(root: Path, ignore: Iterable[str] = (), hidden: bool = True) -> Iterator[tuple[Path, str]]:
    """Yield (absolute path, '/'-separated path relative to root) for every file under ``root``,
    skipping ignored folders, the root .gitignore's patterns and the extra ``ignore`` globs."""
    patterns = [*_gitignore(root), *ignore]
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        rel_dir = base.relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        kept = []
        for d in sorted(dirnames):
            rel = prefix + d
            if d in IGNORED_DIRS or (not hidden and d.startswith(".")):
                continue
            if any(matches(p, rel) for p in patterns):
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = prefix + name
            if not hidden and name.startswith("."):
                continue
            if any(matches(p, rel) for p in patterns if not p.endswith("/")):
                continue
            yield base / name, rel


def mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
