r"""Recall on third-party text: secrets planted at the credential-value sites of real files, by half.

The body is scripts/redact_package_spans.py's (installed packages' and the system's files, npm
packages, /usr/share/doc, man pages) with its split: the sha256 of a file's root-relative path, even
first byte = tuning half, odd = held-out half. Only the tuning half may be printed per site (``--show``);
the held-out half is read by totals (per shape class and per file type at most).

The rule, written before anything was measured:

- **The locator** (below, written without reading agentcli's rules) finds credential-value sites. A key
  is a name (optionally quoted) whose words — split at ``_ - .`` and at camelCase humps, any case —
  hold a credential word: ``password(s) passwd pwd secret(s) token(s) auth credential(s)``, the pairs
  ``api key``, ``access key``, ``private key``, or a word ending in ``password passwd secret token
  apikey accesskey privatekey`` (``dbpassword``, ``authtoken``). A site is such a key followed by
  ``=``, ``:``, ``=>``, ``:=`` or ``<-`` (not ``==``, ``!=``, ``<=``, ``>=``) and a value: a quoted
  string on the line (``"…"``, ``'…'``, ``\`…\```, empty too), or — outside code and JSON files (``.py
  .js .ts .mjs .cjs .json``, where a bare value is an expression or a number, not a literal string) — a
  bare run of non-space characters, none of ``( ) [ ] { } , ; & < > " ' \```, that ends the line
  or is followed by ``, ; ) ] } &`` or a `` #`` comment. Also an XML/HTML element
  ``<key …>value</key>`` and a command-line option ``--key VALUE`` (a bare value not starting with
  ``-``, ending at a space or the line's end).
- **The planter** replaces one site's value (keeping its quotes and delimiters) by a secret of one
  of eight shape classes, the class and the secret drawn from a generator seeded by the path and the
  site's offset: ``alnum`` (12–40 letters and digits), ``hex`` (32, 40 or 64), ``base64`` (40),
  ``symbols`` (16–24 with symbols), ``memorable`` (a capitalised word, one of ``!@$%*?``, 4 digits:
  ``Harbor!2931``), ``passphrase`` (3–4 dictionary words joined by ``-``), ``short`` (8 letters and
  digits), ``vendor`` (``ghp_`` with its CRC32 checksum, ``sk-…T3BlbkFJ…``, ``xoxb-``, ``AKIA``).
  One planted secret per file copy; at most 3 sites per file (chosen by the same seed).
- **Recall**: a planted secret counts as caught when no 8 characters of it (that the unplanted file
  lacks) survive the redactor's output — tests/corpus_common.py's ``leaks``.

    python scripts/redact_planted.py                  # totals per half, per class, per file type
    python scripts/redact_planted.py --tuning-only    # while tuning: the held-out half unread
    python scripts/redact_planted.py --show           # the tuning half's misses, one a line

agentcli is imported only in ``measure`` to run the redactor; the locator and planter use none of it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import random
import re
import string
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.redact_package_spans import HELD_OUT, TUNING, files, read  # noqa: E402
from tests.corpus_common import Sample, leaks  # noqa: E402

CODE = (".py", ".js", ".ts", ".mjs", ".cjs", ".json")  # a bare value here is no literal string
SITES_PER_FILE = 3
WORDS_ANY = {"password", "passwords", "passwd", "pwd", "secret", "secrets", "token", "tokens", "auth"}
WORDS_ANY |= {"credential", "credentials", "apikey", "accesskey", "privatekey"}
PAIRS = {("api", "key"), ("access", "key"), ("private", "key")}
ENDINGS = ("password", "passwd", "secret", "token", "apikey", "accesskey", "privatekey")

_KEY = r"""(?P<q>["']?)(?P<key>[A-Za-z_$@][\w$.-]*)(?P=q)"""
_OP = r"[ \t]*(?P<op>:=|=>|<-|(?<![=!<>])=(?!=)|:(?![:=]))[ \t]*"
_QUOTED = r"""(?P<vq>["'`])(?P<qval>[^"'`\n\\]*)(?P=vq)"""
_BARE = r"(?P<bval>[^\s,;()\[\]{}&\"'`<>]+)(?=[ \t]*(?:$|[,;)\]}&]|[ \t]#))"
ASSIGN = re.compile(rf"(?<![\w$.-]){_KEY}{_OP}(?:{_QUOTED}|{_BARE})", re.M)
ELEMENT = re.compile(r"<(?P<key>[A-Za-z_][\w.-]*)(?:\s[^<>]*)?>(?P<eval>[^<>\n]*)</(?P=key)>")
OPTION = re.compile(r"(?<![\w-])--(?P<key>[A-Za-z][\w-]*)[ \t]+(?P<oval>[^\s-][^\s]*)(?=[ \t]|$)", re.M)


def words(key: str) -> list[str]:
    """A key's words, lower-cased: split at separators and camelCase humps."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", key))
    return [w.lower() for w in re.split(r"[\s_.$@-]+", spaced) if w]


def credential_key(key: str) -> bool:
    ws = words(key)
    if any(w in WORDS_ANY or w.endswith(ENDINGS) for w in ws):
        return True
    return any(pair in PAIRS for pair in zip(ws, ws[1:], strict=False))


def names_credential(key: str) -> bool:
    """Whether the key's last word is the credential word (``db_password``, ``apiKey``), as against a
    key that only holds one (``token_type``, ``secret_name``): a reporting axis, not part of the rule."""
    ws = words(key)
    return bool(ws) and (ws[-1] in WORDS_ANY or ws[-1].endswith(ENDINGS) or tuple(ws[-2:]) in PAIRS)


@dataclass(frozen=True)
class Site:
    start: int  # the value's span in the file (empty for an empty quoted value)
    end: int
    form: str  # assign, element, option
    quoted: bool
    last: bool = False  # the key's last word is the credential word (a reporting axis)


def locate(text: str, suffix: str) -> list[Site]:
    """Every credential-value site of a file's text (see the module's docstring), in order."""
    sites: dict[int, Site] = {}
    code = suffix in CODE
    for m in ASSIGN.finditer(text):
        if not credential_key(m["key"]):
            continue
        last = names_credential(m["key"])
        if m["vq"] is not None:
            sites.setdefault(m.start("qval"), Site(m.start("qval"), m.end("qval"), "assign", True, last))
        elif not code:
            sites.setdefault(m.start("bval"), Site(m.start("bval"), m.end("bval"), "assign", False, last))
    for m in ELEMENT.finditer(text):
        if credential_key(m["key"]):
            sites.setdefault(
                m.start("eval"),
                Site(m.start("eval"), m.end("eval"), "element", False, names_credential(m["key"])),
            )
    for m in OPTION.finditer(text):
        if credential_key(m["key"]):
            sites.setdefault(
                m.start("oval"),
                Site(m.start("oval"), m.end("oval"), "option", False, names_credential(m["key"])),
            )
    return [sites[k] for k in sorted(sites)]


# A dictionary of common English words for memorable passwords and passphrases (the planter's own).
_DICTIONARY = """
    able acid aged also area army away baby back ball band bank base bath bear beat bell belt best bird
    blue boat body bone book boot born boss bowl bread bush cake call calm camp card care cart case cash
    cave chair chalk cheese chin city clay clock cloud coat cold cook corn cost crew crop crow dark dawn
    deer desk dish door dove drum duck dust eagle earth east echo edge farm fast fire fish flag flat
    flower fog foot fork fox frog game gate gift girl goat gold golf grass green grey hall hand harbor
    hat hawk head hill home hope horse house iron island jade jazz joke jump kid king kite knee lake lamp
    land leaf lime lion list log lucky mail map mask milk mill mint moon moss mouse nail nest net night
    north nose note oak ocean oven owl page paint palm park path peach pearl pen piano pink pipe planet
    plate pony pool port pot rain ring road rock roof rope rose ruby salt sand seal seed shell ship shoe
    silk silver sky slow snow sock soup star stone storm sugar sun swan table tail tea tent tide tree
    truck valley vine wall wave wheat whale wind wing winter wolf wood yard yellow zebra
"""
DICTIONARY = tuple(_DICTIONARY.split())
ALNUM = string.ascii_letters + string.digits
SYMBOLS = "!@%^*-_+=.?~"
CLASSES = ("alnum", "hex", "base64", "symbols", "memorable", "passphrase", "short", "vendor")


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _base62(n: int, width: int) -> str:
    digits = string.digits + string.ascii_letters
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = digits[r] + out
    return out.rjust(width, "0")


def _vendor(rng: random.Random) -> str:
    kind = rng.choice(("github", "openai", "slack", "aws"))
    if kind == "github":  # GitHub's format: 30 random base62 characters and their CRC32 in 6
        body = _pick(rng, ALNUM, 30)
        return f"ghp_{body}{_base62(zlib.crc32(body.encode()), 6)}"
    if kind == "openai":
        return f"sk-{_pick(rng, ALNUM, 20)}T3BlbkFJ{_pick(rng, ALNUM, 20)}"
    if kind == "slack":
        return f"xoxb-{_pick(rng, string.digits, 12)}-{_pick(rng, string.digits, 13)}-{_pick(rng, ALNUM, 24)}"
    return "AKIA" + _pick(rng, string.ascii_uppercase + "234567", 16)


def _mixed(rng: random.Random, alphabets: list[str], n: int) -> str:
    """n characters with at least one of each alphabet (a password policy's classes)."""
    while True:
        out = _pick(rng, "".join(alphabets), n)
        if all(any(c in a for c in out) for a in alphabets):
            return out


def secret(shape: str, rng: random.Random) -> str:
    if shape == "alnum":
        cases = [string.ascii_lowercase, string.ascii_uppercase, string.digits]
        return _mixed(rng, cases, rng.randint(12, 40))
    if shape == "hex":
        return _pick(rng, "0123456789abcdef", rng.choice((32, 40, 64)))
    if shape == "base64":
        return base64.b64encode(rng.randbytes(30)).decode()
    if shape == "symbols":
        return _mixed(rng, [string.ascii_letters, string.digits, SYMBOLS], rng.randint(16, 24))
    if shape == "memorable":
        return rng.choice(DICTIONARY).capitalize() + rng.choice("!@$%*?") + _pick(rng, string.digits, 4)
    if shape == "passphrase":
        return "-".join(rng.choice(DICTIONARY) for _ in range(rng.randint(3, 4)))
    if shape == "short":
        return _mixed(rng, [string.ascii_letters, string.digits], 8)
    return _vendor(rng)


@dataclass(frozen=True)
class Planted:
    text: str  # the file's text with one site's value replaced
    secret: str
    shape: str
    site: Site


def plant(relative: str, text: str, suffix: str) -> Iterator[Planted]:
    """Up to SITES_PER_FILE copies of the text, each with one site's value replaced by a secret."""
    sites = locate(text, suffix)
    chooser = random.Random(hashlib.sha256(relative.encode()).digest())
    chosen = sorted(chooser.sample(range(len(sites)), min(SITES_PER_FILE, len(sites))))
    for i in chosen:
        site = sites[i]
        rng = random.Random(hashlib.sha256(f"{relative}\0{site.start}".encode()).digest())
        shape = rng.choice(CLASSES)
        value = secret(shape, rng)
        yield Planted(text[: site.start] + value + text[site.end :], value, shape, site)


def file_type(root: str, path: Path) -> str:
    if root == "man":
        return "man"
    suffix = path.suffix if path.suffix != ".gz" else Path(path.stem).suffix
    return {".yml": ".yaml", ".mjs": ".js", ".cjs": ".js", ".cfg": ".ini"}.get(suffix, suffix or "none")


def measure(redact_text: Callable[[str], str] | None = None) -> Callable[[Planted], bool]:
    """Whether the redactor leaves a planted secret readable (the only place agentcli is used)."""
    if redact_text is None:
        from agentcli.redact import PLACEHOLDER, redact

        def redact_text(text: str) -> str:
            return PLACEHOLDER.sub("", redact(text))

    run = redact_text

    def missed(p: Planted) -> bool:
        return leaks(Sample(p.shape, p.text, p.secret), run(p.text))

    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print the tuning half's misses")
    parser.add_argument("--tuning-only", action="store_true", help="measure the tuning half alone")
    parser.add_argument("--body", type=Path, default=Path("/tmp/redact-body"), help="the scratch body's dir")
    args = parser.parse_args()
    missed = measure()
    total, caught = Counter[str](), Counter[str]()
    by: dict[str, Counter[tuple[str, str]]] = {"total": Counter(), "caught": Counter()}
    for root, which, relative, path in files(args.body):
        if args.tuning_only and which == HELD_OUT:
            continue
        text = read(path)
        if text is None:
            continue
        kind = file_type(root, path)
        for p in plant(relative, text, path.suffix if path.suffix != ".gz" else Path(path.stem).suffix):
            miss = missed(p)
            total[which] += 1
            caught[which] += not miss
            named = "key names it" if p.site.last else "key holds the word"
            for axis in (f"class {p.shape}", f"type {kind}", f"form {p.site.form}", named):
                by["total"][which, axis] += 1
                by["caught"][which, axis] += not miss
            if miss and args.show and which == TUNING:
                line_start = p.text.rfind("\n", 0, p.site.start) + 1
                line_end = p.text.find("\n", p.site.start)
                line = p.text[line_start : line_end if line_end >= 0 else len(p.text)]
                print(f"MISS\t{p.shape}\t{root}:{relative}\t{line.strip()[:200]!r}")
    for which in (TUNING,) if args.tuning_only else (TUNING, HELD_OUT):
        n, c = total[which], caught[which]
        print(f"{which}: planted {n}, caught {c} ({100 * c / max(n, 1):.1f} %)")
        axes = sorted({a for w, a in by["total"] if w == which})
        print("  " + ", ".join(f"{a} {by['caught'][which, a]}/{by['total'][which, a]}" for a in axes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
