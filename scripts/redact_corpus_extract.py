"""Build the public redaction corpus (tests/fixtures/redact/) from gitleaks' and detect-secrets' tests.

Usage: python scripts/redact_corpus_extract.py GITLEAKS_GIT_DIR DETECT_SECRETS_GIT_DIR

Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``).

- gitleaks: every rule in cmd/generate/config/rules/*.go lists true positives (``tps``) and false
  positives (``fps``). Literal strings are taken as they are; ``secrets.NewSecret(<regex>)`` is filled
  from a seeded generator; ``utils.GenerateSampleSecrets(id, secret)`` (27 config formats of one
  secret) contributes three formats picked by a hash of the secret, so no format dominates.
- detect-secrets: tests/plugins/*_test.py hold ``(line, should_flag)`` and ``(line, expected_secret)``
  tuples in their parametrize lists; they are evaluated from the module's string constants (no code
  of theirs runs).

Each sample gets the span that must not survive (the secret): for gitleaks the rule's own regex
(secret group) run on the sample, else the secret a generator filled in, else the longest word; for
detect-secrets the expected secret, else the longest word. Every sample is ``tune``: the 30 % once held
out (by a hash of the text) were looked at while tuning; the held-out part is now a third source,
added by scripts/redact_corpus_secretlint.py.

A false positive is a *clear look-alike* unless it holds a random-looking run (16+ token characters
with entropy >= 3.5 bits/char and no filler) — gitleaks' "wrong length" and "invalid character"
variants of real tokens are not clear and are kept apart (``unclear``, reported, not targeted). A
true positive that is a placeholder by the issue's own list (``xxxx``/repeated filler, ``EXAMPLE``)
is a look-alike too: ``AKIAZZZZZZZZZZZZZZZZ`` is not a key anybody leaked.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import math
import random
import re
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "redact"
FORMATS_PER_SECRET = 3


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def show(repo: str, path: str) -> str:
    return git(repo, "show", f"HEAD:{path}")


def ls(repo: str, folder: str) -> list[str]:
    return git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split()


# --------------------------------------------------------------------------- random strings


def _chars(items: list[Any]) -> list[str]:
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "RANGE":
            out += [chr(c) for c in range(av[0], av[1] + 1)]
        elif name == "CATEGORY":
            cat = str(av)
            out += list(
                "0123456789"
                if "DIGIT" in cat
                else " \t"
                if "SPACE" in cat
                else "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
            )
        elif name == "NEGATE":
            raise ValueError("negated class")
    return out


def generate(pattern: str, rng: random.Random) -> str:
    """A string matching ``pattern`` (a simple regex: classes, literals, groups, repeats)."""
    from re import _parser as sre  # type: ignore[attr-defined]

    def walk(tokens: Any) -> str:
        out = []
        for op, av in tokens:
            name = str(op)
            if name == "LITERAL":
                out.append(chr(av))
            elif name == "IN":
                out.append(rng.choice(_chars(av)))
            elif name == "ANY":
                out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                hi = min(hi, lo + 20) if hi != sre.MAXREPEAT else lo + 20
                out.append("".join(walk(sub) for _ in range(rng.randint(lo, hi))))
            elif name == "SUBPATTERN":
                out.append(walk(av[-1]))
            elif name == "BRANCH":
                out.append(walk(rng.choice(av[1])))
            elif name in ("AT", "ASSERT", "ASSERT_NOT"):
                continue
            else:
                raise ValueError(name)
        return "".join(out)

    return walk(sre.parse(pattern))


# --------------------------------------------------------------------------- gitleaks' Go tests

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|`[^`]*`|"(?:\\.|[^"\\])*"|\[\]string|\.\.\.|[A-Za-z_][\w.]*|\d+|[(){},+:=\[\]]""",
    re.S,
)
_SIZES = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
    "utils.AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}",
}


class Unsupported(Exception):
    pass


