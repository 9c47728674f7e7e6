"""Commands that run other commands: what a command line runs besides the command itself.

``sudo rm …`` runs ``rm``, ``bash -o errexit -c 'rm …'`` runs the string, ``trap 'rm …' EXIT`` runs its
first argument, ``parallel 'rm {}' ::: X`` runs its command through a shell. :func:`runs` tells, for one
simple command, the inner commands (as words), the command lines to parse, and what cannot be known.
Options that take a value are skipped with it, so the value is never taken for the command.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from agentcli.tools.shell_words import Word, pipe_to

SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "tcsh", "csh", "rbash", "oksh"}
)
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SHELL_SCRIPTS = frozenset({"--command", "--init-command"})  # fish: --init-command=CMD, -C CMD
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?[smhd]?|0x[0-9a-fA-F]+)")  # a nice level, a duration, a CPU mask
_ASSIGNMENT = re.compile(r"[^=/\s-][^=/\s]*=")  # env takes any NAME=value, BASH_FUNC_f%%=… too
_PLACEHOLDER = re.compile(r"\{[0-9./#%^+-]*\}")  # parallel's {}, {.}, {/}, {#}, {1} …


@dataclass(frozen=True)
class Spec:
    """How a command-running command spells its options and finds its command."""

    values: frozenset[str] = frozenset()  # options whose value is the next word
    scripts: frozenset[str] = frozenset()  # options whose value is a shell command line (su -c)
    skip: int = 0  # operands before the command: a lock file, a CPU mask, a duration, a new root
    assigns: bool = False  # NAME=value words may come before the command (env, sudo)
    command: bool = True  # False: the operands are not a command (su's user, script's file)
    joined: bool = False  # the command's words are joined and run by a shell (watch)
    flags: frozenset[str] = frozenset()  # options without a value; any other option is unknown


def _opts(names: str) -> frozenset[str]:
    return frozenset(names.split())


def _spec(values: str = "", scripts: str = "", flags: str = "", **kw: int | bool) -> Spec:
    return Spec(_opts(values), _opts(scripts), flags=_opts(flags), **kw)  # type: ignore[arg-type]


WRAPPERS: dict[str, Spec] = {
    "sudo": _spec(
        "-u -g -C -D -h -p -r -t -T -U --user --group --chdir --host --prompt --role --type --close-from "
        "--other-user --command-timeout",
        assigns=True,
        flags=(
            "-A -b -E -H -K -k -n -P -S -V -v -B -N --askpass --background --preserve-env --set-home "
            "--remove-timestamp --reset-timestamp --non-interactive --preserve-groups --stdin --version "
            "--validate --bell --no-update"
        ),
    ),
    "doas": _spec("-u -C", flags="-n"),
    "pkexec": _spec("--user", flags="--disable-internal-agent"),
    "env": _spec(
        "-u -C -P --unset --chdir",
        "-S --split-string",
        assigns=True,
        flags="-i -0 -v --ignore-environment --null --debug",
    ),
    "nice": _spec("-n --adjustment"),
    "nohup": _spec(flags="--help --version"),
    "time": _spec("-o -f --output --format", flags="-p -v -a -q --portability --verbose --append --quiet"),
    "timeout": _spec(
        "-s -k --signal --kill-after", skip=1, flags="-v --verbose --preserve-status --foreground"
    ),
    "command": _spec(flags="-p"),
    "builtin": _spec(),
    "exec": _spec("-a", flags="-c -l"),
    "stdbuf": _spec("-i -o -e --input --output --error"),
    "ionice": _spec("-c -n -p -P -u --class --classdata --pid --pgid --uid", flags="-t --ignore"),
    "chrt": _spec(
        "-T -P -D --sched-runtime --sched-period --sched-deadline",
        skip=1,
        flags=(
            "-a -b -d -f -i -o -r -R -m -p -v --all-tasks --batch --deadline --fifo --idle --other --rr "
            "--reset-on-fork --max --pid --verbose"
        ),
    ),
    "taskset": _spec(skip=1, flags="-a -c -p --all-tasks --cpu-list --pid"),
    "setsid": _spec(flags="-c -f -w --ctty --fork --wait"),
    "flock": _spec(
        "-w -E --timeout --conflict-exit-code",
        "-c --command",
        skip=1,
        flags="-s -x -u -n -o -F --shared --exclusive --unlock --nonblock --nb --close --no-fork --verbose",
    ),
    "watch": _spec(
        "-n -q --interval --equexit --errexit",
        joined=True,
        flags=(
            "-b -c -d -e -g -t -x -p -r --beep --color --differences --errexit --chgexit --no-title "
            "--exec --precise --no-rerun"
        ),
    ),
    "unbuffer": _spec(flags="-p"),
    "chroot": _spec("--userspec --groups", skip=1, flags="--skip-chdir"),
    "busybox": _spec(),
    "su": _spec(
        "-s -g -G -w --shell --group --supp-group",
        "-c --command",
        command=False,
        flags="-l -m -p -P --login --preserve-environment --pty",
    ),
    "runuser": _spec(
        "-u -s -g -G -w --user --shell --group --supp-group",
        "-c --command",
        flags="-l -m -p --login --preserve-environment",
    ),
    "sg": _spec("", "-c"),
    "script": _spec(
        "-E -I -O -T -B --echo --log-in --log-out --log-timing",
        "-c --command",
        command=False,
        flags="-a -e -f -q --append --return --flush --quiet --force",
    ),
    "strace": _spec(
        "-o -e -p -s -u -E -a -b -O -S -X -P -I",
        flags="-f -ff -c -C -w -d -D -F -h -i -k -q -qq -r -t -tt -ttt -T -v -V -x -xx -y -yy -z -Z -n",
    ),
    "ltrace": _spec("-o -e -p -s -u -a -n -x -L -F", flags="-f -c -C -d -h -i -r -S -t -tt -ttt -T -V -w"),
    "nsenter": _spec(
        "-t -S -G --target --setuid --setgid",
        flags=(
            "-a -m -u -i -n -p -U -C -T -r -w -F --all --mount --uts --ipc --net --pid --user --cgroup "
            "--time --root --wd --no-fork --preserve-credentials"
        ),
    ),
    "unshare": _spec(
        flags=(
            "-m -u -i -n -p -U -C -T -f -r -c --mount --uts --ipc --net --pid --user --cgroup --time "
            "--fork --map-root-user --map-current-user --kill-child --mount-proc"
        )
    ),
    "setpriv": _spec(),
    "systemd-run": _spec("-p -u -E -M -H --property --unit --setenv --description --slice --uid --gid"),
    "fakeroot": _spec("-i -s --faked"),
    "firejail": _spec(),
    "proxychains": _spec("-f", flags="-q"),
    "proxychains4": _spec("-f", flags="-q"),
    "torsocks": _spec("-u -p -a -P", flags="-i -q -d --isolate --quiet"),
    "xvfb-run": _spec(
        "-n -s -e -f -p --server-num --server-args --error-file --auth-file", flags="-a --auto-servernum"
    ),
    "dbus-run-session": _spec("--config-file"),
    "catchsegv": _spec(),
    "valgrind": _spec(),
    "caffeinate": _spec("-t -w", flags="-d -i -m -s -u"),
    "numactl": _spec("-C -N -m -p -i"),
    "prlimit": _spec("-p"),
    "cgexec": _spec("-g", flags="--sticky"),
    "faketime": _spec("-f", skip=1, flags="-m"),
    "mapfile": _spec("-d -n -O -s -u -c", "-C", command=False, flags="-t"),
    "readarray": _spec("-d -n -O -s -u -c", "-C", command=False, flags="-t"),
}
_XARGS_VALUES = _opts(
    "-I -n -P -d -E -L -s -a -e --max-args --max-procs --delimiter --arg-file --max-lines --max-chars "
    "--eof --process-slot-var"
)
_PARALLEL_VALUES = _opts(
    "-j -S -a -d -I -n -N -L -E -P --jobs --sshlogin --arg-file --delimiter --colsep --max-args "
    "--timeout --joblog --results --tmpdir --halt --delay --retries"
)
_PARALLEL_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass
class Runs:
    """What one simple command runs besides itself."""

    commands: list[list[Word]] = field(default_factory=list)  # inner commands, as words
    scripts: list[Word] = field(default_factory=list)  # command lines a shell will parse
    subjects: list[str] = field(default_factory=list)  # extra rule subjects (find -delete is rm)
    unsure: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # names this command defines (alias, hash -p)
    assignments: list[Word] = field(default_factory=list)  # NAME=value given to the command (env, sudo)
    reads_stdin: bool = False  # its commands come from standard input (bash with no script)


def _quoted(words: list[Word]) -> str:
    return " ".join(w.text if w.dynamic else shlex.quote(w.text) for w in words)


def _script(words: list[Word]) -> Word:
    """Words a shell will run joined with spaces, as one command line."""
    return Word(" ".join(w.text for w in words), dynamic=any(w.dynamic for w in words))


def _option_values(names: frozenset[str], args: list[Word]) -> list[Word]:
    """The values of the options ``names`` before ``--``: ``-c CMD``, ``-cCMD``, ``-qc CMD``,
    ``--command=CMD``."""
    found = []
    for i, w in enumerate(args):
        a = w.text
        if a == "--":
            break
        name, eq, value = a.partition("=")
        if a in names:
            found += args[i + 1 : i + 2]
        elif eq and name in names:
            found.append(Word(value, dynamic=w.dynamic))
        elif a[:1] == "-" and a[1:2] != "-" and len(a) > 2:
            at = next((j for j in range(1, len(a)) if f"-{a[j]}" in names), None)
            if at is not None and at + 1 < len(a):
                found.append(Word(a[at + 1 :], dynamic=w.dynamic))  # env -S'rm -rf X', env -vS'…'
            elif at is not None:
                found += args[i + 1 : i + 2]  # script -qc CMD
    return found


def unwrap(spec: Spec, args: list[Word]) -> list[Word]:
    """The command a wrapper runs: its arguments after its own options and operands."""
    i, skip, options = 0, spec.skip, True
    while i < len(args):
        w = args[i]
        a = w.text
        if options and a == "--":
            options = False
        elif options and len(a) > 1 and a[0] == "-" and not w.dynamic:
            name, eq, _ = a.partition("=")
            takes = name in spec.values or name in spec.scripts
            i += 2 if takes and not eq else 1
            continue
        elif spec.assigns and not w.dynamic and _ASSIGNMENT.match(a):
            pass
        elif skip > 0:
            skip -= 1
        elif not w.dynamic and _NUMBER.fullmatch(a):
            pass  # a priority or duration whose option we did not know
        else:
            break
        i += 1
    return args[i:]


def _shell(name: str, args: list[Word]) -> Runs:
    """bash/sh/zsh… with any options: -c runs the first operand; otherwise a script file or stdin."""
    out = Runs()
    i, string, stdin = 0, False, False
    while i < len(args):
        w = args[i]
        a, eq, value = w.text.partition("=")
        if a == "--":
            i += 1
            break
        if a in _SHELL_VALUES:
            i += 1 if eq else 2
            continue
        if a in _SHELL_SCRIPTS or (name == "fish" and a == "-C"):
            out.scripts += [Word(value, dynamic=w.dynamic)] if eq else args[i + 1 : i + 2]
            i += 1 if eq else 2
            string = string or a == "--command"
            continue
        if w.dynamic or len(a) < 2 or a[0] not in "-+":
            break
        if a[0] == "-" and a[1] != "-":
            string = string or "c" in a
            stdin = stdin or "s" in a
        i += 1
    rest = args[i:]
    if string:
        if rest:
            out.scripts.append(rest[0])
        elif not out.scripts:
            out.unsure.append(f"{name} -c without its command line (it comes from elsewhere)")
    elif stdin or not rest or rest[0].text in STDIN_FILES:
        out.reads_stdin = True
    elif rest[0].dynamic:
        out.unsure.append(f"{name} runs a script computed at run time: {rest[0].text}")
    return out


def _source(args: list[Word]) -> Runs:
    out = Runs()
    if not args:
        return out
    if args[0].text in STDIN_FILES:
        out.reads_stdin = True
    elif args[0].dynamic:
        out.unsure.append(f"source runs a script computed at run time: {args[0].text}")
    return out


def _trap(args: list[Word]) -> Runs:
    rest = [w for w in args if w.text not in ("-p", "-l", "-P")]
    if rest and rest[0].text == "--":
        rest = rest[1:]
    return Runs(scripts=[rest[0]]) if len(rest) >= 2 and rest[0].text != "-" else Runs()


def _alias(args: list[Word]) -> Runs:
    out = Runs()
    for w in args:
        name, eq, value = w.text.partition("=")
        if eq and value:
            out.aliases[name] = value
            out.scripts.append(Word(value, dynamic=w.dynamic))  # what the alias will run
    return out


def _hash(args: list[Word]) -> Runs:
    """``hash -p /bin/rm x`` makes ``x`` run /bin/rm."""
    texts = [w.text for w in args]
    if "-p" not in texts:
        return Runs()
    at = texts.index("-p")
    if at + 1 >= len(texts):
        return Runs()
    return Runs(aliases={n: shlex.quote(texts[at + 1]) for n in texts[at + 2 :]})


def _coproc(args: list[Word]) -> Runs:
    if len(args) >= 2 and args[1].text in ("{", "("):
        args = args[2:]  # coproc NAME { …; }
    elif args and args[0].text in ("{", "("):
        args = args[1:]
    return Runs(commands=[args] if args else [])


def _with_placeholder(words: list[Word], placeholder: str) -> list[Word]:
    """Words holding xargs's or find's placeholder are only known at run time."""
    return [Word(w.text, dynamic=True) if placeholder in w.text else w for w in words]


def _xargs(args: list[Word]) -> Runs:
    replace = None
    i = 0
    while i < len(args):
        a = args[i].text
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or len(a) == 1:
            break
        if a == "-I" and i + 1 < len(args):
            replace = args[i + 1].text
        elif a.startswith("-I") and len(a) > 2:
            replace = a[2:]
        elif a in ("-i", "--replace") or a.startswith(("--replace=", "-i")):
            replace = a.split("=", 1)[1] if "=" in a else (a[2:] or "{}")
        i += 2 if a in _XARGS_VALUES else 1
    inner = args[i:]
    if replace:
        inner = _with_placeholder(inner, replace)
    return Runs(commands=[inner] if inner else [])


def _parallel(args: list[Word]) -> Runs:
    out = Runs()
    i = 0
    while i < len(args) and args[i].text.startswith("-") and args[i].text not in _PARALLEL_SEPARATORS:
        i += 2 if args[i].text in _PARALLEL_VALUES else 1
    end = next((j for j in range(i, len(args)) if args[j].text in _PARALLEL_SEPARATORS), len(args))
    command = args[i:end]
    if command:
        line = _script(command)
        out.scripts.append(Word(_PLACEHOLDER.sub('"$ARG"', line.text), dynamic=line.dynamic))
    elif end < len(args) and args[end].text == ":::":
        out.scripts += [w for w in args[end + 1 :] if w.text not in _PARALLEL_SEPARATORS]
    else:
        out.unsure.append("parallel reads the commands it runs from its input")
    return out


def _find(args: list[Word]) -> Runs:
    out = Runs()
    paths = [a.text for a in args if not a.text.startswith(("-", "(", ")", "!"))][:1] or ["."]
    i = 0
    while i < len(args):
        a = args[i].text
        if a == "-delete":
            out.subjects.append(f"rm -rf {paths[0]}")  # find's own deletion is the rm it amounts to
        elif a in _FIND_EXEC:
            end = next((j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), len(args))
            inner = _with_placeholder(args[i + 1 : end], "{}")
            if inner:
                out.commands.append(inner)
            i = end
        i += 1
    return out


def _unknown_options(name: str, spec: Spec, options: list[Word]) -> list[str]:
    """Options of a wrapper its grammar does not know: one may take a value, so where its command
    starts, and what it does, are unknown."""
    out = []
    for w in options:
        a = w.text
        if w.dynamic or len(a) < 2 or a[0] != "-" or a == "--" or _NUMBER.fullmatch(a[1:]):
            continue
        head = a.split("=", 1)[0]
        if head in spec.flags or head in spec.values or head in spec.scripts:
            continue
        if not a.startswith("--") and _cluster_known(spec, a):
            continue
        out.append(f"{name} {head} is an option the rules do not know")
    return out


def _cluster_known(spec: Spec, a: str) -> bool:
    """``-fq``: each a flag; ``-oL``, ``-n5``: a valued option with its value glued on."""
    for j in range(1, len(a)):
        opt = f"-{a[j]}"
        if opt in spec.values or opt in spec.scripts:
            return True
        if opt not in spec.flags:
            return False
    return True


def _generic(name: str, spec: Spec, args: list[Word]) -> Runs:
    rest = unwrap(spec, args)
    options = args[: len(args) - len(rest)]
    out = Runs(scripts=_option_values(spec.scripts, args) if spec.scripts else [])
    out.unsure += _unknown_options(name, spec, options)
    if spec.assigns:
        out.assignments = [w for w in options if _ASSIGNMENT.match(w.text)]
    if spec is WRAPPERS["env"] and out.scripts:
        # env -S splits its string into words that come before the remaining arguments.
        split = out.scripts.pop()
        out.scripts.append(Word(f"{split.text} {_quoted(rest)}".strip(), dynamic=split.dynamic))
    elif not spec.command or not rest or rest[0].text in spec.scripts:
        pass  # no command, or only the shell command line found above (flock FILE -c CMD)
    elif spec.joined:
        out.scripts.append(_script(rest))
    else:
        out.commands.append(rest)
    out.scripts += [p for v in _option_values(spec.values, options) if (p := pipe_to(v)) is not None]
    return out


_SPECIAL = {
    "source": _source,
    ".": _source,
    "trap": _trap,
    "alias": _alias,
    "hash": _hash,
    "coproc": _coproc,
    "xargs": _xargs,
    "parallel": _parallel,
    "find": _find,
}


def runs(name: str, args: list[Word]) -> Runs | None:
    """What the command ``name`` (a basename) runs given its arguments; None if nothing else."""
    if name == "command" and args and args[0].text in ("-v", "-V"):
        return None  # `command -v rm` only says where rm is
    if name in SHELLS:
        return _shell(name, args)
    if name == "eval":
        args = args[1:] if args and args[0].text == "--" else args
        return Runs(scripts=[_script(args)]) if args else None
    special = _SPECIAL.get(name)
    if special is not None:
        return special(args)
    spec = WRAPPERS.get(name)
    return _generic(name, spec, args) if spec is not None else None


# Commands read here (what they run is found by :func:`runs`), not judged as programs of their own.
RUNNERS = SHELLS | frozenset(WRAPPERS) | frozenset(_SPECIAL) | {"eval"}
