"""Secrets planted where real files put credentials (scripts/redact_planted.py): the classes of value the
redactor used to leave readable there, and the locator and planter themselves on a small built-in sample
(CI machines lack the installed-packages body the script measures)."""

from __future__ import annotations

import re
import zlib

import pytest

from agentcli.redact import PLACEHOLDER, redact
from scripts.redact_planted import CLASSES, locate, measure, plant, secret
from tests.corpus_common import Sample, leaks


def _caught(text: str, value: str) -> bool:
    return not leaks(Sample("planted", text, value), PLACEHOLDER.sub("", redact(text)))


# A generated password's first character is a symbol as often as its others are.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('password = "~!jyVeD@b+5vcQp0CXP"', "~!jyVeD@b+5vcQp0CXP"),
        ('{"Password": "%hYp.S7w*Ep=1%AH", "User": "admin"}', "%hYp.S7w*Ep=1%AH"),
        ("db:\n  secret: '*1HiE@C5^jo?VGgC'\n", "*1HiE@C5^jo?VGgC"),
        ('client_secret: "!NmKlqP@KUVJhq32"', "!NmKlqP@KUVJhq32"),
    ],
)
def test_a_quoted_password_led_by_a_symbol_is_redacted(text: str, value: str) -> None:
    assert _caught(text, value)


@pytest.mark.parametrize(
    "text",
    [
        'password = "%(db_password)s" % conf',
        'password = "%APPDATA%"',
        'password_file = "~/.config/pw"',
        'password = "*****"',
        'api_key: "%s"',
        'token_domain = "*.example.com"',
        "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        "password: *db_password_anchor",
    ],
)
def test_templates_masks_and_yaml_syntax_led_by_a_symbol_stay_readable(text: str) -> None:
    assert redact(text) == text


# A machine key shorter than the usual 12+: random to its last characters.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('client = Client(api_key="4yPgA2Bl", timeout=30)', "4yPgA2Bl"),
        ("{'access_token': 'keDdCf3L', 'expires_in': 3600}", "keDdCf3L"),
        ("service:\n  auth_token: UWuhL7v1\n", "UWuhL7v1"),
        ("self.token = 'wQMfScx6'", "wQMfScx6"),
    ],
)
def test_a_short_random_key_under_a_key_or_token_name_is_redacted(text: str, value: str) -> None:
    assert _caught(text, value)


@pytest.mark.parametrize(
    "text",
    [
        'token_type = "OAuth2Token"',
        'api_key_kind = "x509Cert"',
        'signing_key = "Sha256Hmac"',
        'token = "abc12345"',
        'api_key = "gpt4Turbo"',
    ],
)
def test_short_names_with_digits_under_a_key_or_token_name_stay_readable(text: str) -> None:
    assert redact(text) == text


SAMPLE = {
    "settings.ini": "[db]\nhost = localhost\npassword = hunter2\nport = 5432\n",
    "config.yaml": "api:\n  api_key: ''\n  timeout: 30\nauth:\n  clientSecret: \"changeme\"  # set me\n",
    "conf.json": '{"token": null, "accessKey": "", "passwordMinLength": 8}\n',
    "client.py": "if password == 'x':\n    token = get_token()\n    secret = 'abc'\n",
    "web.xml": "<config><dbPassword>s3cret</dbPassword><user>me</user></config>\n",
    "README.md": "Run `tool --password VALUE --verbose`, or set in .env:\n\n    AUTH_TOKEN=xyz\n",
}


def test_the_locator_finds_credential_values_in_each_syntax_and_skips_code_and_comparisons() -> None:
    found = {
        name: [text[s.start : s.end] for s in locate(text, "." + name.rsplit(".", 1)[1])]
        for name, text in SAMPLE.items()
    }
    assert found == {
        "settings.ini": ["hunter2"],
        "config.yaml": ["", "changeme"],
        "conf.json": [""],  # null is no literal; passwordMinLength names a length, yet is matched by its word
        "client.py": ["abc"],  # a comparison and a call are not values
        "web.xml": ["s3cret"],
        "README.md": ["VALUE", "xyz"],
    }


def test_the_planter_keeps_the_syntax_and_plants_each_shape_deterministically() -> None:
    planted = [p for name, text in SAMPLE.items() for p in plant(name, text, "." + name.rsplit(".", 1)[1])]
    again = [p for name, text in SAMPLE.items() for p in plant(name, text, "." + name.rsplit(".", 1)[1])]
    assert planted == again and len(planted) == 8
    for p in planted:
        assert p.secret in p.text and p.shape in CLASSES
    yaml = next(p for p in planted if p.text.startswith("api:") and "api_key" in p.text.split("\n")[1])
    assert yaml.text.split("\n")[1] in (f"  api_key: '{yaml.secret}'", "  api_key: ''")
    shapes = {
        "hex": r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}",
        "base64": r"[A-Za-z0-9+/]{40}",
        "memorable": r"[A-Z][a-z]+[!@$%*?]\d{4}",
        "passphrase": r"[a-z]+(?:-[a-z]+){2,3}",
        "short": r"[A-Za-z0-9]{8}",
        "alnum": r"[A-Za-z0-9]{12,40}",
    }
    import random

    for shape, pattern in shapes.items():
        for seed in range(20):
            assert re.fullmatch(pattern, secret(shape, random.Random(seed))), shape
    for seed in range(40):
        key = secret("vendor", random.Random(seed))
        if key.startswith("ghp_"):  # GitHub's checksum: the last 6 base62 characters are CRC32's
            digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            n = zlib.crc32(key[4:34].encode())
            tail = ""
            while n:
                n, r = divmod(n, 62)
                tail = digits[r] + tail
            assert key[34:] == tail.rjust(6, "0")
        assert re.fullmatch(
            r"ghp_\w{36}|sk-\w{20}T3BlbkFJ\w{20}|xoxb-\d{12}-\d{13}-\w{24}|AKIA[A-Z2-7]{16}", key
        )


def test_recall_is_measured_with_the_corpus_leak_rule() -> None:
    missed = measure(lambda text: text)  # a redactor that redacts nothing misses every planted secret
    planted = list(plant("settings.ini", SAMPLE["settings.ini"], ".ini"))
    assert planted and all(missed(p) for p in planted)
    assert not any(measure()(p) for p in planted)  # under `password` every shape is caught
