"""Build a held-out part of the public redaction corpus from whispers' and ripsecrets' own tests.

Usage: python scripts/redact_corpus_new.py WHISPERS_GIT_DIR RIPSECRETS_GIT_DIR

Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``). The samples go
to their own fixture, tests/fixtures/redact/holdout_new.json (splits ``tune-whispers-ripsecrets`` and
``tune-whispers-ripsecrets-2``, held out as ``holdout-whispers-ripsecrets`` until read),
beside public_corpus.json, whose samples this part must not repeat. The labelling rule is in
tests/fixtures/redact/README.md, written and committed before this script first ran; it uses only the
two projects' own data:

- whispers (Skyscanner, Apache-2.0): the fixtures its ``tests/unit/test_secrets.py`` scans. Its test
  asserts that every value it reports holds ``hardcoded`` (or decodes from base64 to text holding it, or
  is numeric), and its fixtures keep compliant and noncompliant parts apart: a value holding the marker in
  a noncompliant part is a secret; the keys ``test_detection_by_key`` expects name the secrets of the
  files without the marker (private keys, AWS keys, Jenkins, CloudFormation). Other lines holding a value
  are the look-alikes it must not report.
- ripsecrets (MIT): its test expects one finding per line of ``test/one_per_line/*``, one per file of
  ``test/one_per_file/*`` and none in ``test/none``; the span is what its own patterns match.

Nothing of agentcli runs here: the samples are written before agentcli's redactor runs on them.

After two readings of the whole part's totals (before and after the tuning on kingfisher's part), it was
halved by a rule fixed before any case was looked at: a sample's family (its file's name up to the first
dot: ``apikeys`` for apikeys.json, .xml and .yml, which share their values) goes to the tuning half
(``tune-whispers-ripsecrets``) when the first byte of the family's SHA-256 is even, else it stayed held
out (``holdout-whispers-ripsecrets``) until a later round read it and tuned on it
(``tune-whispers-ripsecrets-2``).
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import json
import posixpath
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import OUT, git, ls, new_samples, placeholder, random_run, show  # noqa: E402
from redact_corpus_noseyparker import _REFERENCE, PLACEHOLDER_PASSWORDS, compile_pattern  # noqa: E402

SPLIT = "holdout-whispers-ripsecrets"  # while extracted, before the halving
TUNE_SPLIT = "tune-whispers-ripsecrets"
TUNE_SPLIT_2 = "tune-whispers-ripsecrets-2"  # the half held out until read in its own round
FIXTURE = OUT / "holdout_new.json"
FIXTURES = "tests/fixtures"
LISTS = ("test_detection_by_value", "test_detection_by_key")  # whispers' tests naming what it must report
# rule kinds that are not credentials: credit card numbers, HTML comments
NOT_CREDENTIALS = {"creditcards.yml", "language.html"}

_MARK = re.compile(r"(?i)(non-?|in)?compliant")
_MARK_ONLY = re.compile(r"(?i)^\W*(?:non-?|in)?compliant\W*$")
_VALUE_RUN = re.compile(r"[^\s\"'`,;()\[\]{}<>=:@&]+")
_MARKER = re.compile(r"(?i)hardcoded")
_FIRST_RUN = re.compile(r"^[\s\-\"'`]*$")
_NAME_END = re.compile(r"^[\"']?\s*:(?:\s|$)")
_VALUE_LINE = re.compile(r"[:=]\s*\S|>[^<\s][^<]*</|\"[^\"\s][^\"]*\"|'[^'\s][^']*'|^\s*(?:ENV|curl|wget)\b")
# a line that names nothing: a list item, a JSON string in a list, an XML <value>, a YAML value: field
_NAMELESS = re.compile(r"^\s*(?:-\s+[\"']?[^\"':=]*[\"']?\s*$|\"[^\"=:]*\",?\s*$|<value>|value:)")
_PEM = re.compile(r"-----BEGIN [A-Z ]*?-----(.*?)-----END", re.S)
_PEM_EDGE = re.compile(r"^(?:\s|\\n|\\)+|(?:\s|\\n|\\)+$")
_DEFAULT = re.compile(r"^\s*\"?Default\"?\s*:\s*\"?([^\",\s]+)")
_HASH_PREFIX = re.compile(r"^#\w+:")


def _pem_body(text: str) -> str:
    m = _PEM.search(text)
    return _PEM_EDGE.sub("", m.group(1)) if m else ""


def _marked(run: str) -> bool:
    """whispers' own test of a reported value: it holds ``hardcoded``, or base64 that decodes to it."""
    if _MARKER.search(run):
        return True
    if not re.fullmatch(r"[A-Za-z0-9+/]{8,}", run):
        return False
    try:
        return b"hardcoded" in base64.b64decode(run + "=" * (-len(run) % 4), validate=True).lower()
    except (binascii.Error, ValueError):
        return False


