"""Secrets by the form that holds them, the second round (whispers' and ripsecrets' second half, read
once the first half's round was measured on it; tests/fixtures/redact/README.md): values that lie
apart from the key naming them (a list's items, an element after the element naming it, a declared
parameter's default), a webhook URL's path, an instruction standing where a value would, and a vendor
prefix followed by more than its format's length. Each case is a member of its class that no corpus
lists; the look-alikes beside each are what the same construction must leave readable."""

from __future__ import annotations

import random
import string

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks
from tests.hostile_text import superlinear

RNG = random.Random(7)
PASSWORD = "bluebird42"  # a human-chosen password: only the key naming it tells what it is
TOKEN = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(32))
HEX = "".join(RNG.choice("0123456789abcdef") for _ in range(40))


def case(kind: str, context: str, secret: str = PASSWORD) -> object:
    """A secret in its context (``$S`` marks where)."""
    return pytest.param(context.replace("$S", secret), secret, id=kind)


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("yaml-block", "db_passwords:\n  - old-pass-1\n  - $S\n"),
        case("yaml-quoted-commented", "smtp:\n  passwords:\n    # rotated in May\n    - '$S'  # current\n"),
        case("yaml-same-indent", "passwords:\n- $S\nnext: 1"),
        case("json-multiline", '{\n  "admin_passwords": [\n    "$S",\n    "other-pw-9"\n  ]\n}'),
        case("python", 'FALLBACK_PASSWORDS = ["$S", "s3cond-Pw"]'),
        case("toml", 'api_keys = ["$S"]', HEX),
        case("hex-keys", "signing_keys:\n  - $S", HEX),
        case("cut-off", '"passwords": [\n  "$S",'),
        case("go", 'var signingKeys = []string{"$S"}', HEX),
        case("java", 'String[] passwords = {"$S", "x2-pw"};'),
        case("kotlin", 'val fallbackPasswords = listOf("$S")'),
        case("rust", 'let api_keys = vec!["$S"];', HEX),
        case("csharp", 'var passwords = new[] { "$S" };'),
        case("php", "'passwords' => ['$S', 'other-pw-9'],"),
    ],
)
def test_each_item_of_a_list_under_a_key_naming_secrets_is_one(text: str, secret: str) -> None:
    """``passwords:`` and its ``- …`` lines, ``"tokens": ["…", "…"]``: each item is a value the key
    names, judged as if it stood under the key alone (a list of keys or tokens holds machine-made
    ones: each must look random)."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "secrets:\n  - db_password\n  - tls-cert",  # compose: the names of secrets defined elsewhere
        "imagePullSecrets:\n  - name: regcred",  # a list of mappings, not of values
        'tokens = ["un", "##want", "##ed"]',  # a tokenizer's test
        'special_tokens: ["<s>", "</s>", "<unk>"]',
        'tokens: ["IDENTIFIER", "NUMBER"]',
        "passwords = [pw1, pw2]",  # names in code
        'api_keys = [os.environ["A"], "hunter22x"]',  # code among the items: no list of literals
        'passwords:\n  - ${DB_PASSWORD}\n  - "{{ vault_pw }}"',
        "- name: a\n  password:\n- bluebird42",  # the parent's list, not the key's
        'password = {"type": "string"}',  # a map, not a list of values
        "passwords: {}",
        '"security": [{"petstore_auth": ["write:pets", "read:pets"]}]',  # OpenAPI's scopes
    ],
)
def test_lists_of_names_references_and_code_under_such_keys_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("conf-pair", "<property>\n  <key>mail.smtp.password</key>\n  <value>$S</value>\n</property>"),
        case("plist", "<dict>\n\t<key>Password</key>\n\t<string>$S</string>\n</dict>"),
        case("hadoop", "<name>fs.s3a.secret.key</name>\n<value>$S</value>", HEX),
        case("one-line", "<key>PASS</key><value>$S</value>"),
        case(
            "web-xml",
            "<init-param>\n  <param-name>smtp.password</param-name>\n  <param-value>$S</param-value>",
        ),
    ],
)
def test_an_element_naming_a_secret_gives_the_value_element_after_it(text: str, secret: str) -> None:
    """``<key>password</key>`` then ``<value>…</value>`` (or a plist's ``<string>``)."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "<key>password</key><value>${DB_PASSWORD}</value>",
        "<key>Password</key>\n<string>Password:</string>",  # a form's label
        "<name>password.min.length</name><value>12</value>",  # a key naming no secret
        "<key>password</key>\n<dict/>",
    ],
)
def test_element_pairs_holding_references_labels_or_settings_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("cloudformation-yaml", "  AdminPassword:\n    Type: String\n    NoEcho: true\n    Default: $S"),
        case(
            "cloudformation-json",
            '"MasterUserPassword": {\n  "Type": "String",\n  "Default": "$S"\n}',
        ),
        case("terraform", 'variable "db_password" {\n  type      = string\n  default   = "$S"\n}'),
        case("arm", '"adminPassword": {\n  "type": "securestring",\n  "defaultValue": "$S"\n}'),
        case("json-schema-one-line", '"password": {"type": "string", "default": "$S"}'),
        case("terraform-one-line", 'variable "db_password" { default = "$S" }'),
    ],
)
def test_a_declared_parameter_named_for_a_secret_gives_its_default(text: str, secret: str) -> None:
    """A template's parameter or a module's variable named for a secret: its default is that secret,
    hard-coded (CloudFormation's ``Default:``, Terraform's ``default =``, ARM's ``defaultValue``)."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "DBPassword:\n  Type: String\n  NoEcho: true\n  Default: ''",
        "DBPassword:\n  Type: String\n  Default: !Ref Other",
        'variable "db_password" {\n  default = var.fallback\n}',
        '"adminPassword": {\n  "type": "securestring",\n  "defaultValue": "[parameters(\'x\')]"\n}',
        "DBPassword:\n  Type: String\nRegion:\n  Default: us-east-1",  # the block closed before it
        'variable "password_length" {\n  default = 24\n}',  # a parameter naming no secret
        '"password": {"type": "string", "description": "x, default: bluebird42"}',  # prose in a string
        '"password": {"type": "string", "minLength": 8}',
    ],
)
def test_defaults_that_are_empty_references_or_another_parameters_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("hubspot", "notify: https://api.hubapi.com/webhooks/v1/5593x1/$S", "Kd93hQm2Lx0pWebhook"),
        case("mattermost", "url = 'https://chat.example.org/hooks/$S'", "xi8wyzsm1pnbfnab5d6kh3x4qa"),
        case("n8n", "https://n8n.example.com/webhook/$S", "3f2a9c1e-5b7d-4e8f-a6c2-9d1b7e4f0a35"),
        case("zapier", "https://hooks.zapier.com/hooks/catch/1234567/$S/", "ab12cd9e"),
    ],
)
def test_a_webhook_urls_token_segments_are_its_credential(text: str, secret: str) -> None:
    """Whoever has a webhook's URL may post to it: its token-like segments after ``/webhooks/`` or
    ``/hooks/`` are a secret."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "https://api.github.com/repos/o/r/hooks/123456",  # a number alone: an API's id
        "src/hooks/useAuth22Token.ts",  # a path, no URL
        "see .git/hooks/pre-commit2024v1",
        "https://github.com/o/r/blob/main/src/hooks/useAuth22Token.ts",  # a file's name
        "POST https://api.example.com/webhooks/stripe",
        "https://api.hubapi.com/webhooks/v1/{portalId}/settings",
        "https://outlook.office.com/webhookb2/IncomingWebhook/",
    ],
)
def test_hook_paths_with_words_numbers_or_files_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        'S3_ARCHIVE_SECRET_KEY: "Get yours from Vault"',
        'password: "set in CI"',
        'api_token = "ask ops for it"',
        "SMTP_PASSWORD='paste yours here'",
    ],
)
def test_an_instruction_where_a_value_would_be_stays_readable(text: str) -> None:
    """A verb telling where the value is, with a function word after it: prose, not a passphrase."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("diceware", 'password: "$S"', "correct horse battery staple"),
        case("with-function-words", "secret: '$S'", "tiger in the river"),
        case("verb-no-function-word", 'passphrase = "$S"', "get lost banjo comet"),
    ],
)
def test_passphrases_under_secret_keys_are_still_secrets(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("square-longer", "SQUARE=$S", "sq0csp-" + TOKEN + "-Zz9_" + TOKEN[:12]),
        case("digitalocean-longer", "token: $S", "dop_v1_" + HEX + HEX),
    ],
)
def test_a_digit_holding_vendor_prefix_with_a_longer_run_is_its_token(text: str, secret: str) -> None:
    """``sq0csp-``, ``dop_v1_``: no word or name starts so, so a run past the format's length is the
    vendor's token all the same (a revision of its format, or junk glued on)."""
    assert caught(text, secret)


def test_a_digit_holding_vendor_prefix_with_a_shorter_run_stays_readable() -> None:
    assert redact("sq0csp-short1x and dop_v1_abc123") == "sq0csp-short1x and dop_v1_abc123"


@pytest.mark.parametrize(
    "unit",
    [
        "passwords:\n",
        "passwords:\n- a\n",
        "- passwords:\n",
        'passwords: ["a", ',
        "passwords = listOf(",
        "tokens: []string{",
        '"tokens": ["',
        "<key>password</key>\n",
        "<key>password</key><value>",
        "password:\n  ",
        "password:\n  x: 1\n",
        'variable "db_password" {\n',
        '"password": {"default": ',
        "password: {, default = ",
        "<param-name>password</param-name>",
        "https://x/hooks/",
        "/webhooks/a1b2c3d4",
        "://a/hooks/1a2b3c4d/",
    ],
)
def test_each_construction_of_this_round_costs_linear_time(unit: str) -> None:
    """Every scan is bounded (a few hundred characters, lines or items after the key)."""
    assert superlinear([unit]) == []  # CPU time, 100 KB against 25 KB
