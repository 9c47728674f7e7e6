"""Sessions: one turn of the conversation, from the user's message to the model's last step.

``SessionLoop.prompt`` (``loop``) stores the user's message and steps until the model stops calling
tools; each step rebuilds the request from the records (``request/``), lets ``compaction/`` decide to
compact first, streams the answer (``processor``) and runs its tools (``toolrunner``: permissions,
doom loop, plugin hooks). After the turn, old tool outputs are pruned. ``agents/`` says who answers
and hands tasks to subagents; ``archive/`` moves sessions in and out as files; ``undo`` reverts a
turn's edits; ``recovery`` closes what a killed turn left open. Everything that happens is published
on the bus as ``events``, which the chat, ``run`` and the ACP server render.

Nothing in this package imports ``cli`` or ``acp``; the records it writes are ``agentcli.store``'s.
"""
