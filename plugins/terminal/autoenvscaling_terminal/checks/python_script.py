# Checks of the python_script family: the agent's code runs in a subprocess on unseen inputs, as the
# agent-code user (see run_agent above), so a crash or an endless loop fails a check instead of
# hanging the verifier.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)

own(APP)

PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("agent_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = []
for name, args in json.loads(sys.stdin.read()):
    try:
        out.append({"value": getattr(module, name)(*args)})
    except Exception as exc:
        out.append({"error": type(exc).__name__})
print(json.dumps(out))
"""


def call_module(calls):
    path = need(APP / TRUTH["module"])
    result = run_agent(["python3", "-c", PROBE, str(path)], input=json.dumps(calls), timeout=60)
    assert result.returncode == 0, f"importing or calling the module failed: {result.stderr[-500:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_parse_duration():
    got = call_module([["parse_duration", [text]] for text, _ in TRUTH["parse"]])
    for (text, want), res in zip(TRUTH["parse"], got):
        assert res.get("value") == want, f"parse_duration({text!r}) gave {res}, expected {want}"


def test_format_duration():
    got = call_module([["format_duration", [secs]] for secs, _ in TRUTH["format"]])
    for (secs, want), res in zip(TRUTH["format"], got):
        assert res.get("value") == want, f"format_duration({secs}) gave {res}, expected {want!r}"


def test_parse_rejects_invalid():
    got = call_module([["parse_duration", [text]] for text in TRUTH["invalid"]])
    for text, res in zip(TRUTH["invalid"], got):
        assert res.get("error") == "ValueError", f"parse_duration({text!r}) gave {res}, expected ValueError"


def tool(*args):
    return run_agent(["python3", str(need(APP / TRUTH["tool"])), *args], timeout=60)


def write_case(case):
    root = agent_dir()
    (root / "stock.json").write_text(json.dumps(case["stock"]))
    (root / "tx.json").write_text(json.dumps(case["transactions"]))
    return own(root)


def inventory_output(case, *extra):
    root = write_case(case)
    result = tool(str(root / "stock.json"), str(root / "tx.json"), *extra)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-300:]}"
    try:
        return json.loads(result.stdout), root
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not JSON: {result.stdout[:200]!r}") from None


def test_inventory_final_stock():
    for case in TRUTH["cases"]:
        out, _ = inventory_output(case)
        assert out.get("stock") == case["final"]


def test_inventory_rejections():
    for case in TRUTH["cases"]:
        out, _ = inventory_output(case)
        assert out.get("rejected") == case["rejected"]


def test_inventory_report():
    for case in TRUTH["cases"]:
        root = agent_dir()
        out, _ = inventory_output(case, "--report", str(root / "report.csv"))
        rows = [[c.strip() for c in r] for r in csv_rows(root / "report.csv") if r]
        assert rows[0] == ["item", "sold", "restocked"]
        assert rows[1:] == [[i, str(s), str(r)] for i, s, r in case["report"]]


def test_inventory_bad_input():
    root = write_case(TRUTH["cases"][0])
    (root / "broken.json").write_text('{"type": "sell", ')
    own(root)
    result = tool(str(root / "stock.json"), str(root / "broken.json"))
    assert result.returncode == 1, f"expected exit 1, got {result.returncode}"
    assert "invalid JSON" in result.stderr and "broken.json" in result.stderr
    assert not result.stdout.strip()


def versions_file():
    path = agent_dir() / "versions.txt"
    path.write_text(TRUTH["input"])
    return own(path)


def test_semver_sort():
    result = tool("sort", str(versions_file()))
    assert result.returncode == 0, result.stderr[-300:]
    assert [l.strip() for l in result.stdout.splitlines() if l.strip()] == TRUTH["sorted"]


def test_semver_bump():
    for part, version, want in TRUTH["bumps"]:
        result = tool("bump", part, version)
        assert result.stdout.strip() == want, f"bump {part} {version}: {result.stdout.strip()!r} != {want!r}"


def test_semver_latest():
    path = versions_file()
    for major, want in TRUTH["latest"]:
        assert tool("latest", str(path), "--major", str(major)).stdout.strip() == want
    result = tool("latest", str(path), "--major", "97")
    assert result.returncode == 1 and not result.stdout.strip()


def test_semver_invalid_lines():
    result = tool("sort", str(versions_file()))
    for line in TRUTH["invalid"]:
        assert f"invalid: {line}" in result.stderr
