"""The scripted OpenAI-compatible server the tests talk to. It lives in the package
(``agentcli.demo.scripted_server``, also the model of ``agentcli demo``); this module keeps the
``tests.fakellm`` name working, including ``python -m tests.fakellm``."""

from __future__ import annotations

import sys

from agentcli.demo.scripted_server import (  # noqa: F401  (re-exported)
    FAST_BATCH,
    FAST_CACHE_MIN,
    NO_SCRIPT_MESSAGE,
    ErrorResponse,
    FakeLLM,
    Hang,
    Recorded,
    Reply,
    Response,
    Rule,
    ToolCall,
    Usage,
    completion_object,
    is_summary_request,
    is_title_request,
    load_script,
    main,
    response_from_json,
    stream_chunks,
    unused_port,
)

if __name__ == "__main__":
    sys.exit(main())
