"""kingfisher's published rules (Apache-2.0) as a second well-kept rule set beside gitleaks': read as
data, each regex run only near a keyword derived from it, its ``min_entropy`` honoured, publishable keys
and placeholders left readable, nothing loaded at import."""

from __future__ import annotations

import base64
import importlib.util
import json
import random
import re
import string
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from agentcli.redact import PLACEHOLDER, kingfisher, redact
from tests.corpus_common import Sample, leaks
from tests.hostile_text import superlinear

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
RNG = random.Random(2511)
ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def refresh_script() -> ModuleType:
    path = SCRIPTS / "refresh_kingfisher_rules.py"
    spec = importlib.util.spec_from_file_location("refresh_kingfisher_rules", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_digest_read_at_start_is_derived_from_the_vendored_rules() -> None:
    """kingfisher.json (what agentcli reads) holds exactly what the vendored YAML says, keywords and
    widths derived by the refresh script; a hand edit to either fails here."""
    script = refresh_script()
    vendored = script.VENDORED.read_text()
    assert vendored.startswith("# From https://github.com/mongodb/kingfisher")
    assert json.loads(kingfisher.RULES_JSON.read_text()) == script.digest(script.split(vendored))


def places(text: str) -> dict[str, list[int]]:
    """Where each of kingfisher's keywords occurs in ``text`` lower-cased (the caller's scan)."""
    lower = text.lower()
    return {
        k: [m.start() for m in re.finditer(re.escape(k), lower)] for k in kingfisher.keywords() if k in lower
    }


def vendored_rules() -> list[dict[str, object]]:
    script = refresh_script()
    return [r for _, doc in script.split(script.VENDORED.read_text()) for r in doc.get("rules") or []]


def test_every_rule_compiles_and_its_keywords_are_in_every_example_it_matches() -> None:
    """The prefilter is sound: a derived keyword occurs in every text the rule's regex matches (checked
    on kingfisher's own examples), so running the regex only near a keyword loses no match."""
    used = {(r.id, r.source): r for r in kingfisher.rules()}  # (kingfisher has ids used twice)
    assert len(used) >= 600
    checked = 0
    for spec in vendored_rules():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a "possible nested set" would change meaning later
            pattern = re.compile(kingfisher.translate(str(spec["pattern"])))
        rule = used.get((str(spec["id"]), str(spec["pattern"])))
        if rule is None:
            continue
        for example in spec.get("examples") or []:  # type: ignore[attr-defined]
            if m := pattern.search(example):
                checked += 1
                assert any(k in example.lower() for k in rule.keywords), (rule.id, example)
                assert len(m.group()) <= rule.width or not rule.width, (rule.id, example)
                if rule.before >= 0:  # a keyword starts at most ``before`` into the match
                    head = example.lower()[m.start() : m.start() + rule.before + max(map(len, rule.keywords))]
                    assert any(k in head for k in rule.keywords), (rule.id, example)
                # tried only near its keywords, the rule finds what a search of the whole text finds
                where = sorted(p for k in rule.keywords for p in places(example).get(k, ()))
                assert [x.span() for x in kingfisher._matches(rule, example, where)] == [
                    x.span() for x in pattern.finditer(example)
                ], (rule.id, example)
    assert checked >= 700


def test_generic_rules_and_common_word_keywords_are_not_used() -> None:
    """kingfisher's generic rules (``secret … <hex>``, weak passwords) are the key=value judge's job;
    a keyword such as ``key`` or ``box`` would run a regex on every line."""
    used = kingfisher.rules()
    assert not [r.id for r in used if "generic" in r.id or "weak_password" in r.id]
    assert all(len(k) >= 4 or (len(k) == 3 and not k.isalpha()) for r in used for k in r.keywords)


def case(kind: str, context: str, secret: str) -> object:
    return pytest.param(context.replace("$S", secret), secret, id=kind)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # "a vendor's name, a credential word a few characters on, a token of the vendor's shape"
        case("name-glued-word-hex", "weatherbitSECRET $S", rand(HEX, 32)),
        case("name-word-uuid", "coinapi TOKEN $S", "-".join(rand(HEX + "ABC", n) for n in (8, 4, 4, 4, 12))),
        case("name-then-token", "chartmogul $S", rand(LOWER, 32)),
        case("name-word-one-case", "clockify PRIVATE $S", rand(LOWER, 48)),
        case("name-in-a-key", "pdfshift ACCESS $S", rand(HEX, 32)),
        # a vendor prefix gitleaks has no rule for
        case("prefix", "BUILDKITE=$S", "bkua_" + rand(LOWER, 40)),
    ],
)
def test_vendor_keys_that_only_kingfishers_rules_know_are_redacted(text: str, secret: str) -> None:
    assert not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


def test_a_rules_min_entropy_is_honoured() -> None:
    token = "chartmogul " + rand(LOWER, 32)
    assert list(kingfisher.find(token, places(token)))
    low = "chartmogul " + "a1b2c3d4" * 4  # entropy 3.0, under the rule's 3.5
    assert not list(kingfisher.find(low, places(low)))


@pytest.mark.parametrize(
    "text",
    [
        f"const stripe = Stripe('pk_live_{rand(ALNUM, 40)}');",  # publishable: public by design
        "weatherbitSECRET 1234567890abcdef1234567890abcdef",  # a placeholder
        "chartmogul key: ${CHARTMOGUL_API_KEY}",
    ],
)
def test_public_keys_and_placeholders_stay_readable_whatever_rule_matched(text: str) -> None:
    assert redact(text) == text


def test_nothing_of_kingfisher_loads_at_import_and_a_text_without_its_keywords_compiles_no_rule() -> None:
    probe = (
        "from agentcli.redact import kingfisher, redact\n"
        "print(kingfisher._loaded.cache_info().currsize)\n"
        "redact('say hi')\n"
        "print(sum('pattern' in vars(r) for r in kingfisher.rules()))\n"
        "redact('weatherbitSECRET ' + 'ff9cfa3aafd54870b8407ac660f17590')\n"
        "print(sum('pattern' in vars(r) for r in kingfisher.rules()))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0", "1"]


def test_the_vendored_rules_are_yaml_of_kingfishers_schema() -> None:
    rules = vendored_rules()
    assert all({"id", "pattern"} <= set(r) for r in rules)
    assert yaml.safe_load("rules: []") == {"rules": []}


@pytest.mark.parametrize("unit", ["ngrok", "atlas ", "mongodb ", "line TOKEN ", "sk_live_" + "a" * 30])
def test_a_text_full_of_one_rules_keyword_costs_linear_time(unit: str) -> None:
    """Each of kingfisher's regexes is tried only at or near a keyword and spans a bounded text there:
    100 KB of the keywords that cost most (~75 µs a place for ``ngrok``'s nested lazy gaps) cost about
    four times 25 KB, in CPU time (a wall-clock bound failed under load)."""
    assert superlinear([unit]) == []


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_a_dot_joined_token_with_a_filler_for_a_part_is_an_example() -> None:
    """A JWT made up part by part (a filler payload, whatever its signature looks like) is a vendor's
    example; one a program issued has no filler in any part."""
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    signature = rand(ALNUM + "-_", 43)
    made_up = f"web3 access key {header}.eyJabcdefghijABCDEFGHIJKabcdefghijABCDEFGHIJ.{signature}"
    assert redact(made_up) == made_up
    payload = b64url(json.dumps({"sub": rand(ALNUM, 12), "iat": RNG.randrange(10**9, 2 * 10**9)}).encode())
    issued = f"web3 access key {header}.{payload}.{signature}"
    assert signature not in redact(issued)
