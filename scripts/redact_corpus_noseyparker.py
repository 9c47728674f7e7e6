"""Add Nosey Parker's rule examples to the public redaction corpus as a second held-out part.

Usage: python scripts/redact_corpus_noseyparker.py NOSEYPARKER_GIT_DIR

Nosey Parker (Apache-2.0) keeps, per rule in ``crates/noseyparker/data/default/builtin/rules/*.yml``,
``examples`` its pattern must match and often ``negative_examples`` it must not. The labelling rule
(tests/fixtures/redact/README.md, written before this script ran) uses only Nosey Parker's own data: its
patterns, categories, examples and the comments its authors left in the example lists. Nothing of
agentcli runs here; the samples are written before agentcli's redactor runs on them.

- An example is a ``secret`` when its rule is in the ``secret`` category and its pattern (compiled as a
  Python regex, mid-pattern flag groups moved to the front) matches it; the secret is the last capture
  group that matched (the password in ``scheme://user:password@host``; a connection string's
  ``Password=`` field). Otherwise, or when it is a placeholder, or follows a FIXME/XXX/TODO comment in
  its list, ``unclear``.
- A negative example is a ``lookalike`` when it follows no such comment, no secret rule of the whole
  set matches it, it is no rule's example, and it holds no random-looking run; else ``unclear``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import corpus_without, git, new_samples, placeholder, random_run, write_corpus  # noqa: E402

RULES = "crates/noseyparker/data/default/builtin/rules"
SPLIT = "tune-noseyparker"  # held out until its first reading, then tuned on (November 2026)
LISTS = ("examples", "negative_examples")
# scheme://user:password@host — groups user, password, host: the password is the secret
URI_RULES = {"np.postgres.1": 2, "np.mongodb.1": 2}
_FLAGS = re.compile(r"\(\?([imsx]+)\)")
_DOUBT = re.compile(r"^  #.*\b(?:FIXME|XXX|TODO)\b")
_KEY = re.compile(r"^  ([a-z_]+):")
_ID = re.compile(r"^  id:\s*(\S+)")
# A value that names a secret rather than being one: a variable, an environment name, a template.
_REFERENCE = re.compile(r"[\"']?(?:\$\{?[A-Za-z_]\w*\}?|%\w+%|#\{.*\}|\{\{.*\}\}|<[^<>\n]*>)[\"']?\s*", re.S)
PLACEHOLDER_PASSWORDS = {"pass", "password", "secret", "changeme", "passwd", "pwd"}  # as for secretlint
_FIELD = re.compile(r"(?i)\b(?:password|pwd)\s*=\s*([^;\"'\s]+)")


def compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """A Rust regex as Python's: every flag group (``(?x)``, a mid-pattern ``(?s)``) applies to all."""
    flags: set[str] = set()

    def take(m: re.Match[str]) -> str:
        flags.update(m.group(1))
        return ""

    body = _FLAGS.sub(take, pattern)
    try:
        return re.compile(f"(?{''.join(sorted(flags))})" + body if flags else body)
    except re.error:
        return None


def doubted(source: str) -> dict[tuple[str, str], int]:
    """(rule id, list) -> the index from which that list's items follow a FIXME/XXX/TODO comment: the
    items after it in its list, or all of the list whose key comes right after it."""
    out: dict[tuple[str, str], int] = {}
    rule, key, items, pending = "", "", 0, False
    for line in source.splitlines():
        if line.startswith("- name:"):
            rule, key, pending = "", "", False
        elif m := _ID.match(line):
            rule, pending = m.group(1), False
        elif _DOUBT.match(line):
            pending = True
        elif m := _KEY.match(line):
            key, items = m.group(1), 0
            if key in LISTS and pending:
                out[(rule, key)] = 0
            pending = False
        elif line.startswith("  - ") and key in LISTS:
            if pending:
                out.setdefault((rule, key), items)
                pending = False
            items += 1
    return out


def secret_of(rule: dict[str, Any], m: re.Match[str]) -> str:
    group = URI_RULES.get(rule["id"])
    value = m.group(group) or "" if group else next((g for g in reversed(m.groups()) if g), m.group())
    field = _FIELD.search(value)
    return field.group(1) if field and value != field.group(1) else value


def samples(repo: str) -> list[dict[str, Any]]:
    files = [
        n for n in git(repo, "ls-tree", "--name-only", "HEAD", f"{RULES}/").split() if n.endswith(".yml")
    ]
    rules: list[tuple[str, dict[str, Any], dict[tuple[str, str], int]]] = []
    for path in sorted(files):
        source = git(repo, "show", f"HEAD:{path}")
        doubts = doubted(source)
        for rule in yaml.safe_load(source)["rules"]:
            rules.append((path.rsplit("/", 1)[1], rule, doubts))
    patterns = {rule["id"]: compile_pattern(rule["pattern"]) for _, rule, _ in rules}
    secret_rules = [
        p for _, r, _ in rules if "secret" in (r.get("categories") or []) if (p := patterns[r["id"]])
    ]
    positives = {e for _, r, _ in rules for e in r.get("examples") or []}
    out: list[dict[str, Any]] = []
    for file, rule, doubts in rules:
        pattern = patterns[rule["id"]]
        for i, text in enumerate(rule.get("examples") or []):
            doubt = i >= doubts.get((rule["id"], "examples"), 1 << 30)
            m = pattern.search(text) if pattern else None
            secret = secret_of(rule, m) if m else ""
            clear = "secret" in (rule.get("categories") or []) and len(secret) >= 4
            named = _REFERENCE.fullmatch(secret) or secret.lower() in PLACEHOLDER_PASSWORDS
            label = "secret" if clear and not (doubt or named or placeholder(secret)) else "unclear"
            out.append({"label": label, "origin": f"{file}:{rule['id']}", "text": text, "secret": secret})
    # a negative example holding an example's secret (the same password unquoted) is not clear
    held = {s["secret"] for s in out if s["label"] == "secret" and len(s["secret"]) >= 6}
    for file, rule, doubts in rules:
        for i, text in enumerate(rule.get("negative_examples") or []):
            doubt = i >= doubts.get((rule["id"], "negative_examples"), 1 << 30)
            found = any(p.search(text) for p in secret_rules)
            holds = any(value in text for value in held)
            clear = not (doubt or found or holds or text in positives or random_run(text))
            label = "lookalike" if clear else "unclear"
            out.append({"label": label, "origin": f"{file}:{rule['id']}", "text": text, "secret": ""})
    return out


def main() -> None:
    repo, corpus, kept = corpus_without("noseyparker", "redact_corpus_noseyparker.py NOSEYPARKER_GIT_DIR")
    write_corpus(corpus, kept, new_samples(samples(repo), kept, "noseyparker", SPLIT), "noseyparker", repo)


if __name__ == "__main__":
    main()
