"""Grow the part ``tune-next`` (held out as ``holdout-next`` when grown) of the public redaction corpus
with 2ms's and checkov's own tests.

Usage: python scripts/redact_corpus_next_grow.py TWOMS_GIT_DIR CHECKOV_GIT_DIR

Run after scripts/redact_corpus_next.py: it keeps that script's samples (trivy, IBM detect-secrets,
ggshield) in tests/fixtures/redact/holdout_next.json and replaces its own (``source`` ``2ms`` or
``checkov``). Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``).
The labelling rule is in tests/fixtures/redact/README.md, written and committed before this script
first ran; it uses only the two projects' own data:

- 2ms (Checkmarx, Apache-2.0): the ``truePositives`` and ``falsePositives`` string literals of each rule
  test in ``engine/rules/ruledefine``. A true positive is a secret whose span is what the rule's own
  pattern (built as 2ms builds it, compiled as a Python regex) matches, its secret group or first
  unnamed, unrepeated group; unclear when the pattern cannot be built or does not match, or the rule
  names an id; three true positives are kept per secret (2ms writes one out in up to 27 syntaxes). A
  false positive is a look-alike.
- checkov (Bridgecrew, Apache-2.0): the ``analyze_line`` cases of ``tests/secrets/test_plugin.py`` (a
  finding expected: secret, its asserted ``secret_value`` or longest token run; none: look-alike), the
  files it reads expecting no finding, and the sanity folders of ``test_runner.py`` (six findings in six
  value lines: secrets; no finding: look-alikes).

Common (as for the part's first three sources): a placeholder, reference or placeholder password is no
secret; a look-alike with a random-looking run or a secret of the part is unclear; a secret found
anywhere in the existing fixtures (or the part's earlier samples), or a text already there, is left out.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redact_corpus_extract import OUT, git, new_samples, show  # noqa: E402
from redact_corpus_new import _VALUE_LINE, relabel  # noqa: E402
from redact_corpus_next import _TOKEN_RUN, EXISTING, FIXTURE, SPLIT, drop_known  # noqa: E402
from redact_corpus_noseyparker import compile_pattern  # noqa: E402

SOURCES = ("2ms", "checkov")

# ------------------------------------------------------------------------------------------------ 2ms

RULES = "engine/rules/ruledefine"
_GO_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`')
_LIST = re.compile(r"\b(truePositives|falsePositives):\s*\[\]string\{")
_RULE_FUNC = re.compile(r"^func (\w+)\(\) \*Rule \{\n(.*?)^\}", re.M | re.S)
_VAR = re.compile(r"^\s*(?:var\s+)?(\w+)\s*(?::=|=)\s*", re.M)
_CONST = re.compile(r"^\s*(\w+)\s*=\s*(`[^`]*`)", re.M)
_SIZE_HELPER = re.compile(
    r"^func (\w+)\((?:size string)?\) string \{\s*return (?:fmt\.Sprintf\()?(`[^`]*`)", re.M
)


def go_unquote(literal: str) -> str:
    """A Go string literal's value (a raw one as written)."""
    if literal[0] == "`":
        return literal[1:-1]
    return json.loads(re.sub(r"\\x([0-9a-fA-F]{2})", r"\\u00\1", literal))


