"""The secret detectors by pattern: provider-specific formats (as gitleaks and detect-secrets know them),
PEM private keys, passwords in connection strings and on command lines, and high-entropy tokens
(values under secret-looking keys are ``keyvalue``'s). Each rule names the kind shown in its
placeholder ``[REDACTED:<kind>]``.

Speed: one Aho-Corasick pass finds where every rule's ``keyword`` occurs (gitleaks' prefilter, but
one scan for all ~70 keywords instead of one each). A rule whose keyword occurs nowhere does not run;
a rule whose pattern begins with its keyword (``anchored``) is only tried at those places. The rest
still scan the text, but every pattern starts with a literal, so the regex engine skips ahead to it
(a pattern starting with an alternation or a look-behind is tried at every position: rules with
several prefixes are therefore several patterns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Rule:
    kind: str
    source: str  # the regex, compiled the first time its keyword occurs (``pattern``): import stays cheap
    keyword: str  # the rule runs only if this occurs in the text it runs on
    group: str | int = 0  # the part of a match that is secret (the rest stays readable)
    check: str = ""  # a named extra test of the secret, see agentcli.redact.judge.CHECKS
    # Case-insensitive rules are written in lower case and run on the lower-cased text: a literal
    # start lets the regex engine skip ahead, which (?i) would prevent.
    lower: bool = False
    # Token rules: the match must not continue a longer word on its left. Checked in code, since a
    # leading look-behind would also stop the engine from skipping ahead to the literal prefix.
    bounded: bool = True
    # The keyword sits this many characters into every match (a format whose literal part is not its
    # start, as Mailchimp's ``<32 hex>-us<n>``): the pattern is tried that far before each place.
    offset: int = 0

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)

    @cached_property
    def anchored(self) -> bool:
        """Every match begins with ``keyword`` (so trying the pattern only where it occurs finds all)."""
        if self.offset:
            return True
        text = self.source
        if text.startswith(re.escape(self.keyword)):
            rest = text[len(re.escape(self.keyword)) :]
        elif text.startswith(self.keyword) and not any(c in _META for c in self.keyword):
            rest = text[len(self.keyword) :]
        else:
            return False
        return not rest.startswith(("?", "*", "+", "{")) and not _top_level_alternation(rest)


def _top_level_alternation(pattern: str) -> bool:
    """Whether ``pattern`` has a ``|`` outside any group or character class."""
    depth, in_class, escaped = 0, False, False
    for c in pattern:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif c == "|" and depth == 0:
            return True
    return False


def _r(
    kind: str,
    keyword: str,
    pattern: str,
    group: str | int = 0,
    check: str = "",
    *,
    lower: bool = False,
    bounded: bool = True,
    offset: int = 0,
) -> Rule:
    return Rule(kind, pattern, keyword, group, check, lower, bounded, offset)


def _each(kind: str, starts: tuple[str, ...], rest: str, **kw: object) -> tuple[Rule, ...]:
    """One rule per literal start (see the module docstring on speed)."""
    return tuple(_r(kind, start, re.escape(start) + rest, **kw) for start in starts)  # type: ignore[arg-type]


_META = frozenset("()[]{}?*+|^$\\.&~# \t\n\r\v\f")  # a keyword with one of these is not its own regex

_E = r"(?![A-Za-z0-9_\-])"  # token end: not inside a longer word

# (base64, its line ends: real, escaped ``\n``, or a ``\`` continuing a quoted string's line)
PEM_BODY = r"(?:[A-Za-z0-9+/=,:]|[ \t\r\n]|\\[nr]|\\(?=[ \t]*\r?\n)|-(?!----))*"

RULES: tuple[Rule, ...] = (
    _r(
        "private-key",
        "PRIVATE KEY",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        + PEM_BODY
        + r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?",
        check="key_block",
        bounded=False,
    ),
    # A block labelled a key that does not say PUBLIC is a private key whatever else its label says
    # (``-----BEGIN RSA KEY-----``), with its END line (a header alone is a mention); PRIVATE KEY's own
    # rule is above.
    _r(
        "private-key",
        "KEY-----",
        r"-----BEGIN (?![A-Z0-9 ]*(?:PUBLIC|PRIVATE))[A-Z0-9 ]*KEY-----"
        + PEM_BODY
        + r"-----END [A-Z0-9 ]*KEY-----",
        check="key_block",
        bounded=False,
    ),
    *_each("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"[A-Z2-7]{16}" + _E),
    _r(
        "aws-secret-key",
        "aws",
        r"aws[^\n]{0,24}?(?:secret|key)[a-z_\"']{0,24}[ \t]*(?::=|=>|[:=])[ \t]*[\"']?"
        r"(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+])",
        group="v",
        lower=True,
        bounded=False,
    ),
    _r("anthropic-api-key", "sk-ant-", r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{80,}" + _E),
    _r(
        "openai-api-key",
        "T3BlbkFJ",
        r"sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}" + _E,
    ),
    *_each("openai-api-key", ("sk-proj-", "sk-svcacct-", "sk-admin-"), r"[A-Za-z0-9_\-]{40,}" + _E),
    _r("api-key", "sk-", r"sk-[A-Za-z0-9]{32,}" + _E, check="varied"),
    *_each("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{36,255}" + _E),
    _r("github-token", "github_pat_", r"github_pat_[A-Za-z0-9_]{60,255}" + _E),
    *_each(
        "gitlab-token",
        ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glcbt-"),
        r"[A-Za-z0-9_\-]{20,}" + _E,
    ),
    _r("slack-token", "xox", r"xox[abposre]-(?:\d+-)+[A-Za-z0-9\-]{10,}" + _E),
    _r(
        "slack-webhook",
        "hooks.slack.com/",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}",
        bounded=False,
    ),
    *_each("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[A-Za-z0-9]{16,}" + _E),
    _r("google-api-key", "AIza", r"AIza[0-9A-Za-z_\-]{35}" + _E),
    _r("google-oauth-secret", "GOCSPX-", r"GOCSPX-[A-Za-z0-9_\-]{28}" + _E),
    # (an unsigned one too: its claims are the token's)
    _r("jwt", "eyJ", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]{8,})?" + _E),
    _r("npm-token", "npm_", r"npm_[A-Za-z0-9]{36}" + _E),
    _r("pypi-token", "pypi-AgEIcHlwaS5vcmc", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}" + _E),
    _r("sendgrid-key", "SG.", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
    _r("twilio-key", "SK", r"SK[0-9a-fA-F]{32}" + _E, check="varied"),
    _r("huggingface-token", "hf_", r"hf_[A-Za-z]{34}" + _E),
    # <bot id>:AA<secret>; only the part after the colon is secret.
    _r("telegram-bot-token", ":AA", r":(?P<v>AA[A-Za-z0-9_\-]{33})" + _E, group="v", bounded=False),
    # (a prefix holding a digit starts no word or name: a longer run after it is the vendor's token all the
    # same, a revision of its format or junk glued on, as for Square's ``sq0csp-`` below)
    _r("digitalocean-token", "_v1_", r"do[por]_v1_[a-f0-9]{64,}" + _E),
    *_each("shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_"), r"[a-fA-F0-9]{32}" + _E),
    _r("mailgun-key", "key-", r"key-[0-9a-f]{32}" + _E),
    _r("databricks-token", "dapi", r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    _r("age-secret-key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _r(
        "azure-storage-key",
        "accountkey=",
        r"accountkey=(?P<v>[a-z0-9+/=]{40,})",
        group="v",
        lower=True,
        bounded=False,
    ),
    _r("azure-sas-signature", "sig=", r"sig=(?P<v>[a-z0-9%+/=]{30,})", group="v", lower=True, bounded=False),
    # scheme://user:password@host — only the password goes; who and where stay readable. (A password
    # that repeats its user, ``user:user@``, ``admin:admin``, is a default: the ``u`` group, see __init__.)
    # (the password runs to the last ``@`` before the host: ``user:p@ss@host`` keeps its ``@``; curl's
    # documented defaults, ``user:pass@``, stay readable as they do after ``-u``)
    _r(
        "connection-password",
        "://",
        r"://(?P<u>[^\s:/@'\"<>]{0,64}):(?P<v>[^\s/'\"<>]{1,128})@(?=[^\s@/'\"<>]*(?:[/\s'\"<>?#]|\Z))",
        group="v",
        check="url_password",
        bounded=False,
    ),
    *_each(
        "bearer-token",
        ("bearer", "token"),
        r"[ \t]+(?P<v>[a-z0-9_\-.=+/~]{16,})",
        group="v",
        check="random",
        lower=True,
        bounded=False,
    ),
    # Passwords on command lines: curl's -u/--user (and -U/--proxy-user) user:password, mysql's
    # -pPASSWORD, sshpass -p, redis-cli -a (long --password flags are keyvalue's). The flag is looked for
    # at most 256 characters on: a scan to the line's end from each of a line of ``mysql``s is quadratic.
    *_each(
        "password",
        ("-u", "--user", "-U", "--proxy-user"),
        # (a user in ``<…>`` is a help page's metavariable: ``-u, --user <user:password>``)
        r"[ \t=]+['\"]?(?P<u>[^\s:'\"<]{1,64}):(?P<v>[^\s'\"@]{3,128})",
        group="v",
        check="credential",
        bounded=False,
    ),
    # quoted, the password is all up to the quote (``--user "me:p@ss word"``: an ``@`` too)
    *_each(
        "password",
        ("-u", "--user", "-U", "--proxy-user"),
        r"[ \t=]+(?P<q>['\"])(?P<u>[^\s:'\"]{1,64}):(?P<v>(?:(?!(?P=q))[^\n]){3,128})(?P=q)",
        group="v",
        check="credential",
        bounded=False,
    ),
    _r(
        "password",
        "mysql",
        r"mysql(?:dump|admin|sh)?\b[^\n|;&]{0,256}?[ \t]-p(?P<v>[^\s'\"\-][^\s'\"]*)",
        group="v",
        bounded=False,
    ),
    *_each(
        "password",
        ("sshpass", "redis-cli"),
        r"\b[^\n|;&]{0,256}?[ \t]-[pa][ \t]*(?P<v>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)",
        group="v",
        check="not_template",
        bounded=False,
    ),
    # Go's MySQL DSN, ``user:password@tcp(host:3306)/db`` (``@unix(…)``): a URL's user info with no
    # scheme. (From its ``:``, so the engine skips ahead; the user is one character checked behind.)
    *(
        _r(
            "connection-password",
            f"@{net}(",
            r":(?<=[\w.\-]:)(?P<v>[^\s:@/'\"<>]{1,128})@" + net + r"\(",
            group="v",
            check="url_password",
            bounded=False,
        )
        for net in ("tcp", "unix")
    ),
    # A password option on any command line: ``-p``/``-P`` after a user option of the same command and
    # letter case (``docker login -u me -p …``, ``sqlcmd -U sa -P …``, ``mycli -u root -p…``); a port, a
    # port mapping or another option is judged by the check. Bounded as mysql's rule is.
    *(
        _r(
            "password",
            user,
            re.escape(user)
            + r"[ \t=]+['\"]?[^\s'\"\-|;&][^\s'\"|;&]{0,63}['\"]?[^\n|;&]{0,256}?[ \t]-"
            + flag
            + value,
            group="v",
            check="option_password",
            bounded=False,
        )
        for user, flag in (("-u", "p"), ("-U", "P"), ("--user", "p"), ("--username", "p"), ("--login", "p"))
        for value in (
            r"(?:[ \t]+|(?=[^\s\-]))(?P<v>[^\s'\"|;&]{1,128})",
            r"[ \t]*'(?P<v>[^'\n]{1,128})'",
            r'[ \t]*"(?P<v>[^"\n]{1,128})"',
        )
    ),
    # A connection string's password field (ADO, ODBC, JDBC): ``…;Password=…;`` — a field among
    # ``Key=Value;`` fields (one before it, or one after), its value whatever it is but a reference. The
    # ``;`` after is looked for 256 characters on (the value has 128 at most), not to the line's end.
    *(
        _r(
            "password",
            noun,
            noun
            + rf"(?:(?<=;{noun})|(?<=;[ \t]{noun})|(?=[ \t]*=[^;\n]{{0,256}}+;[ \t]*[a-z][a-z _]{{0,30}}=))"
            r"[ \t]*=[ \t]*(?P<v>[^;'\"\n()\[\]{}]{1,128}?)[ \t]*(?=;|['\"]|\n|\Z)",
            group="v",
            check="field",
            lower=True,
        )
        for noun in ("password", "pwd")
    ),
    # Password hashes in the modular crypt format, ``$<id>$[params$]salt$hash`` (crypt(3), bcrypt,
    # sha-crypt, scrypt, yescrypt, argon2, PBKDF2, Kerberos AS-REP/TGS): one construction for all ids.
    # Bounded: at most 8 ``$``-ended fields of 256 characters before the hash (Kerberos TGS has 5), each
    # taken whole (possessive: a field holds no ``$``, so giving some back never helps). Unbounded, a try
    # at each ``$1$`` of a line of them read to the line's end: 100 KB of ``$1$`` took 40 s.
    *_each(
        "password-hash",
        (
            "$1$",
            "$2$",
            "$2a$",
            "$2b$",
            "$2x$",
            "$2y$",
            "$5$",
            "$6$",
            "$7$",
            "$8$",
            "$9$",
            "$y$",
            "$gy$",
            "$md5",
            "$sha1$",
            "$apr1$",
            "$argon2",
            "$scrypt$",
            "$pbkdf2",
            "$krb5asrep$",
            "$krb5tgs$",
        ),
        r"(?:[A-Za-z0-9./+=,:@*\-]{0,256}+\$){1,8}[A-Za-z0-9./+=\-]{16,}",
        check="password_hash",
        bounded=False,
    ),
    # A password in prose: "the (default) password (for user 'x') is 'hunter2'" — quoted, after "is".
    *_each(
        "password",
        ("password", "passphrase", "passwd"),
        r"(?:[ \t]+(?:for|of)[ \t]+(?:the[ \t]+)?(?:user|account|login)?[ \t]*"
        r"(?:'[^'\n]{1,40}'|\"[^\"\n]{1,40}\"|[\w.@\-]{1,40}))?[ \t]+(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+)?"
        r"(?P<q>['\"`])(?P<v>[^'\"`\s]{3,64})(?P=q)",
        group="v",
        check="credential",
        lower=True,
    ),
    # SQL's password clauses: ``IDENTIFIED BY 'x'`` (MySQL, Oracle: quoted, or a bare word ending the
    # statement) and a one-word string literal after ``PASSWORD`` (``ALTER USER app WITH PASSWORD 'x'``),
    # in upper case as SQL is written (prose says "identified by 'name'").
    _r(
        "password",
        "IDENTIFIED BY",
        r"IDENTIFIED BY[ \t]+(?P<v>'[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s;'\"()]{1,128}(?=[ \t]*;))",
        group="v",
        check="not_template",
        bounded=False,
    ),
    _r(
        "password",
        "PASSWORD '",
        r"PASSWORD '(?P<v>[^'\s()\[\]{}]{3,128})'",
        group="v",
        check="not_template",
    ),
    _r("aws-session-token", "IQoJb3JpZ2lu", r"IQoJb3JpZ2lu[A-Za-z0-9+/=]{100,}", bounded=False),
    _r("aws-session-token", "FwoGZXIvYXdz", r"FwoGZXIvYXdz[A-Za-z0-9+/=]{100,}", bounded=False),
    *_each("vault-token", ("hvs.", "hvb."), r"[A-Za-z0-9_\-]{24,}" + _E),
    _r("stripe-webhook-secret", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}" + _E),
    _r("newrelic-key", "NRAK-", r"NRAK-[A-Z0-9]{27}" + _E),
    # Two formats detect-secrets' plugins know and gitleaks' rules only near the vendor's name:
    # Mailchimp's ``<32 hex>-us<datacenter>`` and Square's OAuth secret.
    _r("mailchimp-api-key", "-us", r"[0-9a-f]{32}-us[0-9]{1,2}" + _E, offset=32),
    _r("square-oauth-secret", "sq0csp-", r"sq0csp-[0-9A-Za-z_\-]{43,}" + _E),
    _r(
        "discord-webhook",
        "discord",
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<v>[A-Za-z0-9_\-]{60,})",
        group="v",
        lower=False,
        bounded=False,
    ),
)

# Anything else long and random: a run of 20+ token characters (and its base64 padding) not right
# after a ``=``, judged by agentcli.redact.judge.looks_random. Found on a copy of the text as bytes where
# every token character is ``a``: a regex over a class is tried at every position, while one
# starting with a literal (``aaaa…``) skips ahead in C — 5x faster on a megabyte.
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+"
TOKEN_MIN = 20
WORD_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
)  # a token continues
