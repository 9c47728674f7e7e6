"""git as the rules should see it: the subcommand that runs, without the options that only say where.

``git -C dir --no-pager -c color.ui=never push`` is ``git push`` to a rule such as ``"git push *"``.
Global options are taken off; ``send-pack`` and ``receive-pack`` are pushes; a subcommand git does not
have itself is an alias or a ``git-NAME`` program, whose meaning only the user's config knows, so it is
*partial*: a rule about git cannot vouch for it. A ``-c`` setting outside a short list of inert ones
(a pager, an ssh command, an alias, a hook path can all run code) is a doubt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentcli.tools.shell_programs import Verdict, unknown
from agentcli.tools.shell_words import Word

# Global options whose value is the next word (or after "="), and those that stand alone.
_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"})
_CODE_OPTIONS = frozenset({"--exec-path", "--config-env"})  # where git finds its programs; env config
_SAFE_CONFIG = (
    "color.", "user.", "advice.", "init.defaultbranch", "core.quotepath", "core.autocrlf", "core.safecrlf",
    "core.abbrev", "core.filemode", "core.ignorecase", "pull.rebase", "pull.ff", "log.", "format.pretty",
    "safe.directory", "commit.gpgsign", "tag.gpgsign", "merge.ff", "status.", "column.", "i18n.", "gc.auto",
    "protocol.version", "http.sslverify", "fetch.prune", "branch.autosetup", "push.default",
    "push.autosetupremote", "rebase.autosquash", "rebase.autostash", "diff.renames", "diff.noprefix",
)  # fmt: skip
PUSH_FORMS = frozenset({"send-pack", "receive-pack", "http-push"})
BUILTIN = frozenset(
    """add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore
    check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column
    commit commit-graph commit-tree config count-objects credential daemon describe diff diff-files
    diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
    for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help
    http-push index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo
    mailsplit maintenance merge merge-base merge-file merge-index merge-tree mergetool mktag mktree
    multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed
    pull push range-diff read-tree rebase receive-pack reflog remote repack replace request-pull rerere
    reset restore rev-list rev-parse revert rm send-email send-pack shortlog show show-branch show-index
    show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file
    unpack-objects update-index update-ref update-server-info upload-archive upload-pack var
    verify-commit verify-pack verify-tag version whatchanged worktree write-tree lfs""".split()  # noqa: SIM905
)


@dataclass
class Git:
    """One git command line as the rules see it."""

    forms: list[list[Word]] = field(default_factory=list)  # the command without global options, …
    partial: bool = False  # an alias or a git-NAME program: its words do not say what runs
    doubt: str | None = None  # an option that can run code
    verdict: Verdict = field(default_factory=Verdict)  # what the subcommand's words may run


def git(args: list[Word]) -> Git:
    out = Git()
    i = 0
    while i < len(args):
        w = args[i]
        a = w.text
        if w.dynamic:
            out.doubt = f"a git option computed at run time: {a}"
            return out
        if not a.startswith("-") or a == "--":
            break
        name, eq, value = a.partition("=")
        if name in _CODE_OPTIONS:
            out.doubt = f"git {name} changes what git runs"
        if a.startswith("-c") and a != "-c" and not a.startswith("--"):
            name, value, eq = "-c", a[2:], "="  # -ckey=value
        if name in _VALUED and not eq:
            value = args[i + 1].text if i + 1 < len(args) else ""
            i += 1
        if name == "-c" and not value.lower().startswith(_SAFE_CONFIG):
            out.doubt = f"git -c {value} may set a command git runs (a pager, an alias, a hook)"
        i += 1
    rest = args[i:]
    if rest and rest[0].text == "--":
        rest = rest[1:]
    if not rest:
        return out
    sub = rest[0]
    out.forms.append([Word("git"), *rest])
    if sub.text in PUSH_FORMS:
        out.forms.append([Word("git"), Word("push"), *rest[1:]])
    out.partial = sub.dynamic or sub.text not in BUILTIN
    out.verdict = _arguments(sub.text, rest[1:])
    for i, w in enumerate(rest[1:], 1):  # clone -c/--config KEY=VALUE sets the new repository's config
        setting = w.text.split("=", 1)[1] if w.text.startswith("--config=") else None
        if w.text in ("-c", "--config") and i + 1 < len(rest):
            setting = rest[i + 1].text
        if setting and "=" in setting and not setting.lower().startswith(_SAFE_CONFIG):
            out.doubt = f"git {sub.text} {setting} may set a command git runs (a pager, an alias, a hook)"
    if sub.text == "config" and (key := _config_set(rest[1:])) and not key.lower().startswith(_SAFE_CONFIG):
        out.doubt = f"git config {key} may set a command git runs later (a pager, an alias, a hook)"
    return out


# Subcommand options whose value is text git does not run (a message, a format, a pattern, a date).
_TEXT = frozenset(
    """-m --message -F --file --format --pretty --grep --author --committer -S -G --since --until --after
    --before --date -e --fixup --squash --reuse-message --trailer --notes --subject-prefix""".split()  # noqa: SIM905
)  # fmt: skip
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--list", "-l", "--unset", "--unset-all", "get", "list", "unset",
     "--show-origin", "--name-only", "--get-urlmatch"}
)  # fmt: skip


def _arguments(sub: str, args: list[Word]) -> Verdict:
    """A subcommand's words, as for a program of unknown grammar (git runs some: ``rebase -x CMD``,
    ``bisect run CMD``, ``submodule foreach CMD``, ``--upload-pack=CMD``), but text options are text
    and ``git grep``'s pattern is a pattern."""
    kept: list[Word] = []
    skip_next, pattern = False, sub == "grep"
    for w in args:
        a = w.text
        if skip_next:
            skip_next = False
            continue
        if a in _TEXT:  # -m MESSAGE
            skip_next = True
            continue
        if a.split("=", 1)[0] in _TEXT:
            continue  # --message=MESSAGE
        if a[:1] == "-" and a[1:2] != "-" and (at := _text_letter(a)) is not None:
            skip_next = at == len(a) - 1  # -am MESSAGE; -amMESSAGE holds it
            continue
        if pattern and not a.startswith("-"):
            pattern = False  # git grep PATTERN: a regex, not a command
            continue
        kept.append(w)
    return unknown(f"git {sub}", kept)


def _text_letter(cluster: str) -> int | None:
    """Where a text option's letter is in a cluster of short options (``-am``: 2), if it is."""
    return next((i for i in range(1, len(cluster)) if f"-{cluster[i]}" in _TEXT), None)


def _config_set(args: list[Word]) -> str | None:
    """The key ``git config`` sets, if it sets one."""
    if any(w.text in _CONFIG_READS for w in args):
        return None
    operands = [w.text for w in args if not w.text.startswith("-")]
    if operands[:1] == ["set"]:
        operands = operands[1:]
    return operands[0] if len(operands) >= 2 else None
