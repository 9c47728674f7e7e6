"""The public redaction corpus: samples from gitleaks', detect-secrets', Nosey Parker's, kingfisher's and
secretlint's own tests (tests/fixtures/redact/, built by the scripts/redact_corpus_*.py scripts): the first
four are tuned on (Nosey Parker's and kingfisher's since their readings as held-out parts), secretlint's is
held out: no rule or threshold was tuned on it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcli.redact import PLACEHOLDER
from tests.corpus_common import Sample, leaks

FIXTURE = Path(__file__).with_name("fixtures") / "redact" / "public_corpus.json"
# whispers' and ripsecrets' samples (splits "tune-whispers-ripsecrets" and "tune-whispers-ripsecrets-2"),
# kept in a file of their own
HOLDOUT_NEW = FIXTURE.with_name("holdout_new.json")
# trivy's, IBM detect-secrets', ggshield's, 2ms's and checkov's samples (split "tune-next"; held out as
# "holdout-next" until its misses were read)
HOLDOUT_NEXT = FIXTURE.with_name("holdout_next.json")
# kics' samples (split "holdout-kics"), held out while "tune-next" is tuned on
HOLDOUT_KICS = FIXTURE.with_name("holdout_kics.json")
# gosec's, bandit's, horusec's, eslint-plugin-no-secrets' and repo-supervisor's samples (split
# "holdout-fresh"), held out while two rounds change the redactor in parallel
HOLDOUT_FRESH = FIXTURE.with_name("holdout_fresh.json")


@dataclass(frozen=True)
class PublicSample:
    label: str  # "secret", "lookalike" (clear) or "unclear" (a near miss of a real format)
    # "tune", "tune-noseyparker", "tune-kingfisher", "tune-whispers-ripsecrets", "tune-whispers-ripsecrets-2",
    # "tune-next", "tune-kics", or held out: "holdout" (secretlint), "holdout-kics", "holdout-fresh"
    split: str
    source: str  # "gitleaks", "detect-secrets", "secretlint", "noseyparker", "kingfisher", "whispers", …
    origin: str  # the test file (and rule) it came from
    text: str
    secret: str  # for a secret: what must not survive


def load() -> list[PublicSample]:
    files = (FIXTURE, HOLDOUT_NEW, HOLDOUT_NEXT, HOLDOUT_KICS, HOLDOUT_FRESH)
    return [PublicSample(**s) for f in files for s in json.loads(f.read_text())["samples"]]


def assert_repeats_nothing(part: list[PublicSample], earlier: list[PublicSample]) -> None:
    """A part built from a new source: each secret lies in its text, and no text or secret of the parts
    measured before (tuned on or read) recurs in it, so its figures measure nothing already seen."""
    texts = {s.text for s in earlier}
    seen = "\n".join(x for s in earlier for x in (s.text, s.secret))
    for s in part:
        assert s.secret in s.text and s.text not in texts, s.origin
        if s.label == "secret":
            assert len(s.secret) >= 4 and s.secret not in seen, s.origin


@dataclass(frozen=True)
class Figures:
    caught: int
    secrets: int
    changed: int
    lookalikes: int
    unclear_changed: int
    unclear: int

    @property
    def recall(self) -> float:
        return self.caught / self.secrets

    @property
    def false_positives(self) -> float:
        return self.changed / self.lookalikes

    def __str__(self) -> str:
        return (
            f"recall {self.caught}/{self.secrets} ({self.recall:.1%}), clear look-alikes changed "
            f"{self.changed}/{self.lookalikes} ({self.false_positives:.1%}), near misses changed "
            f"{self.unclear_changed}/{self.unclear}"
        )


def figures(redact: Callable[[str], str], split: str, samples: list[PublicSample] | None = None) -> Figures:
    part = [s for s in samples or load() if s.split == split]
    secrets = [s for s in part if s.label == "secret"]
    clear = [s for s in part if s.label == "lookalike"]
    unclear = [s for s in part if s.label == "unclear"]
    # (a placeholder's kind name is no leak: ``[REDACTED:aws-amazon-bedrock-api-key-short-lived]``
    # shares ``bedrock-api-key-`` with the token it replaced)
    caught = sum(
        not leaks(Sample(s.origin, s.text, s.secret), PLACEHOLDER.sub("", redact(s.text))) for s in secrets
    )
    return Figures(
        caught,
        len(secrets),
        sum(redact(s.text) != s.text for s in clear),
        len(clear),
        sum(redact(s.text) != s.text for s in unclear),
        len(unclear),
    )
