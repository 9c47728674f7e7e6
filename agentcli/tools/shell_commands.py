"""Every simple command a bash command line would run, for the permission rules.

A rule such as ``"rm *": "deny"`` must see ``rm`` wherever it hides: after ``&&`` or ``;``, in a
pipeline, a subshell, ``$(…)`` or backticks (also inside an argument), behind a wrapper (``sudo``,
``env``, ``xargs``, ``find -exec``), or inside ``sh -c "…"``. The line is parsed with tree-sitter-bash
(the grammar OpenCode uses); each command comes back as its words joined by single spaces. What
cannot be known statically (a parse error, a command name built from a variable, a shell reading
its script from stdin) is reported as ``unsure`` so the caller asks instead of allowing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"})
# Prefix commands that run the rest of their arguments as another command.
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nice",
        "nohup",
        "time",
        "timeout",
        "command",
        "exec",
        "builtin",
        "stdbuf",
        "ionice",
        "chrt",
        "setsid",
        "xargs",
        "watch",
        "unbuffer",
        "chroot",
    }
)
# Wrapper options that take a value as the next word (so the value is not the command).
_VALUE_OPTS = {
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
    "env": {"-u", "-C", "-S"},
    "nice": {"-n"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p"},
    "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--max-args", "--max-procs", "--delimiter"},
    "watch": {"-n", "-d"},
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_MAX_DEPTH = 8  # sh -c "sh -c '…'" nesting we follow before giving up (and asking)


@dataclass
class Commands:
    commands: list[str] = field(default_factory=list)  # normalised simple commands, in order
    unsure: list[str] = field(default_factory=list)  # why some part could not be known


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def split_commands(line: str) -> Commands:
    out = Commands()
    _parse_into(line, out, 0)
    return out


def _parse_into(source: str, out: Commands, depth: int) -> None:
    if depth > _MAX_DEPTH:
        out.unsure.append("shell commands nested too deeply")
        return
    data = source.encode("utf-8")
    tree = _parser().parse(data)
    if tree.root_node.has_error:
        out.unsure.append("the command line could not be parsed")
    _walk(tree.root_node, data, out, depth)


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


_DYNAMIC = frozenset(
    {"command_substitution", "simple_expansion", "expansion", "process_substitution", "arithmetic_expansion"}
)


def _is_dynamic(node: Node) -> bool:
    if node.type in _DYNAMIC:
        return True
    return any(_is_dynamic(c) for c in node.children)


def _word(node: Node, data: bytes) -> str:
    """A word as the shell would see it where that is static: quotes removed, escapes resolved."""
    if node.type == "raw_string":
        return _text(node, data)[1:-1]
    if node.type == "string" and not _is_dynamic(node):
        return _text(node, data)[1:-1]
    if node.type == "word":
        text = _text(node, data)
        return text.replace("\\\n", "").replace("\\", "") if "\\" in text else text
    if node.type == "concatenation" and not _is_dynamic(node):
        return "".join(_word(c, data) for c in node.children)
    return _text(node, data)


def _stdin_script(node: Node, data: bytes) -> str | None:
    """The text a heredoc or here-string feeds to the command's standard input."""
    if node.type == "heredoc_redirect":
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        return _text(body, data) if body is not None else ""
    if node.type == "herestring_redirect":
        word = next((c for c in node.children if c.is_named), None)
        return _word(word, data) if word is not None else ""
    return None


def _walk(node: Node, data: bytes, out: Commands, depth: int) -> None:
    if node.type == "command":
        _command(node, data, out, depth, [])
        return
    if node.type == "redirected_statement":
        stdin = [s for c in node.children if (s := _stdin_script(c, data)) is not None]
        for child in node.children:
            if child.type == "command":
                _command(child, data, out, depth, stdin)
            else:
                _walk(child, data, out, depth)
        return
    if node.type in ("declaration_command", "unset_command", "test_command"):
        out.commands.append(" ".join(_text(node, data).split()))
    for child in node.children:
        _walk(child, data, out, depth)


def _command(node: Node, data: bytes, out: Commands, depth: int, stdin: list[str]) -> None:
    words: list[str] = []
    name_dynamic = False
    stdin = stdin + [s for c in node.children if (s := _stdin_script(c, data)) is not None]
    for child in node.children:
        if child.type in ("variable_assignment", "file_redirect", "herestring_redirect", "heredoc_redirect"):
            _walk(child, data, out, depth)  # $(…) in an assignment or a redirect target runs too
            continue
        if child.type == "command_name":
            name_dynamic = _is_dynamic(child)
            words.append(_word(child.children[0], data) if child.children else _text(child, data))
        elif child.is_named:
            words.append(_word(child, data))
        _walk(child, data, out, depth)  # substitutions inside the words are commands of their own
    if not words:
        return
    if name_dynamic:
        out.unsure.append(f"the command name is computed at run time: {words[0]}")
    _add_words(words, out, depth, stdin)


def _add_words(words: list[str], out: Commands, depth: int, stdin: list[str] | None = None) -> None:
    out.commands.append(" ".join(" ".join(words).split()))
    name = words[0].rsplit("/", 1)[-1]
    if name != words[0]:
        out.commands.append(" ".join(" ".join([name, *words[1:]]).split()))  # /bin/rm is rm to the rules
    args = words[1:]
    if name in SHELLS:
        _shell(name, args, out, depth, stdin or [])
    elif name == "eval":
        _parse_into(" ".join(args), out, depth + 1)
    elif name in WRAPPERS:
        inner = _unwrap(name, args)
        if inner:
            _add_words(inner, out, depth + 1)
    elif name == "find":
        _find(args, out, depth)


def _shell(name: str, args: list[str], out: Commands, depth: int, stdin: list[str]) -> None:
    for i, arg in enumerate(args):
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
            if i + 1 < len(args):
                _parse_into(args[i + 1], out, depth + 1)
            else:
                out.unsure.append(f"{name} -c without a command")
            return
        if not arg.startswith("-"):
            return  # a script file: the rule for "bash script.sh" decides
    if stdin:  # bash <<EOF … EOF, sh <<< "…": the script is right here
        for script in stdin:
            _parse_into(script, out, depth + 1)
        return
    out.unsure.append(f"{name} reads its commands from standard input")


def _unwrap(name: str, args: list[str]) -> list[str]:
    """The command a wrapper runs: its arguments after the wrapper's own options."""
    takes_value = _VALUE_OPTS.get(name, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if name == "env" and "=" in arg and not arg.startswith("-"):
            i += 1
            continue
        if arg.startswith("-"):
            i += 2 if arg in takes_value else 1
            continue
        if name == "timeout" and arg[:1].isdigit():
            i += 1
            continue
        if name == "chroot":
            i += 1  # the new root
            break
        break
    return args[i:]


def _find(args: list[str], out: Commands, depth: int) -> None:
    paths = [a for a in args if not a.startswith(("-", "(", ")", "!"))][:1] or ["."]
    i = 0
    while i < len(args):
        if args[i] == "-delete":
            # find's own deletion is matched as the rm it amounts to.
            out.commands.append(f"rm -rf {paths[0]}")
        elif args[i] in _FIND_EXEC:
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "\\;", "+")), len(args))
            inner = args[i + 1 : end]
            if inner:
                _add_words(inner, out, depth + 1)
            i = end
        i += 1
