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


# The wider body (the second round): a scratch venv of widely-used PyPI packages, npm packages,
# /usr/share/doc and the man pages, halved by the same rule.


@pytest.mark.parametrize(
    "text",
    [
        ".B \\s-1OSSL_KDF_PARAM_PKCS12_ID\\s0 (\\fBOSSL_KDF_PARAM_PKCS12_ID\\fR) <integer>\n",
        "\\fBASN1_VALUE_NOT_VALID\\fR is returned\n",
        "\\f5CLOUDSDK_ACTIVE_CONFIG_NAME=my\\-config\\fR\n",
        "b'\\n\\x13HISTORY_UNSPECIFIED\\x10\\x00\\x12\\x18LAUNCH_STAGE_UNSPECIFIED\\x10\\x00'\n",
        '"desc": "ciphers:\\nTLS_AES_256_GCM_SHA384\\nTLS_CHACHA20_POLY1305_SHA256"\n',
    ],
)
def test_a_backslash_escape_glued_to_a_name_is_not_part_of_a_token(text: str) -> None:
    """``\\s-1OSSL_KDF_PARAM_SALT``, ``\\x13HISTORY_UNSPECIFIED``: roff's font and size changes, a
    byte's or a C escape before an upper-case name; the escape's letters made the name read as random."""
    assert redact(text) == text


@pytest.mark.parametrize("prefix", ["\\fB", "\\x43", "\\n", "\\s-1", "\\"])
def test_a_random_token_after_a_backslash_escape_is_still_redacted(prefix: str) -> None:
    token = "Qm7xK2pZ9vR4tL8wN3bY6cH1jF5gD0sA"
    assert caught(f"value {prefix}{token}\\fR\n", token)


@pytest.mark.parametrize(
    "text",
    [
        "PASS: ar thin archive\nPASS: addr2line -f option\nPASS: objcopy (ELF unknown OSABI) --strip-debug\n",
        "--- PASS: TestRedact (0.00s)\n",
        "# First pass: determine maximum length of long option names\n",
        "    # Single pass: characters present in the language vocabulary, as\n",
    ],
)
def test_a_test_verdict_and_a_program_pass_are_not_passwords(text: str) -> None:
    """``PASS: ar thin archive`` (automake's and DejaGnu's logs), ``First pass: determine …``: ``pass``
    is a verdict and a step of a program, and what follows it is a test's name or prose."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("PASS=Xk9mQ2vL7p\n", "Xk9mQ2vL7p"),
        ("pass: Xk9mQ2vL7p\n", "Xk9mQ2vL7p"),
        ('pass: "correct horse battery"\n', "correct horse battery"),
        ("db_pass: sunshine\n", "sunshine"),
    ],
)
def test_a_password_under_pass_is_still_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "res = self._lib.i2d_RSAPrivateKey_bio(bio, rsa_cdata)\n",
        "EVP_PKEY_CTX_set1_id(pctx, id, id_len);\n",
        "id_pe_ipAddrBlocks_v2 = univ.ObjectIdentifier('1.3.6.1.5.5.7.1.28')\n",
        "for i in range(_lib.sk_X509_EXTENSION_num(exts)):\n",
        'model="microsoft/GODEL-v1_1-base-seq2seq"\n',
        "id_ct_utf8TextWithCRLF = id_ct + (37, )\n",
    ],
)
def test_a_name_joined_from_words_and_numbers_is_no_random_token(text: str) -> None:
    """``i2d_RSAPrivateKey_bio``: words, initialisms and numbers joined by ``_``/``-`` mix case and
    digits as a token does, but part by part they are words."""
    assert redact(text) == text


def test_random_tokens_with_joints_are_still_redacted() -> None:
    """Random tokens with ``_`` and ``-`` among their characters: the name test above frees about 1 in
    65,000 of those the random-token judge takes (6 of 394,000 measured); at most 1 in 10,000 here."""
    import random
    import string

    from agentcli.redact.judge import identifier, looks_random

    rng = random.Random(2026)
    alphabet = string.ascii_letters + string.digits + "_-"
    tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(20, 64))) for _ in range(30_000)]
    judged = [t for t in tokens if looks_random(t)]
    assert len(judged) > 29_000
    assert len([t for t in judged if identifier(t)]) <= 3
    assert caught("secret_id: i2d_Qm7xK2pZ9vR4_tL8wN3bY6cH1jF5gD0sA_bio\n", "Qm7xK2pZ9vR4")


@pytest.mark.parametrize(
    "text",
    [
        '"ClientRequestToken": "a8ca07e4-61ec-4399-99f4-19853801bcd5",\n',
        '"LifecycleActionToken": "bcd2f1b8-9a78-44d3-8a7a-4dd07d7cf635",\n',
        "idempotency_token = '3f2c9b1e-8d47-4a6f-9e21-7c5b0d4a8e13'\n",
    ],
)
def test_an_id_the_client_makes_up_for_a_request_is_no_credential(text: str) -> None:
    """AWS's ``ClientRequestToken``: a UUID that makes a retried call run once, not a credential."""
    assert redact(text) == text


