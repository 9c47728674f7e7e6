"""The chat's permission question: what the tool wants (its diff, why it is asked), then one key
answers it — o once, a always, d deny (Enter: once); another key gets a line naming these. Ctrl-C,
Esc or Ctrl-D does not just deny the tool: it cancels the whole turn (KeyboardInterrupt, for the
turn's worker to stop it)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from agentcli.tools.base import PermissionAnswer, PermissionRequest

ANSWERS: dict[str, PermissionAnswer | None] = {
    **dict.fromkeys(("o", "y", "\n"), "once"),
    "a": "always",
    **dict.fromkeys(("d", "n"), "deny"),
    "\x1b": None,  # Esc: cancel the turn, as Ctrl-C
}
PROMPT = "allow? [o]nce / [a]lways / [d]eny (Esc cancels the turn) › "
HINT = "press o to allow once (or Enter), a always, d to deny; Esc, Ctrl-C or Ctrl-D cancels the turn"


def ask_permission(
    console: Console, request: PermissionRequest, *, typed_ahead: bool = False
) -> tuple[PermissionAnswer, str]:
    """Show the request and take one key. Returns the answer and the keys typed before the question
    was on screen (they must not answer it: they become the start of the next message;
    ``typed_ahead``: some were already kept). Raises KeyboardInterrupt on Ctrl-C, Esc or Ctrl-D."""
    from agentcli.cli.typeahead import KEPT, ask_key

    told = typed_ahead
    if told:
        console.print(f"[dim]{KEPT.format('next')}[/]")

    def tell(line: str) -> None:
        if not told:
            console.print(f"[dim]{line}[/]")

    console.print(
        f"[bold yellow]permission[/] [bold]{request.tool}[/]: {escape(request.title)}", highlight=False
    )
    for reason in request.unsure:
        console.print(f"[dim]  asked because {escape(reason)}[/]", highlight=False)
    diff = request.metadata.get("diff") if request.metadata else None
    if isinstance(diff, str) and diff.strip():
        from rich.syntax import Syntax

        console.print(Syntax(diff[:4000], "diff", theme="ansi_dark"))
    answer, early = ask_key(PROMPT, ANSWERS, tell=tell, kept_for="next", cancel="\x1b", hint=HINT)
    return answer or "deny", early
