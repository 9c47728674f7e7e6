"""Why agentcli's own rule set and not detect-secrets: recall on tests/secret_corpus.py's secrets,
false positives on its look-alikes, and the time for the 1 MB input of bench_redact.py, for both.
detect-secrets is not a dependency: `pip install detect-secrets` to run this (it is skipped otherwise).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.redact import redact  # noqa: E402
from scripts.bench_redact import summary_input  # noqa: E402
from tests.secret_corpus import LOOKALIKES, SECRETS  # noqa: E402


def main() -> None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect_secrets: not installed (pip install detect-secrets)")
        return
    folder = Path(tempfile.mkdtemp())

    def found(text: str) -> list[str]:
        path = folder / "scan.txt"
        path.write_text(text)
        collection = SecretsCollection()
        collection.scan_file(str(path))
        return [s.secret_value or "" for _, s in collection]

    def ds_redact(text: str) -> str:
        for value in found(text):
            text = text.replace(value, "[X]") if value else text
        return text

    with default_settings():
        for name, fn in (("agentcli", redact), ("detect_secrets", ds_redact)):
            print(f"{name}_recall: {sum(s.secret not in fn(s.context) for s in SECRETS)}/{len(SECRETS)}")
            print(
                f"{name}_false_positives: "
                f"{sum(fn(s.context) != s.context for s in LOOKALIKES)}/{len(LOOKALIKES)}"
            )
        text = summary_input()
        start = time.perf_counter()
        redact(text)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        found(text)
        theirs = time.perf_counter() - start
        print(f"detect_secrets_vs_agentcli_1mb_time: {theirs / ours:.0f}")


if __name__ == "__main__":
    main()