def test_a_random_token_under_a_request_key_is_still_redacted() -> None:
    token = "Xk9mQ2vL7pR4tZ8wN3bY6cH1"
    assert caught(f'request_token = "{token}"\n', token)


@pytest.mark.parametrize(
    "text",
    [
        ":param client_secret: Unicode client secret. Will only appear if set to a\n",
        ":param resource_owner_secret: Resource owner secret (oauth token secret).\n",
        "    :type credentials: :class:`google.auth.credentials.Credentials` or\n",
        ":param str password: Runtime override for ``sudo.password``.\n",
    ],
)
def test_a_docstring_field_naming_a_secret_parameter_is_prose(text: str) -> None:
    """``:param client_secret: Unicode client secret.``: reST's field list describes the parameter."""
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "* credential: sanitize the user prompt (CVE-2024-50349)\n",
        "  * auth: parse headers using pyparsing instead of regexp\n",
        "    # Merge credentials: preserve existing fields not present in the update.\n",
        '"Invalid credentials: provide exactly one of client_secret, "\n',
    ],
)
def test_a_sentence_after_a_label_naming_a_secret_is_prose(text: str) -> None:
    """``credential: sanitize the user prompt``: a changelog's or a message's label, then a sentence
    whose first word (letters only) was read as the value."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the password: hunter2 is used\n", "hunter2"),
        ("* credential: s3cr3t-Value9 in the changelog\n", "s3cr3t-Value9"),
        ("password: sunshine and rainbows\n", "sunshine and rainbows"),
    ],
)
def test_a_password_with_more_than_letters_before_a_sentence_is_still_redacted(
    text: str, secret: str
) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "Set-Cookie: oreo=doublestuff; Path=/\n",
        "'Set-Cookie: chips=ahoy\\r\\nSet-Cookie: vienna=finger'\n",
        "Set-Cookie: Token=ABCDE\n",
        "Cookie: JSESSIONID abc123\n",
        "XInputCopyCookie: Failed to copy evtype 22\n",
    ],
)
def test_a_cookie_that_no_server_made_is_an_example(text: str) -> None:
    """``Set-Cookie: oreo=doublestuff``: a session cookie a server made is 16+ characters with no space."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Cookie: session=Xk9mQ2vL7pR4tZ8wN3bY6cH1\n", "Xk9mQ2vL7pR4tZ8wN3bY6cH1"),
        ("Set-Cookie: sid=9f8e7d6c5b4a39281706f5e4; Path=/; HttpOnly\n", "9f8e7d6c5b4a39281706f5e4"),
    ],
)
def test_a_session_cookie_is_still_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "type ArrowToken = ArrowToken$1;\n",
        '"output_token": "NextPageMarker",\n',
        '"input_token": "ExclusiveStartShardId",\n',
    ],
)
def test_a_renamed_binding_and_a_field_name_under_a_token_key_are_names(text: str) -> None:
    """``ArrowToken$1`` (a bundler's renamed binding), ``"NextPageMarker"`` (capitalised words run
    together): a machine-made token is no run of words."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('api_token = "CorrectHorse7Battery"\n', "CorrectHorse7Battery"),
        ('password = "CorrectHorseBatteryStaple"\n', "CorrectHorseBatteryStaple"),
    ],
)
def test_a_password_of_capitalised_words_is_still_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "{'username': 'foo', 'password': 'bar', 'host': 'bar.com', 'port': 443}\n",
        "'uri://foo:bar@example.com:1/path?query#fragment'\n",
        "    self._password = value\n",
        "login_name:passwd:UID:GID:user_name:directory:shell\n",
        "pw_name:pw_passwd:pw_uid:pw_gid:pw_gecos:pw_dir:pw_shell\n",
    ],
)
def test_metasyntactic_words_and_a_records_field_names_are_placeholders(text: str) -> None:
    """``'password': 'bar'`` (foo, bar, baz, qux: RFC 3092's placeholders), ``= value``, and
    ``login_name:passwd:UID:GID:…`` (a record's fields named, as ``passwd(5)`` lays them out)."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: barbell42\n", "barbell42"),
        ("postgres://scott:foo-bar-9@db.internal/app\n", "foo-bar-9"),
        ("password: s3cr3t:Value:x1\n", "s3cr3t:Value:x1"),
    ],
)
def test_a_password_holding_a_placeholder_word_or_colons_is_still_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        'CREATE VIEW "Last30dTopEndUsersSpend" AS\n',
        "XF86VidModeGetAllModeLines(), XF86VidModeGetDotClocks()\n",
        "function r_Suffix_Noun_Step2c1() {\n",
        "CPyList_GetItemInt64Borrow(list, index)\n",
    ],
)
def test_a_name_of_words_run_together_is_no_random_token(text: str) -> None:
    """``Last30dTopEndUsersSpend``: nearly all its letters are in humps that read as words (a vowel, no
    run of four consonants); a random token's humps are not words."""
    assert redact(text) == text


