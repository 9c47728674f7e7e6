"""A token beside a word naming a credential (agentcli/redact/context.py): vendor keys no rule knows,
in hex or one case, are redacted by one construction; the hashes and ids users paste every day
(commit ids, UUIDs, lockfile hashes, image digests) stay readable."""

from __future__ import annotations

import random
import string
import subprocess
import sys
import uuid

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks
from tests.hostile_text import superlinear

RNG = random.Random(2511)
HEX = "0123456789abcdef"
LOWER = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def uid() -> str:
    return str(uuid.UUID(int=RNG.getrandbits(128), version=4))


def lower_key(n: int = 32) -> str:
    """A vendor's lower-case key: letters and digits mixed (4+ of each, as a random draw has)."""
    while True:
        key = rand(LOWER, n)
        if sum(c.isdigit() for c in key) >= n // 6 and sum(c.isalpha() for c in key) >= n // 2:
            return key


def case(kind: str, context: str, secret: str) -> object:
    return pytest.param(context.replace("$S", secret), secret, id=kind)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # a key whose last word names a credential, whatever names the vendor before it
        case("env-vendor-key-hex", "ZENDESK_KEY=$S", rand(HEX, 32)),
        case("env-vendor-key-lower", "export BUGSNAG_KEY=$S", lower_key()),
        case("env-pat", "AZURE_DEVOPS_PAT=$S", lower_key(52)),
        case("glued-vendor-token", "checklyhqTOKEN=$S", rand(HEX, 32)),
        case("upper-one-case", "zendesk_key = '$S'", lower_key().upper()),
        case("license-key", "license: $S", rand(HEX, 40)),
        case("uuid-under-a-key", 'deploy_key: "$S"', uid()),
        case("glued-lower-case", "mailgunapikey=$S", rand(HEX, 32)),
        case("spaced-quoted-key", '{"API Key": "$S"}', lower_key()),
        case("flag", "nuget push app.nupkg -ApiKey $S -Source https://api.nuget.org", lower_key(46)),
        case("long-flag", "vendorctl login --auth-token $S", rand(HEX, 40)),
        # headers, query parameters, markup, a setter
        case("header", "curl -H 'X-Vendor-Key: $S' https://api.example.com", rand(HEX, 32)),
        case("query-parameter", "GET https://api.example.com/v2/data?apikey=$S&q=1", lower_key()),
        case("xml-element", "<apiKey>$S</apiKey>", lower_key()),
        case("setter", 'client.setApiKey("$S");', rand(HEX, 32)),
        case("listed-after-its-name", "buildConfigField 'String', 'API_KEY', '\"$S\"'", rand(HEX, 32)),
        # prose
        case("prose-named-key", "the mailgun key $S was rotated", rand(HEX, 32)),
        case("prose-api-key-is", "Your sendinblue api key is $S", lower_key()),
        case("prose-token", "logged in with token $S", rand(HEX, 40)),
        case("prose-for-a-service", "API token for Checkly: $S", rand(HEX, 32)),
        case("authorization-scheme", "Authorization: SSWS $S", lower_key(40)),
        case("prose-numbered", "Unseal Key 2: $S", rand(B64, 44)),
        case("prose-access-token", "sourcegraph access token sgp_$S<br>", f"{rand(HEX, 16)}_{rand(HEX, 40)}"),
    ],
)
def test_a_token_beside_a_word_naming_a_credential_is_redacted(text: str, secret: str) -> None:
    """Hex and one-case keys, which alone read as a digest or a name, are secrets beside a key,
    header, parameter or sentence naming a credential."""
    assert not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


SHA = rand(HEX, 40)


