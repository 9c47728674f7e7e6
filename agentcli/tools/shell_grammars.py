"""Option grammars of programs some of whose options run a command, a program or code, for the
permission rules (see tools/shell_programs.py): the known inert options, the options whose value runs,
and the operands that run (``ssh DEST CMD``, sed's script). An option a grammar does not know is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentcli.tools.shell_words import Word, pipe_to


@dataclass
class Verdict:
    """What one program runs through its words, besides itself."""

    unsure: list[str] = field(default_factory=list)
    scripts: list[Word] = field(default_factory=list)  # command lines it runs (tar --to-command)
    commands: list[list[Word]] = field(default_factory=list)  # programs it runs, given more words then
    maybe: list[str] = field(default_factory=list)  # commands it may run; "" is anything
    maybe_lines: list[str] = field(default_factory=list)  # plain words with spaces it may run as a line


@dataclass(frozen=True)
class Grammar:
    """A program's options: ``flags`` take no value, ``values`` take one (glued or the next word);
    ``lines``' value is a command line it runs, ``programs``' a program it runs, ``code``'s a program in
    another language. Short options are single characters, long ones start with ``--``."""

    flags: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    lines: frozenset[str] = frozenset()
    programs: frozenset[str] = frozenset()
    code: frozenset[str] = frozenset()
    glued: frozenset[str] = frozenset()  # options whose value, if any, is glued on (sed -i.bak)
    stop: int = 0  # options end at the operand after this many (ssh DEST CMD…); 0: they may come anywhere


def _g(
    flags: str = "",
    values: str = "",
    lines: str = "",
    programs: str = "",
    code: str = "",
    glued: str = "",
    stop: int = 0,
) -> Grammar:
    def names(spec: str) -> frozenset[str]:
        out = set()
        for item in spec.split():
            out |= (
                {f"-{c}" for c in item[1:]} if item.startswith("-") and not item.startswith("--") else {item}
            )
        return frozenset(out)

    return Grammar(
        names(flags), names(values), names(lines), names(programs), names(code), names(glued), stop
    )


GRAMMARS: dict[str, Grammar] = {
    "sort": _g(
        "-bdfgiMhnRrVcCmsuz --numeric-sort --reverse --unique --ignore-case --stable --zero-terminated "
        "--check --merge --human-numeric-sort --version-sort --general-numeric-sort --month-sort "
        "--dictionary-order --ignore-leading-blanks --ignore-nonprinting --random-sort --debug --help "
        "--version",
        "-ktSTo --key --field-separator --buffer-size --temporary-directory --output --parallel "
        "--batch-size --files0-from --random-source --sort",
        programs="--compress-program",
    ),
    "sed": _g(
        "-nErsuzb --quiet --silent --regexp-extended --separate --unbuffered --null-data --posix --debug "
        "--sandbox --follow-symlinks --binary --help --version --in-place",
        "-efl --expression --file --line-length",
        glued="-i",
    ),
    "tar": _g(
        "-AcdrtuxzjJaZvwkmopOPSWGhiBlMRUn --create --extract --get --list --append --update --diff "
        "--compare --delete --gzip --gunzip --bzip2 --xz --lzma --lzip --lzop --zstd --compress "
        "--uncompress --auto-compress --verbose --keep-old-files --keep-newer-files --overwrite "
        "--overwrite-dir --no-overwrite-dir --to-stdout --preserve-permissions --same-permissions "
        "--no-same-permissions --same-owner --no-same-owner --numeric-owner --absolute-names --dereference "
        "--hard-dereference --one-file-system --sparse --verify --wildcards --no-wildcards --anchored "
        "--no-anchored --recursion --no-recursion --null --no-null --exclude-vcs --exclude-vcs-ignores "
        "--exclude-backups --exclude-caches --remove-files --unlink-first --recursive-unlink --totals "
        "--show-transformed-names --show-stored-names --touch --ignore-zeros --ignore-failed-read "
        "--force-local --interactive --multi-volume --check-links --seek --no-seek --atime-preserve "
        "--delay-directory-restore --full-time --utc --index-file --help --version --usage --acls --xattrs "
        "--selinux --no-acls --no-xattrs --no-selinux --starting-file --skip-old-files --checkpoint "
        "--strip-components --exclude --exclude-from --exclude-tag --files-from --directory --file "
        "--transform --xform --owner --group --mtime --sort --mode --warning --record-size "
        "--blocking-factor --label --newer --newer-mtime --after-date --listed-incremental --tape-length "
        "--format --occurrence --backup --suffix --quoting-style --block-number",
        "-fCTXbHKNVLgs",
        lines="--to-command --use-compress-program --info-script --new-volume-script --rsh-command "
        "--rmt-command -I -F",
    ),
    "rsync": _g(
        "-avzrlptgoDPhnucHAXxqiERSWbCdKLkmIy08F --archive --verbose --compress --recursive --links "
        "--perms --times --group --owner --devices --specials --progress --partial --human-readable "
        "--dry-run --update --checksum --hard-links --acls --xattrs --one-file-system --quiet "
        "--itemize-changes --executability --relative --sparse --whole-file --backup --cvs-exclude "
        "--dirs --keep-dirlinks --copy-links --copy-unsafe-links --safe-links --omit-dir-times "
        "--prune-empty-dirs "
        "--ignore-times --size-only --ignore-existing --existing --delete --delete-before --delete-during "
        "--delete-delay --delete-after --delete-excluded --force --remove-source-files --stats --list-only "
        "--no-motd --numeric-ids --append --append-verify --inplace --mkpath --no-perms --no-times "
        "--no-owner --no-group --fuzzy --help --version --protect-args --secluded-args --info --debug "
        "--exclude --include --exclude-from --include-from --filter --chmod --chown --link-dest "
        "--compare-dest --copy-dest --suffix --backup-dir --temp-dir --partial-dir --max-size "
        "--min-size --bwlimit --timeout --contimeout --port --log-file --out-format --files-from "
        "--compress-level --modify-window --block-size --max-delete --password-file --usermap --groupmap",
        "-efTBM",
        lines="-e --rsh --rsync-path",
    ),
    "ssh": _g("-46AaCfGgKkMNnqsTtVvXxYy", "-BbcDEeFiJLlmOopQRSWw", code="-I", stop=1),
    "scp": _g("-346ABCOpqRrTv", "-cFiJlPoXD", programs="-S"),
    "sftp": _g("-46AaCfNpqrv", "-BbcDFiJloPRs", programs="-S"),
    "node": _g(
        "-v --version -h --help --test --watch --no-warnings --enable-source-maps --trace-warnings "
        "--trace-uncaught --trace-deprecation --throw-deprecation --no-deprecation --inspect --inspect-brk "
        "--preserve-symlinks --abort-on-uncaught-exception --experimental-vm-modules --check -c",
        "-r --require --import --loader --experimental-loader --max-old-space-size --stack-size "
        "--unhandled-rejections --inspect-port --test-reporter --test-name-pattern --input-type --conditions",
        code="-e --eval -p --print -i --interactive",
    ),
}
GRAMMARS["nodejs"] = GRAMMARS["node"]
_SSH_INERT = frozenset(
    """port user hostname identityfile identitiesonly stricthostkeychecking userknownhostsfile
    globalknownhostsfile connecttimeout connectionattempts batchmode loglevel serveraliveinterval
    serveralivecountmax compression forwardagent forwardx11 requesttty addressfamily
    preferredauthentications passwordauthentication pubkeyauthentication controlmaster controlpath
    controlpersist tcpkeepalive exitonforwardfailure hostkeyalgorithms ciphers macs kexalgorithms
    numberofpasswordprompts checkhostip hashknownhosts visualhostkey updatehostkeys
    kbdinteractiveauthentication gssapiauthentication""".split()  # noqa: SIM905
)  # fmt: skip


def _short_options(grammar: Grammar, a: str) -> tuple[str | None, str | None, str]:
    """A cluster ``-abc`` / ``-fVALUE``: (the option taking a value, its glued value, an unknown letter)."""
    for j in range(1, len(a)):
        opt = f"-{a[j]}"
        if opt in grammar.flags:
            continue
        if opt in grammar.glued:
            return None, None, ""
        if opt in grammar.values or opt in grammar.lines or opt in grammar.programs or opt in grammar.code:
            return opt, a[j + 1 :] or None, ""
        return None, None, opt
    return None, None, ""


def read_options(name: str, grammar: Grammar, args: list[Word]) -> Verdict:
    out = Verdict()
    operands: list[Word] = []
    i = 0
    if name == "tar" and args and not args[0].text.startswith("-") and not args[0].dynamic:
        args = [Word("-" + args[0].text), *args[1:]]  # the old style: `tar czf out.tgz src`
    while i < len(args):
        w = args[i]
        a = w.text
        if a == "--" or w.dynamic or not a.startswith("-") or a == "-":
            if a == "--":
                operands += args[i + 1 :]
                break
            operands.append(w)
            i += 1
            if grammar.stop and len(operands) > grammar.stop:
                operands += args[i:]
                break
            continue
        value = Word("")
        if a.startswith("--"):
            opt, eq, glued = a.partition("=")
            if opt not in grammar.flags and opt not in grammar.values and not _runs(grammar, opt):
                out.unsure.append(f"{name} {opt} is an option the rules do not know")
                i += 1
                continue
            if eq:
                value = Word(glued, dynamic=w.dynamic)
            elif opt not in grammar.flags:
                value = args[i + 1] if i + 1 < len(args) else Word("")
                i += 1
        else:
            opt_or_none, glued_or_none, bad = _short_options(grammar, a)
            if bad:
                out.unsure.append(f"{name} {bad} is an option the rules do not know")
                i += 1
                continue
            if opt_or_none is None:
                i += 1
                continue
            opt = opt_or_none
            if glued_or_none is not None:
                value = Word(glued_or_none)
            else:
                value = args[i + 1] if i + 1 < len(args) else Word("")
                i += 1
        i += 1
        _option(name, grammar, opt, value, out)
    _operands(name, args, operands, out)
    return out


def _runs(grammar: Grammar, opt: str) -> bool:
    return opt in grammar.lines or opt in grammar.programs or opt in grammar.code


def _option(name: str, grammar: Grammar, opt: str, value: Word, out: Verdict) -> None:
    """What an option's value runs."""
    if opt in grammar.code:
        out.unsure.append(f"{name} {opt} runs code the rules cannot read")
    elif opt in grammar.lines:
        if value.dynamic:
            out.unsure.append(f"{name} {opt} runs a command line computed at run time: {value.text}")
        out.scripts.append(value)
    elif opt in grammar.programs:
        out.commands.append([value])
    elif name == "tar" and opt == "--checkpoint-action" and value.text.startswith("exec"):
        out.scripts.append(Word(value.text.split("=", 1)[-1], dynamic=value.dynamic))
    elif name in ("ssh", "scp", "sftp") and opt == "-o":
        key = re.split(r"[\s=]", value.text.strip(), maxsplit=1)[0].lower()
        if value.dynamic or key not in _SSH_INERT:
            out.unsure.append(f"{name} -o {key or value.text} may run a command or load code")
    elif name == "sed" and opt in ("-e", "--expression"):
        _sed(value, out)
    elif (pipe := pipe_to(value)) is not None:
        out.scripts.append(pipe)


