"""Add secretlint's snapshot tests to the public redaction corpus as its held-out part.

Usage: python scripts/redact_corpus_secretlint.py SECRETLINT_GIT_DIR

A third source, taken after the gitleaks/detect-secrets held-out part had been looked at while tuning
(so that part joins the tuning part: ``split`` becomes ``tune`` for every earlier sample). The new
samples are labelled by secretlint's own test expectations, never by agentcli's output, and written
before agentcli's redactor ran on them.

secretlint (MIT) keeps, per rule, ``packages/@secretlint/secretlint-rule-*/test/snapshots/<case>/``
with an input and the ``output.json`` secretlint must produce: ``sourceContent`` and the ``messages``
it reports, each with a character ``range``. From each case whose content is text:

- every message is a ``secret`` sample: the lines its range spans, and as the span that must not
  survive the value itself (a URL's password, a PEM block's body, else the reported text);
- every other line holding a word of 8+ characters is a non-secret by secretlint: a clear
  ``lookalike`` in a case where secretlint reports nothing, unless it holds a random-looking run (as
  for the other sources) or a secret of another sample; in a case where secretlint reports something,
  a line it passes over is ``unclear`` (its tests of what *must* be found say nothing about the rest);
- a case with no report whose content is a PEM block is one sample (the block), not one per line.

Left out: cases with their own ``.secretlintrc.json`` (options change what is reported), rules about
files or configuration rather than values (no-dotenv, no-homedir, no-k8s-kind-secret, pattern,
filter-comments, example), the presets (copies of the rules' cases), binary inputs. Identifiers
secretlint reports that grant nothing alone (Azure tenant and client IDs, AWS account IDs) and URL
passwords that are a placeholder word (``user:pass@``) are ``unclear``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import corpus_without, git, new_samples, placeholder, random_run, write_corpus  # noqa: E402

RULES = "packages/@secretlint"
SKIPPED_RULES = {"no-dotenv", "no-homedir", "no-k8s-kind-secret", "pattern", "filter-comments", "example"}
IDENTIFIERS = {"AzureTenantId", "AzureClientId", "AWSAccountID"}
PLACEHOLDER_PASSWORDS = {"pass", "password", "secret", "changeme", "passwd", "pwd"}
_USERINFO = re.compile(r"://[^:/@\s\"']+:(\S+)@[^@\s/\"']+")
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----(.*?)-----END", re.S)
_SCHEME = re.compile(r"[a-z+]+://([^:@/\s]{8,})")
_ASSIGNED = re.compile(r"[\w.-]+\s*:?=\s*[\"']?(\S+?)[\"']?")
_WORD = re.compile(r"\S{8,}")
_PROSE = re.compile(r"[(\"'#]*[A-Za-z]+(?:-[A-Za-z]+)*[,.;:!?)'\"]*")


def tokenish(line: str) -> bool:
    """A word of 8+ characters that is not just letters: prose and comments are nothing to mistake."""
    return any(not _PROSE.fullmatch(w) for w in _WORD.findall(line))


def cases(repo: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(rule, case, output.json) of every snapshot case of a rule package."""
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD", RULES).splitlines()
    out = []
    folders = {n.rsplit("/", 1)[0] for n in names if "/test/snapshots/" in n}
    for folder in sorted(folders):
        parts = folder.split("/")  # packages/@secretlint/secretlint-rule-X/test/snapshots/CASE
        if len(parts) != 6 or not parts[2].startswith("secretlint-rule-"):
            continue
        rule = parts[2].removeprefix("secretlint-rule-")
        if rule in SKIPPED_RULES or rule.startswith("preset-"):
            continue
        if f"{folder}/.secretlintrc.json" in names or f"{folder}/output.json" not in names:
            continue
        result = json.loads(git(repo, "show", f"HEAD:{folder}/output.json"))
        if result.get("sourceContentType") != "text" or "sourceContent" not in result:
            continue
        out.append((rule, parts[5], result))
    return out


def value_of(reported: str, data: dict[str, Any]) -> str:
    """What must not survive of what secretlint reported (its ``data`` names the value when the range
    holds more, as ``KEY = value``): a URL's password, a webhook's path, a PEM block's body."""
    named = [v for v in data.values() if isinstance(v, str) and len(v) >= 8 and v in reported]
    if named:
        reported = named[0]
    if m := _PEM.search(reported):
        return m.group(1).strip().removeprefix("\\n").removesuffix("\\n").strip()
    if "/services/" in reported:  # a Slack webhook: the path is the credential
        return reported.split("/services/", 1)[1].strip()
    if m := _USERINFO.search(reported):
        return m.group(1)
    if m := _SCHEME.match(reported):  # a token as a URL's user (``https://TOKEN:x-oauth-basic@``)
        return m.group(1)
    if m := _ASSIGNED.fullmatch(reported.strip()):  # ``NAME = value`` reported whole
        return m.group(1)
    return reported.strip().rstrip("\"');")


def line_span(content: str, start: int, end: int) -> tuple[int, int]:
    first = content.rfind("\n", 0, start) + 1
    last = content.find("\n", max(end - 1, start))
    return first, len(content) if last < 0 else last


def samples(repo: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rule, case, result in cases(repo):
        content: str = result["sourceContent"]
        origin = f"{rule}/{case}"
        covered: list[tuple[int, int]] = []
        for message in result["messages"]:
            start, end = message["range"]
            for value in message.get("data", {}).values():  # the value it names, where its range is off
                named = isinstance(value, str) and len(value) >= 8 and value not in content[start:end]
                if named and (at := content.find(value)) >= 0:
                    start, end = at, at + len(value)
                    break
            first, last = line_span(content, start, end)
            covered.append((first, last))
            secret = value_of(content[start:end], message.get("data", {}))
            if message.get("messageId") in IDENTIFIERS or secret.lower() in PLACEHOLDER_PASSWORDS:
                label = "unclear"
            else:
                label = "lookalike" if placeholder(secret) else "secret"
            out.append({"label": label, "origin": origin, "text": content[first:last], "secret": secret})
        if not result["messages"] and _PEM.search(content):
            text = content.strip("\n")
            out.append(
                {"label": "unclear" if random_run(text) else "lookalike", "origin": origin, "text": text}
            )
            continue
        offset = 0
        for line in content.split("\n"):
            here, offset = offset, offset + len(line) + 1
            if not tokenish(line) or any(a <= here < b or a < here + len(line) <= b for a, b in covered):
                continue
            label = "unclear" if result["messages"] or random_run(line) else "lookalike"
            out.append({"label": label, "origin": origin, "text": line})
    secrets = {s["secret"] for s in out if s["label"] == "secret" and len(s["secret"]) >= 8}
    for s in out:
        s.setdefault("secret", "")
        if s["label"] == "lookalike" and any(v in s["text"] for v in secrets):
            s["label"] = "unclear"
    return out


def main() -> None:
    repo, corpus, kept = corpus_without("secretlint", "redact_corpus_secretlint.py SECRETLINT_GIT_DIR")
    for s in kept:
        if s["source"] in ("gitleaks", "detect-secrets"):
            s["split"] = "tune"  # the old held-out part was looked at while tuning: no longer held out
    write_corpus(corpus, kept, new_samples(samples(repo), kept, "secretlint", "holdout"), "secretlint", repo)


if __name__ == "__main__":
    main()