def _is_name(line: str, m: re.Match[str]) -> bool:
    """An XML tag, or the line's first word followed by ``:`` (``01_hardcoded_password: …``)."""
    before = line[: m.start()]
    return before.endswith(("<", "</")) or bool(_FIRST_RUN.match(before) and _NAME_END.match(line[m.end() :]))


def marked_values(line: str) -> Iterator[str]:
    for m in _VALUE_RUN.finditer(line):
        run = m.group()
        if _is_name(line, m) or not (_marked(run) or (run.isdigit() and len(run) >= 8)):
            continue
        if run.startswith("//"):  # the rest of a URL: its path from the first marked segment on
            parts = run.split("/")
            first = next(i for i, p in enumerate(parts) if _marked(p) or p.isdigit())
            run = "/".join(parts[first:])
        yield run


def parts(lines: list[str]) -> list[bool]:
    """Per line, whether it lies in a noncompliant (or unmarked) part of its file."""
    state, out = True, []
    for line in lines:
        marks = list(_MARK.finditer(line))
        if marks:
            state = any(m.group(1) for m in marks)
        out.append(state)
    return out


def context(lines: list[str], i: int) -> int:
    """The first line of the value on line ``i``'s sample: back to the line that names it."""
    start = i
    while start > 0 and i - start < 4 and _NAMELESS.match(lines[start]) and lines[start - 1].strip():
        start -= 1
    return start


def by_key(lines: list[str], noncompliant: list[bool], key: str) -> tuple[int, int, str] | None:
    """The expected key's value in the noncompliant part: (first line, last line, secret)."""
    named = re.compile(rf"^\s*(?:\"{re.escape(key)}\"\s*:|{re.escape(key)}\s*:|<{re.escape(key)}>)(.*)$")
    for i, line in enumerate(lines):
        m = named.match(line)
        if not (m and noncompliant[i]):
            continue
        if "BEGIN" in line or not m.group(1).strip(' "{<>:\\'):  # a PEM block or a nested block
            for j in range(i, min(i + 8, len(lines))):
                if "-----END" in lines[j]:
                    end = j + 1 if j + 1 < len(lines) and not lines[j + 1].strip(' "</>\\' + key) else j
                    return i, end, _pem_body("\n".join(lines[i : j + 1]))
                if d := _DEFAULT.match(lines[j]):
                    return i, j, d.group(1)
            return None
        value = re.sub(rf"</{re.escape(key)}>.*$", "", m.group(1)).strip().strip(",").strip("\"'")
        if value.startswith("{") and value.endswith("}"):
            value = value[1:-1]
        return i, i, _HASH_PREFIX.sub("", value)
    return None


