"""Every simple command a bash command line would run, for the permission rules.

A rule such as ``"rm *": "deny"`` must see ``rm`` wherever it hides: after ``&&`` or ``;``, in a
pipeline, a subshell, a function, ``$(…)``, backticks or ``<(…)`` (also inside an argument), however
it is spelled (``$'rm'``, ``r\\⏎m``, ``"r"m``, ``r{m,}``, ``/usr/bin/r[m]``), behind a command that runs
another (``sudo``, ``env -S``, ``xargs``, ``find -exec``, ``exec -a``, see tools/shell_wrappers.py), inside
a command line that a shell, ``eval``, ``trap`` or an alias runs, or behind a name ``alias`` or
``hash -p`` gave it. The line is parsed with tree-sitter-bash (the grammar OpenCode uses), the words
normalised as bash will see them (tools/shell_words.py); each command comes back as its words joined
by single spaces, and a path's command also by its basename (``/bin/rm`` is ``rm`` to the rules).
What cannot be known before the line runs (a parse error, a command name from a variable or a
substitution, a shell reading its script from a pipe) is reported as ``unsure``, so the caller asks
instead of allowing.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from agentcli.tools import shell_programs, shell_proof, shell_words
from agentcli.tools.base import PermissionRequest
from agentcli.tools.shell_git import git
from agentcli.tools.shell_programs import Verdict
from agentcli.tools.shell_words import Word
from agentcli.tools.shell_wrappers import RUNNERS, runs

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_MAX_DEPTH = 8  # sh -c "sh -c '…'" nesting we follow before giving up (and asking)
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
# Nodes that hold no command (no substitution can hide in them): not walked into.
_INERT = frozenset({"word", "raw_string", "ansi_c_string", "number", "variable_name", "comment"})
_ADDS_WORDS = frozenset({"xargs", "find", "parallel"})  # the commands they run get words at run time


@dataclass
class Commands:
    commands: list[str] = field(default_factory=list)  # normalised simple commands, in order
    unsure: list[str] = field(default_factory=list)  # why some part could not be known
    # Commands whose name is known but not every word: the words known before the line runs.
    partial: list[str] = field(default_factory=list)
    # Commands a program may run through its arguments ("" is anything): a rule naming one concerns it.
    maybe: list[str] = field(default_factory=list)


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def split_commands(line: str) -> Commands:
    split = _Split()
    split.line(line, 0)
    out = split.out
    out.commands = list(dict.fromkeys(out.commands))
    out.unsure = list(dict.fromkeys(out.unsure))
    out.partial = list(dict.fromkeys(out.partial))
    out.maybe = list(dict.fromkeys(out.maybe))
    return out


def bash_request(command: str) -> PermissionRequest:
    """The permission question for running ``command``: one subject per command it would run. The
    bash tool and the chat's ``!command`` both ask it, so the same rules hold for both."""
    parsed = split_commands(command)
    return PermissionRequest(
        tool="bash",
        title=command,
        patterns=parsed.commands or [" ".join(command.split())],
        unsure=parsed.unsure,
        partial=parsed.partial,
        maybe=parsed.maybe,
    )


def _stdin_script(node: Node, data: bytes) -> str | None:
    """The text a heredoc or here-string feeds to the command's standard input."""
    if node.type == "heredoc_redirect":
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        return shell_words.text(body, data) if body is not None else ""
    if node.type == "herestring_redirect":
        word = next((c for c in node.children if c.is_named), None)
        if word is None:
            return ""
        found = shell_words.words(word, data)
        return " ".join(w.text for w in found) if found else shell_words.text(word, data)
    return None


# Commands that bind the variables they are given: a variable one of them names has unknown values.
_BINDERS = frozenset({"read", "mapfile", "readarray", "getopts", "printf", "wait", "select", "declare"})


def static_values(root: Node, data: bytes) -> dict[str, list[str]]:
    """Variables every binding of which in the line is a value written in it: a plain assignment, a
    ``for`` loop over written words (a glob stands for the files it matches, data). Any other binding
    (a substitution, ``read``, an array, a loop over ``"$@"``) makes a variable unknown."""
    values: dict[str, list[str]] = {}
    unknown: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        stack += node.children
        if node.type == "variable_assignment":
            name = node.child_by_field_name("name") or node.children[0]
            value = node.child_by_field_name("value")
            found = shell_words.words(value, data) if value is not None else [Word("")]
            _bind(
                values,
                unknown,
                shell_words.text(name, data),
                found,
                value is not None and value.type == "array",
            )
        elif node.type == "for_statement" and (var := node.child_by_field_name("variable")) is not None:
            items = node.children_by_field_name("value")
            found = [w for v in items for w in shell_words.words(v, data) or [Word("", dynamic=True)]]
            _bind(values, unknown, shell_words.text(var, data), found, not items)
        elif (
            node.type == "command"
            and shell_words.text(node.child_by_field_name("name") or node, data) in _BINDERS
        ):
            unknown |= {shell_words.text(c, data).split("=", 1)[0] for c in node.named_children}
    return {k: v for k, v in values.items() if k not in unknown}


