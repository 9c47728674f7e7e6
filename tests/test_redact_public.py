"""Redaction from a well-kept rule set: gitleaks' published rules run as data, and the detector is
measured on a public corpus built from gitleaks', detect-secrets', Nosey Parker's and kingfisher's own test
data (tuned on), and secretlint's (held out: nothing was tuned on it; tests/fixtures/redact/README.md).
Figures print with ``pytest -s``."""

from __future__ import annotations

import base64
import json
import random
import re
import string
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from agentcli.redact import PLACEHOLDER, gitleaks, redact
from tests.corpus_common import Sample, leaks
from tests.hostile_text import superlinear
from tests.public_corpus import HOLDOUT_NEXT, Figures, assert_repeats_nothing, figures, load

SAMPLES = load()
# gitleaks' rules verbatim: the source of the JSON the package reads (scripts/refresh_gitleaks_rules.py)
GITLEAKS_TOML = Path(__file__).resolve().parents[1] / "scripts" / "data" / "gitleaks.toml"
RNG = random.Random(25)


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
CRYPT = ALNUM + "./"  # crypt(3)'s base64


def test_the_rules_agentcli_reads_at_start_are_the_vendored_gitleaks_toml() -> None:
    """The JSON copy read at start (a TOML parse would cost every command 26 ms) holds the TOML's data."""
    assert json.loads(gitleaks.RULES_JSON.read_text()) == tomllib.loads(GITLEAKS_TOML.read_text())


def test_every_gitleaks_rule_and_allowlist_compiles_as_python_regex() -> None:
    config = tomllib.loads(GITLEAKS_TOML.read_text())
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
        # a format detect-secrets' plugins know, with no vendor name nearby
        case("mailchimp", "synced with $S today", f"{rand(HEX, 32)}-us{rand(string.digits, 2)}"),
    ],
)
def test_families_that_had_no_rule_are_redacted(text: str, secret: str) -> None:
    shown = PLACEHOLDER.sub("", redact(text))  # (a kind's name, "rubygems", is not a leak)
    assert not leaks(Sample("", text, secret), shown)  # not even 8 characters of it


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("c-array", "char api_secret[33] = $S;", '"Zq8#vL2!mN4$"'),
        case("cpp-declaration", "std::string password($S);", '"Zq8#vL2!mN4$"'),
        case("directive", "password $S;", '"Zq8#vL2!mN4$"'),
        case("objc-literal", "NSString *apiKey = @$S;", '"Zq8#vL2!mN4$xR7p"'),
        case("noun-then-qualifier", "db_pass_prod := $S", "Zq8#vL2!mN4$"),
        case("noun-then-qualifier-quoted", 'apikey_myservice: "$S"', "Zq8#vL2!mN4$"),
        case("plural", 'secrets = "$S"', "Zq8#vL2!mN4$"),
    ],
)
def test_secret_literals_in_every_declaration_form_are_redacted(text: str, secret: str) -> None:
    """A key naming a secret, however the language declares it: an array, a constructor, a directive,
    a prefixed string literal, a qualifier after the secret's word, a plural."""
    assert not leaks(Sample("", text, secret.strip('"')), redact(text))


