"""shellsplit: tricky command lines, and generated ones checked against what a real bash runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.shellsplit.programs import invocations
from meowgent.shellsplit.reader import SplitResult, parse_segment, split_command
from meowgent.shellsplit.words import Problem, Redirect, SimpleCommand, Word

SPLITS = [
    ("ls && rm -rf /", ["ls", "rm -rf /"]),
    ('echo "a;b"', ['echo "a;b"']),
    ("echo 'x && y'", ["echo 'x && y'"]),
    ("git log | head; curl x | wc", ["git log", "head", "curl x", "wc"]),
    ("echo $(rm -rf ~)", ["rm -rf ~", "echo $(...)"]),
    ("echo `whoami`", ["whoami", "echo $(...)"]),
    ('echo "$(id)"', ["id", 'echo "$(...)"']),
    ("echo '$(id)'", ["echo '$(id)'"]),
    ("(cd /; rm x)", ["cd /", "rm x"]),
    ("a || b & c", ["a", "b", "c"]),
    ("a |& b", ["a", "b"]),
    ("FOO=1 BAR=2 rm x", ["FOO=1 BAR=2 rm x"]),
    (r"\rm x", [r"\rm x"]),
    ('"rm" x', ['"rm" x']),
    ("ls # ; rm x", ["ls"]),
    ("ls;# rm x\nrm y", ["ls", "rm y"]),
    ("echo a#b", ["echo a#b"]),
    ("ls\nrm x\n", ["ls", "rm x"]),
    ("x=$(curl evil) ls", ["curl evil", "x=$(...) ls"]),
    ("echo $(echo $(rm x))", ["rm x", "echo $(...)", "echo $(...)"]),
    ('echo "$(echo ")")"', ['echo ")"', 'echo "$(...)"']),
    ("echo ${x:-$(rm y)}", ["rm y", "echo ${x:-$(...)}"]),
    ("echo $((1 + 2))", ["echo $((...))"]),
    ("echo ${x:-'}'}", ["echo ${x:-'}'}"]),  # the quotes hold the brace, as in bash
    ("{ ls; rm y; }", ["ls", "rm y"]),
    ("if true; then rm x; else ls; fi", ["true", "rm x", "ls"]),
    ("for f in *; do rm $f; done", ["for f in *", "rm $f"]),
    ("while ! ls; do sleep 1; done", ["ls", "sleep 1"]),
    ("time rm x", ["rm x"]),
    ("time -p rm x", ["rm x"]),  # bash's `time` keyword takes -p
    ("time A=1 B=2 rm x", ["A=1 B=2 rm x"]),  # assignments after the keyword are assignments
    ("ls | time rm x", ["ls", "time rm x"]),  # only where a pipeline starts: here it is /usr/bin/time
    ("time; -p x", ["-p x"]),
    ("echo \\\n  rm x", ["echo rm x"]),  # a line continuation, not a newline
    ("ls 2>&1 >out", ["ls 2>&1 > out"]),
    # tree-sitter attaches the redirection to the whole list; bash only to `echo`: both count as writing
    ("a && echo x > out.txt", ["a > out.txt", "echo x > out.txt"]),
    ("touch >out c", ["touch c > out"]),  # tree-sitter reads `c` as a second target; bash gives it to touch
    # tree-sitter reads on past the line break in a third pipeline stage (`cat rm -rf docs`); bash ends `cat` there
    ("a | b | cat \n rm -rf docs && y", ["a", "b", "cat", "rm -rf docs", "y"]),
    ("ls &>/dev/null", ["ls &> /dev/null"]),
    ("cat <<EOF\nrm x\nEOF", ["cat << EOF"]),  # the body is cat's input
    ("cat <<'E' >out\n$(rm x)\nE\nwc", ["cat << 'E' > out", "wc"]),  # quoted: the body stays literal
    ("find . -name '*.tmp' -exec rm {} \\; -print", ["find . -name '*.tmp' -exec rm {} \\; -print", "rm {}"]),
    ("ls | xargs -n 1 rm -f", ["ls", "xargs -n 1 rm -f", "rm -f ..."]),  # xargs adds what it reads
    ("   ", []),
    ("# only a comment", []),
]


@pytest.mark.parametrize(("command", "segments"), SPLITS)
def test_split(command: str, segments: list[str]) -> None:
    result = split_command(command)
    assert (result.segments, result.problems) == (tuple(segments), ())


# What bash's grammar has and the reader does not read: the line is hidden, with the kind of problem.
UNREAD = [
    ('echo "oops', "syntax"),
    ("rm -rf x 'oops", "syntax"),
    ("echo `ls", "syntax"),
    ("echo $(ls", "syntax"),
    ("(ls", "syntax"),
    ("ls)", "syntax"),
    ("{ ls", "syntax"),
    ("ls; }", "syntax"),
    ("! ! rm x", "syntax"),  # tree-sitter reads the second `!` as a command's name
    ("! echo *\n\\touch b", "syntax"),  # tree-sitter takes the line break into the word `\touch`; bash runs touch
    ("cat f >> g\n\\touch b", "syntax"),  # the same after a redirection: tree-sitter gives `\touch` to cat
    ("time ! rm x", "syntax"),
    ("ls; ( rm x; }", "syntax"),
    ("ls >", "syntax"),
    ("echo $((rm x) )", "syntax"),  # bash runs a subshell; tree-sitter reads broken arithmetic
    ("echo $(cat <<E)\nbody\nE", "syntax"),
    ("case $x in a) rm x;; esac", "block"),
    ("select x in a; do rm x; done", "block"),
    ("coproc rm x", "block"),
    ("f() { rm x; }", "defines"),
    ("function f { rm x; }", "defines"),
    ("a=(1 2)", "defines"),
    ("for ((i = 0; i < 1; i++)); do rm x; done", "arithmetic"),
    ("((y)); ls", "arithmetic"),
    ("cat <(curl evil)", "process"),
    ("tee >(wc) < x", "process"),
    ('echo "`echo \\"a;b\\"`"', "quoting"),
    ("echo `echo \\`rm x\\``", "quoting"),  # bash takes the escapes out, then runs `rm x`
    ("echo \"${x:-'$(rm x)'}\"", "quoting"),  # inside double quotes the single quotes are characters
    ("r\\\nm x", "quoting"),  # a line continuation inside a word joins it: bash runs `rm x`
    ("cat <<EOF >out\n$(rm x) `ls`\nEOF\nwc", "heredoc"),
    ("cat <<EOF\n$HOME\nEOF", "heredoc"),
    ("cat <<E $(ls\n)\nbody\nE", "heredoc"),
    ("cat <<E | sh\nrm x\nE", "heredoc"),  # tree-sitter holds the rest of the line inside the here-document
    # In $( … ), bash reads the body again: the differential test saw it run `touch` from a quoted one.
    ("v=$( if cat <<'E'\n$(touch af)\nE\n\nthen cat <<'E'\n$(touch af)\nE\n\nfi\n) ls", "heredoc"),
    ("echo " + "$(" * 2000 + ")" * 2000, "too_deep"),
    ("{ " * 5000 + "ls" + "; }" * 5000, "too_deep"),
]


@pytest.mark.parametrize(("command", "kind"), UNREAD)
def test_what_the_reader_does_not_read_is_hidden(command: str, kind: str) -> None:
    result = split_command(command)
    assert kind in {problem.kind for problem in result.problems}, result.problems


# Lines whose meaning their text does not pin down: (line, segments, the problem's kind and snippet).
NOT_PINNED = [
    ("git status ${x:=\\$(rm x)} ${x@P}", ["git status ${x:=\\$(rm x)} ${x@P}"], "expansion", "${x@P}"),
    ("git status ${y:=a[\\$(rm x)]} $((y))", ["rm x", "git status ${y:=a[\\$(...)]} $((...))"], "arithmetic", "$((y))"),
    ("git status ${a[x]}", ["git status ${a[x]}"], "expansion", "${a[x]}"),
    ("git status ${!x}", ["git status ${!x}"], "expansion", "${!x}"),
    ("echo ${x:1}", ["echo ${x:1}"], "expansion", "${x:1}"),
    ("echo $[y]", ["echo $((...))"], "arithmetic", "$[y]"),
    ("echo $(( $(rm x) + 1 ))", ["echo $((...))"], "arithmetic", "$(( $(rm x) + 1 ))"),
    ("((y)); ls", ["ls"], "arithmetic", "(("),
    ("let y", ["let y"], "arithmetic", "let y"),
    ("[[ $y -eq 1 ]]", ["[[ $y -eq 1 ]]"], "arithmetic", "[[ $y -eq 1 ]]"),
    ("a[y]=1 ls", ["a[y]=1 ls"], "subscript", "a[y]=1"),
    ("test -v 'a[$(rm x)]'", ["test -v 'a[$(rm x)]'"], "subscript", "test -v a[$(rm x)]"),
    ("declare -i n=y", ["declare -i n=y"], "evaluates", "declare -i n=y"),
    ("eval 'rm x'", ["eval 'rm x'", "rm x"], "runs_text", "eval"),
    ("eval rm \\; ls", ["eval rm \\; ls", "rm", "ls"], "runs_text", "eval"),  # eval runs `rm ; ls`
    ("bash -c 'rm x'", ["bash -c 'rm x'", "rm x"], "runs_text", "bash -c"),
    ("sudo -u me sh -ec 'ls; rm x' arg0", ["sudo -u me sh -ec 'ls; rm x' arg0", "ls", "rm x"], "runs_text", "sh -c"),
    ("trap 'rm x' EXIT", ["trap 'rm x' EXIT", "rm x"], "runs_later", "trap 'rm x'"),
    (
        "find -exec sh -c 'rm $0' {} +",
        ["find -exec sh -c 'rm $0' {} +", "sh -c 'rm $0' {}", "rm $0"],
        "runs_text",
        "sh -c",
    ),
    ("curl x | sh", ["curl x", "sh"], "runs_input", "sh"),
    ("bash ./build.sh", ["bash ./build.sh"], "runs_file", "bash ./build.sh"),
    ("source ./env.sh", ["source ./env.sh"], "runs_file", "source ./env.sh"),
    ("$'\\x72m' x", ["$'\\x72m' x"], "escapes", "$'\\x72m'"),
    ("X=rm; $X x", ["X=rm", "$X x"], "unknown_command", "$X"),
    ('"$(echo rm)" x', ["echo rm", '"$(...)" x'], "unknown_command", '"$(...)"'),
    ('eval "$cmd"', ['eval "$cmd"'], "unknown_text", 'eval "$cmd"'),
    ('bash -c "$X"', ['bash -c "$X"'], "unknown_text", 'bash -c "$X"'),
    ("env -S 'rm x'", ["env -S 'rm x'", "rm x"], "runs_text", "env -S"),
    ("ls | xargs $X", ["ls", "xargs $X"], "unknown_word", "xargs $X"),
    ("eval 'rm \"x'", ["eval 'rm \"x'", "rm"], "syntax", '"x'),
    ('echo "oops', ["echo"], "syntax", '"oops'),
]


@pytest.mark.parametrize(("command", "segments", "kind", "snippet"), NOT_PINNED)
def test_a_line_whose_meaning_is_not_pinned_down_is_hidden(
    command: str, segments: list[str], kind: str, snippet: str
) -> None:
    result = split_command(command)
    assert (result.segments, result.hidden) == (tuple(segments), True)
    assert Problem(kind, snippet) in result.problems, result.problems


@pytest.mark.parametrize(
    "command",
    ["echo ${x} ${x:-a} ${x#*/} ${x%%.*} ${x//a/b} ${#x} ${a[@]} ${#a[*]} ${x^^} $1 ${10}", "echo $((1 + 2 * 3))"],
)
def test_expansions_that_evaluate_nothing_stay_pinned(command: str) -> None:
    assert not split_command(command).hidden


# Issue 17: one line for each way a line's text can leave what it runs open. Each is hidden.
HIDDEN_LINES = [
    # wrappers with options their tables do not know, or options that hide what runs
    "sudo --bogus rm x",
    "sudo -s rm x",
    "sudo -i rm x",
    "doas -Z rm x",
    "env -Z rm x",
    "env -P /tmp rm x",
    "nice -Q rm x",
    "ionice -Z rm x",
    "timeout --bogus 5 rm x",
    "stdbuf -Z rm x",
    "setsid -Z rm x",
    "nohup -x rm x",
    "xargs --bogus rm",
    "command -Z rm x",
    "builtin -Z rm",
    "exec -Z rm x",
    "/usr/bin/time --bogus rm x",
    "flock -Z f rm x",
    "chroot --bogus / rm x",
    "unshare --bogus rm x",
    "nsenter --bogus rm x",
    "setpriv --bogus rm x",
    "runuser -Z -u bob rm x",
    "strace -Q rm x",
    "ltrace -Q rm x",
    "valgrind --bogus rm x",
    "taskset --bogus 1 rm x",
    "chrt --bogus 1 rm x",
    "prlimit --bogus rm x",
    "busybox --bogus rm x",
    "pkexec --bogus rm x",
    "sudo $OPT rm x",
    # variables bash or programs run
    "PS4='$(rm x)'; set -x; true",
    "PS0=x ls",
    "PROMPT_COMMAND='rm x' bash -i",
    "BASH_ENV=./x.sh bash -c ls",
    "ENV=./x sh -i",
    "SHELLOPTS=xtrace ls",
    "BASHOPTS=extdebug ls",
    "PATH=.:$PATH ls",
    "LD_PRELOAD=./x.so ls",
    "LD_AUDIT=./x.so ls",
    "LD_LIBRARY_PATH=. ls",
    "GIT_SSH_COMMAND='rm x' git fetch",
    "GIT_EXTERNAL_DIFF=./x git diff",
    "GIT_PAGER='rm x' git log",
    "PAGER='rm x' man ls",
    "EDITOR='rm x' git commit",
    "LESSOPEN='|rm x %s' less f",
    "export PS4='$(rm x)'",
    "declare -x PATH=.",
    "local LD_PRELOAD=x",
    "readonly PAGER=x",
    "typeset EDITOR=x",
    "env PS4=x bash -xc ls",
    "env LD_PRELOAD=./x.so ls",
    "sudo LD_PRELOAD=./x.so ls",
    "read PATH",
    "printf -v PATH %s .",
    "for PATH in .; do ls; done",
    'export "$N"=x',
    "env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm x' git log",
    "SHELL=./x flock f ls",
    "systemd-run -E LD_PRELOAD=x ls",
    "strace -E LD_PRELOAD=x ls",
    # callbacks and code bash runs later
    "trap 'rm x' EXIT",
    "mapfile -C 'rm x' -c 1 a",
    "readarray -C f a",
    "compgen -C 'rm x' y",
    "compgen -F f y",
    "complete -C 'rm x' ls",
    "complete -F f ls",
    "bind -x '\"\\C-x\": rm x'",
    "fc -s",
    # rebinding
    "hash -p /bin/rm ls; ls -rf docs",
    "alias ls='rm -rf'",
    "enable -n echo",
    "enable -f ./x.so foo",
    "ls() { rm x; }",
    "function ls { rm x; }",
    "command_not_found_handle() { rm x; }",
    "ls () (rm x)",
    # programs that run their argument as a shell line
    "script -c 'rm x'",
    "script -qc 'rm x' /dev/null",
    "flock f -c 'rm x'",
    "flock f --command 'rm x'",
    "su -c 'rm x' bob",
    "su bob -c 'rm x'",
    "runuser -u bob -c 'rm x'",
    "runuser bob -c 'rm x'",
    "sg wheel 'rm x'",
    "sg wheel -c 'rm x'",
    "ssh host rm x",
    "ssh -o ProxyCommand='rm x' host",
    "ssh -oLocalCommand=x -oPermitLocalCommand=yes host",
    "ssh -F ./cfg host",
    "watch rm x",
    "watch -n 1 'rm x'",
    "tmux new 'rm x'",
    "screen -dm rm x",
    "parallel rm ::: x",
    "at now",
    "batch",
    "crontab f",
    "expect -c 'exec rm x'",
    "dbus-run-session --dbus-daemon=./x ls",
    "systemd-run -p ExecStartPre=/bin/rm ls",
    "busybox sh -c 'rm x'",
    "eval 'rm x'",
    "bash -c 'rm x'",
    "sh -c 'rm x'",
    "env -S 'rm x'",
    "sudo -s",
    "git bisect run rm x",
    "git submodule foreach 'rm x'",
    "git rebase -x 'rm x' main",
    # programs whose options run code
    "git -c alias.x='!rm x' x",
    "git -c core.pager='rm x' log",
    "git --config-env=core.pager=X log",
    "git --exec-path=. status",
    "git clone --upload-pack='rm x' u",
    "git clone -u 'rm x' u",
    "git clone --upload='rm x' u",
    "git fetch --upload-pack='rm x' origin",
    "git pull --upload-pack='rm x'",
    "git ls-remote --upload-pack='rm x' u",
    "git archive --exec='rm x' --remote=u HEAD",
    "git push --receive-pack='rm x' origin",
    "git config alias.x '!rm x'",
    "git config core.pager 'rm x'",
    "git config --global core.sshCommand 'rm x'",
    "git config -e",
    "git difftool -x 'rm x'",
    "git grep -O'rm x' foo",
    "git filter-branch --tree-filter 'rm x'",
    "git clone --template=./t u",
    "git clone -c core.fsmonitor='rm x' u",
    "git init --template=./t",
    'git -c "$CFG" status',
    "rsync -e 'rm x' a b",
    "rsync --rsh='rm x' a b",
    "rsync --rsync-path='rm x' a h:b",
    "rsync -avze 'rm x' a b",
    "rsync -M--rsync-path=x a h:b",
    "tar --to-command='rm x' -xf a.tar",
    "tar -I 'rm x' -xf a.tar",
    "tar --use-compress-program='rm x' -xf a.tar",
    "tar --checkpoint=1 --checkpoint-action=exec='rm x' -cf a.tar .",
    "tar --info-script=./x -cf a.tar .",
    "tar -F ./x -cf a.tar .",
    "tar --new-volume-script=./x -cf a.tar .",
    "tar xIf 'rm x' a.tar",
    "tar --to-c='rm x' -xf a.tar",
    "tar -xvzf a.tgz --to-command=x",
    "zip -T -TT 'rm x' a.zip f",
    "zip --unzip-command='rm x' -T a.zip f",
    "sort --compress-program='rm x' f",
    "sort --compress='rm x' f",
    "scp -S ./x a h:b",
    "scp -o ProxyCommand='rm x' a h:b",
    "sftp -b batch h",
    "sed 's/a/b/e' f",
    "sed '1e rm x' f",
    "sed -n 'e rm x' f",
    "sed -e 's/a/b/' -e 'e rm x' f",
    'sed "s/a/$B/" f',
    "awk 'BEGIN{system(\"rm x\")}'",
    "awk '{print | \"rm x\"}' f",
    "awk '{print > \"out\"}' f",
    "awk '{\"rm x\" | getline}' f",
    "gawk -l ./x.so 'BEGIN{}'",
    "awk -f p.awk -e 'BEGIN{system(\"x\")}'",
    "find . -exec {} \\;",
    "ls | xargs -I{} {} x",
    "ls | xargs -I % sh -c %",
    "python -c 'import os'",
    "python3 -c x",
    "python3.12 -Ic x",
    "perl -e 'unlink x'",
    "perl -lane 'x' f",
    "perl -E say",
    "ruby -e x",
    "node -e x",
    "node -p x",
    "node --eval=x",
    "php -r x",
    "lua -e x",
    "luajit -e x",
    "Rscript -e x",
    "julia -e x",
    "python - <<EOF\nimport os\nEOF",
    "python3",
    "perl",
    "node",
    "deno eval x",
    "bun -e x",
    "make --eval='x:;rm x'",
    "make -f - all",
    "make SHELL='rm x'",
    "make -E 'x:'",
    "man -P 'rm x' ls",
    "man --pager='rm x' ls",
    "less '+!rm x' f",
    "vim -c '!rm x' f",
    "vim +'!rm x' f",
    "nvim --cmd x f",
    "view -c x f",
    "strace -o '|rm x' ls",
    "sqlite3 db '.shell rm x'",
    'sqlite3 db ".system rm x"',
    "gdb -ex 'shell rm x' ls",
    "wget -e use_askpass=x u",
    "wget --use-askpass=x u",
    "curl_x=1; $curl_x",
    "valgrind --db-command=x ls",
    "read -a PS4",
    "printf -vPATH %s .",
    "mapfile -t PATH",
    "wait -p PATH",
    "faketime --date-prog=./x 2020 ls",
    "emacs --eval '(shell-command \"rm x\")'",
    "ipython -c x",
    "tsx -e x",
    "pwsh -c x",
    "npx -c 'rm x'",
    "uv run --bogus rm x",
    "fakeroot -l ./x.so ls",
]
# And the lines people run every day: none is hidden, so a person with a deny rule can still work.
EVERYDAY = [
    "ls -la",
    "git status",
    "git log --oneline -5",
    "python -m pytest -q",
    "pip install -r requirements.txt",
    "npm test",
    "make",
    "grep -rn foo .",
    "sudo -u bob ls",
    "env FOO=1 ls",
    "timeout 5 ls",
    "xargs -0 rm",
    "git diff HEAD~1",
    "git commit -m 'fix: x'",
    "git -c user.name=x -c user.email=y commit -m m",
    "git -C repo status",
    "python3 x.py",
    "pytest -x tests",
    "cat f | head -5",
    "find . -name '*.py' -exec grep -l foo {} +",
    "find . -type f -name '*.tmp' -delete",
    "tar -xzf a.tar.gz",
    "tar czf a.tgz dir",
    "curl -sSL https://x.example | head",
    "sed -n '1,5p' f",
    "sed -i 's/a/b/' f",
    "awk '{print $1}' f",
    "awk -F, '$3 > 100 {print $2}' f",
    "awk 'NR>1 {s+=$2} END {print s}' f",
    "sort -u f",
    "cd src && make test",
    "for f in *.py; do wc -l $f; done",
    "nice -n 10 make",
    "time -p make",
    "FOO=bar make",
    "export FOO=bar",
    "wc -l $(git ls-files)",
    "python -m venv .venv && .venv/bin/pip install -e .",
    "node x.js",
    "npm run build",
    "cargo test",
    "go test ./...",
    "rm -rf build",
    "ps aux | grep python",
    "python --version",
    "sudo apt-get install -y jq",
    "uv run pytest -q",
    "poetry run pytest",
    "npx prettier --check .",
    "node --test",
    'export "FOO=$BAR"',
    "read -r line",
]


@pytest.mark.parametrize("command", HIDDEN_LINES)
def test_each_way_to_leave_what_runs_open_is_hidden(command: str) -> None:
    assert split_command(command).hidden, split_command(command)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_lines_are_not_hidden(command: str) -> None:
    assert not split_command(command).hidden, split_command(command).problems


def test_issue_17_attacks() -> None:
    """`env -iu HOME` is `-i -u HOME`, so the rm is seen; the others hide what they run."""
    env = split_command("env -iu HOME rm -rf docs")
    assert not env.hidden
    runs = [" ".join(word.value for word in words) for words in invocations(parse_segment(env.segments[0]).words)]
    assert runs == ["env -iu HOME rm -rf docs", "rm -rf docs"]
    kinds = {
        "PS4='$(rm -rf docs)'; set -x; true": "variable",
        "hash -p /bin/rm ls; ls -rf docs": "rebinds",
        "flock f -c 'rm -rf docs'": "runs_text",
        "git -c alias.x='!rm -rf docs' x": "runs_code",
    }
    for command, kind in kinds.items():
        assert kind in {problem.kind for problem in split_command(command).problems}, command
    assert "rm -rf docs" in split_command("flock f -c 'rm -rf docs'").segments  # a literal text is split


def test_ansi_c_words_have_their_decoded_value() -> None:
    assert command_word("$'\\x72m' x") == "rm"
    assert command_word("$'\\162\\u006d' x") == "rm"
    assert parse_segment("echo $'a\\tb\\'c'").words[1].literal == "a\tb'c"


def command_word(segment: str) -> str | None:
    """The command a segment runs (`FOO=1 "rm" x 2>&1` gives `rm`); None if none, or only known when it runs."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return None
    return words[0].literal if words else None


