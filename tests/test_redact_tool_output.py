"""Look-alikes by class from real tool output (the tuning half of scripts/redact_tool_output_spans.py:
commands whose line's sha256 starts with an even byte: pydoc pages, --help listings, usage lines), each
beside the secret the same output must still give up."""

from __future__ import annotations

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks

SECRET = "Xk9#mQ2vL7pR4tZ8"
TOKEN = "Xk9mQ2vLp8Rt4wZ7cB3nH6jD"


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    "text",
    [
        "class OpenAI(SyncAPIClient)\n |  OpenAI(*, api_key: 'str | Callable[[], str] | None' = None, "
        "admin_api_key: 'str | None' = None, organization: 'str | None' = None)\n",
        " |  Agent(*, model: 'Optional[str]' = None, api_key: 'Optional[str]' = None, prompt: 'str')\n",
        "async run_process(command: 'StrOrBytesPath | Sequence[StrOrBytesPath]', *, "
        "pass_fds: 'Sequence[int]' = (), user: 'str | int | None' = None)\n",
        " |  __init__(self, lock_file: 'str', lock_file_fd_token: 'int | None' = None)\n",
        " |  Config(app: 'ASGIApplication', ssl_keyfile_password: 'str | None' = None)\n",
        " |  Session(auth_tokens: 'dict[str, Any]' = None)\n",
    ],
)
def test_a_parameter_annotated_by_a_string_as_pydoc_prints_it_stays_readable(text: str) -> None:
    """``python -m pydoc openai``: a signature whose annotations were strings (``from __future__ import
    annotations``) prints each quoted; ``api_key: 'str | None'`` is a type, not a key."""
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f" |  Client(api_key: 'str | None' = '{SECRET}')\n",
        f"api_key: '{SECRET}'\n",
        f"password: 'hunter2[{SECRET}]'\n",
    ],
)
def test_a_secret_quoted_in_a_signature_or_beside_one_is_still_caught(text: str) -> None:
    assert caught(text, SECRET)


@pytest.mark.parametrize(
    "text",
    [
        "Connection options:\n  -w, --no-password         never prompt for password\n"
        "  -W, --password            force password prompt\n",
        "      --prompt-root-password       Prompt the user for root password\n"
        "      --copy-root-password         Copy root password from host\n",
        "  -r, --remove-password         remove the GROUP's password\n",
        "      --change-passphrase            change a passphrase\n",
        " -u, --user <user:password> Server user and password\n",
        "  -p, --password=PASSWORD    use this password to connect\n",
        "  --api-token TOKEN\tThe token to send with every request\n",
    ],
)
def test_a_help_listings_option_and_its_description_stay_readable(text: str) -> None:
    """``pg_dump --help``, ``curl --help all``: an option aligned with its description is documentation;
    the word after ``--password`` there is prose (``force``, ``never``), not a password."""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"pg_dump --username admin --password {SECRET} mydb\n", SECRET),
        ("docker login \\\n    --username me \\\n    --password  hunter22 \\\n    registry.io\n", "hunter22"),
        (f"  --password  {TOKEN} now\n", TOKEN),
        ("curl -u admin:Zq7wPl2xVb9k https://api.example.com\n", "Zq7wPl2xVb9k"),
        (f"  -u, --user <user:password> Server user and password\ncurl --user bob:{SECRET} x\n", SECRET),
    ],
)
def test_a_password_given_on_a_command_line_is_still_caught(text: str, secret: str) -> None:
    """A command's continued line with its password, a password followed by one word, curl's user and
    password: not a help listing's entry."""
    assert caught(text, secret)


def test_a_usage_lines_sorted_option_cluster_stays_readable() -> None:
    """``ssh --help``'s ``[-46AaCfGgKkMNnqsTtVvXxYy]``: one-letter options sorted as getopt's authors
    sort them; a random token's characters repeat and fall in no order."""
    text = "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface] [-b bind_address]\n"
    assert redact(text) == text


def test_a_random_token_after_a_dash_is_still_caught() -> None:
    text = f"usage: tool [-{TOKEN}] [-B bind_interface]\n"
    assert caught(text, TOKEN)