@pytest.mark.parametrize(
    "text",
    [
        'secret_name = "my-secret-v2"',
        "token_type: bearer",
        "std::string password(buffer);",
        'password_length_hint = "at least 12"',
        'check_password("x")',
        'password_field = "login.pwd"',
    ],
)
def test_names_and_calls_around_secret_words_are_not_secrets(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # password hashes in the modular crypt format, one construction for every id
        case("md5-crypt", "root:$S:19000:0:99999:7:::", f"$1${rand(ALNUM, 8)}${rand(CRYPT, 22)}"),
        case("bcrypt", "hash = '$S'", "$2b$12$" + rand(CRYPT, 53)),
        case("sha512-crypt", "$S", "$6$rounds=5000$" + rand(CRYPT, 16) + "$" + rand(CRYPT, 86)),
        case("yescrypt", "user:$S:", "$y$j9T$" + rand(CRYPT, 22) + "$" + rand(CRYPT, 43)),
        case("argon2", "$S", f"$argon2id$v=19$m=65536,t=3,p=4${rand(ALNUM, 22)}${rand(ALNUM + '+/', 43)}"),
        # a password in prose, quoted after "is"
        case("prose", "The default password for the user 'app' is '$S'.", "Zq8vL2mN4x"),
        case("prose-plain", 'Make sure the password is "$S" and press on', "lanternfjord"),
        # a connection string's Password/Pwd field, whatever the value looks like
        case("ado-field", "Server=db;User ID=app;Password=$S;Encrypt=True", "#gets0meW0rd"),
        case("odbc-field", "Driver={SQL Server};Uid=app;Pwd=$S;", "myPassw0rdOfOld"),
        # a name attribute naming a secret and its value attribute
        case("xml-attributes", '<add key="SmtpPassword" value="$S"/>', "Prestigitariu$"),
        case("ant-property", '<property name="db.password" value="$S" />', "Zq8#vL2!mN4"),
        # a one-dash flag (PowerShell, Java tools)
        case("one-dash-flag", "Connect-VIServer -Server vc -User admin -Password $S", "VMware1!x"),
        # a URL password holding an "@": it runs to the last "@" before the host
        case("url-at", "mongodb+srv://app:$S@cluster0.example.net/db", "p@ss135!Zq"),
    ],
)
def test_secret_families_found_by_construction_are_redacted(text: str, secret: str) -> None:
    """Found by a general construction, not a vendor's regex: every crypt(3) hash id, a password named
    in a sentence, a connection-string field, a name/value attribute pair, a one-dash flag."""
    assert not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    "text",
    [
        "  put '/forgot-password' => \"cms/sites/passwords#edit\", as: 'update_password'",
        'usernameLabel:"Username:",passwordLabel:"Password:",rememberMeLabel:"Remember me:"',
        '"//localhost:1337/:_password = "+new Buffer("feast").toString("base64")',
        "echo 'password = '.$p['config']['daemon_password'].\"\\n\";",
        'this.addPassword = "#add-password";',
        "password = getPass();",
        "awk '{print $1$2$3}' file",
        "hash: $2b$12$xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "the password is 'required'",
        "- Leave out secrets: passwords, credentials, API keys and private keys.",
        "secret: tokens",
    ],
)
def test_keys_inside_strings_paths_and_labels_are_not_secrets(text: str) -> None:
    """A key that is a path's segment, a form's label, a key and sign that are a string literal's text
    (what follows its closing quote is code), a CSS id, a filler hash, a placeholder in prose, the
    kinds of secret named (a plural noun: an instruction, a list)."""
    assert redact(text) == text


def discord_token() -> str:
    """A Discord bot token: the bot's id in base64, a timestamp, an HMAC (dot-joined)."""
    bot_id = base64.b64encode(rand(string.digits, 18).encode()).decode()
    return f"{bot_id}.{rand(ALNUM, 6)}.{rand(ALNUM + '-_', 27)}"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("discord-bot-token", "bot.run('$S')", discord_token()),
        case(
            "jwt-like-after-a-word", "sid=$S; Path=/", f"{rand(ALNUM, 24)}.{rand(ALNUM, 8)}.{rand(ALNUM, 30)}"
        ),
    ],
)
def test_a_token_found_in_part_is_redacted_whole(text: str, secret: str) -> None:
    """A match cut short inside a word, or one part of a dot-joined token, takes the whole token."""
    shown = PLACEHOLDER.sub("", redact(text))
    assert not leaks(Sample("", text, secret), shown)


@pytest.mark.parametrize(
    "text",
    [
        "see docs.example.com/tokens.html for ZtQ8LmN2vX5rQ7wK3pB9dF4h",
        "from agentcli.session.compaction import ZtQ8LmN2vX5rQ7wK3pB9dF4h",
    ],
)
def test_words_and_names_joined_to_a_token_stay_readable(text: str) -> None:
    """Only token-like parts join a token: a host, a path or a module name beside it stays."""
    shown = redact(text)
    assert "ZtQ8LmN2" not in shown
    assert shown.startswith(text.split("ZtQ8")[0].rstrip())


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
    """gitleaks' and detect-secrets' cases, the once held-out 30 % included (read while tuning):
    1,015/1,023 caught and 0/319 look-alikes changed as measured; at most 1 % may be changed."""
    tune = figures(redact, "tune", SAMPLES)
    print(f"public corpus, tuning part: {tune}")
    assert tune.secrets >= 1000 and tune.lookalikes >= 300
    assert tune.recall >= 0.95 and tune.caught >= 1015 and tune.changed <= 3, str(tune)


