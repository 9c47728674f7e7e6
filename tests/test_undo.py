"""/undo and /redo in-process (the end-to-end cases are in test_e2e_undo.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.session import undo
from agentcli.store.store import Store


def test_undo_and_redo_in_a_session_with_no_turn_say_there_is_nothing_to_do(tmp_path: Path) -> None:
    """Found by the history fuzz: both used to fail with a ValueError (a traceback) instead."""
    store = Store(str(tmp_path / "agentcli.db"))
    sid = store.create_session(str(tmp_path), "fake/test-model").id
    with pytest.raises(undo.UndoRefused, match="nothing to undo"):
        undo.undo(store, sid)
    with pytest.raises(undo.UndoRefused):
        undo.redo(store, sid)
    store.close()
