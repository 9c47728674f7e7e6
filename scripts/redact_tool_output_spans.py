"""Precision on real tool output: the redacted spans in what third-party commands print, by half.

A coding session's transcript is mostly tool outputs: command output, listings, package metadata, diffs.
Such output of software nobody on the project wrote, run on this machine, holds (almost) no secrets, so
every span the redactor takes there is a candidate false positive — and one that costs the agent an id,
a hash or a version it needs after a compaction.

The body, by command kind (the rule, written before any output was measured; each command runs with a
minimal environment — PATH, HOME, LANG, proxy settings — in a scratch directory, stdin closed, a
timeout, its stdout and stderr kept up to 200 KB; nothing that prints the environment, a shell's
history or a private key is run):

- ``pip-list``: ``pip list -v`` of the project's venv and of the scratch body venv
  (``/tmp/redact-body/venv``, see ``scripts/redact_package_spans.py``);
- ``pip-show``: ``pip show -f PKG`` for every package of both venvs;
- ``pip-report``: ``pip install --dry-run --ignore-installed --quiet --report - PKG`` (the resolver's
  JSON: URLs, sha256 hashes, metadata) for the first 20 packages of the body's PyPI list;
- ``npm-ls``: ``npm ls --all --json`` and ``npm ls --all --long`` in ``/tmp/redact-body/npm``;
- ``npm-view``: ``npm view PKG`` and ``npm view PKG dist --json`` for the body's npm packages and
  every top-level package under its ``node_modules`` (at most 60, sorted);
- ``dpkg``: ``dpkg -L PKG`` and ``apt-cache show PKG`` for every installed Debian package;
- ``listing``: ``ls -la`` of every directory directly under ``/usr/lib``, ``/etc`` and ``/usr/share``,
  and ``find /usr/lib/python3 /usr/share/doc -maxdepth 2``;
- ``system``: ``ps aux``, ``df -h``, ``ip addr``, ``ip route``, ``uname -a``, ``mount``, ``free -h``,
  ``lscpu``, ``ls -la /tmp``;
- ``git``: six small pure-Python packages (below), each a scratch repository holding its previous
  and its latest sdist as two commits (fixed author and dates), then ``git log --stat -n 50``,
  ``git log --format=fuller``, ``git show HEAD``, ``git diff HEAD~1 --stat``, ``git ls-files -s``,
  ``git cat-file -p HEAD^{tree}``, ``git show-ref``, ``git reflog``;
- ``openssl``: ``openssl x509 -noout -text -fingerprint -sha256`` of every ``/etc/ssl/certs/*.pem``;
- ``ssh``: three keys generated into a scratch dir (ed25519, rsa, ecdsa; no passphrase), the output of
  ``ssh-keygen`` making each, ``ssh-keygen -lf``, ``-lvf`` and ``-E md5 -lf`` of each public key and the
  public key file itself (``cat k.pub``); the private key is never printed;
- ``pydoc``: ``python -m pydoc MOD`` of every 4th name of ``sys.stdlib_module_names`` (sorted, no
  leading underscore) and of every top-level module of the project's venv;
- ``help``: ``curl --help all`` and ``NAME --help`` for every entry of ``/usr/bin`` but a deny list
  (programs that act rather than print, or print the environment).

The split rule, fixed before any span was read: the sha256 of the command line as recorded; an even
first byte puts it in the tuning half, odd in the held-out half. Only the tuning half's spans may be
printed (``--show``); the held-out half is read by totals (per kind at most).

    python scripts/redact_tool_output_spans.py --generate   # (re)run the commands into --out
    python scripts/redact_tool_output_spans.py              # totals per half and per kind
    python scripts/redact_tool_output_spans.py --show       # the tuning half's spans, one a line
    python scripts/redact_tool_output_spans.py --tuning-only

Imports agentcli only to run the redactor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# the split rule is the file body's, applied to the command line: sha256's first byte even is tuning
from redact_package_spans import HELD_OUT, NPM, PYPI, count_spans, half  # noqa: E402

CAP = 200_000
GIT_PACKAGES = ["rsa", "cachetools", "tabulate", "sqlparse", "isodate", "decorator"]
DENY = {
    "env", "printenv", "reboot", "shutdown", "halt", "poweroff", "init", "telinit", "kill", "killall",
    "pkill", "skill", "snice", "rm", "rmdir", "unlink", "shred", "dd", "yes", "login", "su", "sudo",
    "passwd", "chsh", "chfn", "newgrp", "sg", "wall", "write", "mesg", "systemctl", "script", "top",
    "watch", "less", "more", "vi", "vim", "nano", "ed", "sh", "bash", "dash", "rbash", "python3",
    "python", "perl", "node", "npm", "npx", "history", "xargs", "timeout", "nohup", "setsid", "chroot",
    "unshare", "nsenter", "flock", "tee", "truncate", "mkfifo", "install", "ssh-agent", "gpg-agent",
}  # fmt: skip


def _env(home: Path) -> dict[str, str]:
    keep = {"PATH", "LANG", "LC_ALL"} | {k for k in os.environ if k.lower().endswith("_proxy")}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(os.environ.get("HOME", home)), LANG="C.UTF-8", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(GIT_AUTHOR_NAME="Body Maker", GIT_AUTHOR_EMAIL="body@example.invalid")
    env.update(GIT_COMMITTER_NAME="Body Maker", GIT_COMMITTER_EMAIL="body@example.invalid")
    return env


def _run(cmd: str, cwd: Path, env: dict[str, str], timeout: float = 60) -> str:
    try:
        done = subprocess.run(
            cmd, shell=True, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        done_out = (e.stdout or b"") + (e.stderr or b"")
        return done_out[:CAP].decode("utf-8", "replace")
    return (done.stdout + done.stderr)[:CAP].decode("utf-8", "replace")


def _lines(cmd: str, cwd: Path, env: dict[str, str]) -> list[str]:
    return [line for line in _run(cmd, cwd, env).splitlines() if line.strip()]


def commands(scratch: Path, body: Path, env: dict[str, str]) -> Iterator[tuple[str, str, Path, float]]:
    """(kind, command line, cwd, timeout) of every command of the body, in a stable order."""
    pips = [f"{sys.prefix}/bin/pip", f"{body}/venv/bin/pip"]
    pips = [p for p in pips if Path(p).exists()]
    for pip in pips:
        yield "pip-list", f"{pip} list -v", scratch, 60
        for line in _lines(f"{pip} list --format=freeze", scratch, env):
            yield "pip-show", f"{pip} show -f {line.split('==')[0]}", scratch, 60
    for pkg in PYPI[:20]:
        yield (
            "pip-report",
            f"{pips[0]} install --dry-run --ignore-installed --quiet --report - {pkg}",
            scratch,
            120,
        )
    npm_dir = body / "npm"
    if (npm_dir / "node_modules").is_dir():
        yield "npm-ls", "npm ls --all --json", npm_dir, 120
        yield "npm-ls", "npm ls --all --long", npm_dir, 120
        names = sorted({*NPM, *(p.name for p in (npm_dir / "node_modules").iterdir() if p.is_dir())})
        for pkg in [n for n in names if not n.startswith(".")][:60]:
            yield "npm-view", f"npm view {pkg}", scratch, 60
            yield "npm-view", f"npm view {pkg} dist --json", scratch, 60
    for pkg in _lines("dpkg-query -W -f='${Package}\\n'", scratch, env):
        yield "dpkg", f"dpkg -L {pkg}", scratch, 30
        yield "dpkg", f"apt-cache show {pkg}", scratch, 30
    for top in ("/usr/lib", "/etc", "/usr/share"):
        for d in sorted(Path(top).iterdir()):
            if d.is_dir() and not d.is_symlink():
                yield "listing", f"ls -la {d}", scratch, 30
    yield "listing", "find /usr/lib/python3 /usr/share/doc -maxdepth 2", scratch, 60
    for cmd in (
        "ps aux",
        "df -h",
        "ip addr",
        "ip route",
        "uname -a",
        "mount",
        "free -h",
        "lscpu",
        "ls -la /tmp",
    ):
        yield "system", cmd, scratch, 30
    yield from _git_commands(scratch, pips[0], env)
    for pem in sorted(Path("/etc/ssl/certs").glob("*.pem")):
        yield "openssl", f"openssl x509 -noout -text -fingerprint -sha256 -in {pem}", scratch, 30
    mods = sorted(m for m in sys.stdlib_module_names if not m.startswith("_"))[::4]
    site = (
        Path(sys.prefix)
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
    )
    mods += sorted(
        p.name
        for p in site.iterdir()
        if p.is_dir() and p.name.isidentifier() and (p / "__init__.py").exists()
    )
    for mod in mods:
        yield "pydoc", f"{sys.executable} -m pydoc {mod}", scratch, 60
    yield "help", "curl --help all", scratch, 30
    for exe in sorted(Path("/usr/bin").iterdir()):
        if exe.name not in DENY and os.access(exe, os.X_OK) and exe.is_file():
            yield "help", f"{exe} --help", scratch, 5


def _git_commands(scratch: Path, pip: str, env: dict[str, str]) -> Iterator[tuple[str, str, Path, float]]:
    for pkg in GIT_PACKAGES:
        repo = scratch / "git" / pkg
        if not (repo / ".git").is_dir():
            out = _run(f"{pip} index versions {pkg}", scratch, env)
            versions = [v.strip() for v in out.split("Available versions:")[-1].splitlines()[0].split(",")]
            if len(versions) < 2:
                continue
            repo.mkdir(parents=True, exist_ok=True)
            _run("git init -q -b main .", repo, env)
            for n, version in enumerate(reversed(versions[:2])):
                dl = scratch / "dl" / f"{pkg}-{version}"
                _run(f"{pip} download -q --no-deps --no-binary :all: -d {dl} {pkg}=={version}", scratch, env)
                for item in repo.iterdir():
                    if item.name != ".git":
                        shutil.rmtree(item) if item.is_dir() else item.unlink()
                for archive in dl.glob("*.tar.gz"):
                    _run(f"tar xzf {archive} --strip-components=1 -C {repo}", scratch, env)
                date = f"2024-0{n + 1}-01T12:00:00+00:00"
                stamp = {**env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
                _run(f"git add -A && git commit -q -m 'Import {pkg} {version}'", repo, stamp)
        for cmd in (
            "git log --stat -n 50",
            "git log --format=fuller",
            "git show HEAD",
            "git diff HEAD~1 --stat",
            "git ls-files -s",
            "git cat-file -p HEAD^{tree}",
            "git show-ref",
            "git reflog",
        ):
            yield "git", f"git -C {pkg} {cmd.removeprefix('git ')}", scratch / "git", 60


def _ssh_commands(scratch: Path) -> Iterator[tuple[str, str, Path, float]]:
    keys = scratch / "ssh"
    for kind in ("ed25519", "rsa", "ecdsa"):
        key = keys / f"id_{kind}"
        keys.mkdir(parents=True, exist_ok=True)  # a saved output is not rerun (generate), nor its key made
        make = f"ssh-keygen -q -t {kind} -N '' -C body@example.invalid -f {key} && ssh-keygen -lvf {key}.pub"
        yield "ssh", make, keys, 30
        yield "ssh", f"ssh-keygen -lf {key}.pub", keys, 30
        yield "ssh", f"ssh-keygen -lvf {key}.pub", keys, 30
        yield "ssh", f"ssh-keygen -E md5 -lf {key}.pub", keys, 30
        yield "ssh", f"cat {key}.pub", keys, 30


def generate(out: Path, body: Path) -> None:
    """Run every command whose output is not saved yet (a rerun finishes an interrupted one), four at a
    time (most wait on a registry or a timeout); the ssh kind in order, each key made before it is read."""
    scratch = out / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    env = _env(scratch)
    todo = [
        (kind, cmd, cwd, timeout) for kind, cmd, cwd, timeout in commands(scratch, body, env) if kind != "ssh"
    ]
    todo += list(_ssh_commands(scratch))

    def save(item: tuple[str, str, Path, float]) -> dict[str, str]:
        kind, cmd, cwd, timeout = item
        name = f"{kind}/{hashlib.sha256(cmd.encode()).hexdigest()[:20]}.txt"
        if not (out / name).exists():
            (out / kind).mkdir(exist_ok=True)
            (out / name).write_text(_run(cmd, cwd, env, timeout))
        return {"kind": kind, "command": cmd, "file": name}

    with ThreadPoolExecutor(4) as pool:
        index = list(pool.map(save, [t for t in todo if t[0] != "ssh"]))
    index += [save(t) for t in todo if t[0] == "ssh"]
    (out / "index.json").write_text(json.dumps(index, indent=1))
    print(f"{len(index)} commands run into {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generate", action="store_true", help="run the commands into --out")
    parser.add_argument("--show", action="store_true", help="print the tuning half's spans")
    parser.add_argument("--tuning-only", action="store_true", help="measure the tuning half alone")
    parser.add_argument("--out", type=Path, default=Path("/tmp/redact-tool-output"), help="the outputs' dir")
    parser.add_argument("--body", type=Path, default=Path("/tmp/redact-body"), help="the scratch body's dir")
    args = parser.parse_args()
    if args.generate:
        generate(args.out, args.body)
        return 0
    from agentcli.redact import find

    index = json.loads((args.out / "index.json").read_text())

    def texts() -> Iterator[tuple[str, str, str, str]]:
        for entry in index:
            which = half(entry["command"])
            if args.tuning_only and which == HELD_OUT:
                continue  # while tuning, the held-out half is not even read
            yield entry["kind"], which, entry["command"][:60], (args.out / entry["file"]).read_text()

    kinds = list(dict.fromkeys(e["kind"] for e in index))
    count_spans(find, texts(), kinds, "outputs", "command kind", show=args.show, tuning_only=args.tuning_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
