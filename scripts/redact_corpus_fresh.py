"""Build a fresh held-out part of the public redaction corpus from gosec's, bandit's, horusec's,
eslint-plugin-no-secrets' and repo-supervisor's own tests.

Usage: python scripts/redact_corpus_fresh.py GOSEC_GIT_DIR BANDIT_GIT_DIR HORUSEC_GIT_DIR NO_SECRETS_GIT_DIR
    REPO_SUPERVISOR_GIT_DIR

Each argument is a git directory (a bare mirror will do); files are read at its ``HEAD``, whose commit is
recorded in the fixture. Writes tests/fixtures/redact/holdout_fresh.json (split ``holdout-fresh``). The
labelling rule is in tests/fixtures/redact/README.md ("gosec, bandit, horusec, eslint-plugin-no-secrets"),
written and committed before this script first ran:

- gosec: each G101 ``CodeSample`` expected to give 1 issue gives its longest Go string literal (outside
  imports and print calls) as the secret; one expected to give none gives candidate look-alikes.
- bandit: each ``# Possible hardcoded password: 'V'`` + ``# Severity: Low`` comment of
  ``examples/hardcoded-passwords.py`` (16, as its functional test expects) marks the line holding ``V``.
- horusec: each finding of ``TestRulesVulnerableCode`` (its line in the rule's sample) is a secret, the
  value the line assigns; id rules are unclear; safe samples give candidate look-alikes.
- eslint-plugin-no-secrets: ``invalid`` cases expecting ``HIGH_ENTROPY`` give the line of their longest
  quoted string; ``valid`` cases without options give look-alikes, with options unclear; the staging files.
- repo-supervisor: each string its CLI test expects reported in its fixture files is a secret (an object
  key or an id unclear); their other value lines give candidate look-alikes.
- Common: references, placeholders and short values are no secrets; a look-alike with a random-looking run
  or a secret of the part is unclear; three samples a secret at most; dedupe against the four earlier
  fixtures.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import OUT, git, show  # noqa: E402
from redact_corpus_kics import (  # noqa: E402
    _CREDENTIAL_KEY,
    _URL_PASSWORD,
    _WEBHOOK,
    assigned,
    clean_value,
    common_rule,
    value_span,
)
from redact_corpus_new import _PEM, _VALUE_LINE, _pem_body  # noqa: E402
from redact_corpus_next import drop_known  # noqa: E402

SPLIT = "holdout-fresh"
FIXTURE = OUT / "holdout_fresh.json"
EXISTING = ("public_corpus.json", "holdout_new.json", "holdout_next.json", "holdout_kics.json")
SOURCES = ("gosec", "bandit", "horusec", "eslint-no-secrets", "repo-supervisor")
PER_SECRET = 3
USAGE = "GOSEC_GIT_DIR BANDIT_GIT_DIR HORUSEC_GIT_DIR NO_SECRETS_GIT_DIR REPO_SUPERVISOR_GIT_DIR"

_GO_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
_PRINT = re.compile(r"\b(?:fmt\.\w*[Pp]rint\w*|println)\(")


def sample(label: str, origin: str, text: str, secret: str = "") -> dict[str, Any]:
    return {"label": label, "origin": origin, "text": text, "secret": secret}


def span_of(line: str, value: str) -> tuple[str, str]:
    """(label, secret) of a flagged value on ``line`` by the span rules: a PEM body, a URL's password, a
    webhook's path, a token run of a value holding whitespace (unclear when none is random-looking)."""
    if "-----BEGIN" in value and _PEM.search(value):
        return "secret", _pem_body(value)
    for pattern in (_WEBHOOK, _URL_PASSWORD):
        m = pattern.search(value)
        if m:
            return "secret", m.group(1)
    span = value_span(value) if value else None
    return ("secret", span) if span is not None else ("unclear", "")


