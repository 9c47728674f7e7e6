"""Every path a project's config can name goes through one resolver (``project_layout.judge``):
symlinks followed as opening the file would, then outside the project needs trust, and a file that
may hold credentials (a ``.env``) is asked about even inside it. One test per kind of path, each
through a link, end to end: the user declines, and nothing of the file reaches the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentcli.trusted_config import load_config, record_trust
from tests.fakellm import FakeLLM, Reply, Usage
from tests.test_trust import untrusting, users_own_provider
from tests.workspace import Workspace, assert_one_line_error

SECRET = "OPENAI_API_KEY=sk-never-leaves-the-machine-1234"


def _outside(ws: Workspace) -> Path:
    (ws.home / ".aws").mkdir(exist_ok=True)
    target = ws.home / ".aws" / "credentials"
    target.write_text(f"---\ndescription: creds\n---\n{SECRET}\n")
    return target


def _dotenv(ws: Workspace) -> Path:
    (ws.project / ".env").write_text(SECRET + "\n")
    return ws.project / ".env"


def _project_config(ws: Workspace, data: dict) -> None:
    (ws.project / "opencode.json").write_text(json.dumps(data))


def agent_file_linked_outside(ws: Workspace) -> None:
    (ws.project / ".opencode" / "agent").mkdir(parents=True)
    (ws.project / ".opencode" / "agent" / "build.md").symlink_to(_outside(ws))


def agent_folder_linked_outside(ws: Workspace) -> None:
    folder = ws.home / "agents"
    folder.mkdir()
    (folder / "helper.md").write_text(f"---\ndescription: h\nmode: primary\n---\n{SECRET}\n")
    (ws.project / ".opencode").mkdir()
    (ws.project / ".opencode" / "agent").symlink_to(folder)


def agent_file_linked_to_dotenv(ws: Workspace) -> None:
    _dotenv(ws)
    (ws.project / ".opencode" / "agent").mkdir(parents=True)
    (ws.project / ".opencode" / "agent" / "build.md").symlink_to(ws.project / ".env")


def instructions_naming_dotenv(ws: Workspace) -> None:
    _dotenv(ws)
    _project_config(ws, {"instructions": [".env"]})


def instruction_glob_matching_dotenv(ws: Workspace) -> None:
    _dotenv(ws)
    _project_config(ws, {"instructions": [".e*"]})


def agents_md_linked_to_dotenv(ws: Workspace) -> None:
    (ws.project / "AGENTS.md").symlink_to(_dotenv(ws))


def file_substitution_of_dotenv(ws: Workspace) -> None:
    _dotenv(ws)
    _project_config(ws, {"agent": {"build": {"prompt": "Be brief. {file:.env}"}}})


def file_substitution_through_a_link(ws: Workspace) -> None:
    (ws.project / "notes.txt").symlink_to(_outside(ws))
    _project_config(ws, {"agent": {"build": {"prompt": "Be brief. {file:notes.txt}"}}})


CASES: list[Callable[[Workspace], None]] = [
    agent_file_linked_outside,
    agent_folder_linked_outside,
    agent_file_linked_to_dotenv,
    instructions_naming_dotenv,
    instruction_glob_matching_dotenv,
    agents_md_linked_to_dotenv,
    file_substitution_of_dotenv,
    file_substitution_through_a_link,
]


@pytest.mark.parametrize("lay_out", CASES, ids=[c.__name__ for c in CASES])
def test_a_path_the_project_names_is_asked_about_and_declined_never_reaches_the_model(
    workspace: Workspace, fake_llm: FakeLLM, lay_out: Callable[[Workspace], None]
) -> None:
    ws = untrusting(workspace)
    users_own_provider(ws)
    (ws.project / "opencode.json").unlink()
    lay_out(ws)

    assert_one_line_error(ws.run("run", "hello"))  # not trusted yet: asked (here, refused), nothing sent
    assert fake_llm.requests == []

    state = load_config(ws.project, ws.env).trust
    assert state is not None and state.pending
    record_trust(state, False, ws.env)  # the user says no
    fake_llm.push(Reply(text="hi", usage=Usage(100, 5)))
    proc = ws.run("run", "hello")
    assert proc.returncode == 0, proc.stderr
    sent = json.dumps([r.body for r in fake_llm.chat_requests()])
    assert "sk-never-leaves-the-machine" not in sent


def test_a_file_substitution_is_text_never_expanded_again(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """``{env:VAR}`` written into a file the project's ``{file:}`` reads stays those words: the config is
    substituted once, where it is read, so routing the provider never expands it into the user's key."""
    ws = workspace  # a trusted project: the harness trusts its own config
    ws.extra_env["MY_TOKEN"] = "user-env-secret-value-42"
    (ws.project / "k.txt").write_text("{env:MY_TOKEN}")
    config = ws.write_config()
    config["provider"]["fake"]["options"]["apiKey"] = "{file:k.txt}"
    (ws.project / "opencode.json").write_text(json.dumps(config))
    fake_llm.push(Reply(text="hi", usage=Usage(100, 5)))
    proc = ws.run("run", "hello")
    assert proc.returncode == 0, proc.stderr
    sent = fake_llm.chat_requests()[0].headers
    assert "user-env-secret-value-42" not in json.dumps(dict(sent))
    assert sent.get("authorization") == "Bearer {env:MY_TOKEN}"
