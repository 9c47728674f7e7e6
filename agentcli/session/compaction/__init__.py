"""Compaction: when the window no longer fits, the conversation so far becomes a summary.

The contract (OpenCode's compaction.ts: isOverflow / prune / process / create):

- ``overflow.is_overflow``: did a finished step reach the usable budget? (``overflow.preflight``:
  is the next request certain to be rejected as too long?)
- ``prune.prune``: after a turn, old tool outputs hidden from the model; no LLM.
- ``Compactor.create``: queue a compaction, a marker (a user message with a compaction part); one
  already queued is joined.
- ``Compactor.process``: the summary turn. The head is summarised, recent turns kept verbatim; a
  request too long is retried smaller, then replaced by a compaction made without a model; an
  automatic one (or one a plugin asked for mid-turn) is followed by "continue" (or the question
  replayed after a provider overflow). ``session_compacting`` may write the summary, or decline or
  delay an automatic compaction short of a hard overflow (``hooks``). The summary message
  carries the ledger and the user's own words from the records (``after``, ``carryover``).
- ``CompactionStep.step`` (``step``): the loop's one call per iteration, before the
  request. It runs what plugins queued, compacts after a step that overflowed, processes a queued
  marker, and compacts when the newest step or the next request is over the budget; it answers
  "continue", "stop" or "proceed". Automatic compactions are rationed per turn (``CompactionGuard``).
- ``Background`` (``background``, its pace in ``pace``, the swap in ``swap``): the summary written
  ahead of time, on a thread, while the turn goes on (``compaction.background``). Asked for once the
  window is close enough to the budget for it to be ready in time (up to three in flight for a slow
  summarizer); swapped in when compaction is due, what follows its cut kept verbatim; discarded if
  the history it summarises changed. It never writes the session's store itself.

Decisions (tail, serialisation, prompt, fallback) live in ``plan`` (pure), what the model
sees and its size in ``agentcli.session.request.view``; ``compactor`` does the I/O.

The modules: ``overflow`` (the budget), ``prune``, ``compactor`` (create, process; its records in
``prepared``), ``step`` (the loop's call), ``plan`` (pure decisions), ``cached`` (the summary request
that rides the prompt cache), ``send`` (one summary request and its answer), ``summary_text``,
``background``, ``pace`` and ``swap`` (above), ``after`` (what the summary message carries), ``ledger``,
``carryover`` and ``kept_words`` (files, commands and the user's words that survive any summary),
``hooks`` (``session_compacting``), ``uncompact`` (``/compact undo``). Nothing here imports the loop.
"""
