"""Build a fresh held-out part of the public redaction corpus from trivy's, IBM detect-secrets' and
ggshield's own tests.

Usage: python scripts/redact_corpus_next.py TRIVY_GIT_DIR IBM_DETECT_SECRETS_GIT_DIR GGSHIELD_GIT_DIR

Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``). The samples go
to their own fixture, tests/fixtures/redact/holdout_next.json (split ``tune-next``, held out as
``holdout-next`` until its misses were read; ``source`` ``trivy``, ``ibm-detect-secrets`` or
``ggshield``), beside public_corpus.json and holdout_new.json, whose samples this part must not
repeat. The labelling rule is in tests/fixtures/redact/README.md, written and committed before this
script first ran; it uses only the three projects' own data:

- trivy (Aqua Security, Apache-2.0): the findings ``pkg/fanal/secret/scanner_test.go`` expects, each a
  line (or window) of a test input with the secret masked by ``*``; a finding of a built-in rule is a
  secret (the characters under the mask), one of a rule a test's config defines is unclear. The other
  lines of those inputs holding a value are the look-alikes (trivy expects no finding there).
- IBM detect-secrets (Apache-2.0), only the plugins Yelp's detect-secrets lacks (Box, DB2, GitHub
  Enterprise): the ``(payload, should_flag)`` cases of their ``test_analyze_line*`` tests; the span is
  the expected token (DB2) or the payload's longest token run.
- ggshield (GitGuardian, MIT): the recorded API calls in ``tests/unit/cassettes``: a scanned document
  and the credential matches GitGuardian's detector reported in it; a document with none is a
  look-alike.

Common: a placeholder, reference or placeholder password is no secret; a look-alike with a
random-looking run or a secret of the part is unclear; a secret found anywhere in the existing fixtures,
or a text already there, is left out.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import OUT, git, new_samples, show  # noqa: E402
from redact_corpus_new import _VALUE_LINE, _pem_body, relabel  # noqa: E402
from redact_corpus_noseyparker import PLACEHOLDER_PASSWORDS  # noqa: E402

SPLIT = "tune-next"  # held out ("holdout-next") until read in the round after its two readings
FIXTURE = OUT / "holdout_next.json"
EXISTING = ("public_corpus.json", "holdout_new.json")

# ---------------------------------------------------------------------------------------------- trivy

TRIVY = "pkg/fanal/secret"
_GO_STRING = re.compile(
    r'"((?:[^"\\]|\\.)*)"|`([^`]*)`|strings\.Repeat\("\*",\s*(\d+)\)|(azureStructuredToken)'
)
_OPENAI = re.compile(r'(\w+)\s*:=\s*openAIFinding\("([^"]+)",\s*"[^"]*",\s*"[^"]*",\s*(\d+)\)')
_NAMED = re.compile(r"(\w+)\s*:=\s*types\.SecretFinding\{")
_INPUT = re.compile(r'inputFilePath:\s*(?:filepath\.Join\("testdata",\s*"([^"]+)"\)|"testdata/([^"]+)")')
_FIELD = re.compile(r"^\s*(RuleID|StartLine|EndLine|Match):\s*(.+?),?\s*$", re.M)
_AZURE_TOKEN = re.compile(r'azureStructuredToken\s*:=\s*strings\.Repeat\("\*",\s*(\d+)\)')
_LONG_LINE = 1000


def go_string(expr: str, variables: dict[str, str]) -> str | None:
    """A Go expression of string literals, ``strings.Repeat("*", N)`` and known variables joined by
    ``+``; None for anything else."""
    out, rest = [], expr.strip()
    while rest:
        m = _GO_STRING.match(rest)
        if not m:
            return None
        if m.group(1) is not None:
            out.append(json.loads(f'"{m.group(1)}"'))
        elif m.group(2) is not None:
            out.append(m.group(2))
        elif m.group(3):
            out.append("*" * int(m.group(3)))
        else:
            out.append(variables[m.group(4)])
        rest = rest[m.end() :].lstrip()
        if rest.startswith("+"):
            rest = rest[1:].lstrip()
        elif rest:
            return None
    return "".join(out)


def finding_fields(chunk: str, variables: dict[str, str]) -> tuple[str, int, int, str] | None:
    """(rule id, start line, end line, masked match) of the ``types.SecretFinding`` literal ``chunk``
    starts with; None when its ``Match`` is not an expression read here."""
    fields: dict[str, str] = {}
    for m in _FIELD.finditer(chunk):
        fields.setdefault(m.group(1), m.group(2))
    if not {"RuleID", "StartLine", "EndLine", "Match"} <= set(fields):
        return None
    rule = go_string(fields["RuleID"], {})
    match = go_string(fields["Match"], variables)
    if rule is None or match is None or not fields["StartLine"].isdigit() or not fields["EndLine"].isdigit():
        return None
    return rule, int(fields["StartLine"]), int(fields["EndLine"]), match


def trivy_findings(test: str) -> list[tuple[str, tuple[str, int, int, str]]]:
    """(input file, finding) for every finding a test case of the scanner test expects in its input."""
    azure = _AZURE_TOKEN.search(test)
    variables = {"azureStructuredToken": "*" * int(azure.group(1))} if azure else {}
    named: dict[str, tuple[str, int, int, str]] = {}
    for m in _NAMED.finditer(test):
        if found := finding_fields(test[m.end() :], variables):
            named[m.group(1)] = found
    for m in _OPENAI.finditer(test):
        named[m.group(1)] = (m.group(2), 1, 1, "*" * int(m.group(3)))
    cases = list(_INPUT.finditer(test))
    out = []
    for i, case in enumerate(cases):
        name = case.group(1) or case.group(2)
        body = test[case.end() : cases[i + 1].start() if i + 1 < len(cases) else len(test)]
        body = body[: body.find("\nfunc ")] if "\nfunc " in body else body
        for ref in re.findall(r"\b(\w+)\b", body):
            if ref in named:
                out.append((name, named[ref]))
        for chunk in body.split("types.SecretFinding{")[1:]:
            if found := finding_fields(chunk, variables):
                out.append((name, found))
    return out


def utf8_lines(repo: str, path: str) -> list[str] | None:
    """A file's lines; None for a file that is not UTF-8 (trivy's invalid-UTF-8 input)."""
    raw = subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], check=True, capture_output=True).stdout
    try:
        return raw.decode().replace("\r\n", "\n").split("\n")
    except UnicodeDecodeError:
        return None


def masked_regex(match: str) -> re.Pattern[str]:
    parts = re.split(r"(\*+)", match)
    return re.compile("".join(f"(.{{{len(p)}}})" if p.startswith("*") else re.escape(p) for p in parts if p))


def trivy_samples(repo: str) -> list[dict[str, Any]]:
    test = show(repo, f"{TRIVY}/scanner_test.go")
    builtin = set(re.findall(r'^\s*ID:\s*"([^"]+)"', show(repo, f"{TRIVY}/builtin-rules.go"), re.M))
    findings = trivy_findings(test)
    names = sorted({name for name, _ in findings} | {a or b for a, b in _INPUT.findall(test)})
    files = {n: lines for n in names if (lines := utf8_lines(repo, f"{TRIVY}/testdata/{n}")) is not None}
    out: list[dict[str, Any]] = []
    taken: dict[str, set[int]] = {n: set() for n in files}
    for name, (rule, start, end, match) in findings:
        lines = files.get(name)
        if lines is None or start > len(lines):
            continue
        label = "secret" if rule in builtin else "unclear"
        pattern = masked_regex(match)
        line = lines[start - 1]
        m = pattern.fullmatch(line.strip()) if set(match) == {"*"} else pattern.search(line)
        origin = f"{TRIVY}/testdata/{name}:{start}"
        if m or end > start:
            if end > start:  # a private key over several lines: its lines, with a BEGIN/END line beside
                first = start - 1 if start > 1 and "-----BEGIN" in lines[start - 2] else start
                last = end + 1 if end < len(lines) and "-----END" in lines[end] else end
                text = "\n".join(lines[first - 1 : last])
                secret = _pem_body(text) if "-----BEGIN" in text and "-----END" in text else ""
                secret = secret or "\n".join(x.strip() for x in lines[start - 1 : end])
                taken[name] |= set(range(first, last + 1))
            elif m:
                text = line if len(line) <= _LONG_LINE else m.group()
                secret = max(m.groups(), key=len)
                if "-----BEGIN" in text and "-----END" in text and rule == "private-key":
                    secret = _pem_body(text) or secret
                taken[name].add(start)
            out.append({"label": label, "origin": origin, "text": text, "secret": secret})
    for name, lines in files.items():
        for n, line in enumerate(lines, 1):
            if n in taken[name] or len(line) > _LONG_LINE or not _VALUE_LINE.search(line):
                continue
            origin = f"{TRIVY}/testdata/{name}:{n}"
            out.append({"label": "lookalike", "origin": origin, "text": line, "secret": ""})
    return out


# ----------------------------------------------------------------------------------- IBM detect-secrets

IBM_TESTS = ("tests/plugins/box_test.py", "tests/plugins/db2_test.py", "tests/plugins/gh_enterprise_test.py")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_+/]*={0,2}")  # a token, a hex run, base64; not "//"


def _evaluate(node: ast.expr, constants: dict[str, Any]) -> Any:
    """A literal, or a ``+`` of literals and the module's string constants."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _evaluate(node.left, constants) + _evaluate(node.right, constants)
    if isinstance(node, ast.Name):
        return constants[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, constants) for e in node.elts)
    return ast.literal_eval(node)