def _operands(name: str, args: list[Word], operands: list[Word], out: Verdict) -> None:
    if name == "sed" and not any(a.text.startswith(("-e", "--expression", "-f", "--file")) for a in args):
        if operands:
            _sed(operands[0], out)
    elif name == "ssh":
        if len(operands) > 1:  # ssh DEST CMD…: the command line runs on DEST
            out.scripts.append(
                Word(" ".join(w.text for w in operands[1:]), any(w.dynamic for w in operands[1:]))
            )
    elif name == "tar":
        for i, w in enumerate(args):
            if w.text in ("-f", "--file") and i + 1 < len(args):
                _tar_file(args[i + 1], args, out)
            elif w.text.startswith("--file="):
                _tar_file(Word(w.text[7:]), args, out)
    elif name == "rsync":
        for w in operands:
            host = _remote_host(w.text)
            if host is not None:
                out.commands.append([Word("ssh"), Word(host)])


def _remote_host(path: str) -> str | None:
    """``user@host:path`` names a host rsync reaches through a remote shell; ``rsync://`` a daemon."""
    if path.startswith("rsync://") or "::" in path:
        return None
    head, colon, _ = path.partition(":")
    return head if colon and head and "/" not in head else None


def _tar_file(archive: Word, args: list[Word], out: Verdict) -> None:
    if _remote_host(archive.text) is not None and not any(w.text == "--force-local" for w in args):
        out.unsure.append(f"tar -f {archive.text} runs a remote shell to reach the archive")


