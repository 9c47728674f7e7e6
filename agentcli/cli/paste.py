"""Large pastes in the chat's input: the prompt shows one line, "[pasted N lines]", instead of
echoing every line (a 5 MB log is 65k lines of terminal), and the message is sent whole."""

from __future__ import annotations

from dataclasses import dataclass, field

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

MAX_SHOWN_LINES = 10  # a paste with more lines than this collapses
MAX_SHOWN_CHARS = 2000  # ... or with more characters (one long minified line)


@dataclass
class Pastes:
    """The chat's collapsed pastes: the line shown in the prompt → the text it stands for."""

    texts: dict[str, str] = field(default_factory=dict)

    def label(self, text: str) -> str:
        lines = text.count("\n") + 1
        label = f"[pasted {lines:,} line{'s' if lines != 1 else ''}]"
        n = 1
        while label in self.texts and self.texts[label] != text:
            n += 1
            label = f"[pasted {lines:,} lines #{n}]"
        self.texts[label] = text
        return label

    def expand(self, line: str) -> str:
        """The message as typed, each paste's label back to its text."""
        for label, text in self.texts.items():
            if label in line:
                line = line.replace(label, text)
        return line

    def bind(self, kb: KeyBindings) -> None:
        @kb.add(Keys.BracketedPaste)
        def _paste(event: KeyPressEvent) -> None:
            text = event.data.replace("\r\n", "\n").replace("\r", "\n")
            large = text.count("\n") >= MAX_SHOWN_LINES or len(text) > MAX_SHOWN_CHARS
            event.current_buffer.insert_text(self.label(text) if large else text)