COMMAND_WORDS = [
    ("ls -la", "ls"),
    ("FOO=1 BAR=2 rm x", "rm"),
    ("x=$(...) ls", "ls"),
    (r"\rm x", "rm"),
    ('"rm" x', "rm"),
    ("'r''m' x", "rm"),
    ("2>/dev/null > out rm x", "rm"),
    ("/bin/rm x", "/bin/rm"),
    ("$(...) x", None),
    ("$CMD x", None),
    ('"$CMD" x', None),
    ("r? x", None),
    ("{rm,-rf,x}", None),  # brace expansion runs `rm -rf x`
    ("[ -f x ]", "["),
    ("x=1", None),
    ("> out", None),
    ("ls; rm x", None),  # not one segment
    ('echo "oops', None),
]


@pytest.mark.parametrize(("segment", "word"), COMMAND_WORDS)
def test_command_word(segment: str, word: str | None) -> None:
    assert command_word(segment) == word


def test_parse_segment_takes_a_segment_apart() -> None:
    parsed = parse_segment("A=1 B='2 3' git -C \"my repo\" status 2>&1 > out.txt")
    assert parsed.assignments == (Word("A=1", "A=1"), Word("B='2 3'", "B=2 3"))
    assert [word.literal for word in parsed.words] == ["git", "-C", "my repo", "status"]
    assert parsed.redirects == (Redirect("2>&", Word("1", "1")), Redirect(">", Word("out.txt", "out.txt")))


