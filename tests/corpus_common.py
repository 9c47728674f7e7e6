"""What the redaction corpora are made of: the sample record and a seeded generator of fake values.

Every random value comes from one seeded generator, so the repository holds no literal token a secret
scanner would (rightly) complain about, and every run sees the same values.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from urllib.parse import quote

RNG = random.Random(8)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"
DIGITS = string.digits

# Nouns and adjectives for passphrases and plain-word passwords (as people and diceware pick them).
_WORDS = (
    "amber anchor apple atlas badger banjo basil beacon birch bison breeze cactus canyon cedar cobalt comet "
    "copper coral cricket dahlia delta ember falcon fern fjord gecko ginger glacier granite harbor hazel "
    "heron indigo iris jasper juniper kayak kettle lagoon lantern lemon lilac lotus maple marble meadow "
    "mango nectar nutmeg oasis olive onyx orchid otter pebble pepper pigeon pine plum quartz quill raven "
    "reef river saffron sapphire sequoia sparrow spruce summit tango thistle thunder tiger topaz tulip "
    "tundra velvet violet walnut willow wombat yarrow zephyr"
)
WORDS = tuple(_WORDS.split(" "))


@dataclass(frozen=True)
class Sample:
    kind: str
    context: str  # the text as it would appear in a file, a log or a paste
    secret: str  # secrets: what must not survive redaction; look-alikes: what must stay readable


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def word() -> str:
    return RNG.choice(WORDS)


def passphrase(words: int = 4) -> str:
    return " ".join(word() for _ in range(words))


def plain_password() -> str:
    """A weak password of the kind people choose: a word and a few digits."""
    return word() + rand(DIGITS, RNG.choice((0, 2, 4)))


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def urlenc(text: str) -> str:
    return quote(text, safe="")


def pem(label: str, lines: int = 6) -> str:
    body = "\n".join(rand(B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{rand(B64, 20)}==\n-----END {label}-----"


def jwt(claims: dict[str, object] | None = None) -> str:
    def enc(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    body = claims or {"sub": rand(DIGITS, 10), "name": "Jane", "iat": 1716239022}
    return f"{enc({'alg': 'HS256', 'typ': 'JWT'})}.{enc(body)}.{rand(URLSAFE, 43)}"


def leaks(sample: Sample, out: str, elsewhere: str = "") -> bool:
    """Whether any 8 characters of the sample's secret survive (unless its context or ``elsewhere``,
    public text sent alongside, has them too): half a password redacted is a password leaked."""
    secret, rest = sample.secret, sample.context.replace(sample.secret, "\0") + elsewhere
    n = min(8, len(secret))
    return any(secret[i : i + n] in out and secret[i : i + n] not in rest for i in range(len(secret) - n + 1))
