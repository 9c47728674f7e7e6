"""What the two front ends share — the CLI (``cli/``: commands and the chat) and the ACP server
(``acp/``: an editor drives the session) — below both, so neither imports the other: building a
session from the config and the user's choices (``setup``), the actions a command and its chat or
editor twin share (``actions``: undo, undo a compaction, the context view), custom commands, the
files a message attaches (``attach``), and the one-line error a user can act on (``errors``)."""