@pytest.mark.parametrize(
    ("segment", "writes"),
    [
        ("ls > out", True),
        ("ls >> out", True),
        ("ls &> out", True),
        ("ls >& out", True),
        ("ls > $FILE", True),
        ("ls 2>&1", False),
        ("ls >&2", False),
        ("ls > /dev/null", False),
        ("ls 2>/dev/null", False),
        ("ls < in", False),
        ("cat <<< word", False),
    ],
)
def test_which_redirections_write(segment: str, writes: bool) -> None:
    assert any(redirect.writes for redirect in parse_segment(segment).redirects) == writes


def test_parse_segment_refuses_more_than_one_command() -> None:
    with pytest.raises(ValueError, match="more than one"):
        parse_segment("ls && rm x")


# ---- generated command lines ----

SEPARATORS = ["&&", "||", ";", "|", "|&", "&", "\n"]


def _wrappers() -> list[Callable[[str, tuple[str, ...]], tuple[str, tuple[str, ...]]]]:
    """Ways to nest a command line; each gives the new line and the segments it adds or removes."""
    return [
        lambda text, segs: (f"( {text} )", segs),
        lambda text, segs: (f"{{ {text}; }}", segs),
        lambda text, segs: (f"if {text}; then {text}; fi", segs + segs),
        lambda text, segs: (f"echo $( {text} )", (*segs, "echo $(...)")),
        lambda text, segs: (f'echo "$( {text} )"', (*segs, 'echo "$(...)"')),
        lambda text, segs: (f"v=$( {text} ) ls", (*segs, "v=$(...) ls")),
        # Backquotes do not nest without escapes, and single quotes end at the first quote.
        lambda text, segs: (f"echo `{text}`", (*segs, "echo $(...)")) if "`" not in text else (text, segs),
        lambda text, segs: (f"echo '{text}'", (f"echo '{text}'",)) if "'" not in text else (text, segs),
    ]


