"""Option tables: how each program reads its options and what they do, in `reading.program`'s notation.

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

from meowgent.shellsplit.options import Program
from meowgent.shellsplit.reading import programs

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
"""
)
