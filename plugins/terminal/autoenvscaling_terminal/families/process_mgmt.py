"""Process and service management: background services with pid files and signals, and jobs run
under timeouts. The checks start and stop real processes inside the verifier.

Kinds:
- ``service_ctl``: a ``start|status|stop`` control script for a given worker (idempotent start,
  stale pid files and ``restart``, an environment file loaded before start).
- ``job_runner``: run the jobs of a list one after another under a timeout and report exit codes
  (per-job logs, retries, comments and an overall exit status, job variables in the environment).
"""

from __future__ import annotations

import random
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording

WORKER = '''"""{name}: a small worker that writes a heartbeat until it receives SIGTERM."""
import os
import signal
import time

running = True


def stop(signum, frame):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
name = os.environ.get("WORKER_NAME", "default")
interval = float(os.environ.get("WORKER_INTERVAL", "{interval}"))
with open("{log}", "a", buffering=1) as log:
    log.write(f"started pid={{os.getpid()}} name={{name}}\\n")
    while running:
        log.write(f"heartbeat name={{name}}\\n")
        time.sleep(interval)
    log.write("stopped\\n")
'''


def build_service(rng: random.Random, level: int) -> Draft:
    svc = rng.choice(["indexer", "poller", "syncd", "collector", "notifier"])
    base = rng.choice(["service", "opt/" + svc, "srv"])
    worker = f"{base}/{svc}.py"
    log = f"/app/{base}/{svc}.log"
    pidfile = f"/app/run/{svc}.pid"
    ctl = f"{base}/{svc}ctl.sh"
    env_file = f"{base}/{svc}.env"
    worker_name = f"{svc}-{rng.choice(vocab.WORDS)}"
    files = {worker: WORKER.format(name=svc, interval=rng.choice(["0.2", "0.3"]), log=log).encode()}
    if level >= 4:
        files[env_file] = f"# settings for {svc}\nWORKER_NAME={worker_name}\nWORKER_INTERVAL=0.2\n".encode()
    truth = {"ctl": ctl, "worker": f"/app/{worker}", "pidfile": pidfile, "log": log, "worker_name": worker_name if level >= 4 else None}
    checks = ["test_service_start", "test_service_status"]
    w = Wording(rng)
    intro = w.intro([f"`/app/{worker}` is a long-running worker (`python3 /app/{worker}`); it logs to `{log}` and stops cleanly on SIGTERM.",
                     f"We run a Python worker, `/app/{worker}`, which appends heartbeats to `{log}` and shuts down gracefully when it gets SIGTERM."])
    ask = w.pick(["Write a bash control script `/app/{c}` with the subcommands described below.",
                  "Create `/app/{c}`, a bash script to manage the worker, supporting the commands below.",
                  "I need an init-style script at `/app/{c}` that controls the worker:"], c=ctl)
    details = [w.pick(["`start` launches the worker in the background (it must keep running after the script exits), writes its PID to `{p}` and exits 0.",
                       "`{n} start`: start `python3 /app/{wk}` detached from the script, store the worker's PID in `{p}`, exit status 0."], p=pidfile, n=ctl.rsplit('/', 1)[1], wk=worker),
               w.pick(["`status` prints `running` (optionally followed by the PID) and exits 0 when the process in the PID file is alive; otherwise it prints `stopped` and exits 3.",
                       "`status`: if the PID file names a live process, print a line starting with `running` and exit 0; if not, print `stopped` and exit 3 (the LSB convention)."])]
    w.require_if(checks, details, [
        (level >= 1, "test_service_stop", ["`stop` sends SIGTERM, waits until the worker has exited (at most 10 seconds), removes the PID file and exits 0.",
                                           "`stop`: TERM the worker, wait for it to be gone (up to 10 s), delete `{p}`, exit 0. Do not use SIGKILL unless it ignores TERM."]),
        (level >= 2, "test_service_start_idempotent", ["Running `start` while the worker is already running must not start a second one: print `already running` and exit 0.",
                                                       "A second `start` is harmless: it reports `already running`, exits 0 and leaves exactly one worker."]),
    ], p=pidfile)
    if level >= 3:
        checks += ["test_service_stale_pidfile", "test_service_restart"]
        details.append(w.pick(["If the PID file exists but its process is gone (a stale file), `status` reports `stopped` (exit 3) and `start` starts a fresh worker.",
                               "Handle stale PID files: a PID file pointing to a dead process means the service is stopped, and `start` must still work."]))
        details.append(w.pick(["`restart` stops the worker if it runs and starts a new one.", "Add `restart` (= stop if running, then start)."]))
    if level >= 4:
        w.require(checks, details, "test_service_env_file", ["Before starting, load `/app/{e}` (`KEY=VALUE` lines, comments allowed) into the worker's environment.",
                                                             "The worker's settings live in `/app/{e}`; export every variable defined there into the worker's environment on start."], e=env_file)
    details.append(w.pick(["Make the script executable.", "Remember `chmod +x`."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, shuffle_details=False)
    load_env = (f"    set -a; . /app/{env_file}; set +a\n") if level >= 4 else ""
    body = f'''#!/bin/bash
PIDFILE={pidfile}
is_running() {{
    [ -f "$PIDFILE" ] || return 1
    pid=$(cat "$PIDFILE")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}}
do_start() {{
    if is_running; then echo "already running"; return 0; fi
    mkdir -p "$(dirname "$PIDFILE")"
{load_env}    nohup python3 /app/{worker} >/dev/null 2>&1 &
    echo $! > "$PIDFILE"
}}
do_stop() {{
    if ! is_running; then rm -f "$PIDFILE"; echo "not running"; return 0; fi
    kill -TERM "$pid"
    for _ in $(seq 100); do is_running || break; sleep 0.1; done
    is_running && kill -KILL "$pid"
    rm -f "$PIDFILE"
}}
case "${{1:-}}" in
    start) do_start ;;
    stop) do_stop ;;
    restart) do_stop >/dev/null; do_start ;;
    status) if is_running; then echo "running (pid $pid)"; else echo "stopped"; exit 3; fi ;;
    *) echo "usage: $0 start|stop|restart|status" >&2; exit 2 ;;
esac'''
    sol = [f"cat > /app/{ctl} <<'EOF'", body, "EOF", f"chmod +x /app/{ctl}"]
    return Draft(kind="service_ctl", outputs=[ctl], instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"stop": level >= 1, "idempotent": level >= 2, "stale_and_restart": level >= 3, "env_file": level >= 4},
                 tags=["processes", "signals", "bash"])


def _jobs(rng: random.Random, level: int, retries: bool) -> list[dict]:
    word, code = rng.choice(vocab.WORDS), rng.randint(2, 9)
    jobs: list[dict[str, Any]] = [
        {"name": f"say_{word}", "timeout": 5, "command": f"echo {word}", "exit": 0, "output": word},
        {"name": "failing", "timeout": 5, "command": f"echo oops >&2; exit {code}", "exit": code, "output": "oops"},
        {"name": "too_slow", "timeout": 1, "command": "sleep 5", "exit": 124, "output": ""},
        {"name": "count_files", "timeout": 5, "command": "ls / | wc -l > /dev/null", "exit": 0, "output": ""},
    ]
    if retries:
        jobs.append({"name": "flaky", "timeout": 5, "retries": 2,
                     "command": "f=$STATE_DIR/flaky.count; n=$(cat $f 2>/dev/null || echo 0); echo $((n+1)) > $f; [ $n -ge 1 ]",
                     "exit": 0, "output": "", "attempts": 2})
        jobs[1]["retries"], jobs[1]["attempts"] = 1, 2
        for j in jobs:
            j.setdefault("retries", 0)
            j.setdefault("attempts", 1)
    rng.shuffle(jobs)
    return jobs


def build_job_runner(rng: random.Random, level: int) -> Draft:
    script = f"{rng.choice(['bin', 'tools'])}/{rng.choice(['runjobs.sh', 'batch.sh', 'jobrunner.sh'])}"
    logs, retries, comments, env = level >= 1, level >= 2, level >= 3, level >= 4
    jobs = _jobs(rng, level, retries)
    truth = {"script": script, "jobs": jobs, "logs": logs, "retries": retries, "comments": comments, "env": env}
    checks = ["test_shape_script_executable", "test_job_report"]
    w = Wording(rng)
    fmt = "`NAME|TIMEOUT|RETRIES|COMMAND`" if retries else "`NAME|TIMEOUT|COMMAND`"
    usage = f"{script.rsplit('/', 1)[1]} JOBS REPORT" + (" LOGDIR" if logs else "")
    intro = w.intro(["Our nightly batch is a list of shell commands that sometimes hang.", "We run batches of maintenance commands and need to know which ones failed."])
    ask = w.pick(["Write an executable bash script `/app/{s}` used as `{u}`.", "Create `/app/{s}` (usage: `{u}`) that runs a batch of jobs."], s=script, u=usage)
    details = [w.pick(["JOBS is a text file with one job per line in the form {f}; run the jobs one after another, in file order, each with `bash -c COMMAND`.",
                       "Each line of JOBS is {f}. Execute the commands sequentially (in order) via `bash -c`."], f=fmt),
               w.pick(["A job running longer than TIMEOUT seconds is killed and gets exit code 124 (like `timeout`).",
                       "Enforce TIMEOUT (seconds) per job; a job that exceeds it counts as exit status 124."]),
               w.pick(["REPORT gets one line per job, in job order: `NAME,EXIT{a}` where EXIT is the job's exit status.",
                       "Write REPORT as CSV without header: `NAME,EXIT{a}`, one line per job in the same order."], a=",ATTEMPTS" if retries else "")]
    w.require_if(checks, details, [
        (logs, "test_job_logs", ["Save everything a job prints (stdout and stderr) to `LOGDIR/NAME.log` (create LOGDIR if needed).",
                                 "Each job's combined stdout+stderr goes to `LOGDIR/NAME.log`; create the directory when missing."]),
        (retries, "test_job_retries", ["A job that exits non-zero is re-run up to RETRIES more times; the report shows the exit status of the last attempt and the number of attempts.",
                                       "Retry failing jobs (non-zero exit) at most RETRIES extra times; EXIT is the final attempt's status and ATTEMPTS how many runs it took."]),
        (comments, "test_job_overall_status", ["Blank lines and lines starting with `#` in JOBS are ignored. The script exits 1 if any job ended non-zero, else 0.",
                                               "Skip empty lines and `#` comments; the script's own exit status is 0 only if every job finally succeeded (1 otherwise)."]),
        (env, "test_job_environment", ["Each command sees the environment variables `JOB_NAME` (its name) and `JOB_ATTEMPT` (1 for the first run, 2 for the first retry, ...).",
                                       "Export `JOB_NAME` and `JOB_ATTEMPT` (starting at 1) to every command."]),
    ])
    details.append("Make the script executable.")
    instruction = w.compose(intro=intro, ask=ask, details=details, shuffle_details=False)
    read = "IFS='|' read -r name limit tries cmd" if retries else "IFS='|' read -r name limit cmd"
    body = ["#!/bin/bash", "jobs=\"$1\"; report=\"$2\"" + ("; logdir=\"$3\"" if logs else ""), ": > \"$report\"", "failed=0"]
    if logs:
        body.append("mkdir -p \"$logdir\"")
    body += [f"while {read}; do"]
    if comments:
        body += ["    case \"$name\" in ''|'#'*) continue ;; esac"]
    body += ["    attempt=0" if retries else "    attempt=1",
             "    while :; do" if retries else "    {"]
    inner = "        "
    if retries:
        body.append(f"{inner}attempt=$((attempt + 1))")
    out = "\"$logdir/$name.log\"" if logs else "/dev/null"
    env_prefix = "JOB_NAME=\"$name\" JOB_ATTEMPT=\"$attempt\" " if env else ""
    body.append(f"{inner}{env_prefix}timeout \"$limit\" bash -c \"$cmd\" > {out} 2>&1 < /dev/null; code=$?")
    if retries:
        body += [f"{inner}[ \"$code\" -eq 0 ] || [ \"$attempt\" -gt \"$tries\" ] && break", "    done",
                 "    echo \"$name,$code,$attempt\" >> \"$report\""]
    else:
        body += ["    }", "    echo \"$name,$code\" >> \"$report\""]
    body += ["    [ \"$code\" -eq 0 ] || failed=1", "done < \"$jobs\""]
    if comments:
        body.append("exit $failed")
    sol = [f"mkdir -p /app/{script.rsplit('/', 1)[0]}", f"cat > /app/{script} <<'EOF'", *body, "EOF", f"chmod +x /app/{script}"]
    sample = "".join(f"{j['name']}|{j['timeout']}|" + (f"{j['retries']}|" if retries else "") + f"{j['command']}\n" for j in jobs[:2])
    return Draft(kind="job_runner", outputs=[script], instruction=instruction, files={"examples/jobs.txt": sample.encode()}, truth=truth, checks=checks,
                 solution="\n".join(sol), parameters={"logs": logs, "retries": retries, "comments": comments, "env": env, "jobs": len(jobs)},
                 tags=["processes", "timeout", "bash"])


KINDS = [Kind("service_ctl", build_service), Kind("job_runner", build_job_runner)]
