"""Sessions in and out of the database as files.

- ``model``: the archive's shape (agentcli's own JSON export) and the totals an import recomputes.
- ``native``: export and import of agentcli's format (re-importing an export gives the same session).
- ``opencode_import``: OpenCode's ``opencode export`` converted to agentcli's records.
"""
