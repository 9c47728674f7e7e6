"""Secrets by the form that holds them, each form closed as a class (from the whispers/ripsecrets tuning
half, tests/fixtures/redact/README.md): every case here is a form's member that no corpus lists, and the
look-alikes beside each are what the same construction must leave alone."""

from __future__ import annotations

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks

# A human-chosen password (a word and digits): no randomness to find it by, only the key naming it.
PASSWORD = "bluebird42"


def case(kind: str, context: str, secret: str = PASSWORD) -> object:
    """A secret in its context (``$S`` marks where)."""
    return pytest.param(context.replace("$S", secret), secret, id=kind)


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("numbered-snake", 'DB_PASSWORD_2 = "$S"'),
        case("numbered-glued", "smtpPassword3: $S"),
        case("numbered-export", "export REDIS_PASS_1=$S"),
        case("numbered-js", 'let adminSecret2 = "$S";'),
    ],
)
def test_a_key_numbered_after_its_noun_still_names_a_secret(text: str, secret: str) -> None:
    """``password01``, ``TOKEN_2``: a number after the noun numbers the secret; it names no other thing."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("php-array", "$settings['smtp_password'] = '$S';"),
        case("python-environ", 'os.environ["SMTP_PASSWORD"] = "$S"'),
        case("ruby-hash", 'ENV["API_SECRET"] = "$S"'),
    ],
)
def test_a_secret_assigned_to_a_quoted_subscript_is_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("go-var", 'var user, password string = "deploy", "$S"'),
        case("go-short", 'apiSecret, region := "$S", "eu-west-1"'),
        case("python", 'host, port, db_password = "db.local", 5432, "$S"  # dev'),
        case("with-call", 'name, db_pwd := lookup(a, b), "$S"'),
    ],
)
def test_a_parallel_assignment_pairs_each_name_with_its_own_value(text: str, secret: str) -> None:
    """``a, password = "x", "y"``: the value in the secret name's place is the secret."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        'user, password = "deploy", os.environ["PW"]',
        "user, password = get_credentials()",
        'region, db_password := "eu-west-1", vault.Read(path)',
        'user, password = "deploy"',  # the values do not pair up: no value is taken for the password
    ],
)
def test_a_parallel_assignment_leaves_the_other_names_values_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("python-f-compared", 'if password == f"$S":'),
        case("python-f-assigned", 'admin_password = f"$S"'),
        case("python-rb", "secret = rb'$S'"),
    ],
)
def test_a_prefixed_string_literal_is_a_literal(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        'db_password = f"{prefix}_{env}"',
        'api_token = "tok_{}_{}".format(user, n)',
        'smtp_password = "pw-%s-%d" % (name, year)',
        'if password == f"{salt}{given}":',
        'secret = "%(user)s:%(pw)s" % values',
    ],
)
def test_a_format_string_under_a_secret_key_is_a_template(text: str) -> None:
    """Its slots are filled at run time: the literal is no value of the secret."""
    assert redact(text) == text
