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


@pytest.mark.parametrize(
    "text",
    [
        '    - "API_TOKEN=API_TOKEN"',
        "  - 'SMTP_PASSWORD=SMTP_PASSWORD',",
        '      "DB_PASS=${DB_PASS}"',
    ],
)
def test_a_pair_inside_a_string_ends_at_the_strings_quote(text: str) -> None:
    """``- "DB_PASSWORD=DB_PASSWORD"`` (a compose file's environment list): the value is what lies
    before the closing quote — here the key's own name, a placeholder."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("compose-list", '  - "SMTP_PASSWORD=$S"'),
        case("json-list", "      'API_PASS=$S',"),
    ],
)
def test_a_pair_inside_a_string_still_gives_its_value(text: str, secret: str) -> None:
    assert caught(text, secret)
    assert redact(text).rstrip(",").endswith(text.rstrip(",")[-1])  # the closing quote stays


@pytest.mark.parametrize(
    "text",
    [
        "mongodb://admin:admin@localhost:27017/app",
        "redis://default:default@cache:6379",
        "amqp://guest:guest@rabbit/",
    ],
)
def test_a_password_that_repeats_its_user_is_a_default(text: str) -> None:
    """``scheme://user:user@host``: the image's documented default (``guest:guest``), not a secret."""
    assert redact(text) == text


def test_a_password_that_differs_from_its_user_is_still_a_secret() -> None:
    assert caught(f"mongodb://admin:{PASSWORD}@localhost:27017/app", PASSWORD)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("proxy-user", "curl --proxy-user deploy:$S -x http://proxy:3128 https://x"),
        case("proxy-user-short", "curl -U 'deploy:$S' https://x"),
    ],
)
def test_a_proxy_credential_on_a_command_line_is_a_password(text: str, secret: str) -> None:
    assert caught(text, secret)


BODY = "MIIEowIBAAKCAQEAu3Kx9fT2Lq7ZpR4mN8vW1cY6bH0sJ5dG2aE7kU3oI9lQxVzC4nM+/Py8Rt"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("dsa-key", "-----BEGIN DSA KEY-----\n$S\n-----END DSA KEY-----", BODY),
        case("escaped", '"key": "-----BEGIN RSA KEY-----\\n$S\\n-----END RSA KEY-----"', BODY),
        case("continued", 'k: "\\\n  -----BEGIN EC KEY----- \\\n  $S \\\n  -----END EC KEY-----"', BODY),
    ],
)
def test_a_key_block_whose_label_does_not_say_public_is_private(text: str, secret: str) -> None:
    """A PEM block is public material only when its label says so (``PUBLIC KEY``, ``CERTIFICATE``);
    ``RSA KEY`` alone labels a key, whose body goes, in a quoted string's continued lines too."""
    assert caught(text, secret)