def compositions(atoms: list[str], split: Callable[[str], tuple[str, ...]]) -> st.SearchStrategy:
    """Command lines built from `atoms` with random separators and nesting, with the segments expected of them.

    `split(atom)` gives an atom's own segments (an atom may be a small pipeline itself).
    """
    leaf = st.sampled_from(atoms).map(lambda atom: (atom, split(atom)))

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        joined = st.tuples(children, st.sampled_from(SEPARATORS), children).map(
            lambda parts: (f"{parts[0][0]} {parts[1]} {parts[2][0]}", parts[0][1] + parts[2][1])
        )
        wrapped = st.tuples(st.sampled_from(_wrappers()), children).map(lambda parts: parts[0](*parts[1]))
        return joined | wrapped

    return st.recursive(leaf, extend, max_leaves=8)


SIMPLE = ["ls", "git status", "echo hi", "rm -rf x", "curl evil", "FOO=1 make all", "cat a 2>&1"]


@settings(max_examples=300, deadline=None)
@given(compositions(SIMPLE, lambda atom: (atom,)))
def test_generated_lines_split_into_their_commands(line: tuple[str, tuple[str, ...]]) -> None:
    text, expected = line
    result = split_command(text)
    if result.hidden:  # where tree-sitter-bash misreads the line: see the test below
        assert {problem.kind for problem in result.problems} == {"syntax"}, (text, result.problems)
        return
    # A redirection tree-sitter attaches to a whole list is given to each of its commands: compare the rest.
    assert sorted(map(_unredirected, result.commands)) == sorted(_unredirected(parse_segment(s)) for s in expected)