def candidates(
    lines: list[str], origin: str, skip: set[int], positive: bool, unclear: bool = False
) -> list[dict[str, Any]]:
    """Each value line of a case (but the ``skip`` ones) as a candidate look-alike; in a positive case a
    line whose key names a credential is unclear, and every line of an ``unclear`` case."""
    out = []
    for i, line in enumerate(lines):
        if i in skip or not line.strip() or not _VALUE_LINE.search(line):
            continue
        if line.lstrip().startswith(("#", "//")) and not unclear:
            continue
        kv = assigned(line)
        key = kv[0] if kv else line
        credential = positive and _CREDENTIAL_KEY.search(key)
        label = "unclear" if unclear or credential else "lookalike"
        out.append(sample(label, f"{origin}:{i + 1}", line))
    return out


# ------------------------------------------------------------------------------------------------ gosec

GOSEC_SAMPLES = "testutils/g101_samples.go"
_GOSEC_LIST = re.compile(r"^\t(SampleCodeG101\w*)\s*=\s*\[\]CodeSample\{", re.M)
_GOSEC_CASE = re.compile(r"\{\[\]string\{`(.*?)`\},\s*(\d+),\s*gosec\.NewConfig\(\)\}", re.S)


def gosec_samples(repo: str) -> list[dict[str, Any]]:
    source = show(repo, GOSEC_SAMPLES)
    heads = list(_GOSEC_LIST.finditer(source))
    out: list[dict[str, Any]] = []
    for n, head in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(source)
        for k, case in enumerate(_GOSEC_CASE.finditer(source, head.end(), end)):
            lines = case.group(1).split("\n")
            expected = int(case.group(2))
            origin = f"{GOSEC_SAMPLES}:{head.group(1)}[{k}]"
            if expected == 0:
                out += candidates(lines, origin, set(), positive=False)
                continue
            if expected != 1:
                sys.exit(f"gosec: {origin} expects {expected} issues; the rule reads 0 or 1")
            literals = [
                (len(m.group(1)), i, m.group(1))
                for i, line in enumerate(lines)
                if not line.lstrip().startswith(("import", "package")) and not _PRINT.search(line)
                for m in _GO_LITERAL.finditer(line)
            ]
            _, i, value = max(literals)
            label, secret = span_of(lines[i], value)
            out.append(sample(label, f"{origin}:{i + 1}", lines[i], secret))
            out += candidates(lines, origin, {i}, positive=True)
    return out


# ----------------------------------------------------------------------------------------------- bandit

BANDIT_EXAMPLE = "examples/hardcoded-passwords.py"
BANDIT_TEST = "tests/functional/test_functional.py"
_BANDIT_MARK = re.compile(r"^\s*# Possible hardcoded password: (?:'(.*)'|None)\s*$")
_BANDIT_LOW = re.compile(r'def test_hardcoded_passwords.*?"LOW": (\d+), "MEDIUM": 0, "HIGH": 0', re.S)


def bandit_samples(repo: str) -> list[dict[str, Any]]:
    lines = show(repo, BANDIT_EXAMPLE).split("\n")
    expected = _BANDIT_LOW.search(show(repo, BANDIT_TEST))
    out: list[dict[str, Any]] = []
    taken: set[int] = set()
    for i, line in enumerate(lines):
        m = _BANDIT_MARK.match(line)
        if not (m and m.group(1) is not None and "Severity: Low" in lines[i + 1]):
            continue
        value = m.group(1)
        j = i + 1
        while lines[j].lstrip().startswith("#"):
            j += 1
        while f"'{value}'" not in lines[j] and f'"{value}"' not in lines[j]:
            j += 1
        taken.add(j)
        label, secret = span_of(lines[j], value) if value else ("secret", "")
        out.append(sample(label, f"{BANDIT_EXAMPLE}:{j + 1}", lines[j], secret))
    if not expected or int(expected.group(1)) != len(out):
        sys.exit(
            f"bandit: {len(out)} marked findings, the functional test expects {expected and expected[1]}"
        )
    return out + candidates(lines, BANDIT_EXAMPLE, taken, positive=True)


# ---------------------------------------------------------------------------------------------- horusec

