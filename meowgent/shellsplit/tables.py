"""Option tables: how each program reads its options and what they do, in getopt's notation in words.

`-abc` are short flags, `-de=` short options that take a value, `-f=?` an optional value, `-l=#` an optional
number; `--name`, `--name=` and `--name=?` the same for long ones. The words `wraps`, `assignments`, `input`,
`operands=N` and the `Program` switches (`permute`, `numbers`, `lone_dash`, `lenient_long`, `strict`, `bundled`) set
the rest. `runs:`, `writes:` (any `Effect`), a check of `_CHECKS` or `ends:` start a list of options with that effect.
`NAME.SUB` is a subcommand's table: `git.clone` reads what follows `git clone`, `uv.tool.run` what follows `uv tool
run`. It lists only the options that run code or write: a word there only known when it runs may be one of them.

Interpreters (`input`) run code given inline (`python -c`: `runs`) or read from the input; a script file
is not a problem (the OS sandbox holds there), and `--version` or python's `-m` read nothing (`stops`).

Wrappers (`wraps`) run a command given as their operands (`sudo -u bob rm x` runs `rm x`); the table says
where it starts (`env -iu HOME rm x`: `-iu` is `-i -u HOME`) and what options do: run code (`sudo -s`: a
login shell reads its start-up files; `-e` runs an editor), set the environment (`strace -E`), write a
file (`time -o`, `sort -o`, `curl -o`) or stop it running anything (`sudo -l`, `command -v`). An option a
wrapper's table does not know hides the command that follows. Notes: ionice's and taskset's `-p` act on
running processes; `busybox rm x` runs the applet rm; `systemd-run -p` sets unit properties (ExecStartPre=
runs), `-H`/`-M` run elsewhere; `script` without `-c` runs an interactive shell; sftp's batch file runs
`!cmd`; `env -P` (BSD) searches another PATH; rsync's `-M` hands options to the remote rsync.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import cast

from meowgent.shellsplit.options import Effect, Program, ValueCheck
from meowgent.shellsplit.words import Word


def program(spec: str) -> Program:
    """A program's table from its spec (see the module docstring)."""
    short = {"": "", "=": "", "=?": "", "=#": ""}
    longs: dict[str, set[str]] = {"": set(), "=": set(), "=?": set()}
    effects: dict[str, Effect | ValueCheck] = {}
    switches: dict[str, object] = {}
    ends: set[str] = set()
    section = ""
    for token in spec.split():
        if token.endswith(":"):
            section = token[:-1]
        elif section == "ends":
            ends.add(token)
        elif section:
            effects[token] = _CHECKS.get(section, cast(Effect, section))
        elif token.startswith("--"):
            name, equals, kind = token[2:].partition("=")
            longs[equals + kind].add(name)
        elif token.startswith("-"):
            letters, equals, kind = token[1:].partition("=")
            short[equals + kind] += letters
        else:
            name, _, number = token.partition("=")
            switches[name] = int(number) if number else True
    longs_by_kind = [frozenset(names) for names in longs.values()]  # in `Program`'s order, as `short` is
    table = {"ends": frozenset(ends), "effects": effects, **switches}
    return Program(*short.values(), *longs_by_kind, **table)  # type: ignore[arg-type]


def programs(block: str) -> dict[str, Program]:
    """Tables from a block of specs, one a line (continued on indented lines), each after its comma-separated names."""
    tables: dict[str, Program] = {}
    for entry in re.split(r"\n(?=\S)", block.strip()):
        names, _, spec = entry.partition(" ")
        tables |= dict.fromkeys(names.split(","), program(spec))
    return tables


def names(text: str) -> frozenset[str]:
    """The space-separated words of `text`, to keep long lists of names short."""
    return frozenset(text.split())


def _mentions(effect: Effect, needle: str) -> ValueCheck:
    """The effect when the value names `needle` (or cannot be read): tar's `--checkpoint-action=exec=...`."""
    return lambda value: effect if value is None or value.literal is None or needle in value.literal else None


# ssh_config keys that run a command or load code; `-o` and `-F` files can set them.
_SSH_RUNNING_KEYS = frozenset(
    {"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match"}
    | {"include", "securitykeyprovider", "pkcs11provider", "xauthlocation"}
)


def _ssh(value: Word | None) -> Effect | None:
    """An ssh `-o Key=value` (or `Key value`) that runs a command."""
    if value is None or value.literal is None:
        return "runs"
    key = re.split(r"[=\s]", value.literal.strip(), maxsplit=1)[0].lower()
    return "runs" if key in _SSH_RUNNING_KEYS else None


