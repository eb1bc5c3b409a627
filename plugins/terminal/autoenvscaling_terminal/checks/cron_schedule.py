# Checks of the cron_schedule family (cron_field, cron_parse and cron_signature are inlined above).
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)


def crontab_entries():
    entries = []
    for line in text(APP / TRUTH["path"]).splitlines():
        parsed = cron_parse(line)
        if parsed:
            entries.append((parsed[0], " ".join(parsed[1].split())))
    return entries


def test_shape_crontab_commands():
    commands = [c for _, c in crontab_entries()]
    want = [" ".join(j["command"].split()) for j in TRUTH["jobs"]]
    assert sorted(commands) == sorted(want), f"job commands: {commands}"


def test_crontab_schedules():
    got = {c: f for f, c in crontab_entries()}
    for job in TRUTH["jobs"]:
        command = " ".join(job["command"].split())
        assert command in got, f"no entry runs {command}"
        try:
            same = cron_signature(got[command]) == cron_signature(job["fields"])
        except ValueError as exc:
            raise AssertionError(f"invalid schedule for {command}: {exc}") from None
        assert same, f"{command}: {' '.join(got[command])} is not the requested schedule"


def test_shape_crontab_environment():
    assignments = {}
    for line in lines(APP / TRUTH["path"]):
        key, sep, value = line.partition("=")
        if sep and " " not in key.strip() and not line.lstrip().startswith("#"):
            assignments[key.strip()] = value.strip().strip('"').strip("'")
    crontab_entries()
    for key, value in TRUTH["env"].items():
        assert assignments.get(key) == value, f"{key} should be {value!r}"


def answers():
    data = load_json(APP / TRUTH["out"])
    assert isinstance(data, dict), "expected a JSON object"
    return data


def test_when_runs():
    got = answers().get("at") or {}
    for moment, jobs in TRUTH["at"].items():
        assert sorted(got.get(moment, [None])) == jobs, f"at {moment}: {got.get(moment)} != {jobs}"


def test_run_counts():
    assert answers().get("counts") == TRUTH["counts"]
