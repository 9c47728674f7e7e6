"""Build a fresh held-out part of the public redaction corpus from kics' Passwords And Secrets query tests.

Usage: python scripts/redact_corpus_kics.py KICS_RAW_DIR

kics (Checkmarx, Apache-2.0) is too big to clone here; its files were read one by one from a stored index
and saved as ``KICS_RAW_DIR/<commit>/<path>`` (the commit of the version read). The script reads only
those files, offline, and writes tests/fixtures/redact/holdout_kics.json (split ``holdout-kics``, source
``kics``). The labelling rule is in tests/fixtures/redact/README.md ("kics"), written and committed
before this script first ran:

- The findings are the lines ``test/positive_expected_result.json`` names (primary version at
  dd952baf…, the other at 085e1271…). A positive file is used only when consistent with a version (every
  expected line exists and holds a value, or a private key's ``BEGIN`` line), labelled by the primary
  version first; else left out whole. Negative files (no finding at any version) give look-alikes.
- A finding's span: a PEM body; PuTTY's private lines; a URL's password; a webhook's path after its first
  segment; else the value assigned on the line (quotes, trailing ``,``/``;`` removed; a flow tuple's last
  element; a JSON string's password field; a command's longest token run). ``AWS Certificate`` and a line
  with no span, or one kics' own regex (``regex_rules.json``) matches neither in line nor span, are
  unclear. A placeholder, reference or placeholder password is no secret (the common rule).
- Look-alikes: the value lines of negative files and of consistent positive files but their findings;
  in a positive file a line whose key names a credential is unclear; a look-alike with a random-looking
  run or a secret of the part is unclear.
- Dedupe against public_corpus.json, holdout_new.json and holdout_next.json.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import OUT, random_run  # noqa: E402
from redact_corpus_new import _VALUE_LINE, _pem_body, context, relabel  # noqa: E402
from redact_corpus_noseyparker import _REFERENCE, PLACEHOLDER_PASSWORDS  # noqa: E402

SPLIT = "holdout-kics"
SOURCE = "kics"
FIXTURE = OUT / "holdout_kics.json"
EXISTING = ("public_corpus.json", "holdout_new.json", "holdout_next.json")
TEST = "assets/queries/common/passwords_and_secrets/test"
EXPECTED = f"{TEST}/positive_expected_result.json"
PRIMARY = "dd952bafa367f125517ed95cff5026cd1b48f525"
OTHER = "085e1271ec1f68342fcf62677acfa3c29a19a0a8"

# the marks newer test files put on their findings
_INLINE_MARK = re.compile(r"^\s*\S.*?\s#\s*(positive\d+|#?\d+(?:\s*&\s*#\d+)*)\s*$")
_ALLOW_HEADER = re.compile(r"allow-rule-test\s*-\s*#(\d+)")
_MARK_LINE = re.compile(r"^\s*#\s*(?:positive\d+|#?\d+(?:\s*&\s*#\d+)*):?\s*$")
_LINE_MARK = re.compile(r"positive-test\s*\(line ((?:\d+/?)+)\)")
_TEST_HEADER = re.compile(
    r"(?i)(?:positive|negative)-test|allow-rule-test|^\s*#\s*(?:positive\d+|#?\d+(?:\s*&\s*#\d+)*):?\s*$"
)
# the query's word an expected line (or the one above it) must hold
_QUERY_WORD = (
    (re.compile(r"Password in URL"), re.compile(r"://")),
    (re.compile(r"Webhook"), re.compile(r"(?i)hooks\.slack\.com|webhook")),
    (re.compile(r"Putty"), re.compile(r"PuTTY")),
    (re.compile(r"(?i)password"), re.compile(r"(?i)pass|pwd")),
    (re.compile(r"Generic Secret|Secret Template"), re.compile(r"(?i)secret")),
    (re.compile(r"Generic Token"), re.compile(r"(?i)token")),
    (re.compile(r"Generic API Key"), re.compile(r"(?i)api")),
    (re.compile(r"Generic Access Key"), re.compile(r"(?i)access")),
    (re.compile(r"Generic Private Key"), re.compile(r"(?i)private")),
)
_ASSIGN = re.compile(r"^\s*(?:-\s+)?(?:export\s+)?[\"']?([A-Za-z_][\w.\-]*)[\"']?\s*(?::|=)\s*(.*)$")
_DOCKER = re.compile(r"^\s*(?:ENV|ARG)\s+([\w.\-]+)(?:=|\s+)(.*)$")
_URL_PASSWORD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@\"']*:([^/\s:@\"']+)@")
_WEBHOOK = re.compile(r"https?://[^/\s\"']+/(?:services|webhook|webhookb2)/([^\s\"'#]+)")
_CONNECTION_PASSWORD = re.compile(r"(?i)(?:password|pwd)=([^;'\")]+)")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_+/]*={0,2}")
_HCL_REFERENCE = re.compile(
    r"^(?:\$\{[^}]*\}|(?:var|local|data|module|each)\.[\w.\[\]\"*-]+|!(?:Ref|Sub|GetAtt)\b.*)$"
)
_CREDENTIAL_KEY = re.compile(r"(?i)pass|pwd|secret|token|key|credential|auth")


def read_raw(root: Path) -> tuple[dict[str, tuple[str, str]], dict[str, list[dict[str, Any]]]]:
    """The saved test files (name -> (commit, text)) and the expected results by commit."""
    files: dict[str, tuple[str, str]] = {}
    expected: dict[str, list[dict[str, Any]]] = {}
    commits = sorted(p for p in root.iterdir() if p.is_dir() and re.fullmatch(r"[0-9a-f]{40}", p.name))
    for commit_dir in commits:
        folder = commit_dir / TEST
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if path.name == "positive_expected_result.json":
                expected[commit_dir.name] = json.loads(path.read_text())
            elif re.match(r"(?:positive|negative)\d+\.", path.name):
                files[path.name] = (commit_dir.name, path.read_text())
    return files, expected


def marked_lines(lines: list[str]) -> list[int]:
    """0-based lines the file itself marks as findings. A ``#N`` mark whose header line says
    ``allow-rule-test`` marks a line kics must not report by that rule: a finding only when another of
    its marks is a positive test's."""
    allow = {int(m.group(1)) for m in map(_ALLOW_HEADER.search, lines) if m}
    out: set[int] = set()

    def positive(mark: str) -> bool:
        numbers = [int(n) for n in re.findall(r"#?(\d+)", mark)] if "positive" not in mark else []
        return "positive" in mark or any(n not in allow for n in numbers)

    for i, line in enumerate(lines):
        for m in _LINE_MARK.finditer(line):
            out.update(int(n) - 1 for n in m.group(1).split("/") if n)
        if line.lstrip().startswith("#"):
            if _MARK_LINE.match(line) and positive(line):
                nxt = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
                if nxt is not None:
                    out.add(nxt)
        else:
            m = _INLINE_MARK.match(line)
            if m and positive(m.group(1)):
                out.add(i)
    return sorted(j for j in out if 0 <= j < len(lines))