def test_held_out_part_of_the_public_corpus_holds_its_measured_figures() -> None:
    """secretlint's cases, never tuned on. Measured before the last tuning but one (recall 68/72,
    look-alikes changed 24/112), after it (68/72, 7/112), after the next two (69/72, 7/112) and after the
    keyword-context construction (69/72, 7/112; its fourth reading); its fifth, with kingfisher's rule set
    beside gitleaks' (before its URI rules were narrowed to the password), came through this assertion's
    message: 71/72, 8/112; its sixth, after the tuning on whispers' and ripsecrets' half: 71/72, 7/112;
    after the tuning on the installed packages' tuning half (totals only): 71/72, 6/112. A floor and a
    ceiling, not the targets."""
    held = figures(redact, "holdout", SAMPLES)
    print(f"public corpus, held-out part (secretlint): {held}")
    assert held.secrets >= 70 and held.lookalikes >= 100
    assert held.caught >= 71 and held.changed <= 6, str(held)


def test_nosey_parker_part_now_tuned_on_holds_its_figures() -> None:
    """Nosey Parker's rule examples: held out and read once (271/346 caught, 4/40 changed), then tuned on
    by class (password hashes, passwords in prose, connection-string fields, name/value attributes,
    one-dash flags, a key inside a string literal): 298/346 and 0/40; with the keyword-context
    construction, 306/346 and 0/40; with kingfisher's rule set beside gitleaks', 320/346 and 0/40; with
    the rules for kinds docs/redaction.md listed as not caught (``-u user -p pass`` on any command line),
    325/346 and 0/40. A floor and a ceiling."""
    part = figures(redact, "tune-noseyparker", SAMPLES)
    print(f"public corpus, Nosey Parker (tuned on): {part}")
    assert part.secrets >= 340 and part.lookalikes >= 40
    assert part.caught >= 325 and part.changed <= 0, str(part)


def test_kingfisher_part_now_tuned_on_holds_its_figures() -> None:
    """kingfisher's rule examples (Nosey Parker's rules left out): held out and read twice, totals only
    (264/501 caught and 4/490 clear look-alikes changed, then 360/501 and 5/490), then tuned on: with
    kingfisher's own rule set run beside gitleaks', 490/501 and 5/490; with a dot-joined token holding a
    filler part taken for an example, 490/501 and 2/490; with the rules for kinds docs/redaction.md listed
    as not caught, 492/501 and 2/490. A floor and a ceiling."""
    part = figures(redact, "tune-kingfisher", SAMPLES)
    print(f"public corpus, kingfisher (tuned on): {part}")
    assert part.secrets >= 500 and part.lookalikes >= 480
    assert part.caught >= 492 and part.changed <= 2, str(part)


def test_whispers_ripsecrets_tuning_half_holds_its_figures() -> None:
    """whispers' and ripsecrets' tuning half (by family): 102/147 caught and 5/128 clear look-alikes
    changed at the split; its misses then read and closed by class (a key numbered after its noun, a
    quoted subscript, a parallel assignment, a format string as a template, a pair inside a string, a
    password repeating its user, a proxy credential, a key block not labelled public, long numbers, nouns
    glued to whose they are, a digitless run changing case every letter or two): 142/147 and 1/128. A
    floor and a ceiling."""
    part = figures(redact, "tune-whispers-ripsecrets", SAMPLES)
    print(f"public corpus, whispers and ripsecrets (tuning half): {part}")
    assert part.secrets >= 140 and part.lookalikes >= 120
    assert part.caught >= 142 and part.changed <= 1, str(part)


@pytest.mark.xfail(
    strict=True,
    reason="held out (secretlint): recall 71/72 and 7 of 112 clear look-alikes changed; targets 95 % and 5 %",
)
def test_held_out_part_of_the_public_corpus_meets_the_targets() -> None:
    held = figures(redact, "holdout", SAMPLES)
    assert held.recall >= 0.95 and held.false_positives <= 0.05, str(held)


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


@pytest.mark.parametrize(
    "unit",
    [
        "co_api_key" + "a" * 40 + " ",
        "curl -H x:",
        "meraki " + "A1b2" * 10 + '"',
        "GR1348941" + rand(ALNUM, 20),
    ],
)
def test_a_line_full_of_one_rules_keyword_costs_linear_time(unit: str) -> None:
    """gitleaks' regexes assume RE2 (linear time); under Python's backtracking ``[\\w.-]{0,50}?`` before
    a key, or ``curl .*`` to the window's end from every ``curl``, took seconds on 100 KB. So did making
    every runner token in one 100 KB word whole, each scanning to the word's end (28 s)."""
    assert superlinear([unit]) == []  # CPU time, 100 KB against 25 KB: a wall-clock bound flakes under load


