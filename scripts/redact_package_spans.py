"""Precision on third-party text: the redacted spans in installed packages' and the system's files, by half.

Third-party code, docs and data hold (almost) no secrets, so every span the redactor takes there is a
candidate false positive. The body, by root (a file's half is fixed by its path relative to its root):

- ``venv``: the running venv's site-packages (the project's own dependencies), ``/usr/lib/python3``
  and ``/usr/lib/python3.X`` (the first round's body: 12,063 files);
- ``body-venv``: a scratch venv's site-packages holding widely-used PyPI packages the project does not
  depend on (the list below, chosen by a rule written before any of their spans was read: packages at the
  top of PyPI's download charts as one can name them, not already in the project's venv, no secret
  scanners, no large scientific stacks), with their dependencies; a file whose root-relative path an
  earlier root already gave is skipped (a dependency the project's venv holds too);
- ``body-npm``: ``npm install`` of ten widely-used npm packages (below) and their dependencies;
- ``doc``: ``/usr/share/doc`` (Debian's copyright files, READMEs, changelogs; ``.gz`` read decompressed);
- ``man``: ``/usr/share/man``'s pages, their roff source decompressed.

Files of the suffixes below (any name under ``doc``; ``.gz`` under ``doc`` and ``man``) up to 200 KB of
text; others and non-UTF-8 ones are skipped. The split rule, fixed before any span was read: the sha256 of
a file's root-relative path; an even first byte puts it in the tuning half, odd in the held-out half.
Only the tuning half's spans may be printed (``--show``); the held-out half is read by totals.

To rebuild the wider body (Debian's ``/usr/share/doc`` and ``man`` are the machine's own)::

    python3 -m venv /tmp/redact-body/venv
    /tmp/redact-body/venv/bin/pip install $(python scripts/redact_package_spans.py --list-pypi)
    mkdir -p /tmp/redact-body/npm && cd /tmp/redact-body/npm && npm init -y \
        && npm install $(python scripts/redact_package_spans.py --list-npm)

    python scripts/redact_package_spans.py                 # totals per half, per root and per kind
    python scripts/redact_package_spans.py --show          # the tuning half's spans, one a line
    python scripts/redact_package_spans.py --tuning-only   # while tuning: the held-out half unread
    python scripts/redact_package_spans.py --body DIR      # the scratch body elsewhere than /tmp/redact-body

A root that is absent is left out and said so; the first round's figures are the ``venv`` root's.
Imports agentcli only to run the redactor.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:  # the redactor is imported in main(): scripts/redact_planted.py reuses the body
    from agentcli.redact import Finding

SUFFIXES = (".py", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".js")
# The wider body's own suffixes: npm ships TypeScript and module flavours of JavaScript.
NPM_SUFFIXES = (*SUFFIXES, ".ts", ".mjs", ".cjs")
SIZE_CAP = 200_000
TUNING, HELD_OUT = "tuning", "held-out"
PYPI = [
    "google-auth",
    "google-api-core",
    "googleapis-common-protos",
    "protobuf",
    "rsa",
    "pyasn1",
    "pyasn1-modules",
    "cachetools",
    "oauthlib",
    "requests-oauthlib",
    "wheel",
    "virtualenv",
    "platformdirs",
    "tomli",
    "colorama",
    "pytz",
    "tzdata",
    "isodate",
    "azure-core",
    "msal",
    "decorator",
    "wrapt",
    "more-itertools",
    "docutils",
    "sphinx",
    "babel",
    "werkzeug",
    "flask",
    "itsdangerous",
    "blinker",
    "requests-toolbelt",
    "beautifulsoup4",
    "soupsieve",
    "pyparsing",
    "networkx",
    "openpyxl",
    "tabulate",
    "toml",
    "asn1crypto",
    "psutil",
    "deprecated",
    "pyopenssl",
    "tomlkit",
    "gitpython",
    "markdown",
    "mock",
    "coverage",
    "websocket-client",
    "websockets",
    "docker",
    "dnspython",
    "email-validator",
    "pymysql",
    "redis",
    "sqlparse",
    "paramiko",
    "kubernetes",
    "google-cloud-storage",
    "marshmallow",
    "alembic",
]
NPM = [
    "typescript",
    "eslint",
    "lodash",
    "express",
    "webpack",
    "react",
    "axios",
    "moment",
    "chalk",
    "commander",
]


def roots(body: Path) -> list[tuple[str, Path]]:
    """(name, directory) of each root, in the order that decides which copy of a path is measured."""
    venv = Path(sys.prefix)
    found = [("venv", p) for p in sorted(glob.glob(str(venv / "lib" / "python3*" / "site-packages")))]
    found += [("venv", p) for p in ["/usr/lib/python3", *sorted(glob.glob("/usr/lib/python3.*"))]]
    found += [
        ("body-venv", p) for p in sorted(glob.glob(str(body / "venv" / "lib" / "python3*" / "site-packages")))
    ]
    found += [
        ("body-npm", str(body / "npm" / "node_modules")),
        ("doc", "/usr/share/doc"),
        ("man", "/usr/share/man"),
    ]
    return [(name, Path(p)) for name, p in found if Path(p).is_dir()]


def half(relative: str) -> str:
    """The split rule: even first byte of sha256(relative path) is tuning, odd is held out."""
    return TUNING if hashlib.sha256(relative.encode()).digest()[0] % 2 == 0 else HELD_OUT


def measured(name: str, path: Path) -> bool:
    if path.suffix == ".gz":
        return name in ("doc", "man")
    if name == "man":
        return False
    return name == "doc" or path.suffix in (NPM_SUFFIXES if name == "body-npm" else SUFFIXES)


def files(body: Path) -> Iterator[tuple[str, str, str, Path]]:
    """(root name, half, root-relative path, path) of every measured file, in a stable order."""
    seen: set[str] = set()
    for name, root in roots(body):
        for path in sorted(root.rglob("*")):
            if not measured(name, path) or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > SIZE_CAP:
                continue
            relative = path.relative_to(root).as_posix()
            if relative in seen:
                continue
            seen.add(relative)
            yield name, half(relative), relative, path


def read(path: Path) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path) as f:
                raw = f.read(SIZE_CAP + 1)
            return None if len(raw) > SIZE_CAP else raw.decode("utf-8")
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError, EOFError, gzip.BadGzipFile):
        return None


def count_spans(
    find: Callable[[str], Iterable[Finding]],
    texts: Iterable[tuple[str, str, str, str]],
    groups: list[str],
    unit: str,
    group_name: str,
    *,
    show: bool,
    tuning_only: bool,
) -> None:
    """Redact each (group, half, label, text) and print the spans per half and group; with ``show``, the
    tuning half's spans one a line (label, span, its line). Shared by this body and the tool output's
    (scripts/redact_tool_output_spans.py)."""
    count = Counter[tuple[str, str]]()
    spans = Counter[tuple[str, str]]()
    kinds: Counter[str] = Counter()
    for group, which, label, text in texts:
        count[group, which] += 1
        for f in find(text):
            spans[group, which] += 1
            if which != TUNING:
                continue
            kinds[f.kind] += 1
            if show:
                line_start = text.rfind("\n", 0, f.start) + 1
                line_end = text.find("\n", f.end)
                line = text[line_start : line_end if line_end >= 0 else len(text)]
                print(f"{f.kind}\t{label}\t{text[f.start : f.end][:80]!r}\t{line.strip()[:200]!r}")
    for which in (TUNING,) if tuning_only else (TUNING, HELD_OUT):
        total = sum(n for (_, w), n in count.items() if w == which)
        total_spans = sum(n for (_, w), n in spans.items() if w == which)
        per_group = ", ".join(f"{g} {count[g, which]}/{spans[g, which]}" for g in groups)
        print(f"{which}: {total} {unit}, {total_spans} spans ({unit}/spans by {group_name}: {per_group})")
        if which == TUNING:
            print("  by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))


def main() -> int:
    from agentcli.redact import find  # here, not at import: scripts/redact_planted.py reuses the body

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print the tuning half's spans")
    parser.add_argument("--tuning-only", action="store_true", help="measure the tuning half alone")
    parser.add_argument("--body", type=Path, default=Path("/tmp/redact-body"), help="the scratch body's dir")
    parser.add_argument("--list-pypi", action="store_true", help="print the scratch venv's packages")
    parser.add_argument("--list-npm", action="store_true", help="print the npm packages")
    args = parser.parse_args()
    if args.list_pypi or args.list_npm:
        print(" ".join(PYPI if args.list_pypi else NPM))
        return 0
    names = [name for name, _ in roots(args.body)]
    for name in ("body-venv", "body-npm"):
        if name not in names:
            print(f"note: {name} is absent under {args.body}; see the docstring to rebuild it")

    def texts() -> Iterator[tuple[str, str, str, str]]:
        for name, which, relative, path in files(args.body):
            if args.tuning_only and which == HELD_OUT:
                continue  # while tuning, the held-out half is not even read
            if (text := read(path)) is not None:
                yield name, which, f"{name}:{relative}", text

    count_spans(
        find,
        texts(),
        list(dict.fromkeys(names)),
        "files",
        "root",
        show=args.show,
        tuning_only=args.tuning_only,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