# sed commands: those taking a label or a file to the end of the line, text, and those standing alone.
_SED_LABEL = frozenset(":btTv")
_SED_FILE = frozenset("rRwW")
_SED_TEXT = frozenset("aic")
_SED_PLAIN = frozenset("=dDgGhHlnNpPqQxzFL{}")


def _sed(script: Word, out: Verdict) -> None:
    if script.dynamic:
        out.unsure.append(f"sed runs a script computed at run time: {script.text}")
        return
    doubt = sed_doubt(script.text)
    if doubt:
        out.unsure.append(doubt)


def _skip_regex(s: str, i: int, delim: str) -> int:
    """The index after the closing ``delim`` of a regex starting at ``i``."""
    while i < len(s) and s[i] != delim:
        i += 2 if s[i] == "\\" else 1
    return i + 1


def sed_doubt(s: str) -> str | None:
    """GNU sed's script grammar: the ``e`` command and the ``s///e`` flag run a command; an unknown
    command is unknown."""
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t\n;!" or c.isdigit() or c in "$,~+":
            i += 1
        elif c == "/":
            i = _skip_regex(s, i + 1, "/")
            while i < n and s[i] in "IM":
                i += 1
        elif c == "\\" and i + 1 < n:
            i = _skip_regex(s, i + 2, s[i + 1])
        elif c in _SED_LABEL:
            i = _line_end(s, i, "\n;")
        elif c == "#" or c in _SED_FILE or c in _SED_TEXT:
            i = _line_end(s, i)
        elif c in ("s", "y") and i + 1 < n:
            delim = s[i + 1]
            i = _skip_regex(s, _skip_regex(s, i + 2, delim), delim)
            if c == "s":
                start = i
                while i < n and s[i] not in ";\n}":
                    if s[i] == "w":
                        i = _line_end(s, i)
                        break
                    i += 1
                if "e" in s[start:i].split("w", 1)[0]:
                    return "sed's s///e flag runs the pattern space as a command"
        elif c == "e":
            return "sed's e command runs a command"
        elif c in _SED_PLAIN:
            i += 1
        else:
            return f"sed command {c!r} is not one the rules know"
    return None


def _line_end(s: str, i: int, stops: str = "\n") -> int:
    """The index after the end of the line (or the first of ``stops``) from ``i``."""
    ends = [e for e in (s.find(c, i) for c in stops) if e >= 0]
    return min(ends) + 1 if ends else len(s)