def _bind(
    values: dict[str, list[str]], unknown: set[str], name: str, found: list[Word] | None, odd: bool
) -> None:
    if odd or found is None or any(w.dynamic for w in found):
        unknown.add(name)
    else:
        values.setdefault(name, []).extend(w.text for w in found)


class _Split:
    def __init__(self) -> None:
        self.out = Commands()
        self.aliases: dict[str, str] = {}  # names `alias` or `hash -p` defined earlier in the line
        self.piped = False  # the command being walked reads a pipe
        self._tree: tuple[Node, bytes] | None = None  # the line being walked, for its variables
        self._known: dict[str, list[str]] | None = None

    def known(self) -> dict[str, list[str]]:
        """The line's variables whose every value is written in it (``for f in *.py``, ``x=1``)."""
        if self._known is None:
            self._known = static_values(*self._tree) if self._tree is not None else {}
        return self._known

    def line(self, source: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.out.unsure.append("shell commands nested too deeply")
            return
        self._parse(source, depth)
        if "\\\n" in source:
            # bash drops backslash-newline before it splits words (r\⏎m is rm); tree-sitter does not.
            self._parse(source.replace("\\\n", ""), depth)

    def _parse(self, source: str, depth: int) -> None:
        data = source.encode("utf-8")
        tree = _parser().parse(data)
        if tree.root_node.has_error:
            self.out.unsure.append("the command line could not be parsed")
            self._fallback(source, depth)
        outer = self._tree, self._known
        self._tree, self._known = (tree.root_node, data), None
        self._walk(tree.root_node, data, depth)
        self._tree, self._known = outer

    def _fallback(self, source: str, depth: int) -> None:
        """What tree-sitter cannot parse (``{r,x}m``, ``r[m]``) is already asked; split it the plain
        way too, so a command a deny rule names is denied rather than asked."""
        lexer = shlex.shlex(source, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        current: list[Word] = []
        try:
            for token in lexer:
                if token and all(c in ";&|()<>" for c in token):
                    self.run(current, depth + 1, [])
                    current = []
                    continue
                expanded = shell_words.expand_braces(token) if "{" in token else [token]
                current += [Word(t, pattern=shell_words.glob_pattern(t)) for t in expanded or [token]]
        except ValueError:
            pass  # an unclosed quote: nothing more to learn
        self.run(current, depth + 1, [])

    def _walk(self, node: Node, data: bytes, depth: int) -> None:
        kind = node.type
        if (doubt := shell_proof.node_doubt(node, data)) is not None:
            self.out.unsure.append(doubt)
        if kind == "variable_assignment":
            self._assignment(node, data)
        if kind == "command":
            self._command(node, data, depth, [])
            return
        if kind == "redirected_statement":
            stdin = [s for c in node.children if (s := _stdin_script(c, data)) is not None]
            for child in node.children:
                if child.type == "command":
                    self._command(child, data, depth, stdin)
                else:
                    self._walk(child, data, depth)
            return
        if kind == "pipeline":
            for i, child in enumerate(c for c in node.children if c.is_named):
                before, self.piped = self.piped, self.piped or i > 0
                self._walk(child, data, depth)
                self.piped = before
            return
        if kind in ("declaration_command", "unset_command", "test_command"):
            self.out.commands.append(" ".join(shell_words.text(node, data).split()))
        for child in node.children:
            if child.is_named and child.type not in _INERT:
                self._walk(child, data, depth)

    def _assignment(self, node: Node, data: bytes, exported: bool = False) -> None:
        name = node.child_by_field_name("name") or node.children[0]
        if (doubt := shell_proof.assignment_doubt(shell_words.text(name, data), exported)) is not None:
            self.out.unsure.append(doubt)

    def _command(self, node: Node, data: bytes, depth: int, stdin: list[str]) -> None:
        found: list[Word] = []
        piped, self.piped = self.piped, False  # a substitution in its words reads no pipe
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                self._assignment(child, data, exported=True)  # the command's environment
            if kind == "variable_assignment" or kind in _REDIRECTS:
                if (script := _stdin_script(child, data)) is not None:
                    stdin = [*stdin, script]
                self._walk(child, data, depth)  # $(…) in an assignment or a redirect target runs too
                continue
            if not child.is_named:
                continue
            word = child
            if kind == "command_name":
                word = child.children[0] if child.child_count else child
                kind = word.type
            if kind == "word":  # the common case, kept short: it is every word of every line
                plain = data[word.start_byte : word.end_byte].decode("utf-8", errors="replace")
                if shell_words.is_plain(plain):
                    found.append(Word(plain))
                    continue
            expanded = shell_words.words(word, data)
            if expanded is None:  # too many to spell out: only a command name made so is unknown
                expanded = [Word(shell_words.text(word, data), dynamic=not found)]
            found += expanded
            if kind not in _INERT:
                self._walk(word, data, depth)  # substitutions inside the words are commands of their own
        self.run(found, depth, stdin, piped=piped)

    def run(
        self, words: list[Word], depth: int, stdin: list[str], partial: bool = False, piped: bool = False
    ) -> None:
        """One simple command, its words as bash passes them (``partial``: more words come at run
        time, as xargs adds its input)."""
        if not words:
            return
        if depth > _MAX_DEPTH:
            self.out.unsure.append("commands nested too deeply")
            return
        name, args = words[0], words[1:]
        self._subjects(words, partial)
        if name.dynamic:
            self.out.unsure.append(f"the command name is computed at run time: {name.text}")
            return
        if name.pattern is not None:
            self.out.unsure.append(f"the command name is a pattern matched against files: {name.text}")
            for candidate in shell_words.command_candidates(name.pattern):
                self.run([Word(candidate), *args], depth + 1, stdin)
        if name.text in self.aliases:
            self._alias(name.text, args, depth)
        base = name.text.rsplit("/", 1)[-1]
        self._program(base, args, partial, depth, piped, stdin)
        inner = runs(base, args)
        if inner is None:
            return
        self.out.commands += inner.subjects
        self.out.unsure += inner.unsure
        self._given(inner.assignments)
        for command in inner.commands:
            # xargs gives its command words read from its input: as if that input were piped into it
            self.run(command, depth + 1, [], partial or base in _ADDS_WORDS, piped=base == "xargs")
        for script in inner.scripts:
            if script.dynamic:
                self.out.unsure.append(f"{name.text} runs a command line computed at run time: {script.text}")
            self.line(script.text, depth + 1)
        self.aliases.update(inner.aliases)  # after its own value was read: alias ls='ls -a' is no loop
        if inner.reads_stdin:
            if not stdin:  # bash <<EOF … EOF, sh <<< "…": the script is right here
                self.out.unsure.append(f"{name.text} reads its commands from standard input")
            for script_text in stdin:
                self.line(script_text, depth + 1)

    def _alias(self, name: str, args: list[Word], depth: int) -> None:
        quoted = " ".join(a.text if a.dynamic else shlex.quote(a.text) for a in args)
        value = self.aliases.pop(name)  # bash does not expand an alias inside itself
        self.line(f"{value} {quoted}", depth + 1)
        self.aliases[name] = value

    def _given(self, assignments: list[Word]) -> None:
        """NAME=value words a wrapper puts in its command's environment (env, sudo)."""
        for assignment in assignments:
            if (doubt := shell_proof.assignment_doubt(assignment.text.partition("=")[0])) is not None:
                self.out.unsure.append(doubt)

    def _program(
        self, base: str, args: list[Word], partial: bool, depth: int, piped: bool, stdin: list[str]
    ) -> None:
        """What the program itself runs beyond its words (an interpreter's -c, a git alias, a tar
        --to-command, the arguments of a program whose grammar is unknown)."""
        if (doubt := shell_proof.command_doubt(base, args)) is not None:
            self.out.unsure.append(doubt)
        if base == "git":
            found = git(args)
            for form in found.forms:
                if found.partial:  # an alias: its name says nothing of what it runs
                    form = [form[0], Word(form[1].text, dynamic=True), *form[2:]]
                self._subjects(form, partial)
            if found.doubt:
                self.out.unsure.append(found.doubt)
            self._verdict(base, found.verdict, depth)
        elif base not in RUNNERS and base not in shell_proof.ALWAYS:
            self._verdict(base, shell_programs.judge(base, args, piped, stdin, self.known), depth)

    def _verdict(self, name: str, verdict: Verdict, depth: int) -> None:
        self.out.unsure += verdict.unsure
        self.out.maybe += verdict.maybe
        for script in verdict.scripts:
            if script.dynamic:
                self.out.unsure.append(f"{name} runs a command line computed at run time: {script.text}")
            self.line(script.text, depth + 1)
        for command in verdict.commands:
            self.run(command, depth + 1, [], partial=True)
        for line in verdict.maybe_lines:  # plain words it may run as a command line: what they would run
            maybe = _Split()
            maybe.line(line, depth + 1)
            self.out.maybe += maybe.out.commands + maybe.out.partial + maybe.out.maybe
            if maybe.out.unsure:
                self.out.maybe.append("")

    def _subjects(self, words: list[Word], partial: bool = False) -> None:
        cut = next((i for i, w in enumerate(words) if i and (w.dynamic or w.pattern is not None)), None)
        texts = [w.text for w in words]
        spellings = [texts]
        if "/" in texts[0] and (base := texts[0].rsplit("/", 1)[-1]):
            spellings.append([base, *texts[1:]])  # /bin/rm is rm to the rules
        for spelled in spellings:
            self.out.commands.append(" ".join(" ".join(spelled).split()))
            if cut is not None or partial:  # the words known before it runs: what a rule can judge
                self.out.partial.append(" ".join(" ".join(spelled[:cut]).split()))
