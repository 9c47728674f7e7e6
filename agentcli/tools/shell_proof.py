"""What a static reading of a bash line can prove, for the permission rules.

An allow rule may allow a line only when everything it will run is known before it runs. This module
says what is *proven*, by a positive definition: a syntax node is proven only if its kind is one listed
in ``PROVEN`` (and its form passes the check for its kind); every other kind — arithmetic, ``[[ … -eq
… ]]``, array subscripts, function definitions, C-style loops, kinds a later grammar adds — is
*unknown*, so a form nobody listed is asked, never allowed. On top of the syntax, a few commands run
code their words do not show (``eval``, ``source``, an interpreter's ``-c``, a builtin evaluating a
subscript as arithmetic); :func:`command_doubt` names those, and :func:`assignment_doubt` the
variables that make a shell or a program load code. tools/shell_commands.py walks the line and asks
these three for each node, command and assignment.
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
_DECLARE_SAFE_FLAGS = frozenset("xrgpfFaA")  # -n (nameref) and -i (arithmetic on assignment) are not
# Commands that run code their words do not show, whatever the words are.
_ALWAYS = {
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
_SHELL_LOADERS = frozenset({"-i", "-l", "--login", "--rcfile", "--init-file", "--posix"})
# Interpreters and the options whose value is a program (or whose absence means stdin is one).
INTERPRETERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("python", "python2", "python3", "pypy", "pypy3"), frozenset({"-c"})
    ),
    **dict.fromkeys(("perl", "perl5"), frozenset({"-e", "-E"})),
    **dict.fromkeys(("ruby", "irb"), frozenset({"-e"})),
    **dict.fromkeys(("node", "nodejs", "deno", "bun"), frozenset({"-e", "--eval", "-p", "--print", "eval"})),
    **dict.fromkeys(("php",), frozenset({"-r", "-B", "-R", "-E", "-F"})),
    **dict.fromkeys(("lua", "luajit"), frozenset({"-e", "-l"})),
    **dict.fromkeys(("tclsh", "wish", "expect"), frozenset({"-c"})),
    **dict.fromkeys(
        ("zsh", "fish", "ksh", "mksh", "csh", "tcsh", "yash", "ash", "oksh", "busybox"), frozenset({"-c"})
    ),
    **dict.fromkeys(
        ("osascript", "powershell", "pwsh", "Rscript", "julia", "gdb"),
        frozenset({"-e", "-c", "--eval", "-ex", "-command", "-Command"}),
    ),
}  # fmt: skip
# Interpreters that read a program from standard input when given no script: stdin is code then.
_READS_PROGRAM = frozenset(INTERPRETERS) - {"busybox", "osascript"}
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox awk"})
_AWK_RUNS = re.compile(r"system\s*\(|\|\s*(getline|&)?|\bgetline\b|print[^;}]*>")
# Variables that make a shell or a program load or run code, or change which program a name runs.
_CODE_VARIABLES = re.compile(
    r"(BASH_ENV|ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PROMPT_COMMAND|PS[0-4]|PATH|CDPATH|GLOBIGNORE|IFS|"
    r"EXECIGNORE|BASH_LOADABLES_PATH|BASH_XTRACEFD|HOME|TMPDIR|SHELL|HISTFILE|INPUTRC|"
    r"LD_.*|DYLD_.*|.*_PRELOAD|.*PATH|.*_COMMAND|.*_CMD|.*OPTS?|.*OPTIONS|.*STARTUP|.*RC|.*_HOOKS?|"
    r"EDITOR|VISUAL|.*_EDITOR|PAGER|.*_PAGER|BROWSER|.*ASKPASS|GIT_.*|SSH_.*|LESS.*|MAN.*|PYTHON.*|"
    r"PERL.*|RUBY.*|NODE_.*|NPM_CONFIG_.*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|XDG_CONFIG_.*|.*_CONFIG|"
    r".*_CONFIG_.*)",
)


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
    if kind == "for_statement" and any(c.type == "variable_name" and _CODE_VARIABLES.fullmatch(
        text(c, data)) for c in node.children):  # fmt: skip
        return f"the loop sets a variable that changes what runs: `{_short(node, data)}`"
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
    else:
        names = [w for w in args if not w.text.startswith(("-", "+"))]
    if any("[" in (head := w.text.split("=", 1)[0]) or (w.dynamic and "$" in head) for w in names):
        return f"{name} evaluates a variable name computed or subscripted here, which can run commands"
    if name in ("declare", "typeset", "local", "export", "readonly"):
        for w in args:
            if w.text[:1] in "-+" and not set(w.text[1:]) <= _DECLARE_SAFE_FLAGS:
                return f"{name} {w.text} makes a variable evaluate what is stored in it"
            var = w.text.partition("=")[0]
            if not w.text.startswith(("-", "+")) and (doubt := assignment_doubt(var)):
                return doubt
    return None


def assignment_doubt(name: str) -> str | None:
    """Why assigning ``name`` (before a command, alone, or given to env) is not proven, or None. The
    value does not matter: bash does not evaluate it unless an unproven form uses it later."""
    if "[" in name:
        return f"the assignment to {name} evaluates an array subscript, which can run commands"
    if _CODE_VARIABLES.fullmatch(name):
        return f"setting {name} changes what runs or makes a program load code"
    return None


def command_doubt(name: str, args: list[Word]) -> str | None:
    """Why the simple command ``name args`` runs code its words do not show, or None."""
    base = name.rsplit("/", 1)[-1]
    if base in _ALWAYS and not (base in ("source", ".") and not args):
        return _ALWAYS[base]
    if base in _NAME_TAKERS and (doubt := _names_doubt(base, args)) is not None:
        return doubt
    if base == "env" and (split := _env_split(args)) is not None:
        return f"env {split} splits a string into the command it runs"
    if base in BASH_LIKE:
        loader = next((w.text for w in args if w.text.split("=", 1)[0] in _SHELL_LOADERS), None)
        return f"{base} {loader} reads start-up files that run code" if loader else None
    if base in _AWK:
        program = next((w for w in args if not w.text.startswith("-")), None)
        if program is not None and (program.dynamic or _AWK_RUNS.search(program.text)):
            return f"the {base} program can run commands: {program.text}"
        return None
    flags = INTERPRETERS.get(base) or INTERPRETERS.get(base.rstrip("0123456789."))
    if flags is None:
        return None
    for w in args:
        head = w.text.split("=", 1)[0]
        cluster = head[:1] == "-" and head[1:2] != "-" and any(f"-{c}" in flags for c in head[1:])
        if head in flags or cluster:
            return f"{base} {head} runs a program written in the line"
        if not w.text.startswith("-"):
            return None  # a script file: a program like any other
    if base in _READS_PROGRAM or base.rstrip("0123456789.") in _READS_PROGRAM:
        return f"{base} reads its program from standard input"
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
