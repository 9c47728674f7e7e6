"""Every colour and glyph the terminal UI uses, in one place so the look stays consistent."""

from __future__ import annotations

# Context gauge levels, by percent of the model's whole context window.
GAUGE_OK = "green"
GAUGE_WARN = "yellow"  # 70 % and above
GAUGE_HIGH = "red"  # 85 % and above
GAUGE_CRITICAL = "bold red"  # above 92 %
GAUGE_EMPTY = "bright_black"
GAUGE_MARK = "bold magenta"  # where automatic compaction fires
GAUGE_NOTE = "cyan"

# Tool call lines.
TOOL_OK = "green"
TOOL_ERROR = "red"
TOOL_ACTIVE = "yellow"
TOOL_NAME = "bold"
TOOL_SUBJECT = ""
TOOL_OUTCOME = "dim"
TOOL_FAILED_OUTCOME = "red"
PRUNED = "dim italic"

GLYPH_OK = "●"
GLYPH_ERROR = "✗"
GLYPH_ACTIVE = "◌"

# Messages.
USER = "bold cyan"
ASSISTANT = "bold green"
REASONING = "dim italic"
ERROR = "bold red"
META = "dim"
DIVIDER = "magenta"
SUMMARY_BORDER = "magenta"
TOOL_OUTPUT_BORDER = "bright_black"
REDACTED = "yellow"  # the note under a summary whose secrets were redacted
GLYPH_REDACTED = "⚿"
