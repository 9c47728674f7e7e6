"""Secrets and look-alikes by the form that holds them, the round on the next part (trivy, IBM
detect-secrets, ggshield, 2ms, checkov; tests/fixtures/redact/README.md): a translated label under a
password key, a name spelt from its key's own words, a ``$`` value no shell reads as a variable, a
password of symbols only, a credential noun abbreviated or glued (``creds``, ``dbpwd``), a credential
file named as a key (a Kubernetes Secret's ``.dockerconfigjson:``), and a name-shaped value in an XML
element's text. Each case is a member of its class that no corpus lists; the look-alikes beside each
are what the same construction must leave readable."""

from __future__ import annotations

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # a `$` that starts no name: literal text, not a variable
        pytest.param("DB_PASS=$tr0ng!pa$", "$tr0ng!pa$", id="dollar-env"),
        pytest.param('password: "$ecret#42$"', "$ecret#42$", id="dollar-yaml"),
        pytest.param("rootpwd=$x9@k$", "$x9@k$", id="dollar-glued"),
        # symbols only, quoted under a password key
        pytest.param('ADMIN_PASSWORD = "%^&*!#"', "%^&*!#", id="symbols-python"),
        pytest.param('{"password": "@@!#$%"}', "@@!#$%", id="symbols-json"),
        # abbreviated and glued nouns
        pytest.param('creds = "tangerine-sky-77"', "tangerine-sky-77", id="creds"),
        pytest.param("smtp:\n  creds: tangerine-sky-77\n", "tangerine-sky-77", id="creds-yaml"),
        pytest.param("userpwd=bluebird42", "bluebird42", id="glued-pwd"),
        pytest.param('<add key="AdminPwd" value="x" />\nadminpwd: bluebird42', "bluebird42", id="glued-yaml"),
        # a credential file named as a key: its content
        pytest.param(
            "data:\n  .npmrc: Ly9yZWdpc3RyeS5ucG1qcy5vcmcvOl9hdXRoVG9rZW49bnBt\n",
            "Ly9yZWdpc3RyeS5ucG1qcy5vcmcvOl9hdXRoVG9rZW49bnBt",
            id="k8s-npmrc",
        ),
        pytest.param("stringData:\n  .pgpass: db:5432:app:app:bluebird42\n", "bluebird42", id="k8s-pgpass"),
        pytest.param('{".dockercfg": "c2VjcmV0"}', "c2VjcmV0", id="dockercfg-json"),
        # a name-shaped value in an element's text: XML has no variables
        pytest.param("<passphrase>signingPassphrase</passphrase>", "signingPassphrase", id="xml-camel"),
        pytest.param("<gpg.passphrase>  myPassphrase </gpg.passphrase>", "myPassphrase", id="xml-spaced"),
    ],
)
def test_literal_secrets_in_forms_that_read_as_names_are_redacted(text: str, secret: str) -> None:
    assert caught(text, secret), redact(text)


@pytest.mark.parametrize(
    "text",
    [
        # translated or misspelt labels: a UI catalogue, not a value
        '"password": "Passwort",',
        '"confirm_password": "Passwort bestätigen",',
        '"old_password": "Gammelt passord"',
        "password: Pasword",
        '"client_secret": "Secreto del cliente"',
        # a name made of its key's words
        "ACCESS_TOKEN = 'accessToken'",
        "IAM_ROLE_POLICY_TOKEN = 'iamRolePolicy'",
        'DEPLOY_STAGE_SECRET = "deploy-stage"',
        "  webhookSigningSecret: WebhookSigning",
        'SESSION_SECRET_KEY = "session-secret"',
        "  REFRESH_TOKEN: refresh_token",
        # references, masks, separators
        "DB_PASS=$DB_PASSWORD",
        'password: "${VAULT_PASS}"',
        "dbpwd=$(cat /run/secrets/db)",
        'password = "****"',
        'password = "--"',
        'password = "-.-"',
        # names, not credentials
        'NETRC_FILES = (".netrc", "_netrc")',
        # an abbreviation names objects in code: only a literal assigned whole is a credential
        'creds = " --username=" + auth',
        "    prefetched_creds: 'Mapping[str, Payload] | None' = None,",
        "def fetch(self, gdch_creds: _AudienceCredentials, verify: bool) -> None:",
        "creds = load_creds(path)",
        'OPENAI_AUTHORIZATION = "Authorization"',
        "cwd=/tmp/build",
        "  .npmrc: |",
        "npmrc = os.path.expanduser('~/.npmrc')",
        "<password>${db.password}</password>",
        "<password>db.password</password>",
    ],
)
def test_labels_names_and_references_under_the_same_keys_stay_readable(text: str) -> None:
    assert redact(text) == text


def test_a_default_password_naming_one_word_of_its_key_is_still_a_secret() -> None:
    """A name spelt from the key's words needs two of them: ``admin_password = "admin"`` is an image's
    documented default, and a password all the same."""
    assert redact('admin_password = "admin"') == 'admin_password = "[REDACTED:password]"'


HEX40 = "3f2a9c8e7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a29"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param(
            f"git clone https://{HEX40}:x-oauth-basic@github.com/o/r.git", HEX40, id="github-classic"
        ),
        pytest.param(
            "https://k8x2mq9v7r4t1z6w3y5u0p8n:x@registry.example.io/v2/",
            "k8x2mq9v7r4t1z6w3y5u0p8n",
            id="lower",
        ),
    ],
)
def test_a_token_standing_as_a_urls_user_is_redacted(text: str, secret: str) -> None:
    """``https://<token>:x-oauth-basic@``: the password is a filler and the user holds the token."""
    assert caught(text, secret), redact(text)


@pytest.mark.parametrize("user", ["oauth2", "deploy", "git", "AKIAIOSFODNN7EXAMPLE"])
def test_a_user_name_before_a_urls_password_stays_readable(user: str) -> None:
    shown = redact(f"https://{user}:{HEX40}@github.com/o/r.git")
    assert shown.startswith(f"https://{user}:") and HEX40 not in shown