@pytest.mark.parametrize(
    "text",
    [
        # commit ids and git objects, as git prints them
        f"commit {SHA}\nAuthor: Dev <dev@example.com>\nDate:   Mon Nov 2 2026\n\n    Fix token refresh",
        f"* {SHA[:7]} (HEAD -> main) Rotate the API key handling {SHA}",
        f"tree {rand(HEX, 40)}\nparent {SHA}\nauthor Dev <dev@example.com> 1700000000 +0000",
        f"{SHA}\trefs/heads/main\n{rand(HEX, 40)}\trefs/tags/v1.0",
        f"index {SHA[:7]}..{rand(HEX, 7)} 100644\n--- a/secrets.py\n+++ b/secrets.py",
        f"Author: token-bot <{SHA}@users.noreply.github.com>",
        # UUIDs in URLs and logs, ids under keys that name no credential
        f"GET /api/tokens/{uid()} 200 12ms",
        f"https://api.example.com/v1/keys/{uid()}/rotate",
        f"request_id={uid()} token_id: {uid()} key_id: {rand(HEX, 32)}",
        # content hashes in lock files, digests
        f'"integrity": "sha512-{rand(B64, 86)}=="',
        f"golang.org/x/net v0.21.0 h1:{rand(B64, 43)}=",
        f'checksum = "{rand(HEX, 64)}"',
        f'{{file = "x-1.0.tar.gz", hash = "sha256:{rand(HEX, 64)}"}}',
        f"docker pull ghcr.io/org/app@sha256:{rand(HEX, 64)}",
        f"Digest: sha256:{rand(HEX, 64)}",
        # public and bookkeeping values under credential-looking words
        f"gpg:                using RSA key {rand(HEX, 40).upper()}",
        f"gpg --keyserver hkps://keys.openpgp.org --recv-keys {rand(HEX, 40).upper()}",
        f"cache_key: {rand(HEX, 64)}",
        f"the key of the cache: {rand(HEX, 64)}",
        f"restore --cache-key {rand(HEX, 64)}",
        f"Cache restored from key: node-cache-Linux-x64-npm-{rand(HEX, 64)}",
        f"primary_key = '{rand(HEX, 32)}'",
        f'public_key = "{rand(HEX, 64)}"',
        f"tokenizer {rand(HEX, 32)}",
        f"monkey: {rand(HEX, 32)}",
        "key = 'node18-alpine3-x20240101-build7'",
        f"secret/data/{lower_key()}",
    ],
)
def test_hashes_and_ids_users_paste_every_day_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "ZENDESK_KEY=1234567890abcdef1234567890abcdef",
        "ZENDESK_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "x-vendor-key: <your-key>",
        "ZENDESK_KEY=$ZENDESK_KEY",
        "ZENDESK_KEY=${ZENDESK_KEY}",
        "mailgun key abcdefghijklmnopqrstuvwxyz123456",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "the sendinblue api key is 0000000000000000000000000000000000000000",
    ],
)
def test_placeholders_and_references_beside_a_credentials_word_stay(text: str) -> None:
    assert redact(text) == text


def test_a_line_full_of_keys_and_tokens_costs_linear_time() -> None:
    """Each token looks back a bounded window for its word: 100 KB of ``x_key=<hex>`` pairs on one
    line is redacted in well under the time a quadratic scan would take."""
    unit = f"x_key={rand(HEX, 32)} api key is {lower_key()} "
    assert superlinear([unit]) == []  # CPU time, 100 KB against 25 KB: a wall-clock bound flakes under load
    shown = redact(unit * (100_000 // len(unit)))
    assert "[REDACTED:secret]" in shown and unit.split("=")[1][:32] not in shown


def test_importing_the_redactor_compiles_none_of_the_context_patterns() -> None:
    """agentcli.redact is imported at start-up: its patterns are compiled on first use."""
    probe = (
        "from agentcli.redact import context\n"
        "print(context._re.cache_info().currsize + context._runs.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0"]


# Ids a server hands back to go on from: a credential's word qualified by a position, a page or a change.
POSITION_KEYS = [
    "next_page_token",
    "nextToken",
    "NextContinuationToken",
    "continuation_token",
    "ChangeToken",
    "sync_token",
    "page_token",
    "resume_token",
    "pagination_token",
]
POSITION_VALUES = [
    "eyJvZmZzZXQiOjEwMCwic29ydCI6ImlkIn0=",  # base64 of JSON: the usual page cursor
    "AAMA-EFRSURBSEFNNQ",
    "c0a8f3e1b2d4c6e8f0a1b3c5d7e9f1a3b5c7d9e1",
]


@pytest.mark.parametrize("key", POSITION_KEYS)
@pytest.mark.parametrize("form", ["{k}: {v}", '"{k}": "{v}"', "{k}={v}", "?{k}={v}&limit=50"])
def test_page_cursor_and_change_ids_under_token_keys_stay_readable(key: str, form: str) -> None:
    for value in POSITION_VALUES:
        text = form.format(k=key, v=value)
        assert redact(text) == text


@pytest.mark.parametrize("key", ["refresh_token", "access_token", "csrf_token", "session_token", "api_key"])
def test_credential_tokens_beside_them_are_still_redacted(key: str) -> None:
    value = "hunter2-" + rand(LOWER, 12) + "Zq!"
    for form in ("{k}: {v}", '"{k}": "{v}"', "{k}={v}"):
        text = form.format(k=key, v=value)
        assert value[:12] not in redact(text), text