def consistent(lines: list[str], findings: list[tuple[str, int]]) -> bool:
    for query, line in findings:
        i = line - 1
        if not 0 <= i < len(lines):
            return False
        if "Asymmetric private key" in query:
            if not any("-----BEGIN" in x for x in lines[i : i + 6]):
                return False
            continue
        if not _VALUE_LINE.search(lines[i]):
            return False
        near = lines[i] + "\n" + (lines[i - 1] if i else "")
        for q, word in _QUERY_WORD:
            if q.search(query):
                if not word.search(near):
                    return False
                break
    return True


def file_findings(
    name: str, lines: list[str], commit: str, expected: dict[str, list[dict[str, Any]]]
) -> list[tuple[str, int]] | None:
    """(query, 0-based line) of each finding, or None when the file is left out as inconsistent."""
    marks = marked_lines(lines)
    if marks:
        return [("", i) for i in marks]
    for version in ([commit] if commit in expected else []) + [PRIMARY, OTHER]:
        rows = [
            (r["queryName"].split(" - ", 1)[-1], r["line"])
            for r in expected.get(version, [])
            if r["fileName"] == name
        ]
        if rows and (version == commit or consistent(lines, rows)):
            return [(q, n - 1) for q, n in rows]
    return None


def clean_value(raw: str) -> str:
    value = raw.strip()
    if value[:1] in "\"'":
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else value[1:]
    value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    return value.rstrip(",;").strip()


def assigned(line: str) -> tuple[str, str] | None:
    """(key, value) of the line, or None."""
    m = _DOCKER.match(line) or _ASSIGN.match(line)
    if not m:
        return None
    return m.group(1), m.group(2)


def value_span(value: str) -> str | None:
    """The secret in an assigned value, or None when the rule finds none (unclear)."""
    m = _CONNECTION_PASSWORD.search(value)
    if m:
        return m.group(1)
    if value.startswith("["):  # a YAML flow tuple
        items = [x.strip().strip("\"'") for x in value.strip("[]").split(",")]
        return items[-1] if items and items[-1] else None
    if value.startswith("{"):
        try:
            obj = json.loads(value)
        except ValueError:
            return None
        fields = [v for k, v in obj.items() if re.search(r"(?i)pass|secret", k) and isinstance(v, str)]
        return fields[0] if fields else None
    if re.search(r"\s", value):
        runs = _TOKEN_RUN.findall(value)
        run = max(runs, key=len) if runs else ""
        return run if len(run) >= 8 and random_run(run) else None
    return value or None


