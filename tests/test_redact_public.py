"""Redaction from a well-kept rule set: gitleaks' published rules run as data, and the detector is
measured on a public corpus built from gitleaks' and detect-secrets' own test data, with a held-out
part nothing was tuned on (tests/fixtures/redact/README.md). Figures print with ``pytest -s``."""

from __future__ import annotations

import random
import re
import string
import time
import tomllib
import warnings

import pytest

from agentcli.redact import PLACEHOLDER, gitleaks, redact
from tests.corpus_common import Sample, leaks
from tests.public_corpus import figures, load

SAMPLES = load()
RNG = random.Random(25)


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def test_every_gitleaks_rule_and_allowlist_compiles_as_python_regex() -> None:
    config = tomllib.loads(gitleaks.RULES_FILE.read_text())
    regexes = [r["regex"] for r in config["rules"] if "regex" in r]
    regexes += [x for r in config["rules"] for a in r.get("allowlists", ()) for x in a.get("regexes", ())]
    regexes += config["allowlist"]["regexes"]
    re.purge()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "possible nested set" would change meaning in a later Python
        for regex in regexes:
            re.compile(gitleaks.translate(regex))
    skipped = {r["id"] for r in config["rules"] if "regex" not in r or "path" in r} | {"generic-api-key"}
    assert len(gitleaks.RULES) == len(config["rules"]) - len(skipped) >= 200


def test_re2_syntax_keeps_its_meaning_in_translation() -> None:
    # RE2's (?i) mid-pattern holds to the end of its group, across alternatives.
    inline = re.compile(gitleaks.translate(r"\b(p8e-(?i)[a-z0-9]{4})\b"))
    assert inline.search("p8e-AbC9") and not inline.search("P8E-abc9")
    across = re.compile(gitleaks.translate(r"(?:x(?i)a|b)y"))
    assert across.fullmatch("xAy") and across.fullmatch("By") and not across.fullmatch("xaY")
    assert re.compile(gitleaks.translate(r"ab\z")).search("ab") and not re.search(
        gitleaks.translate(r"ab\z"), "ab\n"
    )
    assert re.fullmatch(gitleaks.translate(r"pat[[:alnum:]]{3}"), "patA1z")


def case(kind: str, context: str, secret: str) -> object:
    """A secret in its context (``$S`` marks where)."""
    return pytest.param(context.replace("$S", secret), secret, id=kind)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("sourcegraph", "sourcegraph: $S", rand(HEX, 40)),
        case("postman", "export POSTMAN=$S", f"PMAK-{rand(HEX, 24)}-{rand(HEX, 34)}"),
        case("rubygems", "gem push with $S", "rubygems_" + rand(HEX, 48)),
        case(
            "slack-app",
            "SLACK_APP=$S",
            f"xapp-1-A{rand(ALNUM, 10)}-{rand(string.digits, 13)}-{rand(HEX, 64)}",
        ),
        case("huggingface-org", "HF = '$S'", "api_org_" + rand(string.ascii_letters, 34)),
        case("unquoted-brackets", "DB_PASSWORD=$S", "m{{h}o)p${e]nob(ody[finds>"),
        case("compared", 'if (api_key == "$S") {', "Zt8qLmN2vX5r"),
        case("compared-first", 'if ("$S" === password) {', "Zt8qLmN2vX5r"),
        case("user-quoted-with-at", 'wget --user "j.smith:$S" https://x', "dB2yF6@qL9vZm1P#4J"),
    ],
)
def test_families_that_had_no_rule_are_redacted(text: str, secret: str) -> None:
    shown = PLACEHOLDER.sub("", redact(text))  # (a kind's name, "rubygems", is not a leak)
    assert not leaks(Sample("", text, secret), shown)  # not even 8 characters of it


@pytest.mark.parametrize(
    "text",
    [
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id = AKIAZZZZZZZZZZZZZZZZ",
        "Authorization: Bearer $API_KEY",
        'curl -H "Authorization: Bearer ${OPENAI_API_KEY}" https://api.openai.com/v1/models',
        "api_key: {{ .Values.apiKey }}",
        'token = "<your-api-token>"',
        "const key = process.env.STRIPE_SECRET_KEY",
        'secret = os.environ["APP_SECRET"]',
        'password = "1234567890abcdef1234567890abcdef"',
        "SLACK_TOKEN=xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx",
        'api_key = "abcd1234abcd1234abcd1234abcd1234"',
    ],
)
def test_placeholders_and_references_are_not_secrets(text: str) -> None:
    assert redact(text) == text


def test_tuning_part_of_the_public_corpus_meets_the_targets() -> None:
    tune = figures(redact, "tune", SAMPLES)
    print(f"public corpus, tuning part: {tune}")
    assert tune.secrets >= 500 and tune.lookalikes >= 150
    assert tune.recall >= 0.95 and tune.false_positives <= 0.05, str(tune)


def test_held_out_part_of_the_public_corpus_meets_the_recall_target() -> None:
    held = figures(redact, "holdout", SAMPLES)
    print(f"public corpus, held-out part: {held}")
    assert held.secrets >= 200 and held.lookalikes >= 80
    assert held.recall >= 0.95, str(held)


@pytest.mark.xfail(
    strict=True,
    reason="6 of 100 held-out clear look-alikes changed (target 5): not met yet",
)
def test_held_out_part_of_the_public_corpus_meets_the_lookalike_target() -> None:
    held = figures(redact, "holdout", SAMPLES)
    assert held.false_positives <= 0.05, str(held)


@pytest.mark.parametrize(
    "text",
    [
        '_USER_PASS = re.compile(r"[\\w.@+\\-]{1,64}:(?!//)[^\\s:][^\\n]{3,}")',
        '_TOKEN_RUN = re.compile(b"a" * TOKEN_MIN + b"a*={0,2}")',
        "password = hash_password(salt)[:32]",
        '{"baseURL": base_url, "apiKey": "demo"}',
    ],
)
def test_code_under_secret_looking_names_is_not_a_secret(text: str) -> None:
    """Brackets that do not pair up make a password only when the value is not code."""
    assert redact(text) == text


@pytest.mark.parametrize("unit", ["co_api_key" + "a" * 40 + " ", "curl -H x:", "meraki " + "A1b2" * 10 + '"'])
def test_a_line_full_of_one_rules_keyword_costs_linear_time(unit: str) -> None:
    """gitleaks' regexes assume RE2 (linear time); under Python's backtracking ``[\\w.-]{0,50}?`` before
    a key, or ``curl .*`` to the window's end from every ``curl``, took seconds on 100 KB."""
    text = unit * (100_000 // len(unit))
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(
    "text",
    [
        'badToken := "sm_pat_short1x"',  # a vendor's prefix, not its format (16 characters follow it)
        'TOKEN = "ghp_notreallyatoken"',
        "db_password = primary-replica",  # a kebab-case name, as db_password's value is a_name
        "secret: tls-cert-store",
    ],
)
def test_a_vendor_prefix_in_the_wrong_format_and_a_kebab_name_are_not_secrets(text: str) -> None:
    assert redact(text) == text


def test_a_vendor_prefix_in_its_own_format_is_still_a_secret() -> None:
    token = "sm_pat_" + rand(ALNUM, 16)
    assert token not in redact(f'badToken := "{token}"')
    assert "hunter-2-Zq" not in redact("db_password = hunter-2-Zq")  # digits and case: not a name
