"""What the model is sent: the window, its view, the system prompt, and their size.

- ``history``: which records make up the window (since the last completed compaction); pure.
- ``view``: the window → the model's view → request messages, each sized once; the chat request and
  the summary request, with the plugins' transforms.
- ``system``: the system prompt (agent prompt, environment, instruction files), frozen per session.
- ``sizes``: prefix sums over converted messages; ``input_size``: a user message too large for any window;
  ``context_report``: ``/context``'s categories, built from the same request.
"""