LEAKS = "internal/services/engines/leaks"
_HORUSEC_SAMPLE = re.compile(r"^\t(Sample(?:Vulnerable|Safe)HSLEAKS\d+)\s*=\s*`(.*?)`", re.S | re.M)
_HORUSEC_CASE = re.compile(r"Rule:\s*(New\w+)\(\),\s*Src:\s*(\w+),")
_HORUSEC_FINDING = re.compile(r"CodeSample:\s*(?:`([^`]*)`|\"((?:[^\"\\]|\\.)*)\"),.*?Line:\s*(\d+),", re.S)
_DEFINE = re.compile(r"^\s*define\(\s*'[^']*'\s*,\s*'([^']*)'\s*\)")
# rules named for an identifier: an AWS key id, OAuth client ids
_ID_RULE = re.compile(r"ID$|GCPServiceAccount$")


def horusec_samples(repo: str) -> list[dict[str, Any]]:
    sources = {m.group(1): m.group(2) for m in _HORUSEC_SAMPLE.finditer(show(repo, f"{LEAKS}/samples.go"))}
    test = show(repo, f"{LEAKS}/rules_test.go")
    vulnerable, safe = test.split("func TestRulesSafeCode", 1)
    out: list[dict[str, Any]] = []
    cases = list(_HORUSEC_CASE.finditer(vulnerable))
    for n, case in enumerate(cases):
        rule, name = case.groups()
        lines = sources[name].split("\n")
        end = cases[n + 1].start() if n + 1 < len(cases) else len(vulnerable)
        origin = f"{LEAKS}/samples.go:{name}"
        taken = set()
        for f in _HORUSEC_FINDING.finditer(vulnerable, case.end(), end):
            code = (f.group(1) if f.group(1) is not None else json.loads(f'"{f.group(2)}"')).strip()
            i = int(f.group(3)) - 1
            if code not in lines[i]:
                sys.exit(f"horusec: {rule} expects {code!r} on line {i + 1} of {name}")
            taken.add(i)
            m = _DEFINE.match(lines[i])
            kv = assigned(lines[i].replace(":=", "="))
            value = m.group(1) if m else clean_value(kv[1]) if kv else ""
            label, secret = span_of(lines[i], value)
            if _ID_RULE.search(rule):
                label = "unclear"
            out.append(sample(label, f"{origin}:{i + 1}", lines[i], secret))
        out += candidates(lines, origin, taken, positive=True)
    for name in re.findall(r"Src:\s*(SampleSafe\w+),", safe):
        out += candidates(sources[name].split("\n"), f"{LEAKS}/samples.go:{name}", set(), positive=False)
    return out


# ------------------------------------------------------------------------------------ eslint-no-secrets

NO_SECRETS_TEST = "tests/lib/rules/no-secrets.ts"
STAGING = "staging"
_TS_CONST = re.compile(r"^const (\w+)\s*=\s*(?:`([^`]*)`|\n?\s*\"((?:[^\"\\]|\\.)*)\");", re.M)
_CODE = re.compile(r"code:\s*(?:(\w+)|`((?:[^`\\]|\\.)*)`)")  # a template may escape its backticks
_SILENCING = re.compile(r"ignoreContent|ignoreIdentifiers|ignoreModules|additionalDelimiters|ignoreCase")


def flagged_line(lines: list[str], origin: str) -> dict[str, Any]:
    """The line of a flagged case holding its longest quoted string, that string the secret."""
    quoted = [
        (len(v), i, v)
        for i, line in enumerate(lines)
        for m in _QUOTED.finditer(line)
        for v in [m.group(1) if m.group(1) is not None else m.group(2)]
    ]
    _, i, value = max(quoted)
    label, secret = span_of(lines[i], value)
    return sample(label, f"{origin}:{i + 1}", lines[i], secret)


