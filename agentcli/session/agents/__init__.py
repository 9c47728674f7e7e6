"""Agents and subagents: who answers in a session, and the task tool that hands work to another agent.

- ``registry``: the agents (built in, the config's, agent files), their rules, prompt and model; the
  primary ones a session can switch to, the subagents a task can name.
- ``subagent``: the task tool and ``@agent`` delegation — a child session running its own loop, whose
  final answer (and ledger of what it touched) comes back to the parent.
"""