# git config keys (lowercased) that only set a name, a colour, a default or a check: nothing in them runs.
_SAFE_GIT_CONFIG = names(
    "user.name user.email color.* advice.* core.quotepath core.autocrlf core.safecrlf core.filemode init.defaultbranch"
    " commit.gpgsign tag.gpgsign safe.directory pull.rebase pull.ff push.default push.autosetupremote fetch.prune"
    " merge.ff log.date"
)


def git_config_runs(value: Word | None) -> bool:
    """Whether git's `-c key=value` may run code: any key but the plain ones above (aliases, pagers, hooks)."""
    if value is None or value.literal is None:
        return True
    key = value.literal.partition("=")[0].lower()
    return not any(fnmatchcase(key, safe) for safe in _SAFE_GIT_CONFIG)


_CHECKS: dict[str, ValueCheck] = {
    "config": lambda value: "runs" if git_config_runs(value) else None,
    # strace's `-o |cmd` and `-o !cmd` pipe into a command; any other file is written
    "pipes": lambda value: (
        "runs" if value is None or value.literal is None or value.literal.startswith(("|", "!")) else "writes"
    ),
    "ssh": _ssh,
    # `make -f -` reads its makefile from the input: a program nobody sees
    "stdin": lambda value: "runs" if value is None or value.literal in (None, "-", "/dev/stdin") else None,
    "exec": _mentions("runs", "exec"),
    "given": lambda value: None if value is None else "runs",  # `git --exec-path` prints it; `=DIR` runs from DIR
    "output": _mentions("writes", "%output{"),
}