def test_random_tokens_are_not_read_as_words_run_together() -> None:
    """About 1 in 100,000 random tokens the random-token judge takes reads so (3 of 385,000 measured);
    at most 1 in 10,000 here."""
    import base64
    import random

    from agentcli.redact.judge import looks_random, worded

    rng = random.Random(2026)
    tokens = [
        base64.b64encode(rng.randbytes(rng.randint(15, 48))).decode().rstrip("=") for _ in range(30_000)
    ]
    judged = [t for t in tokens if looks_random(t)]
    assert len(judged) > 25_000
    assert len([t for t in judged if worded(t)]) <= 3


@pytest.mark.parametrize(
    "text",
    [
        "    resource_owner_secret: str = None):\n",
        "    rsa_private_key: str):\n",
        "{client_secret:o.client_secret??null,key:u?.key??null}\n",
    ],
)
def test_a_signatures_end_and_javascripts_optional_chaining_are_code(text: str) -> None:
    """``secret: str = None):`` closes a parameter list; ``o.client_secret??null`` is minified code."""
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        ".B  --passphrase \\fIstring\\fR\n",
        "machine example.org login apt password \\fIstring\\fR\n",
        "\\fB\\-P\\fP,\\ \\fB\\-\\-passwd=FILE\\fP\n",
        "update-passwd --passwd=DATEI\n",
        "add-apt-repository -U http://myserver/path/to/repo -c main\n",
    ],
)
def test_a_man_pages_metavariables_and_a_urls_rest_are_no_password(text: str) -> None:
    """Roff's italics and a flag's argument in capitals (``--passwd=FILE``) are what the reader fills
    in; after ``-U``, ``http://host/…`` is a URL, not ``user:password``."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("--password=HUNTER2X\n", "HUNTER2X"),
        ("--password=Hunter2x\n", "Hunter2x"),
        ("curl -u admin:s3cr3tPw http://example.com\n", "s3cr3tPw"),
    ],
)
def test_a_flags_password_with_more_than_capitals_is_still_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)