def balanced(text: str, start: int, separators: bool = True) -> int:
    """The index after the expression starting at ``start``: brackets balanced, strings skipped, up to a
    closing bracket at depth 0 or (``separators``) a newline or ``,`` at depth 0."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in '"`':
            m = _GO_LITERAL.match(text, i)
            if not m:
                return i
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif separators and depth == 0 and (c in ",\n" or text.startswith("//", i)):
            return i
        i += 1
    return i


def expression(text: str, start: int) -> str:
    """The Go expression at ``start``, over a line break after a ``.`` (``regexp.MustCompile(…).`` then
    ``String()`` on the next line)."""
    end = balanced(text, start)
    head = text[start:end].rstrip()
    if not head.endswith("."):
        return text[start:end]
    rest = end + len(text[end:]) - len(text[end:].lstrip())
    return head + text[rest : balanced(text, rest)]


def go_to_python(expr: str) -> str:
    """A Go expression of literals, calls, ``+`` and ``[]string{…}`` as Python source."""
    out, i = [], 0
    closers: list[str] = []
    while i < len(expr):
        m = _GO_LITERAL.match(expr, i)
        if m:
            lit = m.group()
            out.append(repr(go_unquote(lit)))
            i = m.end()
        elif expr.startswith("[]string{", i):
            out.append("[")
            closers.append("]")
            i += len("[]string{")
        elif expr[i] == "{":
            return ""
        elif expr[i] == "}":
            out.append(closers.pop() if closers else "}")
            i += 1
        else:
            out.append(expr[i])
            i += 1
    return "".join(out).replace("\n", " ").replace("\t", " ").strip()


def twoms_helpers(utils: str) -> dict[str, Callable[..., Any]]:
    """2ms's pattern builders, from the constants and size helpers of ``utils.go``."""
    c = {name: lit[1:-1] for name, lit in _CONST.findall(utils)}
    sizes = {name: body[1:-1] for name, body in _SIZE_HELPER.findall(utils)}

    def ids(identifiers: list[str], suffix: str) -> str:
        return c["identifierPrefix"] + "|".join(identifiers) + c[suffix]

    def semi(identifiers: list[str], secret: str, insensitive: bool, xml: bool = False) -> str:
        suffix = "identifierSuffixIncludingXml" if xml else "identifierSuffix"
        head = (
            c["caseInsensitive"] + ids(identifiers, suffix)
            if insensitive
            else c["identifierCaseInsensitivePrefix"]
            + ids(identifiers, suffix)
            + c["identifierCaseInsensitiveSuffix"]
        )
        tail = c["secretSuffixIncludingXml"] if xml else c["secretSuffix"]
        return head + c["operator"] + c["secretPrefix"] + secret + tail

    helpers: dict[str, Callable[..., Any]] = {
        "generateSemiGenericRegex": semi,
        "generateSemiGenericRegexIncludingXml": lambda i, s, b: semi(i, s, b, xml=True),
        "generateUniqueTokenRegex": lambda s, b: (
            (c["caseInsensitive"] if b else "") + c["secretPrefixUnique"] + s + c["secretSuffix"]
        ),
        "MustCompile": lambda s: s,
        "String": lambda s: s,
        "Sprintf": lambda f, *a: f.replace("%%", "\0") % a if "%s" in f else f,
    }
    for name, body in sizes.items():
        helpers[name] = (lambda b: lambda size="": b.replace("%s", size))(body)
    return helpers


def evaluate(node: ast.expr, helpers: dict[str, Callable[..., Any]], variables: dict[str, str]) -> Any:
    """A literal, a ``+``, a list, a known variable or a call of a known helper; KeyError otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [evaluate(e, helpers, variables) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return evaluate(node.left, helpers, variables) + evaluate(node.right, helpers, variables)
    if isinstance(node, ast.Name):
        if node.id in ("true", "false"):
            return node.id == "true"
        return evaluate(parse_go(variables[node.id]), helpers, variables)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "String":  # x.String()
            return evaluate(func.value, helpers, variables)
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        args = [evaluate(a, helpers, variables) for a in node.args]
        return helpers[name](*args)
    raise KeyError(type(node).__name__)


def parse_go(expr: str) -> ast.expr:
    source = go_to_python(expr)
    if not source:
        raise KeyError("unsupported")
    return ast.parse(source, mode="eval").body


def go_regex(pattern: str) -> re.Pattern[str] | None:
    return compile_pattern(pattern.replace(r"\z", r"\Z"))


def value_groups(pattern: str) -> set[int]:
    """The numbers of the capture groups that can hold a value: not named (``(?P<alg>…)`` marks which
    JWT header a token starts with) and not repeated (``([a-z0-9]{4}-){3}`` is a part of a UUID)."""
    out: set[int] = set()
    stack: list[int] = []
    number, i = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a class: skip to its end
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            j += pattern[j : j + 1] == "]"
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            named = pattern.startswith("(?P<", i) or (
                pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in "=!"
            )
            capture = named or not pattern.startswith("(?", i)
            number += capture
            stack.append(number if capture and not named else 0)
        elif c == ")" and stack:
            group = stack.pop()
            if group and pattern[i + 1 : i + 2] not in ("{", "*", "+", "?"):
                out.add(group)
        i += 1
    return out


def twoms_rules(
    sources: dict[str, str],
) -> tuple[dict[str, str], dict[str, Callable[..., Any]], dict[str, str]]:
    """Each rule function's body, 2ms's pattern builders, and every package-level variable's expression."""
    helpers = twoms_helpers(sources[f"{RULES}/utils.go"])
    variables: dict[str, str] = {}
    rules: dict[str, str] = {}
    for path, text in sources.items():
        if path.endswith("_test.go"):
            continue
        for m in _VAR.finditer(text):
            if m.group(1) not in helpers:
                variables.setdefault(m.group(1), expression(text, m.end()))
        for m in _RULE_FUNC.finditer(text):
            rules[m.group(1)] = m.group(2)
    return rules, helpers, variables