TABLES: dict[str, Program] = programs(
    """
sudo wraps assignments -AbBEeHiKklNnPSsVv -acCDgpRrTtUu= -h=? --askpass --background --bell --edit --help --list
    --login --non-interactive --preserve-groups --remove-timestamp --reset-timestamp --set-home --shell --stdin
    --validate --version --chdir= --chroot= --close-from= --command-timeout= --group= --host= --other-user=
    --prompt= --role= --type= --user= --preserve-env=? runs: -s --shell -i --login -e --edit stops: -l --list -V
    --version -v --validate -K --help
doas wraps -nsL -uC= runs: -s stops: -C -L
pkexec wraps --disable-internal-agent --help --keep-cwd --version --user= stops: --help --version
env wraps assignments lone_dash -i0v -uCSP= --debug --help --ignore-environment --list-signal-handling --null
    --version --chdir= --split-string= --unset= --block-signal=? --default-signal=? --ignore-signal=? shell: -S
    --split-string runs: -P stops: --help --version
nice wraps numbers -n= --help --version --adjustment= stops: --help --version
ionice wraps -thV -cnpPu= --help --ignore --pgid --pid --uid --version --class= --classdata= stops: -p -P -u --pid
    --pgid --uid -h -V --help --version
timeout wraps operands=1 -v -sk= --foreground --help --preserve-status --verbose --version --kill-after= --signal=
    stops: --help --version
stdbuf wraps -ioe= --help --version --error= --input= --output= stops: --help --version
setsid wraps -cfwhV --ctty --fork --help --version --wait stops: -h -V --help --version
nohup wraps --help --version stops: --help --version
command wraps -pvV stops: -v -V
builtin wraps
exec wraps -cl -a=
time wraps -pvqaV -fo= --append --help --portability --quiet --verbose --version --format= --output= writes: -o
    --output stops: -V --help --version
chroot wraps operands=1 --help --skip-chdir --version --groups= --userspec= stops: --help --version
unshare wraps -frchV -RwSG= -muinpUCT=? --fork --help --keep-caps --map-auto --map-current-user --map-root-user
    --version --boottime= --map-group= --map-groups= --map-user= --map-users= --monotonic= --propagation= --root=
    --setgid= --setgroups= --setuid= --wd= --cgroup=? --ipc=? --kill-child=? --mount=? --mount-proc=? --net=?
    --pid=? --time=? --user=? --uts=? stops: -h -V --help --version
nsenter wraps -aFZhV -tSGW= -muinpUCTrw=? --all --follow-context --help --no-fork --preserve-credentials --version
    --setgid= --setuid= --target= --wdns= --cgroup=? --ipc=? --mount=? --net=? --pid=? --root=? --time=? --user=?
    --uts=? --wd=? stops: -h -V --help --version
setpriv wraps -dhV --clear-groups --dump --help --init-groups --keep-groups --nnp --no-new-privs --reset-env
    --version --ambient-caps= --apparmor-profile= --bounding-set= --egid= --euid= --groups= --inh-caps= --pdeathsig=
    --regid= --reuid= --rgid= --ruid= --securebits= --selinux-label= stops: -d --dump -h -V --help --version
taskset wraps operands=1 -acphV --all-tasks --cpu-list --help --pid --version stops: -p --pid -h -V --help --version
chrt wraps operands=1 -bdfioRrampvhV -TPD= --all-tasks --batch --deadline --fifo --help --idle --max --other --pid
    --reset-on-fork --rr --verbose --version --sched-deadline= --sched-period= --sched-runtime= stops: -m --max -p
    --pid -h -V --help --version
prlimit wraps -hV -po= -cdefilmnqrstuvxy=? --help --noheadings --raw --verbose --version --output= --pid= --as=?
    --core=? --cpu=? --data=? --fsize=? --locks=? --memlock=? --msgqueue=? --nice=? --nofile=? --nproc=? --rss=?
    --rtprio=? --rttime=? --sigpending=? --stack=? stops: -p --pid -h -V --help --version
strace wraps -cCdDfFhiknqrtTvVwxyzZ -abeEIoOpPsSuXU= --follow-forks --help --no-abbrev --output-separately
    --seccomp-bpf --stack-trace --summary --summary-only --summary-wall-clock --verbose --version --abbrev=
    --attach= --columns= --env= --fault= --inject= --output= --raw= --read= --signal= --status= --string-limit=
    --summary-sort-by= --trace= --trace-path= --user= --write= --absolute-timestamps=? --decode-fds=?
    --decode-pids=? --quiet=? --relative-timestamps=? --syscall-times=? --timestamps=? env: -E --env stops: -p
    --attach -h -V --help --version pipes: -o --output
ltrace wraps -bcCfhiLrStTV -aAeFlnopsuwxD= --demangle --help --version --align= --config= --indent= --library=
    --output= writes: -o --output stops: -p -h -V --help --version
valgrind wraps -qvh --help --quiet --verbose --version --child-silent-after-fork=? --db-attach=? --db-command=?
    --demangle=? --error-exitcode=? --error-limit=? --errors-for-leak-kinds=? --fair-sched=? --gen-suppressions=?
    --keep-debuginfo=? --leak-check=? --leak-resolution=? --log-fd=? --log-file=? --log-socket=? --main-stacksize=?
    --max-stackframe=? --num-callers=? --read-var-info=? --show-below-main=? --show-error-list=? --show-leak-kinds=?
    --smc-check=? --suppressions=? --time-stamp=? --tool=? --trace-children=? --trace-children-skip=? --track-fds=?
    --track-origins=? --undef-value-errors=? --vgdb=? --vgdb-error=? --xml=? --xml-fd=? --xml-file=? writes:
    --log-file --xml-file runs: --db-attach --db-command stops: -h --help --version
busybox wraps --help --list --list-full stops: --list --list-full --help
sshpass wraps -ve -fdpP=
proxychains wraps -q -f=
torsocks wraps -idqh -uapP= --debug --help --isolate --quiet --version --address= --pass= --port= --user= stops: -h
    --help --version
unbuffer wraps -p
gosu,su-exec,setuidgid wraps operands=1
catchsegv wraps
cgexec wraps -g= --sticky
faketime wraps operands=1 -mf --exclude-monotonic --help --version --date-prog= runs: --date-prog stops: --help
    --version
eatmydata wraps
fakeroot wraps -uhv -lsib= --help --unknown-is-real --version --faked= --lib= runs: -l --lib --faked writes: -s
    stops: -h -v --help --version
dbus-run-session wraps --help --version --config-file= --dbus-daemon= runs: --dbus-daemon stops: --help --version
systemd-run wraps -qGtPdrSh -upEHM= --collect --help --no-ask-password --no-block --pipe --pty --quiet
    --remain-after-exit --same-dir --scope --shell --system --user --version --wait --description= --gid= --host=
    --machine= --nice= --property= --service-type= --setenv= --slice= --uid= --unit= --working-directory= runs: -p
    --property -H --host -M --machine -S --shell env: -E --setenv stops: -h --help
script permute -aefqhV -IOBTmEoc= -t=? --append --flush --force --help --quiet --return --version --command= --echo=
    --log-in= --log-io= --log-out= --log-timing= --logging-format= --output-limit= --timing=? shell: -c --command
sort permute -bdfgiMhnRrVcCmsuz -kotST= --debug --dictionary-order --general-numeric-sort --help
    --human-numeric-sort --ignore-case --ignore-leading-blanks --ignore-nonprinting --merge --month-sort
    --numeric-sort --random-sort --reverse --stable --unique --version --version-sort --zero-terminated
    --batch-size= --buffer-size= --compress-program= --field-separator= --files0-from= --key= --output= --parallel=
    --random-source= --sort= --temporary-directory= --check=? writes: -o --output runs: --compress-program
date permute -Rru -dfrs= -I=? --debug --help --resolution --rfc-email --universal --utc --version --date= --file=
    --reference= --rfc-3339= --set= --iso-8601=? sets: -s --set
curl permute lenient_long -:0123456aBfgGhiIjJklLMnNOpqRsSvVZ# -AbcCdDeEFHKmoPQrtTuUwxXyYz= --remote-name
    --remote-name-all --alt-svc= --config= --connect-timeout= --cookie= --cookie-jar= --data= --data-binary=
    --data-raw= --data-urlencode= --dump-header= --etag-save= --form= --header= --hsts= --libcurl= --max-time=
    --output= --output-dir= --proxy= --range= --referer= --request= --stderr= --trace= --trace-ascii= --upload-file=
    --url= --user= --user-agent= --write-out= writes: -o --output -O --remote-name --remote-name-all -D
    --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc --output-dir
    -K --config output: -w --write-out
wget permute lenient_long -VhbdqvFcNSx46rkKEpHmL -eoaitOTwQPlARDXIUBn= --accept= --append-output= --base= --config=
    --directory-prefix= --domains= --exclude-directories= --execute= --include-directories= --input-file= --level=
    --load-cookies= --output-document= --output-file= --quota= --reject= --rejected-log= --save-cookies= --timeout=
    --tries= --use-askpass= --user-agent= --wait= --warc-file= runs: -e --execute --use-askpass --config writes: -O
    --output-document -o --output-file -P --directory-prefix --save-cookies --warc-file --rejected-log appends: -a
    --append-output
rsync permute lenient_long -vqcarlpogDtSnWxbuRdHAXEzPiIOJmkKLhyCF0468s -eBfTM@= --backup-dir= --block-size= --chmod=
    --chown= --compare-dest= --copy-dest= --exclude= --exclude-from= --files-from= --filter= --groupmap= --include=
    --include-from= --link-dest= --log-file= --partial-dir= --remote-option= --rsh= --rsync-path= --suffix=
    --temp-dir= --usermap= runs: -e --rsh --rsync-path -M --remote-option
scp permute -346ABCOpqRrTv -cDFiJloPSX= runs: -S -D -F ssh: -o
sftp permute -46aACNpqrv -BbcDFiJloPRSsX= runs: -S -D -F -b -s ssh: -o
man permute lenient_long -acdDfhiIklKtTuVwWZ7 -CMPSemprLsR= -HX=? --config-file= --encoding= --extension= --locale=
    --manpath= --pager= --preprocessor= --prompt= --sections= --systems= --gxditview=? --html=? runs: -P --pager -H
    --html -X --gxditview -C --config-file
less permute lenient_long -aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~ -bhjkoOpPtTxyz#= --LOG-FILE= --lesskey-file=
    --log-file= writes: -o -O --log-file --LOG-FILE
vim permute lenient_long -AbCdDeEFhHlLmMnNRrVxXyZ -cSsuUTtiqwWr= --cmd= runs: -c --cmd -S -s -e -E writes: -w -W
make permute lenient_long -bBdeiknpqrRsStvwhL -CfIoWE= -jlO=? --assume-new= --assume-old= --directory= --eval=
    --file= --include-dir= --jobserver-style= --makefile= --new-file= --old-file= --what-if= --debug=? --jobs=?
    --load-average=? --output-sync=? runs: -E --eval stdin: -f --file --makefile
tee permute -aip --append --help --ignore-interrupts --version --output-error=?
yq permute lenient_long -iPre -pIo= --inplace edits: -i --inplace
python input -bBdEhiIOPqsSuvVx -cmWX= --help --help-all --help-env --help-xoptions --version
    --check-hash-based-pycs= ends: -c -m runs: -c stops: -V --version -h --help --help-env --help-xoptions
    --help-all -m
perl input -acnpsStTuUvVwWX -eEFIMm= -idDx=? -0Cl=# --help --version runs: -e -E stops: -v -V --help --version
ruby input -acdlnpsSvwWyh -CeEIrKF= -x=? -0T=# --copyright --help --jit --verbose --version --yjit
    --backtrace-limit= --crash-report= --dump= --encoding= --external-encoding= --internal-encoding= --disable=?
    --enable=? runs: -e stops: -v -h --help --version --copyright
node input lenient_long -icvh -eprC= --check --help --interactive --test --version --conditions= --env-file=
    --eval= --experimental-loader= --import= --input-type= --loader= --print= --require= --run= ends: --eval
    --print -e -p runs: -e -p --eval --print stops: -v -h --version --help -c --check --test --run
bun input lenient_long -icvh -eprC= --check --help --interactive --test --version --conditions= --env-file=
    --eval= --experimental-loader= --import= --input-type= --loader= --print= --require= --run= ends: --eval
    --print -e -p runs: -e -p --eval --print stops: -v -h --version --help
php input -ahHilmqsvwe -cdfrRBEFtSz= --help --info --version runs: -r -R -B -E -F stops: -v -h -i -m -l --help
    --info -S
lua input -ivEW -el= runs: -e stops: -v
expect input -dDinNbv -cf= runs: -c stops: -v
tclsh input
R,Rscript input -q -e= --help --interactive --no-restore --no-save --quiet --save --silent --slave --vanilla
    --verbose --version runs: -e stops: --version --help
julia input lenient_long -hvqi -eEpLJtOg= --eval= --load= --print= --project= --threads= runs: -e -E --eval
    --print stops: -v -h
uv -qvnh -p= --help --native-tls --no-cache --no-config --no-progress --no-python-downloads --offline --preview
    --quiet --verbose --version --allow-insecure-host= --cache-dir= --color= --config-file= --directory= --project=
    --python-preference=
uv.run,uv.tool.run,uvx wraps -qvnUhms -pC= --active --all-extras --all-groups --all-packages --compile-bytecode
    --dev --exact --frozen --gui-script --help --isolated --locked --module --native-tls --no-active --no-binary
    --no-build --no-build-isolation --no-cache --no-config --no-default-groups --no-dev --no-editable --no-env-file
    --no-progress --no-project --no-sources --no-sync --offline --only-dev --preview --quiet --refresh --reinstall
    --script --upgrade --verbose --version --cache-dir= --color= --config-file= --config-setting= --default-index=
    --directory= --env-file= --exclude-newer= --extra= --extra-index-url= --find-links= --from= --group= --index=
    --index-strategy= --index-url= --keyring-provider= --link-mode= --no-group= --only-group= --package=
    --prerelease= --project= --python= --resolution= --with= --with-editable= --with-requirements= stops: -m
    --module -s --script
poetry -qvnhV -CP= --ansi --help --no-ansi --no-cache --no-interaction --no-plugins --quiet --verbose --version
    --directory= --project=
npx,bunx,pnpx,npm.exec,npm.x,pnpm.exec,pnpm.dlx,yarn.exec,yarn.dlx wraps -yqh -pcw= --help --ignore-existing
    --include-workspace-root --no --prefer-offline --prefer-online --quiet --version --workspaces --yes --call=
    --package= --workspace= shell: -c --call
conda.run wraps -v -np= --debug-wrapper-scripts --dev --live-stream --no-capture-output --cwd= --name= --prefix=
pipx.run wraps --help --no-cache --quiet --verbose --version --index-url= --pip-args= --python= --spec=
pipenv,pdm,conda,pipx,npm,pnpm,yarn,uv.tool
poetry.run,pipenv.run,pdm.run wraps
flock -sxenoFuhV -wE= --close --exclusive --help --nb --no-fork --nonblock --shared --unlock --verbose --version
    --conflict-exit-code= --timeout= --wait=
xargs -0prtxo -adEILnPs= -eil=? --exit --help --interactive --no-run-if-empty --null --open-tty --show-limits
    --verbose --version --arg-file= --delimiter= --max-args= --max-chars= --max-procs= --process-slot-var= --eof=?
    --max-lines=? --replace=? stops: --help --version --show-limits
watch -bceghprtwxvC -nq= -d=? --beep --chgexit --color --errexit --exec --help --no-color --no-rerun --no-title
    --no-wrap --precise --version --equexit= --interval= --differences=?
su permute strict lone_dash -flmpPhV -cgGsuw= --fast --help --login --preserve-environment --pty --version --command=
    --group= --session-command= --shell= --supp-group= --user= --whitelist-environment= shell: -c --command
    --session-command runs: -s --shell
ssh -46AaCfGgKkMNnqsTtVvXxYy -BbcDEeFIiJLlmOoPpQRSWw= runs: -F -I writes: -E stops: -G -V -Q ssh: -o
git -pPhv -Cc= --bare --glob-pathspecs --help --html-path --icase-pathspecs --info-path --literal-pathspecs
    --man-path --no-advice --no-lazy-fetch --no-optional-locks --no-pager --no-replace-objects --noglob-pathspecs
    --paginate --version --attr-source= --config-env= --git-dir= --list-cmds= --namespace= --super-prefix=
    --work-tree= --exec-path=? config: -c runs: --config-env given: --exec-path
sed permute strict -nrEsuzb -efl= -i=? --binary --debug --follow-symlinks --help --null-data --posix --quiet
    --regexp-extended --sandbox --separate --silent --unbuffered --version --zero-terminated --expression= --file=
    --line-length= --in-place=?
awk -bcCghIkMnNOPrsStV -fFvEeilW= -dDLop=? --bignum --characters-as-bytes --copyright --csv --gen-pot --help
    --lint-old --no-optimize --non-decimal-data --optimize --posix --re-interval --sandbox --trace --traditional
    --use-lc-numeric --version --assign= --exec= --field-separator= --file= --include= --load= --source= --debug=?
    --dump-variables=? --lint=? --pretty-print=? --profile=? runs: -l --load -W writes: -d --dump-variables -o
    --pretty-print -p --profile
tar permute bundled lenient_long -AcdrtuxBGhijJklmMoOpPRsSUvwWzZa -bCfFgHIKLNTVX= --append --bzip2 --compare --create
    --delete --diff --extract --gzip --list --update --verbose --xz --zstd --after-date= --blocking-factor=
    --checkpoint-action= --directory= --exclude= --exclude-from= --file= --files-from= --format= --group=
    --index-file= --info-script= --label= --listed-incremental= --mode= --mtime= --new-volume-script= --newer=
    --owner= --rmt-command= --rsh-command= --starting-file= --suffix= --tape-length= --to-command= --transform=
    --use-compress-program= --xform= --backup=? --checkpoint=? --one-top-level=? runs: -I --use-compress-program -F
    --info-script --new-volume-script --to-command --rsh-command --rmt-command exec: --checkpoint-action
git.clone permute lenient_long -u= -c= --upload-pack= --template= --config= runs: --upload-pack -u --template
    config: -c --config
git.init permute lenient_long --template= runs: --template
git.fetch,git.pull,git.ls-remote,git.fetch-pack permute lenient_long --upload-pack= runs: --upload-pack
git.push,git.send-pack permute lenient_long --receive-pack= --exec= runs: --receive-pack --exec
git.archive permute lenient_long -o= --exec= --output= runs: --exec writes: -o --output
git.rebase permute lenient_long -x= --exec= shell: -x --exec
git.difftool,git.mergetool permute lenient_long -x= --extcmd= runs: -x --extcmd
git.grep permute lenient_long -O=? --open-files-in-pager=? runs: -O --open-files-in-pager
git.send-email permute lenient_long --to-cmd= --cc-cmd= --header-cmd= --sendmail-cmd= --smtp-server= runs: --to-cmd
    --cc-cmd --header-cmd --sendmail-cmd --smtp-server
git.daemon permute lenient_long --access-hook= runs: --access-hook
git.format-patch permute lenient_long -o= --output-directory= --output= writes: -o --output-directory --output
git.log,git.show,git.diff,git.whatchanged,git.range-diff,git.diff-tree,git.diff-index,git.diff-files permute
    lenient_long --output= writes: --output
read -ers -adinNptu= names: -a
mapfile,readarray -t -dnOsuCc= later: -C
printf -v= names: -v
wait -nf -p= names: -p
compgen,complete -abcdefgjksuvDEIpr -oAGWFCXPS= later: -C -F
bind -lpsvPSVX -mqufrx= later: -x
uniq permute -cdDiuz -fsw= --all-repeated=? --group=?
xxd permute -abCeEhiprduv -cglnos=
"""
)
TABLES["runuser"] = replace(TABLES["su"], permute=False)  # su's options, ending at the first operand
