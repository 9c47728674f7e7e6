"""Files agentcli keeps for its user (config TOML, trust decisions, chat history) are private:
0600 files in 0700 directories, whatever the umask. Stdlib only: config and startup import it.

(store/ and tools/ may not import agentcli modules; they set the same modes themselves.)
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) and make ``path`` itself 0700."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def touch_private(path: Path) -> Path:
    """Create ``path`` empty if missing (never truncating it) and make it 0600, its folder 0700."""
    private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)
    os.chmod(path, FILE_MODE)
    return path


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``; the file is 0600 from its first byte."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)  # a failed write never leaves a half-written file behind
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
