"""Large pastes in the chat's input: the prompt shows one line, "[pasted N lines]", instead of
echoing every line (a 5 MB log is 65k lines of terminal), and the message is sent whole. The chat's
history keeps what was sent, so Up in a later chat recalls the paste itself, collapsed again, never
the bare words "[pasted N lines]"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

MAX_SHOWN_LINES = 10  # a paste with more lines than this collapses
MAX_SHOWN_CHARS = 2000  # ... or with more characters (one long minified line)
MAX_KEPT_CHARS = 1_000_000  # a larger message is not kept in the history file (it is in the session)


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

    def collapse(self, text: str) -> str:
        """``text`` as the prompt shows it: one label when it is too large to show."""
        return self.label(text) if _large(text) else text

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
            event.current_buffer.insert_text(self.collapse(text))


def _large(text: str) -> bool:
    return text.count("\n") >= MAX_SHOWN_LINES or len(text) > MAX_SHOWN_CHARS


class PasteHistory(History):
    """The chat's history seen through its pastes: an entry is stored as it was sent (labels
    expanded) and comes back collapsed, with its label known to this chat's ``Pastes``."""

    def __init__(self, inner: History, pastes: Pastes) -> None:
        super().__init__()
        self.inner = inner
        self.pastes = pastes

    def load_history_strings(self) -> Iterable[str]:
        for entry in self.inner.load_history_strings():
            yield self.pastes.collapse(entry)

    def store_string(self, string: str) -> None:
        sent = self.pastes.expand(string)
        if len(sent) <= MAX_KEPT_CHARS:
            self.inner.store_string(sent)
