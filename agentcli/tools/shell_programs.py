"""What a program may run through its arguments, judged by its argument grammar, for the permission rules.

An allow rule may allow a program's words as data only when the program's argument grammar is known to
run nothing given in them. Every program falls in one of three classes:

- ``DATA``: programs no option of which runs anything (``ls``, ``cat``, ``grep``, ``echo`` …): every
  word is data.
- ``GRAMMARS``: programs some of whose options or operands run code, with their option grammar: the
  known inert options, the options whose value is a command line or a program (``tar --to-command``,
  ``rsync -e``, ``ssh host CMD``: judged as the commands they are), or code in another language
  (``python -c``: unknown). An option the grammar does not know is unknown: asked.
- every other program (an interpreter we have no grammar for, ``make``, ``docker``, a script, a name
  nobody listed): it may run its arguments. A word with code in it (quotes, parentheses, ``;``, ``|``,
  ``$``, ``!`` …) is unknown; a plain word, and the plain words after it, may be a command it runs
  (``mywrap rm -rf X``), so a rule naming that command is concerned (``maybe``); a value known only at
  run time (``"$x"``, ``<(…)``) or its standard input from a pipe may be anything.

Command-running commands (``sudo``, ``env``, shells, ``xargs``, ``find``) are read by
tools/shell_wrappers.py, git by tools/shell_git.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from agentcli.tools.shell_grammars import GRAMMARS, Verdict, read_options
from agentcli.tools.shell_words import Word

# Characters that make a word code rather than data for a program that may run it.
_CODE = re.compile(r"[;|&$`()'\"!\\\n\r{}]")
_SPACE = re.compile(r"\s")
MAX_SUFFIXES = 16  # argument positions a program of unknown grammar may start a command at

DATA = frozenset(
    """ls dir vdir cat head tail wc echo printf pwd cd mkdir rmdir touch cp mv rm ln chmod chown chgrp
    basename dirname realpath readlink stat file du df date cut tr uniq paste join comm nl fold fmt
    expand unexpand rev tac od xxd hexdump base64 base32 md5sum sha1sum sha224sum sha256sum
    sha384sum sha512sum b2sum cksum sum seq yes true false test [ tee column tree whoami id uname
    hostname which type jq grep egrep fgrep diff cmp sleep mktemp truncate dd gzip gunzip zcat bzip2
    bunzip2 xz unxz zstd unzstd unzip ps free uptime nproc printenv : exit return break continue
    shift umask ulimit dirs pushd popd shopt read wait getopts kill jobs tput clear locale groups
    numfmt shuf strings iconv curl set unset declare typeset local export readonly""".split()  # noqa: SIM905
)  # fmt: skip


_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
_PYTHON_FLAGS = frozenset("bBdEhIOPqsSuvVxR")
_PERL_FLAGS = frozenset("acnpsStTuUvVwWXh")
_PERL_VALUED = frozenset("MmIi0lCFdDx")  # the rest of the word is the value
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_RUNS = re.compile(r"system\s*\(|\|\s*(getline|&)?|\bgetline\b|print[^;}]*>|@load|@include")


def is_code(text: str) -> bool:
    return _CODE.search(text) is not None


Known = Callable[[], Mapping[str, list[str]]]  # the line's variables whose values are all written in it
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def _nothing() -> Mapping[str, list[str]]:
    return {}


def judge(name: str, args: list[Word], piped: bool, stdin: list[str], known: Known = _nothing) -> Verdict:
    """What ``name args`` may run through its words (``piped``: its standard input comes from a pipe;
    ``stdin``: the text a heredoc or here-string gives it)."""
    if name in DATA:
        return Verdict()
    grammar = GRAMMARS.get(name)
    if grammar is not None:
        return read_options(name, grammar, args)
    if _PYTHON.fullmatch(name):
        return _python(name, args, piped, stdin, known)
    if name in ("perl", "perl5"):
        return _perl(name, args, piped, stdin, known)
    if name in _AWK:
        return _awk(name, args)
    return unknown(name, args, piped, stdin, known)


def unknown(
    name: str, args: list[Word], piped: bool = False, stdin: list[str] | None = None, known: Known = _nothing
) -> Verdict:
    """A program whose grammar is not known: any argument may be a command it runs, any code in them or
    in its input is unknown."""
    out = Verdict()
    if piped:
        out.maybe.append("")  # its input may be the program it runs
    for text in stdin or []:
        _may_run(name, text, out, "its input")
    for i, w in enumerate(args):
        a = w.text
        if w.dynamic:
            var = _VARIABLE.fullmatch(a)
            values = known().get(var.group(1) or var.group(2)) if var else None
            if values is None:
                out.maybe.append("")  # known only when it runs: it may be any command
            for value in values or []:
                _may_run(name, value, out)
            continue
        if a.startswith("--") and "=" in a:
            _may_run(name, a.split("=", 1)[1], out)
        elif a.startswith("-") and len(a) > 2 and not a.startswith("--"):
            for j in range(2, len(a)):
                _may_run(name, a[j:], out)
        elif not a.startswith("-") and i < MAX_SUFFIXES and _may_run(name, a, out) and not _SPACE.search(a):
            out.maybe.append(" ".join(x.text for x in args[i:] if not x.dynamic))
    return out


def _may_run(name: str, text: str, out: Verdict, what: str = "") -> bool:
    """One word (or input) a program of unknown grammar may run; False when it is code (unsure)."""
    if is_code(text):
        shown = " ".join(text.split())
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        out.unsure.append(
            f"{name} is not a program whose words the rules know as data, and {what or shown!r} "
            f"may be code it runs{f': {shown}' if what else ''}"
        )
        return False
    if _SPACE.search(text):
        out.maybe_lines.append(text)
    elif text:
        out.maybe.append(text)
    return True


def _python(name: str, args: list[Word], piped: bool, stdin: list[str], known: Known) -> Verdict:
    """python [options] (-c CODE | -m MODULE args | SCRIPT args | - | nothing: the program is stdin)."""
    out = Verdict()
    i = 0
    while i < len(args):
        w = args[i]
        a = w.text
        if w.dynamic:
            out.unsure.append(f"{name} gets an option computed at run time: {a}")
            return out
        if a in ("--version", "--help", "-VV"):
            return out
        if a == "--check-hash-based-pycs":
            i += 2
            continue
        if not a.startswith("-") or a == "-" or a == "--":
            break
        for j, ch in enumerate(a[1:], 1):
            if ch == "c":
                out.unsure.append(f"{name} -c runs a program written in the line")
                return out
            if ch == "m":
                glued = a[j + 1 :]
                module = Word(glued) if glued else (args[i + 1] if i + 1 < len(args) else Word(""))
                if module.dynamic or is_code(module.text):
                    out.unsure.append(f"{name} -m runs a module named at run time: {module.text}")
                    return out
                rest = args[i + (1 if glued else 2) :]
                return _merge(out, unknown(f"{name} -m {module.text}", rest, piped, stdin, known))
            if ch in "WX":
                if not a[j + 1 :]:
                    i += 1
                break
            if ch not in _PYTHON_FLAGS:
                out.unsure.append(f"{name} -{ch} is an option the rules do not know")
                return out
        i += 1
    return _program_file(name, out, args[i:], piped, stdin, known)


def _program_file(
    name: str, out: Verdict, rest: list[Word], piped: bool, stdin: list[str], known: Known
) -> Verdict:
    """An interpreter's words after its options: the program file it runs (judged as any program
    that may run its arguments) and that program's arguments; none, or ``-``, reads standard input."""
    if rest and rest[0].text == "--":
        rest = rest[1:]
    if not rest or rest[0].text == "-":
        out.unsure.append(f"{name} reads its program from standard input")
        return out
    return _merge(out, unknown(f"{name} {rest[0].text}", rest[1:], piped, stdin, known))