@pytest.mark.parametrize(
    "text",
    [
        'badToken := "sm_pat_short1x"',  # a vendor's prefix, not its format (16 characters follow it)
        'TOKEN = "ghp_notreallyatoken"',
        # a kebab-case name built of the key's own words (``db_password = primary-replica`` is now read
        # as the password, as ``password = open_sesame`` is: docs/redaction.md, "found by construction")
        "db_password = db-password-primary",
        "secret: tls-cert-store",
    ],
)
def test_a_vendor_prefix_in_the_wrong_format_and_a_kebab_name_are_not_secrets(text: str) -> None:
    assert redact(text) == text


def test_a_vendor_prefix_in_its_own_format_is_still_a_secret() -> None:
    token = "sm_pat_" + rand(ALNUM, 16)
    assert token not in redact(f'badToken := "{token}"')
    assert "hunter-2-Zq" not in redact("db_password = hunter-2-Zq")  # digits and case: not a name


@pytest.mark.parametrize(
    "text",
    [
        "ZtQ8LmN2vX5rQ7wK3pB9dF4hEXAMPLE",  # a random-looking token that names itself an example
        "token: xoxb-123456789012-Zw937qtWSXJss1lFaKe",
        "curl -u user:pass https://api.example.com",
        "curl -i -u 'test:test' http://localhost:8080",
        "curl --user admin:changeme http://localhost",
        "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
    ],
)
def test_fillers_defaults_and_empty_key_blocks_are_not_secrets(text: str) -> None:
    """Whichever finder sees them: a random-token scan, our curl rule (gitleaks' curl rule allows the
    same defaults), a key block with no body (gitleaks asks for 64 characters of one)."""
    assert redact(text) == text


def test_real_curl_passwords_and_key_blocks_are_still_secrets() -> None:
    password = rand(ALNUM, 14)
    assert password not in redact(f"curl -u deploy:{password} https://api.example.com")
    body = rand(ALNUM, 64)
    for text in (
        f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----",
        f"-----BEGIN RSA PRIVATE KEY-----\n{body[:20]}",  # cut off before its end: still a key
    ):
        assert body[:20] not in redact(text)


def gitleaks_ids(text: str) -> set[str]:
    """The rules gitleaks' layer alone finds in ``text`` (before agentcli's own detectors)."""
    lower = text.lower()
    at = {k: [m.start() for m in re.finditer(re.escape(k), lower)] for k in gitleaks.KEYWORDS if k in lower}
    return {rule for _, _, rule in gitleaks.find(text, at)}


def test_gitleaks_entropy_thresholds_and_allowlists_are_honoured() -> None:
    assert "databricks-api-token" in gitleaks_ids(f"dapi{rand(HEX, 32)}")
    assert "databricks-api-token" not in gitleaks_ids("dapi" + "ab" * 16)  # entropy 1 <= the rule's 3
    assert "curl-auth-user" in gitleaks_ids(f"curl -u deploy:{rand(ALNUM, 14)} https://x")
    assert "curl-auth-user" not in gitleaks_ids("curl -u deploy:token https://x")  # the rule's allowlist
    # the global allowlist's stopwords: gitleaks' own sample UUID is no Heroku key
    assert "heroku-api-key" in gitleaks_ids("HEROKU_API_KEY=3f2a9c1e-5b7d-4e8f-a6c2-9d1b7e4f0a35")
    assert "heroku-api-key" not in gitleaks_ids("HEROKU_API_KEY=014df517-39d1-4453-b7b3-9930c563627c")


