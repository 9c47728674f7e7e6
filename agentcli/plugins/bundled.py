"""The plugins shipped with agentcli, by the name a config lists them under. Their code is ours, so
naming one in a project config needs no workspace trust (``agentcli.trust``)."""

BUNDLED: dict[str, str] = {"memory": "agentcli.plugins.memory"}
