"""Refresh kingfisher's rules (scripts/data/kingfisher_rules.yml), their JSON digest
(agentcli/redact/kingfisher.json) and the licence beside each from a kingfisher checkout.

Usage: python scripts/refresh_kingfisher_rules.py KINGFISHER_GIT_DIR

The argument is a clone of https://github.com/mongodb/kingfisher (a work tree or a bare git directory).
Every ``data/rules/*.yml`` at its HEAD is copied verbatim into one multi-document YAML file (each
document headed by its path: the source, kept here beside this script and never shipped), and what
agentcli reads at run time goes into the package's ``kingfisher.json``: per rule
its id, file, Rust regex, ``min_entropy``, whether kingfisher reports it (shown, not an identifier) and
the keywords derived from its regex (``keywords``: literals one of which every match must hold, the
prefilter that decides where the regex runs), the longest text a match can span (``width``: how far
from a keyword the regex runs) and how far into a match a keyword may start at most (``before``; 0:
every match starts with one, and the regex is tried only there). Then check the figures:
``python -m pytest -q tests/test_redact*.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

TARGET = Path(__file__).resolve().parents[1] / "agentcli" / "redact"  # the digest, read at run time
SOURCE = Path(__file__).resolve().parent / "data"  # the rules verbatim: the digest's source, not shipped
VENDORED = SOURCE / "kingfisher_rules.yml"
RULES = "data/rules"
_HEADER = "# data/rules/"


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def _parser() -> Any:
    import re._parser as parser  # (the stdlib's own regex parser: what a match must contain)

    return parser


def max_width(pattern: re.Pattern[str]) -> int:
    """The longest text a match can span, or 0 when unbounded (past ``_BOUNDED``): a rule's regex runs
    only this far either side of its keyword."""
    width = int(_parser().parse(pattern.pattern, pattern.flags).getwidth()[1])
    return width if width <= _BOUNDED else 0


_BOUNDED = 4096


def required_literals(pattern: re.Pattern[str]) -> tuple[list[str], int]:
    """Lower-cased literals one of which every match of ``pattern`` contains: of each part that a match
    must go through (a literal run, a group, an alternation whose every branch has one, a repeat of at
    least once), the set whose shortest literal is longest. Empty when there is none. With them, how
    far into a match that literal may start at most (0: every match starts with one; -1: unbounded)."""
    parser = _parser()
    found = _required(parser.parse(pattern.pattern, pattern.flags), parser)
    if not found:
        return [], -1
    return sorted(found[0]), found[1] if found[1] <= _BOUNDED else -1


def _required(seq: Any, parser: Any) -> tuple[set[str], int] | None:
    c = parser  # (the opcodes are re-exported by the parser module)
    candidates: list[tuple[set[str], int]] = []
    run: list[str] = []
    run_at = 0

    def before(i: int) -> int:  # the longest text the items before the i-th can match
        return int(parser.SubPattern(seq.state, list(seq.data[:i])).getwidth()[1])

    def flush() -> None:
        if run:
            candidates.append(({"".join(run).lower()}, before(run_at)))
            run.clear()

    for i, (op, av) in enumerate(seq):
        if op is c.LITERAL:
            if not run:
                run_at = i
            run.append(chr(av))
            continue
        flush()
        sub: tuple[set[str], int] | None = None
        if op is c.SUBPATTERN:
            sub = _required(av[3], parser)
        elif op is c.ATOMIC_GROUP:
            sub = _required(av, parser)
        elif op is c.BRANCH:
            branches = [_required(b, parser) for b in av[1]]
            if all(branches):
                sub = (set().union(*(b[0] for b in branches if b)), max(b[1] for b in branches if b))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
            inner = _required(av[2], parser)
            # (the literal may be in any of the repeats: anywhere in the repeated text)
            sub = (inner[0], int(parser.SubPattern(seq.state, [(op, av)]).getwidth()[1])) if inner else None
        if sub:
            candidates.append((sub[0], before(i) + sub[1]))
    flush()
    return max(candidates, key=lambda s: min(map(len, s[0]))) if candidates else None


def digest(documents: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """What agentcli reads at start, from the rule files' (path, parsed YAML) pairs."""
    sys.path.insert(0, str(TARGET.parents[1]))
    from agentcli.redact.kingfisher import translate

    rules = []
    for path, document in documents:
        for rule in document.get("rules") or []:
            pattern = re.compile(translate(rule["pattern"]))
            categories = rule.get("categories") or []
            rules.append(
                {
                    "id": rule["id"],
                    "file": path.rsplit("/", 1)[-1],
                    "pattern": rule["pattern"],
                    "min_entropy": float(rule.get("min_entropy", 0)),
                    "shown": rule.get("visible", True) is not False and "identifier" not in categories,
                    "keywords": (found := required_literals(pattern))[0],
                    "width": max_width(pattern),
                    "before": found[1],
                }
            )
    return {"rules": rules}


def split(vendored: str) -> list[tuple[str, dict[str, Any]]]:
    """The vendored file's documents (after its header), each with its path."""
    out = []
    for part in vendored.split("\n---\n")[1:]:
        head, _, body = part.partition("\n")
        out.append((head.removeprefix(_HEADER), yaml.safe_load(body)))
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: refresh_kingfisher_rules.py KINGFISHER_GIT_DIR")
    repo = sys.argv[1]
    commit = git(repo, "rev-parse", "HEAD").strip()
    version = git(repo, "describe", "--tags", "--always").strip()
    listed = git(repo, "ls-tree", "--name-only", "HEAD", f"{RULES}/").split()
    files = sorted(n for n in listed if n.endswith(".yml"))
    parts = [
        _HEADER + f.removeprefix(RULES + "/") + "\n" + git(repo, "show", f"HEAD:{f}").rstrip("\n")
        for f in files
    ]
    header = (
        f"# From https://github.com/mongodb/kingfisher data/rules/*.yml, {version} (commit {commit}).\n"
        "# Apache-2.0: see kingfisher_LICENSE (its rules grew from Nosey Parker's: kingfisher_NOTICE).\n"
        "# One YAML document a rule file, verbatim. Refreshed by scripts/refresh_kingfisher_rules.py.\n"
    )
    vendored = header + "---\n" + "\n---\n".join(parts) + "\n"
    VENDORED.write_text(vendored)
    data = json.dumps(digest(split(vendored)), separators=(",", ":"), ensure_ascii=False)
    (TARGET / "kingfisher.json").write_text(data + "\n")
    for folder in (TARGET, SOURCE):  # the digest is derived from the rules: the licence goes with both
        (folder / "kingfisher_LICENSE").write_text(git(repo, "show", "HEAD:LICENSE"))
    from agentcli.redact import kingfisher

    print(f"kingfisher rules: {len(kingfisher.rules())} of {len(json.loads(data)['rules'])} used, {version}")


if __name__ == "__main__":
    main()