def test_agentclis_own_rules_are_compiled_only_once_their_keyword_occurs() -> None:
    """Import stays cheap as rules are added (the password-hash construction alone is 21 patterns):
    a text with none of their keywords compiles none of them."""
    probe = (
        "from agentcli.redact import redact, rules\n"
        "compiled = lambda: sum('pattern' in vars(r) for r in rules.RULES)\n"
        "redact('say hi')\n"
        "print(compiled())\n"
        "redact('hash $2b$12$' + 'R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWM')\n"
        "print(compiled())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "1"]


def test_whispers_ripsecrets_second_half_now_tuned_on_holds_its_figures() -> None:
    """whispers' and ripsecrets' second half (by family; tests/fixtures/redact/README.md), held out until
    read: the whole part read twice by totals (141/228, 6/223), then halved; at the split this half
    measured 39/81 and 1/95, after the tuning on the other half (102 -> 142/147 there) 50/81 and 1/95.
    Then read and tuned on by class (a list's items under a key naming secrets, an element naming a key
    and the value element after it, a declared parameter's default, a webhook URL's token segments, an
    instruction where a value would be, a digit-holding vendor prefix with a longer run): 70/81 and
    0/95; the 11 left are label artefacts and one known gap (docs/redaction.md). A floor and a ceiling."""
    part = figures(redact, "tune-whispers-ripsecrets-2", SAMPLES)
    print(f"public corpus, whispers and ripsecrets (second half, tuned on): {part}")
    assert part.secrets >= 80 and part.lookalikes >= 90
    assert part.caught >= 70 and part.changed <= 0, str(part)


NEXT_SOURCES = ("trivy", "ibm-detect-secrets", "ggshield", "2ms", "checkov")
# 2ms's rules are gitleaks' rewritten, and agentcli runs gitleaks' rule set: its samples measure the vendored
# rules' reach, not how the redactor carries to forms nobody tuned on, so the targets hold without it too.
DERIVED_FROM_VENDORED_RULES = frozenset({"2ms"})


def test_next_part_is_read_with_its_sources_and_repeats_nothing_measured_before() -> None:
    """trivy's, IBM detect-secrets', ggshield's, 2ms's and checkov's samples
    (tests/fixtures/redact/holdout_next.json) are read with the corpus, each secret lies in its text, and
    no secret or text of the earlier parts (tuned on or read) recurs in them."""
    part = [s for s in SAMPLES if s.split == "tune-next"]
    assert {s.source for s in part} == set(NEXT_SOURCES)
    assert set(json.loads(HOLDOUT_NEXT.read_text())["commits"]) == set(NEXT_SOURCES)
    earlier = [s for s in SAMPLES if s.split != "tune-next"]
    assert_repeats_nothing(part, earlier)


def next_figures() -> dict[str, Figures]:
    """The next part's totals, whole and per source (the shared measure, one source at a time)."""
    part = [s for s in SAMPLES if s.split == "tune-next"]
    per = {src: figures(redact, "tune-next", [s for s in part if s.source == src]) for src in NEXT_SOURCES}
    independent = [s for s in part if s.source not in DERIVED_FROM_VENDORED_RULES]
    return {
        "all": figures(redact, "tune-next", part),
        "independent": figures(redact, "tune-next", independent),
        **per,
    }


def test_next_part_now_tuned_on_holds_its_figures() -> None:
    """trivy, IBM detect-secrets (Box, DB2, GitHub Enterprise) and ggshield, held out and first read
    (totals only) before the round on whispers' and ripsecrets' second half: 42/55 caught, 0/72 clear
    look-alikes changed. Grown with 2ms and checkov and read twice (totals only), before and after that
    round: 734/748 caught, 8/129 changed; its independent sources (all but 2ms) 53/66, 7/120. Then its
    misses and changed look-alikes were read and closed by class (docs/redaction.md): 740/748 and 2/129,
    the independent sources 59/66 and 1/120; the 8 misses and 2 look-alikes left are label and span
    artefacts and two known gaps. A floor and a ceiling per source and on the independent sources."""
    held = next_figures()
    for name, f in held.items():
        print(f"public corpus, next part (tuned on, {name}): {f}")
    measured = {  # source: (secrets, caught, clear look-alikes, changed)
        "trivy": (23, 18, 25, 0),
        "ibm-detect-secrets": (16, 14, 43, 0),
        "ggshield": (16, 16, 4, 0),
        "2ms": (682, 681, 9, 1),
        "checkov": (11, 11, 48, 1),
        "all": (748, 740, 129, 2),
        "independent": (66, 59, 120, 1),
    }
    for name, (secrets, caught, lookalikes, changed) in measured.items():
        f = held[name]
        assert f.secrets >= secrets and f.lookalikes >= lookalikes, f"{name}: {f}"
        assert f.caught >= caught and f.changed <= changed, f"{name}: {f}"