def _perl(name: str, args: list[Word], piped: bool, stdin: list[str], known: Known) -> Verdict:
    out = Verdict()
    i = 0
    while i < len(args):
        a = args[i].text
        if args[i].dynamic:
            out.unsure.append(f"{name} gets an option computed at run time: {a}")
            return out
        if not a.startswith("-") or a in ("-", "--"):
            break
        for j, ch in enumerate(a[1:], 1):
            if ch in "eE":
                out.unsure.append(f"{name} -{ch} runs a program written in the line")
                return out
            if ch in _PERL_VALUED:
                if ch in "Ix" and not a[j + 1 :]:
                    i += 1
                break
            if ch not in _PERL_FLAGS:
                out.unsure.append(f"{name} -{ch} is an option the rules do not know")
                return out
        i += 1
    return _program_file(name, out, args[i:], piped, stdin, known)


def _awk(name: str, args: list[Word]) -> Verdict:
    """awk's program runs commands only through system(), pipes, getline and @load/@include."""
    out = Verdict()
    values = {"-v", "-F", "-f", "--assign", "--field-separator", "--file"}
    i, has_file = 0, False
    while i < len(args):
        a = args[i].text
        if a in ("-f", "--file") or a.startswith(("-f", "--file=")):
            has_file = True
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or len(a) == 1:
            break
        if a in ("-e", "--source"):  # gawk: a program in the next word
            _awk_program(name, args[i + 1 : i + 2], out)
            has_file = True
            i += 2
            continue
        i += 2 if a in values else 1
    if not has_file:
        _awk_program(name, args[i : i + 1], out)
    return out


def _awk_program(name: str, program: list[Word], out: Verdict) -> None:
    if program and (program[0].dynamic or _AWK_RUNS.search(program[0].text)):
        out.unsure.append(f"the {name} program can run commands: {program[0].text}")


def _merge(out: Verdict, more: Verdict) -> Verdict:
    out.unsure += more.unsure
    out.scripts += more.scripts
    out.commands += more.commands
    out.maybe += more.maybe
    out.maybe_lines += more.maybe_lines
    return out
