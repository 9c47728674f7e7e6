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