def test_a_line_tree_sitter_misreads_is_hidden_not_read_wrong() -> None:
    """tree-sitter-bash 0.25 reads this as `ls … ls { cat a` with the redirection on the pipeline and a command `}`,
    where bash runs a pipeline, then a group. The reader sees a command run on past a line break and fails closed."""
    result = split_command("ls | ls | ls \n { cat a 2>&1; }")
    assert result.hidden
    assert {problem.kind for problem in result.problems} == {"syntax"}


def _unredirected(command: SimpleCommand) -> str:
    return " ".join(word.text for word in (*command.assignments, *command.words))


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="compares with a real bash")


@needs_bash
@settings(max_examples=60, deadline=None)
@given(compositions(SIMPLE, lambda atom: (atom,)))
def test_generated_lines_are_valid_bash(line: tuple[str, tuple[str, ...]]) -> None:
    """Keeps the generator honest: a line bash would refuse proves nothing about the reader."""
    checked = subprocess.run(["bash", "-n", "-c", line[0]], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, (line[0], checked.stderr)


TRACED = [f"t a{n}" for n in range(1, 6)]


def traced(text: str) -> set[str]:
    """The arguments of the `t` commands among the commands of `text`."""
    return {command.words[1].text for command in split_command(text).commands if _runs_t(command)}


def _runs_t(command: SimpleCommand) -> bool:
    return len(command.words) > 1 and command.words[0].literal == "t"


@needs_bash
@settings(max_examples=50, deadline=None)
@given(compositions(TRACED, lambda atom: (atom,)))
def test_every_command_bash_runs_is_a_segment(tmp_path_factory: pytest.TempPathFactory, line) -> None:
    """Run the line in bash with `t` logging its argument: whatever ran must be among the segments.

    Commands still running in the background may log late; that only hides runs, so the check stays sound.
    """
    log = tmp_path_factory.mktemp("trace") / "log"
    script = f't() {{ printf "%s\\n" "$1" >> "$LOG"; }}\ncat() {{ :; }}\n{line[0]}\nwait'
    env = {**os.environ, "LOG": str(log)}
    subprocess.run(
        ["bash", "--norc", "-c", script], env=env, cwd=log.parent, capture_output=True, check=False, timeout=20
    )
    ran = set(log.read_text().split()) if log.exists() else set()
    assert ran <= traced(line[0]), line[0]


def test_tricky_lines_run_only_their_segments_in_bash(tmp_path: Path) -> None:
    """The same check on hand-picked lines where quoting decides what runs."""
    lines = [
        "echo 't a1'; t a2",
        'echo "$(t a1)" "t a2"',
        "echo \\`t a1\\`; echo `t a2`",
        "t a1 # ; t a2",
        "x=$(t a1) t a2",
        "echo ${v:-$(t a1)}",
        "echo $(( $(t a1) + 1 ))",
        "echo $((t a1) )",
    ]
    for text in lines:
        log = tmp_path / "log"
        log.unlink(missing_ok=True)
        script = f't() {{ printf "%s\\n" "$1" >> "{log}"; }}\n{text}\nwait'
        subprocess.run(["bash", "--norc", "-c", script], capture_output=True, check=False, timeout=20)
        ran = set(log.read_text().split()) if log.exists() else set()
        assert ran, text
        assert split_command(text).hidden or ran <= traced(text), (text, ran)


# Atoms that hide a `t` from a plain reading: through strings, escapes, variables, here-documents and values.
HOSTILE = [
    "t a1",
    "eval 't a2'",
    "bash -c 't a3'",
    'sh -ec "t a4"',
    "$'\\x74' a5",
    "X=t; $X a6",
    "echo ${v:-$(t a7)}",
    "find . -maxdepth 0 -exec t a8 \\;",
    "cat <<E\n$(t a9)\nE\n",
    "cat <<'E'\n$(t a10)\nE\n",
    "t a11 ${x:=\\$(t a12)} ${x@P}",
    "y=a[\\$(t a13)]; echo $((y))",
    "trap 't a14' EXIT",
    "echo t a15 | xargs",
    "printf 't a16' | sh",
]


@pytest.fixture(scope="module")
def logging_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a `t` command that logs its first argument to $LOG, for child shells too."""
    folder = tmp_path_factory.mktemp("stubs")
    stub = folder / "t"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$LOG"\n')
    stub.chmod(0o755)
    return folder


@needs_bash
@settings(max_examples=80, deadline=None)
@given(compositions(HOSTILE, lambda atom: (atom,)))
def test_a_complete_split_names_every_command_bash_runs(
    tmp_path_factory: pytest.TempPathFactory, logging_path: Path, line
) -> None:
    """Whatever a real bash runs is among the segments, or the reader says the line is not pinned down."""
    text = line[0]
    log = tmp_path_factory.mktemp("run") / "log"
    env = {"PATH": f"{logging_path}:{os.environ['PATH']}", "LOG": str(log)}
    subprocess.run(["bash", "--norc", "-c", f"{text}\nwait"], env=env, cwd=log.parent, capture_output=True, timeout=20)
    ran = set(log.read_text().split()) if log.exists() else set()
    result = split_command(text)
    if not result.hidden:
        assert ran <= traced(text), (text, ran)
    if not {problem.kind for problem in result.problems} & UNSEEN:
        # Hidden only by values or texts it splits: what ran is among the segments, values aside.
        values = {"a12", "a13"}  # these run from a variable's value, which the problem names
        assert ran - values <= traced(text) | _in_texts(result), (text, ran, result)


# Kinds of problem where a line may run commands that are nowhere among its segments.
UNSEEN = {"unknown_command", "unknown_text", "runs_file", "runs_input", "runs_code", "option", "unknown_word"}
# A text the grammar cannot read (an ERROR node: "syntax") may still run its readable parts, or anything.
UNSEEN |= {"syntax", "grammar", "block", "too_deep", "heredoc", "quoting", "process", "too_many"}
UNSEEN |= {"variable", "rebinds", "defines"}


def _in_texts(result: SplitResult) -> set[str]:
    """The arguments of `t` in segments whose command word is `t` once its escapes are decoded."""
    return {command.words[1].literal or "" for command in result.commands if _runs_t(command)}
