"""Ways bash runs code that a static reading of its words cannot see, by class.

Each class has two lists. TUNING holds the forms the issue (#25) reported and the ones the analysis
(tools/shell_proof.py) was written against; HELD_OUT was written before the held-out run and never
used to change the analysis, so its pass rate says how the analysis does on forms nobody listed.
X is a folder a form would delete; every form must be asked (never allowed) under the issue's rules,
and refused under --yes, where a deny rule could be behind it.
"""

from __future__ import annotations

# The config of the trial.
RULES = {"bash": {"*": "allow", "rm *": "deny", "git push *": "deny", "curl *": "ask"}}

TUNING: dict[str, list[str]] = {
    "eval and its cousins": [
        "eval -- 'rm -rf X'",
        "x='rm -rf X'; eval \"$x\"",
        "source <(echo rm -rf X)",
        "trap 'rm -rf X' EXIT",
    ],
    "a command name known only when it runs": [
        "${C:-rm} -rf X",
        "C=rm; $C -rf X",
        "$(echo rm) -rf X",
    ],
    "arithmetic": [
        "x='a[$(rm -rf X)]'; ((x))",
        "x='a[$(rm -rf X)]'; echo $((x))",
        "x='a[$(rm -rf X)]'; let x",
        "x='a[$(rm -rf X)]'; [[ $x -eq 1 ]]",
        "a=([x]=1)",
    ],
    "a builtin evaluating a subscript": [
        "read 'a[$(rm -rf X)]' <<< 1",
        "unset 'a[$(rm -rf X)]'",
        "printf -v 'a[$(rm -rf X)]' x",
        "declare 'a[$(rm -rf X)]=1'",
    ],
    "parameter expansion that runs code": [
        "x='$(rm -rf X)'; echo ${x@P}",
        "x='a[$(rm -rf X)]'; echo ${!x}",
    ],
    "an interpreter's inline program": [
        "python3 -c 'import os; os.system(\"rm -rf X\")'",
        "perl -e 'system(\"rm -rf X\")'",
    ],
    "env splitting a string": [
        "env -vS'rm -rf X'",
    ],
    "the environment loading code": [
        "BASH_ENV=<(echo rm -rf X) bash -c true",
        "env 'BASH_FUNC_f%%=() { rm -rf X; }' bash -c f",
        "PS4='$(rm -rf X)'; set -x; true",
    ],
    "a shell's start-up files": [
        "bash --rcfile <(echo rm -rf X) -i",
    ],
    "functions and aliases made in the line": [
        'f() { "$@"; }; f rm -rf X',
        "alias ls='rm -rf X'",
    ],
    "git options that change what runs": [
        "git -C . push",
        "git -c k=v push",
        "git --no-pager push",
        "git p",
        "git send-pack origin",
    ],
}

HELD_OUT: dict[str, list[str]] = {
    "eval and its cousins": [
        "eval \"$(printf 'rm -rf X')\"",
        "source ./cleanup.sh",
        "command eval 'rm -rf X'",
        "trap -- 'rm -rf X' DEBUG",
        "fc -s rm",
    ],
    "a command name known only when it runs": [
        "${C:=rm} -rf X",
        '"${C[0]}" -rf X',
        "`printf rm` -rf X",
        "${C%%x}m -rf X",
    ],
    "arithmetic": [
        "for ((i=x; i<1; i++)); do :; done",
        "[[ x -lt 1 ]]",
        "echo ${z:x}",
        "declare -i n; n=x",
        "case $((x)) in *) ;; esac",
        "arr[x]=1",
        "echo ${arr[x]}",
    ],
    "a builtin evaluating a subscript": [
        "mapfile -t 'a[x]' < /dev/null",
        "wait -p 'a[x]' -n",
        "test -v 'a[x]'",
        "[ -v 'a[x]' ]",
        "[[ -v a[x] ]]",
        "export 'a[x]'",
        "local -n r=x",
        "getopts ab 'a[x]'",
        "typeset -n r=x; echo $r",
    ],
    "parameter expansion that runs code": [
        "echo ${x@A}",
        "echo ${!prefix@}",
        "echo ${x:$n:1}",
        "echo ${x: -1}",
    ],
    "an interpreter's inline program": [
        'node -e \'require("child_process").execSync("rm -rf X")\'',
        "ruby -e 'system(\"rm -rf X\")'",
        "php -r 'system(\"rm -rf X\");'",
        "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('X')\nEOF",
        "perl -we 'unlink'",
        "awk 'BEGIN{system(\"rm -rf X\")}'",
        "lua -e 'os.execute(\"rm -rf X\")'",
        "python3 -Ic 'x'",
    ],
    "env splitting a string": [
        "env --split-string='rm -rf X'",
        "env -iS 'rm -rf X'",
        "env -u A -S'rm -rf X'",
        "/usr/bin/env -S rm -rf X",
    ],
    "the environment loading code": [
        "ENV=./x sh -i",
        "PROMPT_COMMAND='rm -rf X' bash -i",
        "SHELLOPTS=xtrace PS4='$(rm -rf X)' bash -c true",
        "LD_PRELOAD=./evil.so ls",
        "GIT_SSH_COMMAND='rm -rf X' git fetch",
        "export BASH_ENV=./x; bash -c true",
        "env PATH=. ls",
        "PAGER='rm -rf X' git log",
        "sudo LD_PRELOAD=x.so ls",
        "NODE_OPTIONS='--require ./x.js' node app.js",
    ],
    "a shell's start-up files": [
        "bash --init-file ./x",
        "bash -l -c true",
        "sh -i < /dev/null",
        "bash --login",
    ],
    "functions and aliases made in the line": [
        "ls() (true); ls",
        "shopt -s expand_aliases; alias g=git; g push",
        "function cleanup { true; }; cleanup",
    ],
    "git options that change what runs": [
        "git --git-dir=.git push",
        "git -C . -c user.name=x push",
        "git -P push",
        "git --work-tree=. push origin",
        "git receive-pack .",
        "git pu",
        "git -c alias.p=push p",
        "git --exec-path=. push",
        "git --namespace=x push",
    ],
}