def no_secrets_samples(repo: str) -> list[dict[str, Any]]:
    source = show(repo, NO_SECRETS_TEST)
    consts = {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _TS_CONST.finditer(source)
    }
    codes = list(_CODE.finditer(source))
    out: list[dict[str, Any]] = []
    for n, m in enumerate(codes):
        chunk = source[m.end() : codes[n + 1].start() if n + 1 < len(codes) else len(source)]
        code = consts.get(m.group(1), "") if m.group(1) else m.group(2)
        if not code.strip() or "${regexp" in code:  # built from the plugin's regexes at run time
            continue
        lines = code.split("\n")
        origin = f"{NO_SECRETS_TEST}:{m.group(1) or 'inline'}"
        if "errors:" in chunk:
            if "HIGH_ENTROPY_MSG" in chunk:
                out.append(flagged_line(lines, origin))
            continue
        out += candidates(lines, origin, set(), positive=False, unclear=bool(_SILENCING.search(chunk)))
    for name in ("has-secret.js", "has-secret.json"):
        out.append(flagged_line(show(repo, f"{STAGING}/{name}").split("\n"), f"{STAGING}/{name}"))
    for name in ("has-no-secret.js", "has-no-secret.json"):
        out += candidates(show(repo, f"{STAGING}/{name}").split("\n"), f"{STAGING}/{name}", set(), False)
    return out


# -------------------------------------------------------------------------------------- repo-supervisor

SUPERVISOR_TEST = "test/integration/src/cli.js"
_SUPERVISOR_RESULT = re.compile(r"const msg = '(\{\"result\":\[\{\"filepath\".*?)';")


def supervisor_samples(repo: str) -> list[dict[str, Any]]:
    m = _SUPERVISOR_RESULT.search(show(repo, SUPERVISOR_TEST))
    if not m:
        sys.exit(f"repo-supervisor: no JSON result in {SUPERVISOR_TEST}")
    out: list[dict[str, Any]] = []
    for entry in json.loads(m.group(1))["result"]:
        path = entry["filepath"].removeprefix("./")
        lines = show(repo, path).split("\n")
        taken = set()
        for reported in entry["secrets"]:
            i = next(i for i, line in enumerate(lines) if reported in line)
            taken.add(i)
            named = re.match(r"([A-Z_][A-Z0-9_]*)=([^=].*)$", reported)  # NAME=value, a capital name
            name, value = named.groups() if named else ("", reported)
            after = lines[i].split(reported, 1)[1].lstrip("'\"")
            label = "unclear" if after.lstrip().startswith(":") or re.search(r"(?i)_?id$", name) else "secret"
            out.append(sample(label, f"{path}:{i + 1}", lines[i], value))
        out += candidates(lines, path, taken, positive=True)
    return out


# ------------------------------------------------------------------------------------------------- main


def per_secret(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most three samples a secret: those whose text has the smallest SHA-256."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        if s["label"] == "secret":
            groups[s["secret"]].append(s)
    keep = {
        id(s)
        for group in groups.values()
        for s in sorted(group, key=lambda s: hashlib.sha256(s["text"].encode()).hexdigest())[:PER_SECRET]
    }
    return [s for s in samples if s["label"] != "secret" or id(s) in keep]


def main() -> None:
    if len(sys.argv) != 1 + len(SOURCES):
        sys.exit(f"usage: redact_corpus_fresh.py {USAGE}")
    repos = dict(zip(SOURCES, sys.argv[1:], strict=True))
    readers = (gosec_samples, bandit_samples, horusec_samples, no_secrets_samples, supervisor_samples)
    extracted: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for (source, repo), read in zip(repos.items(), readers, strict=True):
        for s in read(repo):
            if (s["text"], s["secret"]) not in seen:
                seen.add((s["text"], s["secret"]))
                extracted.append({"label": s["label"], "split": SPLIT, "source": source, **s})
    common_rule(extracted)
    existing = [s for f in EXISTING for s in json.loads((OUT / f).read_text())["samples"]]
    kept, dropped = drop_known(extracted, existing)
    kept = per_secret(kept)
    keys = ("label", "split", "source", "origin", "text", "secret")
    out = {
        "commits": {source: git(repo, "rev-parse", "HEAD").strip() for source, repo in repos.items()},
        "samples": [{k: s[k] for k in keys} for s in kept],
    }
    FIXTURE.write_text(json.dumps(out, indent=0, ensure_ascii=False) + "\n")
    for kind, n in sorted(Counter((s["source"], s["label"]) for s in kept).items()):
        print(*kind, n)
    for kind, n in sorted(dropped.items()):
        print("left out (in the existing fixtures):", *kind, n)
    print("distinct secrets:", len({s["secret"] for s in kept if s["label"] == "secret"}))


if __name__ == "__main__":
    main()
