# Checks of the process_mgmt family: they start and stop real processes. The agent's scripts (and
# the workers they start) run as the agent-code user (see run_agent above), so /app is theirs.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)

own(APP)


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def workers():
    """PIDs of live processes running the task's worker script."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if TRUTH["worker"] in cmdline and "python" in cmdline and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def reset_service():
    for pid in workers():
        os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 5
    while workers() and time.time() < deadline:
        time.sleep(0.05)
    Path(TRUTH["pidfile"]).unlink(missing_ok=True)
    Path(TRUTH["log"]).unlink(missing_ok=True)


def teardown_module(module):
    if "worker" in TRUTH:
        reset_service()


def ctl(*args):
    """Run the control script with its output in files, not pipes: a background worker that keeps
    an inherited pipe open must not make the check wait."""
    script = need(APP / TRUTH["ctl"])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        code = subprocess.call(["bash", str(script), *args], stdout=out, stderr=err, stdin=subprocess.DEVNULL, timeout=30,
                               env=agent_env(), **agent_identity())
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def pid_from_file():
    raw = need(TRUTH["pidfile"]).read_text().strip()
    assert raw.isdigit(), f"the PID file holds {raw!r}"
    return int(raw)


_RAN_OUT: "set[str]" = set()  # the waits (by name) that already ran out in an earlier check of this run


def wait_for(predicate, seconds=5.0, name=None):
    """Whether ``predicate`` came true within ``seconds``. A named wait that ran out once is not
    waited for again (one look): a script that never writes its PID file costs its grace once, not
    once per check."""
    if name in _RAN_OUT:
        return bool(predicate())
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    if predicate():
        return True
    if name is not None:
        _RAN_OUT.add(name)
    return False


def started():
    reset_service()
    code, out, err = ctl("start")
    assert code == 0, f"start exited {code}: {err[-300:]}"
    assert wait_for(lambda: Path(TRUTH["pidfile"]).is_file(), name="pidfile"), "no PID file after start"
    pid = pid_from_file()
    assert wait_for(lambda: alive(pid), name="alive"), f"PID {pid} is not running"
    # the worker logs its own PID once its SIGTERM handler is installed
    assert wait_for(lambda: f"started pid={pid} " in log_text(), 10, name="logged"), \
        f"PID {pid} from the PID file is not the worker's PID"
    return pid


def log_text():
    path = Path(TRUTH["log"])
    return path.read_text() if path.exists() else ""


def test_service_start():
    pid = started()
    assert pid in workers(), "the PID file does not hold the worker's PID"
    assert wait_for(lambda: "heartbeat" in log_text()), "the worker writes no heartbeat"
    time.sleep(0.3)
    assert alive(pid), "the worker died after start returned"
    reset_service()


def test_service_status():
    pid = started()
    code, out, _ = ctl("status")
    assert code == 0 and out.strip().startswith("running"), f"status while running: exit {code}, {out!r}"
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not alive(pid))
    Path(TRUTH["pidfile"]).unlink(missing_ok=True)
    code, out, _ = ctl("status")
    assert code == 3 and out.strip().startswith("stopped"), f"status while stopped: exit {code}, {out!r}"
    reset_service()


def test_service_stop():
    pid = started()
    code, _, err = ctl("stop")
    assert code == 0, f"stop exited {code}: {err[-300:]}"
    assert wait_for(lambda: not alive(pid), 2), "the worker is still running after stop"
    assert not Path(TRUTH["pidfile"]).exists(), "the PID file was not removed"
    assert log_text().rstrip().endswith("stopped"), "the worker was not stopped with SIGTERM"
    code, out, _ = ctl("status")
    assert code == 3
    reset_service()


def test_service_start_idempotent():
    pid = started()
    code, out, _ = ctl("start")
    assert code == 0 and "already running" in out, f"second start: exit {code}, {out!r}"
    time.sleep(0.3)
    assert workers() == [pid], f"expected one worker, found {workers()}"
    reset_service()


def test_service_stale_pidfile():
    reset_service()
    dead = subprocess.Popen(["true"])
    dead.wait()
    Path(TRUTH["pidfile"]).parent.mkdir(parents=True, exist_ok=True)
    Path(TRUTH["pidfile"]).write_text(f"{dead.pid}\n")
    own(Path(TRUTH["pidfile"]).parent)
    code, out, _ = ctl("status")
    assert code == 3 and out.strip().startswith("stopped"), f"status with a stale PID file: exit {code}, {out!r}"
    code, _, err = ctl("start")
    assert code == 0, f"start with a stale PID file exited {code}: {err[-300:]}"
    pid = pid_from_file()
    assert wait_for(lambda: f"started pid={pid} " in log_text(), 10) and pid in workers()
    reset_service()


def test_service_restart():
    pid = started()
    code, _, err = ctl("restart")
    assert code == 0, f"restart exited {code}: {err[-300:]}"
    new = pid_from_file()
    assert new != pid and wait_for(lambda: alive(new)), "restart did not start a new worker"
    assert wait_for(lambda: f"started pid={new} " in log_text(), 10), "the new PID is not the worker's"
    assert wait_for(lambda: not alive(pid)), "the old worker is still running"
    assert workers() == [new]
    reset_service()


def test_service_env_file():
    started()
    name = TRUTH["worker_name"]
    assert wait_for(lambda: f"name={name}" in log_text()), "the worker did not get the variables from the env file"
    reset_service()


def script():
    return need(APP / TRUTH["script"])


def test_shape_script_executable():
    path = script()
    assert os.access(path, os.X_OK), f"{path} is not executable"


def run_jobs(with_comments=False):
    root = agent_dir()
    lines_out = ["# nightly batch", ""] if with_comments else []
    for job in TRUTH["jobs"]:
        retries = f"{job['retries']}|" if TRUTH["retries"] else ""
        probe = 'echo "env=$JOB_NAME/$JOB_ATTEMPT"; ' if TRUTH["env"] and job["exit"] == 0 and job["timeout"] > 1 else ""
        command = probe + job["command"]
        lines_out.append(f"{job['name']}|{job['timeout']}|{retries}{command}")
    (root / "jobs.txt").write_text("\n".join(lines_out) + "\n")
    own(root)
    args = [str(root / "jobs.txt"), str(root / "report.csv")] + ([str(root / "logs")] if TRUTH["logs"] else [])
    result = run_agent(["bash", str(script()), *args], timeout=120, env=agent_env(STATE_DIR=root), stdin=subprocess.DEVNULL)
    return root, result


def report_rows(root):
    return [[c.strip() for c in r] for r in csv_rows(root / "report.csv") if r]


def test_job_report():
    root, _ = run_jobs()
    rows = report_rows(root)
    assert [r[0] for r in rows] == [j["name"] for j in TRUTH["jobs"]], f"report order/names: {[r[0] for r in rows]}"
    for row, job in zip(rows, TRUTH["jobs"]):
        assert len(row) >= 2 and row[1] == str(job["exit"]), f"{job['name']}: exit {row[1:]} != {job['exit']}"


def test_job_logs():
    root, _ = run_jobs()
    for job in TRUTH["jobs"]:
        log = root / "logs" / f"{job['name']}.log"
        assert log.is_file(), f"no log for {job['name']}"
        if job["output"]:
            assert job["output"] in log.read_text(), f"{job['name']}.log lacks the job's output"


def test_job_retries():
    root, _ = run_jobs()
    rows = {r[0]: r for r in report_rows(root)}
    for job in TRUTH["jobs"]:
        row = rows.get(job["name"], [])
        assert row[1:3] == [str(job["exit"]), str(job["attempts"])], f"{job['name']}: {row} (want exit {job['exit']}, attempts {job['attempts']})"


def test_job_overall_status():
    root, result = run_jobs(with_comments=True)
    assert [r[0] for r in report_rows(root)] == [j["name"] for j in TRUTH["jobs"]], "comments or blank lines were treated as jobs"
    assert result.returncode == 1, f"a job failed, so the script must exit 1 (got {result.returncode})"


def test_job_environment():
    root, _ = run_jobs()
    for job in TRUTH["jobs"]:
        if job["exit"] == 0 and job["timeout"] > 1:
            log = (root / "logs" / f"{job['name']}.log").read_text()
            assert f"env={job['name']}/{job['attempts']}" in log, f"{job['name']} did not see JOB_NAME/JOB_ATTEMPT"
