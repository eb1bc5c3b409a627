"""What the docker backend (docker_backend.py, docker_sandbox.py) and its verification (docker_verify.py) share: the
shell that sweeps agent processes (the tars the engine's archive endpoint takes and gives are built
and read in ``archive.py``).

Both run these through the engine alone (exec, put_archive), never through a program inside the
container that the agent could have replaced, except the image's own /bin/sh after it is put back.
"""

from __future__ import annotations

# Each process as "pid:starttime" (field 22 of /proc/PID/stat; the name before it may hold spaces),
# skipping the listing shell itself. Builtins only: a forked helper would list itself.
EACH_PROCESS = ('for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = $$ ] && continue; '
                '{ read -r s < "$d/stat"; } 2>/dev/null || continue; r=${s##*) }; set -- $r; ')
# Kill every process but pid 1, the caller and (when $spare lists any) the sandbox's own processes,
# until none is left (bounded: zombies count while pid 1 has not reaped them yet, so they are
# skipped where we list processes ourselves). The sandbox's own are the ready-time set and every
# process descended from one of them without passing through pid 1 (a service's later children,
# Chromium launched by a browser service on first use: on bwrap the entrypoint's pid namespace
# keeps them the same way); orphans, reparented to pid 1, are not. /proc lists pids as text (159
# before 8), so the processes are read first and the descendants found to a fixed point.
_SPLIT = 'p=${e%%:*}; t=${e#*:}; q=${t%%:*}; t=${t#*:}; '
SWEEP = ('if [ -z "$spare" ]; then i=0; while [ $i -lt 1000 ] && kill -9 -1 2>/dev/null; do i=$((i+1)); done; '
         'else i=0; while [ $i -lt 1000 ]; do n=0; all=""; '
         + EACH_PROCESS +
         '[ "$p" = 1 ] || [ "$1" = Z ] && continue; all="$all $p:$2:${20}"; done; own=" "; '
         'for e in $all; do ' + _SPLIT + 'case " $spare " in *" $p:$t "*) own="$own$p ";; esac; done; '
         'more=1; while [ $more = 1 ]; do more=0; for e in $all; do ' + _SPLIT +
         'case "$own" in *" $p "*) continue;; esac; case "$own" in *" $q "*) own="$own$p "; more=1;; esac; '
         'done; done; '
         'for e in $all; do ' + _SPLIT + 'case "$own" in *" $p "*) continue;; esac; '
         'kill -9 "$p" 2>/dev/null && n=$((n+1)); done; [ $n = 0 ] && break; i=$((i+1)); done; fi')