def ibm_cases(source: str) -> list[tuple[Any, ...]]:
    tree = ast.parse(source)
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError, KeyError, TypeError, SyntaxError):
                constants[node.targets[0].id] = _evaluate(node.value, constants)
    cases: list[tuple[Any, ...]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_analyze_line")):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize":
                names = ast.literal_eval(deco.args[0])
                if isinstance(names, str):
                    names = [n.strip() for n in names.split(",")]
                assert isinstance(deco.args[1], ast.List)
                for item in deco.args[1].elts:
                    cases.append((names, _evaluate(item, constants)))
    return cases


def ibm_samples(repo: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in IBM_TESTS:
        for i, (names, values) in enumerate(ibm_cases(show(repo, path)), 1):
            case = dict(zip(names, values, strict=True))
            payload, flagged = case["payload"], case["should_flag"]
            origin = f"{path}:case{i}"
            if not flagged:
                out.append({"label": "lookalike", "origin": origin, "text": payload, "secret": ""})
                continue
            secret = case.get("token") or max(_TOKEN_RUN.findall(payload), key=len)
            out.append({"label": "secret", "origin": origin, "text": payload, "secret": secret})
    return out


# -------------------------------------------------------------------------------------------- ggshield

CASSETTES = "tests/unit/cassettes"
_CREDENTIAL = re.compile(r"(?i)apikey|password|secret|token|key")
_NOT_CREDENTIAL = {"host", "port", "username", "user", "database", "scheme", "url"}


def ggshield_samples(repo: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in git(repo, "ls-tree", "--name-only", "HEAD", CASSETTES + "/").split():
        if not name.endswith(".yaml"):
            continue
        for n, call in enumerate(yaml.safe_load(show(repo, name)).get("interactions") or [], 1):
            if "multiscan" not in call["request"]["uri"]:
                continue
            documents = json.loads(call["request"]["body"])
            results = json.loads(call["response"]["body"]["string"])
            for d, (doc, result) in enumerate(zip(documents, results, strict=True), 1):
                text, origin = doc["document"], f"{name}:{n}:{d}"
                matches = [
                    m["match"]
                    for pb in result.get("policy_breaks", [])
                    for m in pb["matches"]
                    if m["type"] not in _NOT_CREDENTIAL and _CREDENTIAL.search(m["type"])
                ]
                if not result.get("policy_breaks"):
                    out.append({"label": "lookalike", "origin": origin, "text": text, "secret": ""})
                for match in matches:
                    secret = _pem_body(match) if "-----BEGIN" in match else match
                    out.append({"label": "secret", "origin": origin, "text": text, "secret": secret})
    return out


# ------------------------------------------------------------------------------------------------ main


def drop_known(
    new: list[dict[str, Any]], existing: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], Counter[tuple[str, str]]]:
    """The samples of ``new`` that repeat nothing of ``existing`` (a secret inside any earlier text or
    secret; a text seen before, or holding an earlier secret of 8+ characters that is no placeholder),
    and how many of each source and label were left out."""
    known_texts = {s["text"] for s in existing}
    known_secrets = [
        s["secret"]
        for s in existing
        if s["label"] == "secret"
        and len(s["secret"]) >= 8
        and s["secret"].lower() not in PLACEHOLDER_PASSWORDS
    ]
    everything = "\n".join(x for s in existing for x in (s["text"], s["secret"]))
    dropped: Counter[tuple[str, str]] = Counter()
    kept = []
    for s in new:
        if s["label"] == "secret":
            seen = s["secret"] in everything
        else:
            seen = s["text"] in known_texts or any(v in s["text"] for v in known_secrets)
        if seen:
            dropped[s["source"], s["label"]] += 1
        else:
            kept.append(s)
    return kept, dropped


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit("usage: redact_corpus_next.py TRIVY_GIT_DIR IBM_DETECT_SECRETS_GIT_DIR GGSHIELD_GIT_DIR")
    repos = dict(zip(("trivy", "ibm-detect-secrets", "ggshield"), sys.argv[1:], strict=True))
    existing = [s for f in EXISTING for s in json.loads((OUT / f).read_text())["samples"]]

    raw = {
        "trivy": trivy_samples(repos["trivy"]),
        "ibm-detect-secrets": ibm_samples(repos["ibm-detect-secrets"]),
        "ggshield": ggshield_samples(repos["ggshield"]),
    }
    new: list[dict[str, Any]] = []
    for source, extracted in raw.items():
        part = new_samples(extracted, new, source, SPLIT)
        new += part
    relabel(new)
    kept, dropped = drop_known(new, existing)
    keys = ("label", "split", "source", "origin", "text", "secret")
    out = {
        "commits": {source: git(repo, "rev-parse", "HEAD").strip() for source, repo in repos.items()},
        "samples": [{k: s[k] for k in keys} for s in kept],
    }
    with FIXTURE.open("w") as f:
        json.dump(out, f, indent=0, ensure_ascii=False)
        f.write("\n")
    for kind, n in sorted(Counter((s["source"], s["label"]) for s in kept).items()):
        print(*kind, n)
    for kind, n in sorted(dropped.items()):
        print("left out (in the existing fixtures):", *kind, n)


if __name__ == "__main__":
    main()
