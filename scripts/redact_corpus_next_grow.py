"""Grow the held-out part ``holdout-next`` of the public redaction corpus with 2ms's and checkov's own
tests.

Usage: python scripts/redact_corpus_next_grow.py TWOMS_GIT_DIR CHECKOV_GIT_DIR

Run after scripts/redact_corpus_next.py: it keeps that script's samples (trivy, IBM detect-secrets,
ggshield) in tests/fixtures/redact/holdout_next.json and replaces its own (``source`` ``2ms`` or
``checkov``). Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``).
The labelling rule is in tests/fixtures/redact/README.md, written and committed before this script
first ran; it uses only the two projects' own data:

- 2ms (Checkmarx, Apache-2.0): the ``truePositives`` and ``falsePositives`` string literals of each rule
  test in ``engine/rules/ruledefine``. A true positive is a secret whose span is what the rule's own
  pattern (built as 2ms builds it, compiled as a Python regex) matches, its secret group or first group;
  unclear when the pattern cannot be built or does not match, or the rule names an id. A false positive
  is a look-alike.
- checkov (Bridgecrew, Apache-2.0): the ``analyze_line`` cases of ``tests/secrets/test_plugin.py`` (a
  finding expected: secret, its asserted ``secret_value`` or longest token run; none: look-alike), the
  files it reads expecting no finding, and the sanity folders of ``test_runner.py`` (six findings in six
  value lines: secrets; no finding: look-alikes).

Common (as for the part's first three sources): a placeholder, reference or placeholder password is no
secret; a look-alike with a random-looking run or a secret of the part is unclear; a secret found
anywhere in the existing fixtures (or the part's earlier samples), or a text already there, is left out.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""
