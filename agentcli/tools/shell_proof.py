"""What a static reading of a bash line can prove, for the permission rules.

An allow rule may allow a line only when everything it will run is known before it runs. This module
says what is *proven*, by a positive definition: a syntax node is proven only if its kind is one listed
in ``PROVEN`` (and its form passes the check for its kind); every other kind — arithmetic, ``[[ … -eq
… ]]``, array subscripts, function definitions, C-style loops, kinds a later grammar adds — is
*unknown*, so a form nobody listed is asked, never allowed. On top of the syntax, a few builtins run
code their words do not show (``eval``, ``source``, ``trap``, a builtin evaluating a subscript as
arithmetic, a shell option that loads start-up files); :func:`command_doubt` names those, and
:func:`assignment_doubt` proves a variable only when it is known to be inert. What a program runs
through its arguments is judged by tools/shell_programs.py. tools/shell_commands.py walks the line and
asks these for each node, command and assignment.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentcli.tools.shell_words import Word, text

if TYPE_CHECKING:
    from tree_sitter import Node

# Syntax whose meaning is fully known: lists, pipelines, compound commands, quoting, redirections, and
# expansions that substitute a value without evaluating it. Nothing else is proven.
PROVEN = frozenset(
    {
        "program", "list", "pipeline", "subshell", "compound_statement", "redirected_statement",
        "negated_command", "if_statement", "elif_clause", "else_clause", "while_statement",
        "for_statement", "do_group", "case_statement", "case_item", "comment", "command",
        "command_name", "file_redirect", "file_descriptor", "heredoc_redirect", "heredoc_start",
        "heredoc_body", "heredoc_content", "heredoc_end", "herestring_redirect", "string",
        "string_content", "raw_string", "ansi_c_string", "translated_string", "word", "number",
        "concatenation", "brace_expression", "variable_assignment", "variable_name",
        "special_variable_name", "simple_expansion", "expansion", "command_substitution",
        "process_substitution", "test_command", "test_operator", "binary_expression",
        "unary_expression", "parenthesized_expression", "declaration_command", "unset_command", "regex",
        "extglob_pattern", "subscript", "array",
    }
)  # fmt: skip
# ${name}, ${#name}, ${name[0]}, ${name[@]}, then an operator that substitutes or trims without
# evaluating: no ${!x} (indirection), ${x@P} (prompt expansion), ${x:=v} (assignment), and a
# substring offset only as digits (an offset is arithmetic: a variable there is evaluated as code).
_EXPANSION = re.compile(
    r"\$\{#?(?:[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|@|\*)\])?|\d+|[@*#?$!-])"
    r"(?:\}|(?::?[-+?]|##?|%%?|//?|/#|/%|\^\^?|,,?)|:\d+(?::\d+)?\})",
    re.S,
)
_ARITHMETIC_TEST = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# Builtins that take a variable name, where ``a[…]`` is evaluated as arithmetic (running its $(…)).
_NAME_TAKERS = frozenset(
    {"read", "unset", "declare", "typeset", "local", "export", "readonly", "printf", "test", "[", "let",
     "wait", "getopts", "mapfile", "readarray", "shift"}
)  # fmt: skip
_VALUED_NAME_TAKERS = {
    "read": frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}),
    "mapfile": frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"}),
    "readarray": frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"}),
    "getopts": frozenset(),
}
_DECLARE_SAFE_FLAGS = frozenset("xrgpfFaA")  # -n (nameref) and -i (arithmetic on assignment) are not
# Commands that run code their words do not show, whatever the words are.
ALWAYS = {
    "eval": "eval runs a command line built when it runs",
    "source": "source runs a file's commands",
    ".": ". runs a file's commands",
    "let": "let evaluates arithmetic, which can run commands",
    "alias": "an alias defined in the line changes what later words run",
    "enable": "enable can load a builtin from a library",
    "trap": "trap runs its command line later, when a signal comes",
    "fc": "fc runs commands from the history",
    "complete": "complete can run a command on completion",
    "bind": "bind can run a command on a key",
}
# Shells whose -c line we parse as bash; other shells' syntax is theirs, so their -c is unknown.
BASH_LIKE = frozenset({"bash", "sh", "dash", "rbash"})
# Variables known to be inert: no shell or program we know loads or runs code from them, or lets them
# change which program a name runs. Any other variable given to a program (a prefix, env, export) is
# unknown: LD_*, PATH, PYTHONPATH, GIT_*, *_OPTIONS, *PAGER*, *EDITOR*, a name nobody listed.
_INERT = frozenset(
    """LANG LANGUAGE LC_ALL TZ TERM COLORTERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE CI
    DEBUG VERBOSE QUIET NODE_ENV RAILS_ENV RACK_ENV APP_ENV RUST_BACKTRACE RUST_LOG CARGO_TERM_COLOR
    CARGO_INCREMENTAL GOOS GOARCH GOMAXPROCS GOGC PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONHASHSEED
    PYTHONIOENCODING PYTHONUTF8 PYTHONFAULTHANDLER PY_COLORS NODE_NO_WARNINGS SOURCE_DATE_EPOCH
    GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
    GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT OPTIND OPTERR""".split()  # noqa: SIM905
)  # fmt: skip
_INERT_FAMILY = re.compile(r"LC_[A-Z]+")
_LOCAL_NAME = re.compile(r"[a-z_][a-z0-9_]*")  # bash reads no lowercase variable; set -a is asked
# bash's own options (and set's) that change nothing about what runs: -i, -l, -a (allexport), -k
# (keyword), -p and every other letter are unknown.
_SHELL_FLAGS = frozenset("ceuxvnfsCEThBHPmbrt")
_SHELL_O = frozenset(
    {"errexit", "nounset", "pipefail", "xtrace", "verbose", "noglob", "noclobber", "errtrace", "functrace",
     "noexec", "notify", "monitor", "braceexpand", "hashall", "histexpand", "ignoreeof", "physical",
     "posix", "emacs", "vi", "interactive-comments", "history", "nolog"}
)  # fmt: skip
_SHELL_LONG = frozenset({"--norc", "--noprofile", "--restricted", "--verbose", "--version", "--help",
                         "--noediting", "--posix", "--pretty-print"})  # fmt: skip


def node_doubt(node: Node, data: bytes) -> str | None:
    """Why the syntax node ``node`` (not its children) is not proven, or None if it is."""
    kind = node.type
    if kind not in PROVEN:
        return f"bash {kind.replace('_', ' ')} is not a form the rules can read: `{_short(node, data)}`"
    if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
        return f"arithmetic can run commands: `{_short(node, data)}`"
    if kind == "expansion" and _EXPANSION.match(text(node, data)) is None:
        return f"this parameter expansion can run commands or name another variable: `{_short(node, data)}`"
    if kind == "test_command":
        return _test_doubt(node, data)
    index = node.child_by_field_name("index") if kind == "subscript" else None
    if index is not None and index.type != "number" and text(index, data) not in ("@", "*"):
        return f"an array subscript is arithmetic, which can run commands: `{_short(node, data)}`"
    if kind == "array" and any(text(c, data).startswith("[") for c in node.named_children):
        return f"an array's [index]= is arithmetic, which can run commands: `{_short(node, data)}`"
    if kind in ("declaration_command", "unset_command"):
        words = text(node, data).split()
        return _names_doubt(words[0], [Word(w) for w in words[1:]])
    if kind == "for_statement":
        names = [text(c, data) for c in node.children if c.type == "variable_name"]
        return next((d for n in names if (d := assignment_doubt(n)) is not None), None)
    return None


def _test_doubt(node: Node, data: bytes) -> str | None:
    """``[[ x -eq y ]]`` evaluates x and y as arithmetic (a subscript there runs commands), ``-v a[…]``
    too."""
    double = bool(node.child_count) and node.children[0].type == "[["  # [ … -eq … ] wants plain numbers
    stack = list(node.children)
    while stack:
        child = stack.pop()
        stack += child.children
        if child.type != "test_operator":
            continue
        op = text(child, data)
        operands = [s for s in (child.prev_named_sibling, child.next_named_sibling) if s is not None]
        if double and op in _ARITHMETIC_TEST and any(s.type != "number" for s in operands):
            return f"[[ {op} ]] evaluates its operands as arithmetic, which can run commands"
        if op in ("-v", "-R") and any("[" in text(s, data) for s in operands):
            return f"[[ {op} ]] evaluates an array subscript, which can run commands"
    return None


def _names_doubt(name: str, args: list[Word]) -> str | None:
    """A builtin taking variable names: a subscript ``a[…]`` in any of them is arithmetic."""
    if name in ("printf", "test", "[", "wait"):  # only the value of -v (-p) is a name
        flag = {"printf": "-v", "wait": "-p"}.get(name, "-v")
        names = [b for a, b in zip(args, args[1:], strict=False) if a.text in (flag, "-R")]
        names += [Word(a.text[2:]) for a in args if a.text.startswith(flag) and len(a.text) > 2]
    elif name in _VALUED_NAME_TAKERS:  # read -p PROMPT NAME…, mapfile -d DELIM NAME, getopts SPEC NAME
        names, i = [], 0
        while i < len(args):
            a = args[i].text
            if a.startswith("-") and len(a) > 1:
                i += 2 if a in _VALUED_NAME_TAKERS[name] else 1
                continue
            names.append(args[i])
            i += 1
        names = names[1:2] if name == "getopts" else names
    else:
        names = [w for w in args if not w.text.startswith(("-", "+"))]
    if any("[" in (head := w.text.split("=", 1)[0]) or (w.dynamic and "$" in head) for w in names):
        return f"{name} evaluates a variable name computed or subscripted here, which can run commands"
    if name in ("declare", "typeset", "local", "export", "readonly"):
        exported = name == "export" or any(w.text.startswith("-") and "x" in w.text for w in args)
        for w in args:
            if w.text[:1] in "-+" and not set(w.text[1:]) <= _DECLARE_SAFE_FLAGS:
                return f"{name} {w.text} makes a variable evaluate what is stored in it"
            var = w.text.partition("=")[0]
            if not w.text.startswith(("-", "+")) and (doubt := assignment_doubt(var, exported)):
                return doubt
    elif name not in ("test", "[", "unset", "shift", "let"):  # read, printf -v, mapfile …: assigned
        return next((d for w in names if (d := assignment_doubt(w.text.split("=", 1)[0])) is not None), None)
    return None


def assignment_doubt(name: str, exported: bool = False) -> str | None:
    """Why assigning ``name`` is not proven, or None. ``exported``: the program a prefix, env or
    export gives it to sees it. A variable is proven only when it is known to be inert: a lowercase
    shell variable kept in the shell, or one of ``_INERT``. The value does not matter: bash does not
    evaluate it unless an unproven form uses it later."""
    if "[" in name:
        return f"the assignment to {name} evaluates an array subscript, which can run commands"
    if not exported and _LOCAL_NAME.fullmatch(name):
        return None
    if name in _INERT or _INERT_FAMILY.fullmatch(name):
        return None
    return f"setting {name} may change what runs or make a program load code (it is not known to be inert)"


def command_doubt(name: str, args: list[Word]) -> str | None:
    """Why the simple command ``name args`` runs code its words do not show, or None."""
    base = name.rsplit("/", 1)[-1]
    if base in ALWAYS and not (base in ("source", ".") and not args):
        return ALWAYS[base]
    if base in _NAME_TAKERS and (doubt := _names_doubt(base, args)) is not None:
        return doubt
    if base == "env" and (split := _env_split(args)) is not None:
        return f"env {split} splits a string into the command it runs"
    if base in BASH_LIKE or base == "set":
        return _shell_options_doubt(base, args)
    return None


def _shell_options_doubt(name: str, args: list[Word]) -> str | None:
    """bash's options (and set's) proven only when known not to load code or export what follows."""
    i = 0
    while i < len(args):
        w = args[i]
        a = w.text
        if a == "--" or w.dynamic or a[:1] not in "-+" or a in ("-", "+"):
            return None
        if a in ("-o", "+o", "-O", "+O"):
            option = args[i + 1].text if i + 1 < len(args) else ""
            if a[1] == "o" and option and option not in _SHELL_O:
                return f"{name} -o {option} is not an option known to change nothing about what runs"
            i += 2
            continue
        if a.startswith("--"):
            if a.split("=", 1)[0] not in _SHELL_LONG:
                return f"{name} {a} reads start-up files or is not an option the rules know"
        elif bad := next((c for c in a[1:] if c not in _SHELL_FLAGS), None):
            return (
                f"{name} {a[0]}{bad} is an option that loads code or exports what follows, or one not known"
            )
        elif name != "set" and a.startswith("-") and "c" in a:
            return None  # the rest are the command line and its arguments
        i += 1
    return None


def _env_split(args: list[Word]) -> str | None:
    """env's -S/--split-string, also inside a cluster (``-vS'…'``), before its command."""
    for w in args:
        a = w.text
        if a.startswith("--split-string") or (a[:1] == "-" and a[1:2] != "-" and "S" in a[1:]):
            return "--split-string" if a.startswith("--") else "-S"
        if not a.startswith("-") and "=" not in a:
            return None
    return None


def _short(node: Node, data: bytes) -> str:
    shown = " ".join(text(node, data).split())
    return shown if len(shown) <= 60 else shown[:59] + "…"