def rule_pattern(
    body: str, helpers: dict[str, Callable[..., Any]], variables: dict[str, str]
) -> re.Pattern[str] | None:
    """The rule's ``Regex`` as 2ms builds it, compiled as a Python regex; None when it cannot be."""
    regex = re.search(r"\bRegex:\s*", body)
    if not regex:
        return None
    try:
        return go_regex(evaluate(parse_go(expression(body, regex.end())), helpers, variables))
    except (KeyError, SyntaxError, TypeError, ValueError, IndexError):
        return None


def rule_secret(pattern: re.Pattern[str], m: re.Match[str], group: int) -> str:
    """The rule's ``SecretGroup``, else its first unnamed, unrepeated group that matched, else the match."""
    value = m.group(group) if 0 < group <= pattern.groups else None
    plain = value_groups(pattern.pattern)
    first = (m.group(i) for i in range(1, pattern.groups + 1) if i in plain and m.group(i))
    return value or next(first, m.group())


def twoms_samples(repo: str) -> tuple[list[dict[str, Any]], Counter[str]]:
    files = git(repo, "ls-tree", "--name-only", "HEAD", RULES + "/").split()
    sources = {f: show(repo, f) for f in files if f.endswith(".go")}
    rules, helpers, variables = twoms_rules(sources)
    why: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    for path, text in sorted(sources.items()):
        if not path.endswith("_test.go"):
            continue
        for test in re.split(r"(?m)^func ", text)[1:]:
            called = re.search(r"TwomsToGitleaksRule\((\w+)\(\)\)", test)
            body = rules.get(called.group(1), "") if called else ""
            name = re.search(r'RuleName:\s*"([^"]*)"', body)
            group = re.search(r"\bSecretGroup:\s*(\d+)", body)
            pattern = rule_pattern(body, helpers, variables)
            is_id = bool(name and {"id"} & {w.lower() for w in name.group(1).split("-")})
            for lm in _LIST.finditer(test):
                items = test[lm.end() : balanced(test, lm.end(), separators=False)]
                for n, raw in enumerate(_items(items), 1):
                    origin = f"{path}:{called.group(1) if called else '?'}:{lm.group(1)}:{n}"
                    if raw is None:
                        why["not a literal"] += 1
                        continue
                    if lm.group(1) == "falsePositives":
                        out.append({"label": "lookalike", "origin": origin, "text": raw, "secret": ""})
                        continue
                    m = pattern.search(raw) if pattern else None
                    secret, label = "", "unclear"
                    if pattern is None or m is None:
                        why["pattern not built" if pattern is None else "pattern does not match"] += 1
                    else:
                        secret = rule_secret(pattern, m, int(group.group(1)) if group else 0)
                        label = "unclear" if is_id else "secret"
                        why["id rule" if is_id else "secret"] += 1
                    if not secret or secret not in raw:
                        secret, label = "", "unclear"
                    out.append({"label": label, "origin": origin, "text": raw, "secret": secret})
    return out, why


def _items(items: str) -> list[str | None]:
    """The items of a ``[]string{…}`` body: a literal's value, or None for any other expression."""
    out: list[str | None] = []
    i = 0
    while i < len(items):
        while i < len(items) and (items[i] in " \t\n,"):
            i += 1
        if items.startswith("//", i):
            i = items.find("\n", i) if "\n" in items[i:] else len(items)
            continue
        if i >= len(items):
            break
        end = balanced(items, i)
        expr = items[i:end].strip()
        m = _GO_LITERAL.fullmatch(expr)
        if m:
            out.append(go_unquote(expr))
        else:
            out.append(None)
        i = max(end, i + 1)
    return out


# -------------------------------------------------------------------------------------------- checkov

CHECKOV = "tests/secrets"
NO_FINDING_FILES = (
    "resources/cfn/secret-no-false-positive.yml",
    "resources/cfn/secret-no-false-positive2.yml",
    "resources/k8s/secret-name.yaml",
)
SANITY_SECRETS = "sanity/secrets/true_positive.json"
SANITY_CLEAR = ("sanity/non_secrets", "sanity/iac_fp", "sanity/non_iac_fp")
_JSON_VALUE = re.compile(r':\s*"((?:[^"\\]|\\.)*)"')