def test_a_public_key_block_stays_readable() -> None:
    text = f"-----BEGIN RSA PUBLIC KEY-----\n{BODY}\n-----END RSA PUBLIC KEY-----"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("numeric-key", "WEATHER_API_KEY: $S", "4820193756381920475"),
        case("numeric-token-json", '"auth_token": $S,', "7301948265019283746501"),
        case("numeric-password", "<db_password>$S</db_password>", "83920475"),
    ],
)
def test_a_long_number_under_a_secret_key_is_a_secret(text: str, secret: str) -> None:
    """Numeric keys exist; a number is a secret by its length: 8+ digits of a password, 16+ of a key."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        '"max_tokens": 4096',
        "token_ttl_seconds: 86400",
        "password_min_length: 12",
        "session: 1732790000123",
        '"api_key": 12345678901234567890',  # counting: a filler
    ],
)
def test_ports_counts_and_times_under_secret_words_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("userpass-query", "jdbc:postgresql://db/app?user=svc&userpass=$S"),
        case("dbpass", "dbpass = $S"),
        case("accesskey-attribute", '<account name="ci" accesskey="$S"/>', "Zq8vL2mN4xRt"),
    ],
)
def test_a_noun_glued_to_whose_it_is_names_a_secret(text: str, secret: str) -> None:
    """``userpass``, ``dbpass``, ``accesskey``: one word, a noun glued to the word naming whose it is."""
    assert caught(text, secret)


@pytest.mark.parametrize("text", ["bypass: cache_layer_2", "compass = north42x", 'monkey: "banana1234567"'])
def test_words_that_only_end_like_a_noun_name_no_secret(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("camel-key", "  pagerdutyKey: $S", "VbRtKwQpLmZxNcJdHyGsFa"),
        case("snake-key", "TRELLO_KEY='$S'", "mQpZrTbWkXvNcLsJhGdFyR"),
        case("glued-upper", "  - SENTRYKEY=$S", "QxWzRvTbNmKpLsJdHgFc_Yw"),
    ],
)
def test_a_digitless_token_that_changes_case_every_letter_or_two_is_random(text: str, secret: str) -> None:
    """Beside a word naming a key, a run whose case changes every letter or two is random even with no
    digit (one random 22-character token in fifty has none); names change case once a word."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "apiKey: XMLHttpRequestHandlerForTLS",
        "slackKey: SlackNotificationChannelName",
        'GITLAB_KEY: "ABCDefGHijKLmnOPqrST"',  # a filler's pattern: lower-case runs of two
        'stripeKey = "aGVsbG8gdGhlcmUgbXkgZnJpZW5k"',  # base64 of text
    ],
)
def test_names_and_encoded_text_beside_a_key_word_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("python", "    smtp_password: str = '$S'"),
        case("typescript", 'const dbPassword: string = "$S";'),
        case("kotlin", 'val adminPassword: String = "$S"'),
        case("rust", 'let db_password: &str = "$S";'),
        case("generic", 'db_password: Optional[str] = "$S"'),
    ],
)
def test_a_type_annotation_between_a_secret_name_and_its_value_is_skipped(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "password: str = None",
        "password: SecretStr = Field(default=None)",
        "db_password: str",
        'password: str = os.environ["PW"]',
    ],
)
def test_a_typed_secret_name_with_no_literal_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("kubernetes-env", "env:\n  - name: SMTP_PASSWORD\n    value: $S"),
        case("ecs-json", '{"name": "DB_PASSWORD", "value": "$S"}'),
        case("cloudformation", '{"ParameterKey": "AdminPassword", "ParameterValue": "$S"}'),
        case("xml-entry", '<entry key="ldap.password">$S</entry>'),
    ],
)
def test_a_name_field_naming_a_secret_gives_its_value_field(text: str, secret: str) -> None:
    """``- name: DB_PASSWORD`` / ``value: …``: the name is a field's value, the secret the next field's."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef: {name: db, key: password}",
        "env:\n  - name: DB_USER\n    value: admin",
        '{"name": "password", "value": ""}',
        "- name: API_TOKEN\n  value: ${API_TOKEN}",
    ],
)
def test_a_name_field_with_a_reference_or_another_name_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("env-legacy", "FROM alpine\nENV SMTP_PASSWORD $S\nRUN make"),
        case("env-legacy-phrase", "ENV DB_PASSWORD correct horse battery", "correct horse battery"),
    ],
)
def test_a_dockerfile_env_in_its_spaced_form_gives_its_value(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize("text", ["ENV PASSWORD_FILE /run/secrets/db", "ENV DB_PASSWORD $DB_PASSWORD"])
def test_a_dockerfile_env_holding_a_path_or_a_reference_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("postgres-alter", "ALTER USER app WITH PASSWORD '$S';"),
        case("postgres-role", "CREATE ROLE app LOGIN PASSWORD '$S' VALID UNTIL 'infinity';"),
        case("mysql", "CREATE USER 'app'@'%' IDENTIFIED BY '$S';"),
        case("oracle-bare", "CREATE USER app IDENTIFIED BY $S;"),
    ],
)
def test_sql_password_clauses_give_their_password(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "ALTER USER app WITH PASSWORD :'new_password';",  # psql's variable
        "each row is identified by its primary key",
        "the password 'must be 12 characters' rule",
        "CREATE USER app IDENTIFIED BY VALUES 'S:0A1B';",  # a hash Oracle exported, named as such
    ],
)
def test_sql_and_prose_around_password_clauses_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("element-value", '<password value="$S"/>'),
        case("element-value-secret", "<clientSecret value='$S' />", "Zq8vL2mN4xRt"),
    ],
)
def test_an_element_named_for_a_secret_gives_its_value_attribute(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "    verify_token: bool = False",
        'request.headers["X-Api-Authorization"] = signature',
        'kwargs["sentinel_password"] = _sentinel_password',
        'PTU_SENTINEL_API_KEY: Final[str] = "__ptu_flat_cost__"',
        '_TOKEN_EXCHANGE_GRANT_TYPE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"',
        '_NEW_MASTER_KEY: Final = "sk-$(openssl rand -hex 32)"',
        'credentials: Final = f":{quote(password, safe=\'\')}@" if password else ""',
        "CREATE ROLE app PASSWORD '(?P<v>[^'",
    ],
)
def test_code_the_new_forms_reach_stays_readable(text: str) -> None:
    """What the annotation, subscript and SQL forms newly reach in real code (from third-party packages):
    a typed default, a variable assigned to a subscript, private and dunder names, a URN, a command's
    output, an f-string's expression, a regex."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("yaml-camel-commented", "  #    TokenKey: $S", "k3Y@r0tAt10n"),
        case("snake", 'token_key = "$S"', "Wq8kd02LmZpT4"),
        case("kebab-env", "TOKEN-KEY=$S", "Qx7vLr2p0ZtB9"),
        case("glued-json", '{"tokenkey": "$S"}', "9fKd2pLx0QmZ7rTv"),
    ],
)
def test_a_credentials_noun_before_key_names_a_secret_key(text: str, secret: str) -> None:
    """``TokenKey``, ``token_key``: a credential's noun before ``key`` names the key as that credential, as
    ``api_key`` and ``secret_key`` do."""
    assert caught(text, secret), redact(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("hash", "# my_password_secure: $S", "p@ss!word9"),
        case("slashes", "// apikey_myservice: $S", "Zx9!kLp2qR"),
        case("ini", "; db_password_prod = $S", "s3cr3t#Pr0d"),
    ],
)
def test_a_commented_out_config_line_keeps_its_secret(text: str, secret: str) -> None:
    """A config line commented out still holds its value: a password-shaped value under a key naming a
    secret before its last word counts there as on the line itself."""
    assert caught(text, secret), redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "token_key: access_token",  # a field's name
        "TOKEN_KEY = 'auth_token'",
        "# token key: the key that signs our tokens",  # prose
        "# my_password_secure: hunter2go",  # no symbol: a name or a word, not password-shaped
        "# apikey_myservice: ~/.config/myservice/key",  # a path
        "# secret_contact: https://example.com/report",  # a URL
    ],
)
def test_names_prose_and_paths_under_such_keys_stay_readable(text: str) -> None:
    assert redact(text) == text