class GoEval:
    """Evaluates the Go expressions gitleaks' rule tests are written in (strings, ``+``, a few calls)."""

    def __init__(self, tokens: list[str], formats: list[str], rng: random.Random) -> None:
        self.t, self.i, self.formats, self.rng = tokens, 0, formats, rng
        self.filled: dict[str, str] = {}  # sample text -> the secret a generator filled in

    def peek(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if want is not None and tok != want:
            raise Unsupported(f"expected {want!r}, got {tok!r}")
        self.i += 1
        return tok

    def expr(self, env: dict[str, Any]) -> Any:
        value = self.term(env)
        while self.peek() == "+":
            self.take()
            right = self.term(env)
            if not (isinstance(value, str) and isinstance(right, str)):
                raise Unsupported("+ of lists")
            value += right
        return value

    def term(self, env: dict[str, Any]) -> Any:
        tok = self.take()
        if tok.startswith("`"):
            return tok[1:-1]
        if tok.startswith('"'):
            return ast.literal_eval(tok)
        if tok == "[]string":
            self.take("{")
            return self.items(env, "}")
        if self.peek() == "(":
            self.take("(")
            args = self.items(env, ")")
            try:
                return self.call(tok, args)
            except (IndexError, TypeError, ValueError, KeyError) as e:
                raise Unsupported(f"{tok}: {e}") from e
        if tok in env:
            return env[tok]
        raise Unsupported(tok)

    def items(self, env: dict[str, Any], close: str) -> list[Any]:
        """Comma-separated expressions up to ``close``; an item that cannot be evaluated is skipped."""
        out: list[Any] = []
        while self.peek() != close:
            if not self.peek():
                raise Unsupported("end of input")
            try:
                value = self.expr(env)
                if self.peek() == "...":
                    self.take()
                    out += value
                else:
                    out.append(value)
            except Unsupported:
                self.skip_item(close)
            if self.peek() == ",":
                self.take()
        self.take(close)
        return out

    def skip_item(self, close: str) -> None:
        depth = 0
        while self.peek():
            tok = self.peek()
            if depth == 0 and tok in (",", close):
                return
            depth += tok in "({[" and 1 or 0
            depth -= tok in ")}]" and 1 or 0
            self.take()

    def call(self, name: str, args: list[Any]) -> Any:
        if name in _SIZES:
            return _SIZES[name] % args[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name in ("secrets.NewSecret", "newPlausibleSecret"):
            try:
                value = generate(args[0], self.rng)
            except (ValueError, re.error) as e:
                raise Unsupported(str(e)) from e
            self.filled[value] = value
            return value
        if name == "append":
            return [*args[0], *args[1:]]
        if name == "utils.GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if name == "utils.GenerateSampleSecrets":
            ident, secret = args
            pick = int(hashlib.sha256(secret.encode()).hexdigest(), 16)
            out = []
            for k in range(FORMATS_PER_SECRET):
                fmt = self.formats[(pick + k * 7) % len(self.formats)]
                text = fmt.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret)
                self.filled[text] = secret
                out.append(text)
            return out
        if name in ("strings.Repeat",):
            return args[0] * int(args[1])
        raise Unsupported(name)


def sample_formats(repo: str) -> list[str]:
    source = show(repo, "cmd/generate/config/utils/generate.go")
    body = source[source.index("samples := map[string]string{") :]
    body = body[: body.index("\n\t}\n")]
    out = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("//"):
            continue
        m = re.match(r'"[^"]*":\s*("(?:\\.|[^"\\])*"|`[^`]*`),', line)
        if m:
            lit = m.group(1)
            out.append(lit[1:-1] if lit.startswith("`") else ast.literal_eval(lit))
    return out


def gitleaks_samples(repo: str, rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    formats = sample_formats(repo)
    samples: list[dict[str, Any]] = []
    for path in sorted(ls(repo, "cmd/generate/config/rules")):
        if not path.endswith(".go") or path.endswith("_test.go"):
            continue
        source = show(repo, path)
        rng = random.Random(path)
        for func in re.split(r"\nfunc ", source)[1:]:
            ids = re.findall(r'RuleID:\s*"([^"]+)"', func)
            if not ids:
                continue
            tokens = [t for t in _TOKEN.findall(func) if t.strip() and not t.startswith(("//", "/*"))]
            env: dict[str, Any] = {}
            ev = GoEval(tokens, formats, rng)
            for j, tok in enumerate(tokens):
                if tok in ("tps", "fps") and j + 2 < len(tokens) and tokens[j + 1] in (":", "="):
                    k = j + 1
                    if tokens[k] == ":":
                        k += 1
                    if tokens[k] != "=":
                        continue
                    ev.i = k + 1
                    try:
                        value = ev.expr(env)
                    except Unsupported:
                        continue
                    if isinstance(value, list):
                        env[tok] = [v for v in value if isinstance(v, str)]
            rule_id = ids[0]
            for label in ("tps", "fps"):
                for text in env.get(label, []):
                    samples.append(
                        {
                            "source": "gitleaks",
                            "origin": f"{path.rsplit('/', 1)[-1]}:{rule_id}",
                            "rule": rule_id,
                            "text": text,
                            "positive": label == "tps",
                            "filled": ev.filled.get(text),
                        }
                    )
    return samples


# --------------------------------------------------------------------------- detect-secrets' tests


class PyEval:
    """Module-level string constants and ``'...'.format(...)`` / ``+`` / ``%`` / slices of them."""

    def __init__(self, module: ast.Module) -> None:
        self.names: dict[str, Any] = {}
        for node in module.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                with contextlib.suppress(Unsupported):
                    self.names[node.targets[0].id] = self.eval(node.value)

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod, ast.Mult)):
            left, right = self.eval(node.left), self.eval(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Mult):
                return left * right
            return left % (tuple(right) if isinstance(right, list) else right)
        if isinstance(node, ast.Subscript):
            return self.eval(node.value)[self.eval_slice(node.slice)]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            base = self.eval(node.func.value)
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg}
            try:
                return base.format(*args, **kwargs)
            except (IndexError, KeyError, ValueError) as e:
                raise Unsupported(str(e)) from e
        raise Unsupported(type(node).__name__)

    def eval_slice(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Slice):
            parts = [self.eval(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        return self.eval(node)


def detect_secrets_samples(repo: str) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    for path in sorted(ls(repo, "tests/plugins")):
        if not path.endswith("_test.py") or path.endswith("ip_public_test.py"):
            continue  # (an IP address is not a credential)
        module = ast.parse(show(repo, path))
        ev = PyEval(module)
        for node in ast.walk(module):
            if not isinstance(node, ast.Tuple) or len(node.elts) != 2:
                continue
            try:
                line, flag = ev.eval(node.elts[0]), ev.eval(node.elts[1])
            except (Unsupported, TypeError, IndexError, KeyError):
                continue
            if not isinstance(line, str) or not (flag is None or isinstance(flag, (bool, str))):
                continue
            if not line.strip() or "{secret}" in line or "{non_secret}" in line:
                continue
            if isinstance(flag, str) and flag not in line:
                continue
            samples.append(
                {
                    "source": "detect-secrets",
                    "origin": path.rsplit("/", 1)[-1],
                    "rule": path.rsplit("/", 1)[-1].removesuffix("_test.py"),
                    "text": line,
                    "positive": bool(flag),
                    "filled": flag if isinstance(flag, str) else None,
                }
            )
    return samples


# --------------------------------------------------------------------------- ground truth and split

_WORDISH = re.compile(r"[^\s'\"`,;=:()<>]+")
_RUN = re.compile(r"[A-Za-z0-9+/_\-.=]{16,}")
_FILLER = re.compile(r"(?i)x{4,}|\*{4,}|example")
_REPEAT = re.compile(r"(.)\1{5,}|(.{2,8}?)\2{2,}")


def entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def placeholder(text: str) -> bool:
    """The issue's list: x-runs and masks, one character (or a short unit) filling much of the value,
    counting sequences, vendors' ``EXAMPLE`` keys."""
    if _FILLER.search(text) or len(set(text)) == 1:
        return True
    run = 1
    for a, b in zip(text, text[1:], strict=False):  # counting: 123456, klmnop
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() else 1
        if run >= 6:
            return True
    filled = sum(len(m.group()) for m in _REPEAT.finditer(text))
    return filled >= 0.4 * len(text)


def random_run(text: str) -> bool:
    return any(entropy(m.group()) >= 3.5 and not placeholder(m.group()) for m in _RUN.finditer(text))


def secret_of(
    sample: dict[str, Any], patterns: dict[str, re.Pattern[str] | None], groups: dict[str, int]
) -> str:
    text = sample["text"]
    pattern = patterns.get(sample["rule"])
    if sample["source"] == "gitleaks" and pattern is not None:
        m = pattern.search(text)
        if m:
            group = groups.get(sample["rule"], 0)
            if group:
                value = m.group(group) if group <= m.re.groups else None
            else:  # as gitleaks: the first group that matched, else the whole match
                value = next((g for g in m.groups() if g), m.group())
            if value:
                return value
    if sample.get("filled") and sample["filled"] in text:
        return sample["filled"]
    userinfo = re.search(r"://[^:/@\s]+:([^@\s]+)@", text)
    if userinfo:
        return userinfo.group(1)
    words = _WORDISH.findall(text)
    return max(words, key=len) if words else text


def corpus_without(source: str, usage: str) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """The source's checkout (the one argument, else ``usage``), the fixture, and its samples of
    every other source (what a re-extraction keeps)."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {usage}")
    corpus = json.loads((OUT / "public_corpus.json").read_text())
    return sys.argv[1], corpus, [s for s in corpus["samples"] if s["source"] != source]


def new_samples(
    extracted: Iterable[dict[str, Any]],
    kept: list[dict[str, Any]],
    source: str,
    split: str,
    skip: Callable[[str], bool] = lambda _text: False,
) -> list[dict[str, Any]]:
    """``extracted`` as samples of ``source`` in ``split``: once each, none whose text a kept sample
    already has, none ``skip`` turns away."""
    known = {s["text"] for s in kept}
    seen: set[tuple[str, str]] = set()
    new = []
    for s in extracted:
        key = (s["text"], s["secret"])
        if s["text"] in known or key in seen or skip(s["text"]):
            continue
        seen.add(key)
        new.append({"label": s["label"], "split": split, "source": source, **s})
    return new


def write_corpus(
    corpus: dict[str, Any], kept: list[dict[str, Any]], new: list[dict[str, Any]], source: str, repo: str
) -> None:
    """``new`` samples of ``source`` (extracted from the git checkout ``repo``) after ``kept``: written
    to the fixture with the source's commit, and the counts printed."""
    corpus["commits"][source] = git(repo, "rev-parse", "HEAD").strip()
    corpus["samples"] = kept + [
        {k: s[k] for k in ("label", "split", "source", "origin", "text", "secret")} for s in new
    ]
    with (OUT / "public_corpus.json").open("w") as f:
        json.dump(corpus, f, indent=0, ensure_ascii=False)
        f.write("\n")
    counts = Counter((s["label"], s["split"], s["source"]) for s in corpus["samples"])
    for kind, n in sorted(counts.items()):
        print(*kind, n)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: redact_corpus_extract.py GITLEAKS_GIT_DIR DETECT_SECRETS_GIT_DIR")
    gitleaks, detect = sys.argv[1], sys.argv[2]
    sys.path.insert(0, str(ROOT))
    from agentcli.redact.gitleaks import translate  # the same RE2 -> Python translation as at runtime

    config = tomllib.loads(show(gitleaks, "config/gitleaks.toml"))
    rules = {r["id"]: r for r in config["rules"]}
    patterns: dict[str, re.Pattern[str] | None] = {}
    for rid, rule in rules.items():
        try:
            patterns[rid] = re.compile(translate(rule["regex"])) if "regex" in rule else None
        except re.error:
            patterns[rid] = None
    groups = {rid: int(r.get("secretGroup", 0)) for rid, r in rules.items()}

    raw = gitleaks_samples(gitleaks, rules) + detect_secrets_samples(detect)
    # A line one test expects flagged and another not (detect-secrets' keyword tests: quotes are
    # required in code, not in config files) depends on the file it is in: not a clear case either way.
    verdicts: dict[str, set[bool]] = {}
    for s in raw:
        verdicts.setdefault(s["text"], set()).add(s["positive"])
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for s in raw:
        if s["text"] in seen:
            continue
        seen.add(s["text"])
        secret = secret_of(s, patterns, groups) if s["positive"] else ""
        if s["positive"] and len(secret) < 4:
            continue  # a generator left nothing to find: no ground truth
        bare = s["source"] == "detect-secrets" and not s.get("filled")  # no secret named: judge the line
        if len(verdicts[s["text"]]) > 1:
            label = "unclear"
        elif s["positive"] and not placeholder(secret) and not (bare and placeholder(s["text"])):
            label = "secret"
        elif s["positive"] or not random_run(s["text"]):
            label = "lookalike"
        else:
            label = "unclear"
        out.append(
            {
                "label": label,
                "split": "tune",
                "source": s["source"],
                "origin": s["origin"],
                "text": s["text"],
                "secret": secret,
            }
        )
    # A look-alike holding what another sample calls a secret is that secret in another context (a
    # code file, where detect-secrets wants quotes): not clear.
    secrets = {s["secret"] for s in out if s["label"] == "secret" and len(s["secret"]) >= 8}
    for s in out:
        if s["label"] == "lookalike" and any(v in s["text"] for v in secrets):
            s["label"] = "unclear"
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {
        "gitleaks": git(gitleaks, "rev-parse", "HEAD").strip(),
        "detect-secrets": git(detect, "rev-parse", "HEAD").strip(),
    }
    with (OUT / "public_corpus.json").open("w") as f:
        json.dump({"commits": meta, "samples": out}, f, indent=0, ensure_ascii=False)
        f.write("\n")
    counts = Counter((s["label"], s["split"], s["source"]) for s in out)
    for key, n in sorted(counts.items()):
        print(*key, n)


if __name__ == "__main__":
    main()
