"""Add kingfisher's rule examples to the public redaction corpus (held out until read twice by its
totals, a tuning part since: split ``tune-kingfisher``).

Usage: python scripts/redact_corpus_kingfisher.py KINGFISHER_GIT_DIR

kingfisher (MongoDB, Apache-2.0) keeps, per rule in ``data/rules/*.yml``, ``examples`` its pattern must
match and a few ``negative_examples``. Its rules grew from Nosey Parker's, whose part of the corpus was
tuned on: a rule whose id names a Nosey Parker rule (``kingfisher.aws.2`` / ``np.aws.2``) is left out
whole, and so is a sample whose text is in the corpus or that holds a secret of a sample in it. The
labelling rule (tests/fixtures/redact/README.md, committed before this script ran) uses only
kingfisher's own data: its patterns, ``visible`` flags, categories and ``min_entropy`` thresholds. An
example whose secret is a filler or a reference, in a text with no random-looking run, is a clear
look-alike (amended after reading the labels, before agentcli ran: no negative example was left clear).
Nothing of agentcli runs here; the samples are written before agentcli's redactor runs on them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import (  # noqa: E402
    corpus_without,
    entropy,
    git,
    new_samples,
    placeholder,
    random_run,
    write_corpus,
)
from redact_corpus_noseyparker import _FIELD, _REFERENCE, PLACEHOLDER_PASSWORDS, compile_pattern  # noqa: E402

RULES = "data/rules"
SPLIT = "tune-kingfisher"
SOURCE = "kingfisher"
_USERINFO = re.compile(r"^[a-z][a-z0-9+.\-]*://[^\s:/@]*:([^\s/@]+)@", re.I)


def secret_of(m: re.Match[str]) -> str:
    """The first capture group that matched (kingfisher's ``{{ TOKEN }}``), else the whole match; a
    URI's password, or a connection string's ``Password=`` field, within it."""
    value = next((g for g in m.groups() if g), m.group())
    if uri := _USERINFO.match(value):
        return uri.group(1)
    field = _FIELD.search(value)
    return field.group(1) if field and value != field.group(1) else value


def shown(rule: dict[str, Any]) -> bool:
    """A rule whose matches kingfisher reports as secrets (not a helper for ids)."""
    return rule.get("visible", True) is not False and "identifier" not in (rule.get("categories") or [])


def samples(repo: str, corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    np_ids = {s["origin"].split(":", 1)[1] for s in corpus if s["source"] == "noseyparker"}
    listed = git(repo, "ls-tree", "--name-only", "HEAD", f"{RULES}/").split()
    files = [n for n in listed if n.endswith(".yml")]
    rules: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(files):
        for rule in yaml.safe_load(git(repo, "show", f"HEAD:{path}")).get("rules") or []:
            if "np." + rule["id"].split(".", 1)[1] not in np_ids:
                rules.append((path.rsplit("/", 1)[1], rule))
    patterns = {rule["id"]: compile_pattern(rule["pattern"]) for _, rule in rules}
    secret_rules = [p for _, r in rules if shown(r) if (p := patterns[r["id"]])]
    positives = {e for _, r in rules for e in r.get("examples") or []}
    out: list[dict[str, Any]] = []
    for file, rule in rules:
        pattern = patterns[rule["id"]]
        for text in rule.get("examples") or []:
            m = pattern.search(text) if pattern else None
            secret = secret_of(m) if m else ""
            clear = shown(rule) and len(secret) >= 4 and entropy(secret) >= float(rule.get("min_entropy", 0))
            named = _REFERENCE.fullmatch(secret) or secret.lower() in PLACEHOLDER_PASSWORDS
            filler = bool(named) or placeholder(secret)
            label = "secret" if clear and not filler else "unclear"
            if m and filler and len(secret) >= 4 and not random_run(text):
                label = "lookalike"  # a vendor's example filled in: ``api_key = "1234567890abcdef…"``
            out.append({"label": label, "origin": f"{file}:{rule['id']}", "text": text, "secret": secret})
    held = {s["secret"] for s in out if s["label"] == "secret" and len(s["secret"]) >= 6}
    for file, rule in rules:
        for text in rule.get("negative_examples") or []:
            found = any(p.search(text) for p in secret_rules)
            holds = any(value in text for value in held)
            clear = not (found or holds or text in positives or random_run(text))
            out.append(
                {
                    "label": "lookalike" if clear else "unclear",
                    "origin": f"{file}:{rule['id']}",
                    "text": text,
                    "secret": "",
                }
            )
    return out


def main() -> None:
    repo, corpus, kept = corpus_without(SOURCE, "redact_corpus_kingfisher.py KINGFISHER_GIT_DIR")
    known_secrets = [s["secret"] for s in kept if s["label"] == "secret" and len(s["secret"]) >= 8]
    new = new_samples(
        samples(repo, kept), kept, SOURCE, SPLIT, skip=lambda text: any(x in text for x in known_secrets)
    )
    write_corpus(corpus, kept, new, SOURCE, repo)


if __name__ == "__main__":
    main()