def _test_lists(repo: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The fixtures of whispers' ``test_detection_by_value`` and ``test_detection_by_key`` lists."""
    tree = ast.parse(show(repo, "tests/unit/test_secrets.py"))
    found: dict[str, list[Any]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in LISTS:
            call = node.decorator_list[0]
            assert isinstance(call, ast.Call)
            found[node.name] = ast.literal_eval(call.args[1])
    return [src for src, _count in found["test_detection_by_value"]], found["test_detection_by_key"]


def whispers_samples(repo: str) -> list[dict[str, Any]]:
    by_value, keyed = _test_lists(repo)
    out: list[dict[str, Any]] = []
    for name, keys in [(src, None) for src in by_value if src not in NOT_CREDENTIALS] + keyed:
        path = f"{FIXTURES}/{name}"
        lines = show(repo, path).split("\n")
        noncompliant = parts(lines)
        found: list[tuple[int, int, str]] = []
        if keys is None:
            for i, line in enumerate(lines):
                if noncompliant[i]:
                    found += [(context(lines, i), i, v) for v in marked_values(line)]
        else:
            found += [hit for key in keys if (hit := by_key(lines, noncompliant, key))]
        for first, last, secret in found:
            text = "\n".join(lines[first : last + 1])
            out.append({"label": "secret", "origin": f"{path}:{last + 1}", "text": text, "secret": secret})
        # a value's line (all the lines of a multi-line value) is its secret sample's, no look-alike
        taken = {i for first, last, _ in found for i in range(first if keys else last, last + 1)}
        secrets = [s for _, _, s in found]
        for i, line in enumerate(lines):
            if i in taken or _MARK_ONLY.match(line) or not _VALUE_LINE.search(line):
                continue
            if any(s in line for s in secrets):
                continue
            out.append({"label": "lookalike", "origin": f"{path}:{i + 1}", "text": line, "secret": ""})
    return out


def _ripsecrets_patterns(repo: str) -> re.Pattern[str]:
    """ripsecrets' ``predefined_secret_regexes()`` in its order, as one alternation (as it combines them)."""
    lib = show(repo, "src/lib.rs")
    body = lib[lib.index("fn predefined_secret_regexes") :]
    body = body[: body.index("matcher::RANDOM_STRING_REGEX")]
    items = [m.group(1) or m.group(2) for m in re.finditer(r'r"(.*?)"|(?<!r)"((?:[^"\\]|\\.)*)"', body)]
    random_string = re.search(r'RANDOM_STRING_REGEX: &str = r#"(.*?)"#;', show(repo, "src/matcher/mod.rs"))
    assert random_string, "ripsecrets: RANDOM_STRING_REGEX not found"
    pattern = compile_pattern("(" + "|".join([*items, random_string.group(1)]) + ")")
    assert pattern, "ripsecrets: its patterns do not compile as Python regexes"
    return pattern


def ripsecrets_secret(pattern: re.Pattern[str], text: str) -> str:
    """As ripsecrets counts it: the first submatch (a URL's password, a random string), else the match."""
    m = pattern.search(text)
    if not m:
        return ""
    value = next((g for g in m.groups()[1:] if g), m.group())
    return _pem_body(value) if "-----BEGIN" in value else value


def ripsecrets_samples(repo: str) -> list[dict[str, Any]]:
    pattern = _ripsecrets_patterns(repo)
    out: list[dict[str, Any]] = []
    for path in ls(repo, "test/one_per_line"):
        for n, line in enumerate(show(repo, path).splitlines(), 1):
            secret = ripsecrets_secret(pattern, line)
            label = "secret" if secret else "unclear"
            out.append({"label": label, "origin": f"{path}:{n}", "text": line, "secret": secret})
    for path in ls(repo, "test/one_per_file"):
        text = show(repo, path).rstrip("\n")
        secret = ripsecrets_secret(pattern, text)
        label = "secret" if secret else "unclear"
        out.append({"label": label, "origin": path, "text": text, "secret": secret})
    for n, line in enumerate(show(repo, "test/none").splitlines(), 1):
        out.append({"label": "lookalike", "origin": f"test/none:{n}", "text": line, "secret": ""})
    return out


def relabel(samples: list[dict[str, Any]]) -> None:
    """The rule's common part: fillers and references are no secrets; a look-alike is clear only with no
    random-looking run and no secret of the part in it."""
    for s in samples:
        secret = s["secret"]
        if s["label"] == "secret" and (
            len(secret) < 4
            or placeholder(secret)
            or _REFERENCE.fullmatch(secret)
            or secret.lower() in PLACEHOLDER_PASSWORDS
        ):
            s["label"] = "unclear" if random_run(s["text"]) else "lookalike"
    held = {s["secret"] for s in samples if s["label"] == "secret" and len(s["secret"]) >= 6}
    for s in samples:
        if s["label"] == "lookalike" and (random_run(s["text"]) or any(v in s["text"] for v in held)):
            s["label"] = "unclear"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: redact_corpus_new.py WHISPERS_GIT_DIR RIPSECRETS_GIT_DIR")
    whispers, ripsecrets = sys.argv[1], sys.argv[2]
    corpus = json.loads((OUT / "public_corpus.json").read_text())["samples"]
    known_secrets = [
        s["secret"]
        for s in corpus
        # (a tuned sample's "secret" that is the word ``password`` would leave out every line naming one)
        if s["label"] == "secret" and len(s["secret"]) >= 8
        if s["secret"].lower() not in PLACEHOLDER_PASSWORDS
    ]

    def tuned_on(text: str) -> bool:
        return any(x in text for x in known_secrets)

    raw = {"whispers": whispers_samples(whispers), "ripsecrets": ripsecrets_samples(ripsecrets)}
    kept = list(corpus)
    new: list[dict[str, Any]] = []
    for source, extracted in raw.items():
        part = new_samples(extracted, kept, source, SPLIT, skip=tuned_on)
        kept += part
        new += part
    relabel(new)
    for s in new:
        odd = hashlib.sha256(family(s["origin"]).encode()).digest()[0] % 2
        s["split"] = TUNE_SPLIT_2 if odd else TUNE_SPLIT
    keys = ("label", "split", "source", "origin", "text", "secret")
    out = {
        "commits": {
            "whispers": git(whispers, "rev-parse", "HEAD").strip(),
            "ripsecrets": git(ripsecrets, "rev-parse", "HEAD").strip(),
        },
        "samples": [{k: s[k] for k in keys} for s in new],
    }
    with FIXTURE.open("w") as f:
        json.dump(out, f, indent=0, ensure_ascii=False)
        f.write("\n")
    for kind, n in sorted(Counter((s["source"], s["label"]) for s in new).items()):
        print(*kind, n)


def family(origin: str) -> str:
    """The fixture family a sample comes from: its file's name up to the first dot (a dot file keeps its
    name), so the formats of one family, which share their values, fall in the same half."""
    name = posixpath.basename(origin.split(":")[0])
    return name.split(".")[0] or name


if __name__ == "__main__":
    main()
