"""The config as the user's workspace trust allows it: what every command loads.

``agentcli.config`` reads and merges the sources and knows nothing of trust; ``agentcli.trust`` knows
which keys of a project's config would reach beyond the project. Here the two meet: a project
file's risky keys are left out, unread and unsubstituted, unless the user trusted this folder with
this config (``agentcli trust``, ``--trust``, ``AGENTCLI_TRUST_ALL``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli import trust, trust_files
from agentcli.config import LoadedConfig, Source, merge_sources, project_root, read_sources, trust_file
from agentcli.config.paths import home_dir, resolve_env, truthy
from agentcli.project_layout import SAID, judge
from agentcli.trust import TrustState


@dataclass
class TrustedConfig(LoadedConfig):
    # The project config's risky keys and the user's answer; when not trusted they were left out.
    trust: TrustState | None = None


def load_config(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> TrustedConfig:
    """Read, validate and merge every config source; raises ConfigError with a one-line message.

    A project config's risky keys (see `agentcli.trust`) are left out, unread and unsubstituted,
    unless the user trusted this folder with this config."""
    e = resolve_env(env)
    cwd = (cwd or Path.cwd()).resolve()
    root = project_root(cwd)
    sources = read_sources(cwd, e)
    state = _trust_state(root, cwd, sources, e)
    loaded = merge_sources(sources, e, [_kept(source, state) for source in sources])
    if state.decision is False and state.risks:
        loaded.warnings.append(
            f"ignoring {', '.join(state.keys())} from the project config: this folder is not trusted "
            f"(`agentcli trust {root}` trusts it)"
        )
    return TrustedConfig(
        config=loaded.config,
        sources=loaded.sources,
        warnings=loaded.warnings,
        origins=loaded.origins,
        user_permission=loaded.user_permission,
        trust=state,
    )


def _kept(source: Source, state: TrustState) -> dict[str, Any]:
    """What one file may contribute: all of it, but a project file untrusted loses its risky keys."""
    if not source.project or state.trusted:
        return source.data
    return trust.strip(source.data, [r for r in state.risks if r.source == source.path])


def _trust_state(root: Path, cwd: Path, sources: Sequence[Source], env: Mapping[str, str]) -> TrustState:
    project = [s for s in sources if s.project]
    home = home_dir(env)
    urls = trust.url_providers([s.data for s in project])
    risks: list[trust.Risk] = []
    reads: list[tuple[Path, str]] = []
    for s in project:
        if s.agent is not None and (why := judge(s.path, root)):  # a link to ~/.aws/credentials, a .env
            risks.append(trust.Risk(s.path, ("agent", s.agent), f"agent file {SAID[why]}"))
        found = trust.scan(s.data, source=s.path, root=root, home=home, url_providers=urls)
        risks += found
        reads += trust_files.risky_reads(s.data, [r.path for r in found], source=s.path, root=root, home=home)
    commands = trust_files.command_files(root)
    skills = trust_files.skill_links(root)
    instructions = trust_files.instruction_links(root, cwd)
    risks += trust.command_risks(root, commands) + trust.skill_risks(root, skills)
    risks += trust.instruction_risks(root, instructions)
    named = [(r.source, f"{r.key}: {r.reason}") for r in risks]
    files = commands + skills + instructions + reads
    fp = trust.fingerprint([(s.path, s.text) for s in project] + files + named)
    # Asked even of a folder with nothing risky: an explicit trust lets the project's own formatter
    # programs run (``TrustState.explicit``).
    if truthy(env.get(trust.TRUST_ALL_ENV)):
        decision: bool | None = True
    else:
        decision = trust.TrustStore(trust_file(env)).decision(root, fp)
    return TrustState(root=root, fingerprint=fp, risks=tuple(risks), decision=decision)


def record_trust(state: TrustState, trusted: bool, env: Mapping[str, str] | None = None) -> None:
    """Remember the user's answer for this folder and config."""
    trust.TrustStore(trust_file(env)).record(state, trusted)