def finding(lines: list[str], i: int, query: str) -> tuple[str, str, int, int]:
    """(label, secret, first line, last line) of a finding on line ``i``."""
    window = "\n".join(lines[i : i + 6])
    if "-----BEGIN" in window and "PRIVATE KEY" in window:
        end = next((j for j in range(i, len(lines)) if "-----END" in lines[j]), None)
        if end is not None:
            return "secret", _pem_body("\n".join(lines[i : end + 1])), i, end
    if "PuTTY-User-Key-File" in lines[i]:
        for j in range(i, len(lines)):
            m = re.match(r"Private-Lines:\s*(\d+)", lines[j])
            if m:
                last = j + int(m.group(1))
                return "secret", "\n".join(lines[j + 1 : last + 1]), i, last
        return "unclear", "", i, i
    first = context(lines, i)
    m = _WEBHOOK.search(lines[i])
    if m:
        return "secret", m.group(1), first, i
    m = _URL_PASSWORD.search(lines[i])
    if m:
        return "secret", m.group(1), first, i
    kv = assigned(lines[i].lstrip().lstrip("#").lstrip() if lines[i].lstrip().startswith("#") else lines[i])
    if kv is None:
        return "unclear", "", first, i
    key, raw = kv
    value = clean_value(raw)
    if "Certificate" in query or (not query and "CERTIFICATE" in key.upper()):
        return "unclear", value, first, i
    if _HCL_REFERENCE.match(raw.strip()):
        return "secret", value, first, i  # a reference: the common rule makes it a look-alike or unclear
    span = value_span(value)
    if span is None:
        return "unclear", "", first, i
    return "secret", span, first, i


def samples_of_file(
    name: str, commit: str, text: str, findings: list[tuple[str, int]] | None
) -> list[dict[str, Any]]:
    lines = text.split("\n")
    out: list[dict[str, Any]] = []
    taken: set[int] = set()
    origin = f"{TEST}/{name}@{commit[:10]}"
    for query, i in findings or []:
        label, secret, first, last = finding(lines, i, query)
        out.append(
            {
                "label": label,
                "origin": f"{origin}:{i + 1}",
                "text": "\n".join(lines[first : last + 1]),
                "secret": secret,
            }
        )
        taken.update(range(first, last + 1))
    for i, line in enumerate(lines):
        if i in taken or not line.strip() or not _VALUE_LINE.search(line) or _TEST_HEADER.search(line):
            continue
        first = context(lines, i)
        sample_text = "\n".join(lines[first : i + 1])
        kv = assigned(lines[first])
        key = kv[0] if kv else sample_text
        credential = findings is not None and name.startswith("positive") and _CREDENTIAL_KEY.search(key)
        label = "unclear" if credential else "lookalike"
        out.append({"label": label, "origin": f"{origin}:{i + 1}", "text": sample_text, "secret": ""})
    return out


def is_reference(secret: str) -> bool:
    return bool(_REFERENCE.fullmatch(secret) or _HCL_REFERENCE.match(secret))


def common_rule(samples: list[dict[str, Any]]) -> None:
    """relabel() of the earlier parts, with this source's references (``var.x``, ``${var.x}``) added."""
    for s in samples:
        if s["label"] == "secret" and is_reference(s["secret"]):
            s["label"] = "unclear" if random_run(s["text"]) else "lookalike"
    relabel(samples)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: redact_corpus_kics.py KICS_RAW_DIR")
    files, expected = read_raw(Path(sys.argv[1]))
    primary_names = {r["fileName"] for r in expected[PRIMARY]}
    extracted: list[dict[str, Any]] = []
    left_out: list[str] = []
    used: dict[str, str] = {}
    for name, (commit, text) in sorted(files.items()):
        if name.startswith("positive"):
            if name not in primary_names:
                left_out.append(name)
                continue
            findings = file_findings(name, text.split("\n"), commit, expected)
            if findings is None:
                left_out.append(name)
                continue
        else:
            findings = None
        used[name] = commit
        extracted += samples_of_file(name, commit, text, findings)
    missing = sorted(primary_names - set(files))
    common_rule(extracted)

    known_texts: set[str] = set()
    known_secrets: list[str] = []
    haystack: list[str] = []
    for fixture in EXISTING:
        for s in json.loads((OUT / fixture).read_text())["samples"]:
            known_texts.add(s["text"])
            haystack += [s["text"], s["secret"]]
            secret = s["secret"]
            if s["label"] == "secret" and len(secret) >= 8 and secret.lower() not in PLACEHOLDER_PASSWORDS:
                known_secrets.append(secret)
    blob = "\0".join(haystack)
    kept, seen, dropped = [], set(), Counter()
    for s in extracted:
        key = (s["text"], s["secret"])
        if key in seen:
            continue
        seen.add(key)
        if s["label"] == "secret" and s["secret"] in blob:
            dropped[s["label"]] += 1
            continue
        if s["text"] in known_texts or any(v in s["text"] for v in known_secrets):
            dropped[s["label"]] += 1
            continue
        fields = {k: s[k] for k in ("origin", "text", "secret")}
        kept.append({"label": s["label"], "split": SPLIT, "source": SOURCE, **fields})

    FIXTURE.write_text(
        json.dumps(
            {"commits": {SOURCE: PRIMARY}, "file_commits": used, "samples": kept},
            indent=0,
            ensure_ascii=False,
        )
        + "\n"
    )
    print("files used:", len(used), "left out (inconsistent or not named):", left_out, "not stored:", missing)
    print("left out as already in the existing fixtures:", dict(dropped))
    for kind, n in sorted(Counter(s["label"] for s in kept).items()):
        print(kind, n)


if __name__ == "__main__":
    main()
