"""Build a fresh held-out part of the public redaction corpus from kics' Passwords And Secrets query tests.

Usage: python scripts/redact_corpus_kics.py KICS_RAW_DIR

kics (Checkmarx, Apache-2.0) is too big to clone here; its files were read one by one from a stored index
and saved as ``KICS_RAW_DIR/<commit>/<path>`` (the commit of the version read). The script reads only
those files, offline, and writes tests/fixtures/redact/holdout_kics.json (split ``holdout-kics``, source
``kics``). The labelling rule is in tests/fixtures/redact/README.md ("kics"), written and committed
before this script first ran:

- The findings are the lines ``test/positive_expected_result.json`` names (primary version at
  dd952baf…, the other at 085e1271…). A positive file is used only when consistent with a version (every
  expected line exists and holds a value, or a private key's ``BEGIN`` line), labelled by the primary
  version first; else left out whole. Negative files (no finding at any version) give look-alikes.
- A finding's span: a PEM body; PuTTY's private lines; a URL's password; a webhook's path after its first
  segment; else the value assigned on the line (quotes, trailing ``,``/``;`` removed; a flow tuple's last
  element; a JSON string's password field; a command's longest token run). ``AWS Certificate`` and a line
  with no span, or one kics' own regex (``regex_rules.json``) matches neither in line nor span, are
  unclear. A placeholder, reference or placeholder password is no secret (the common rule).
- Look-alikes: the value lines of negative files and of consistent positive files but their findings;
  in a positive file a line whose key names a credential is unclear; a look-alike with a random-looking
  run or a secret of the part is unclear.
- Dedupe against public_corpus.json, holdout_new.json and holdout_next.json.

Nothing of agentcli is imported or run here: the samples are written before agentcli's redactor runs on
them.
"""
