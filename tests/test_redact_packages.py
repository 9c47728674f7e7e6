"""Look-alikes by class from installed packages' code and docs (the tuning half of
scripts/redact_package_spans.py: files whose relative path's sha256 starts with an even byte), each beside
the secret the same form must still give up."""

from __future__ import annotations

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks

SECRET = "Xk9#mQ2vL7pR4tZ8"


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    "text",
    [
        "    token: str | None = None,\n",
        "    token: bool | str | None,\n",
        "    api_key: str | None\n",
        "    aws_secret_access_key: Optional[str] | None = None,\n",
        "    credentials: MCPCredentials | None,\n",
        "    private_key: ed25519.Ed25519PrivateKey | None,\n",
        "    password: str or None\n",
        "    client_secret: string | undefined;\n",
    ],
)
def test_a_union_type_annotation_under_a_secret_name_stays_readable(text: str) -> None:
    """``token: str | None = None``: a parameter's annotation, a union of types, is no value."""
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f'    azure_client_secret: str | None = "{SECRET}",\n',
        f'password: str | None = "{SECRET}"\n',
        f"password: {SECRET} | None\n",
        "password: hunter2 | None\n",
        f"api_key: str | {SECRET}\n",
    ],
)
def test_a_value_after_a_union_annotation_or_beside_a_pipe_is_still_a_secret(text: str) -> None:
    secret = SECRET if SECRET in text else "hunter2"
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        '"Authorization": "Bearer " + self.api_key,',
        'headers["authorization"] = "Basic " + b64encode(userpass)',
    ],
)
def test_an_authorization_scheme_joined_to_a_variable_stays_readable(text: str) -> None:
    """``"Bearer " + token``: the scheme alone, with its space; the credential is a variable."""
    assert redact(text) == text


def test_an_authorization_scheme_with_its_credential_is_still_redacted() -> None:
    assert caught(f'"Authorization": "Bearer {SECRET}",', SECRET)


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:pass@localhost:5432/foobar",
        "redis://:pass@localhost",
        'create_engine("mysql+aiomysql://user:pass@hostname/dbname")',
        "https://admin:changeme@example.com/",
    ],
)
def test_a_documented_default_password_in_a_url_stays_readable(text: str) -> None:
    """``user:pass@``: documentation's default, as after curl's ``-u user:pass`` (gitleaks' allowlist)."""
    assert redact(text) == text


@pytest.mark.parametrize("password", ["tiger^5HHH", "83920174", "s3cr3t-P4ss", "passw0rd!x"])
def test_a_url_password_that_is_no_default_is_still_redacted(password: str) -> None:
    assert caught(f"postgres://scott:{password}@db.internal:5432/app", password)


@pytest.mark.parametrize(
    "text",
    [
        "    token: _StrPathToken\n",
        "    credentials: MCPCredentials\n",
        "        self, private_key: ed25519.Ed25519PrivateKey, f_priv: _FragList\n",
        "UserAPIKeyAuth = _UserAPIKeyAuth\n",
        'backend: "Backend", private_key: "_DSAPrivateKey", data: bytes\n',
    ],
)
def test_a_class_named_for_the_secret_stays_readable(text: str) -> None:
    """``credentials: MCPCredentials``: a type named after the noun, capitalised words run together."""
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "    default_token_type=self.bearer)\n",
        "    refresh_token=self.issue_new_refresh_tokens)\n",
        '    api_key = valid_token.token or ""\n',
        "token = Generic.Error if in_error else Generic.Output\n",
        "    has_credential = server.server_id in cred_set\n",
    ],
)
def test_a_dotted_name_that_code_goes_on_from_stays_readable(text: str) -> None:
    """``token=self.bearer)``: an attribute closing a call, or joined by ``or``/``if``/``in``, is code."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"token: {SECRET}Token\n", f"{SECRET}Token"),
        ("token: Xk9mQ2vL7pR4Token\n", "Xk9mQ2vL7pR4Token"),
        ("password: hunter2)\n", "hunter2)"),
        ("password: sunshine and rainbows\n", "sunshine and rainbows"),
        ("db_password: my.pass0rd)\n", "my.pass0rd)"),
    ],
)
def test_a_random_run_ending_in_the_noun_or_a_password_ending_in_a_bracket_is_still_a_secret(
    text: str, secret: str
) -> None:
    assert caught(text, secret)