def checkov_cases(source: str) -> list[tuple[str, int, str | None]]:
    """(line, findings expected, asserted secret value) of each ``analyze_line`` call with a literal line
    and an ``assertEqual(N, len(result))`` after it, in the same test."""
    tree = ast.parse(source)
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        call: ast.Call | None = None
        expected: int | None = None
        value: str | None = None
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if node.func.attr == "analyze_line" and len(node.args) >= 2:
                call = node
            elif node.func.attr == "assertEqual" and len(node.args) == 2:
                a, b = node.args
                if (
                    isinstance(a, ast.Constant)
                    and isinstance(a.value, int)
                    and "len(result)" in ast.unparse(b)
                ):
                    expected = a.value
                elif "secret_value" in ast.unparse(b) and isinstance(a, ast.Constant):
                    value = a.value
        if call is None or expected is None or not isinstance(call.args[1], ast.Constant):
            continue
        out.append((call.args[1].value, expected, value))
    return out


def checkov_samples(repo: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    test = f"{CHECKOV}/test_plugin.py"
    for i, (line, expected, value) in enumerate(checkov_cases(show(repo, test)), 1):
        origin = f"{test}:case{i}"
        if expected == 0:
            out.append({"label": "lookalike", "origin": origin, "text": line, "secret": ""})
        else:
            secret = value or max(_TOKEN_RUN.findall(line), key=len)
            out.append({"label": "secret", "origin": origin, "text": line, "secret": secret})
    paths = [f"{CHECKOV}/{p}" for p in NO_FINDING_FILES]
    for folder in SANITY_CLEAR:
        paths += git(repo, "ls-tree", "-r", "--name-only", "HEAD", f"{CHECKOV}/{folder}/").split()
    for path in paths:
        for n, line in enumerate(show(repo, path).splitlines(), 1):
            if _VALUE_LINE.search(line):
                out.append({"label": "lookalike", "origin": f"{path}:{n}", "text": line, "secret": ""})
    path = f"{CHECKOV}/{SANITY_SECRETS}"
    for n, line in enumerate(show(repo, path).splitlines(), 1):
        if m := _JSON_VALUE.search(line):
            out.append(
                {
                    "label": "secret",
                    "origin": f"{path}:{n}",
                    "text": line,
                    "secret": json.loads(f'"{m.group(1)}"'),
                }
            )
    return out


# ------------------------------------------------------------------------------------------------ main


def three_per_secret(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """2ms writes each secret out in up to 27 syntaxes: of its true positives sharing a secret, the three
    whose text has the smallest SHA-256 are kept (as for gitleaks' generated formats)."""
    by_secret: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        if s["source"] == "2ms" and s["secret"]:
            by_secret.setdefault(s["secret"], []).append(s)
    keep = {
        id(s)
        for group in by_secret.values()
        for s in sorted(group, key=lambda s: hashlib.sha256(s["text"].encode()).hexdigest())[:3]
    }
    return [s for s in samples if not (s["source"] == "2ms" and s["secret"]) or id(s) in keep]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: redact_corpus_next_grow.py TWOMS_GIT_DIR CHECKOV_GIT_DIR")
    repos = dict(zip(SOURCES, sys.argv[1:], strict=True))
    fixture = json.loads(FIXTURE.read_text())
    earlier = [s for s in fixture["samples"] if s["source"] not in SOURCES]
    existing = [s for f in EXISTING for s in json.loads((OUT / f).read_text())["samples"]] + earlier

    twoms, why = twoms_samples(repos["2ms"])
    raw = {"2ms": twoms, "checkov": checkov_samples(repos["checkov"])}
    new: list[dict[str, Any]] = []
    for source, extracted in raw.items():
        new += new_samples(extracted, new, source, SPLIT)
    relabel(new)
    kept, dropped = drop_known(new, existing)
    kept = three_per_secret(kept)
    keys = ("label", "split", "source", "origin", "text", "secret")
    commits = {k: v for k, v in fixture["commits"].items() if k not in SOURCES}
    commits |= {source: git(repo, "rev-parse", "HEAD").strip() for source, repo in repos.items()}
    out = {"commits": commits, "samples": earlier + [{k: s[k] for k in keys} for s in kept]}
    with FIXTURE.open("w") as f:
        json.dump(out, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print("2ms true positives:", dict(why))
    for kind, n in sorted(Counter((s["source"], s["label"]) for s in kept).items()):
        print(*kind, n)
    for kind, n in sorted(dropped.items()):
        print("left out (in the existing fixtures):", *kind, n)


if __name__ == "__main__":
    main()
