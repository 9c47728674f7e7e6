"""Build a fresh held-out part of the public redaction corpus from trivy's, IBM detect-secrets' and
ggshield's own tests.

Usage: python scripts/redact_corpus_next.py TRIVY_GIT_DIR IBM_DETECT_SECRETS_GIT_DIR GGSHIELD_GIT_DIR

Each argument is a checkout or a bare git directory (read with ``git show HEAD:<path>``). The samples go
to their own fixture, tests/fixtures/redact/holdout_next.json (split ``holdout-next``, ``source``
``trivy``, ``ibm-detect-secrets`` or ``ggshield``), beside public_corpus.json and holdout_new.json, whose
samples this part must not repeat. The labelling rule is in tests/fixtures/redact/README.md, written and
committed before this script first ran; it uses only the three projects' own data:

- trivy (Aqua Security, Apache-2.0): the findings ``pkg/fanal/secret/scanner_test.go`` expects, each a
  line (or window) of a test input with the secret masked by ``*``; a finding of a built-in rule is a
  secret (the characters under the mask), one of a rule a test's config defines is unclear. The other
  lines of those inputs holding a value are the look-alikes (trivy expects no finding there).
- IBM detect-secrets (Apache-2.0), only the plugins Yelp's detect-secrets lacks (Box, DB2, GitHub
  Enterprise): the ``(payload, should_flag)`` cases of their ``test_analyze_line*`` tests; the span is
  the expected token (DB2) or the payload's longest token run.
- ggshield (GitGuardian, MIT): the recorded API calls in ``tests/unit/cassettes``: a scanned document
  and the credential matches GitGuardian's detector reported in it; a document with none is a
  look-alike.

Common: a placeholder, reference or placeholder password is no secret; a look-alike with a
random-looking run or a secret of the part is unclear; a secret found anywhere in the existing fixtures,
or a text already there, is left out.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""
