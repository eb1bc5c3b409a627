# Checks of the log_analysis family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)


def report():
    data = load_json(APP / TRUTH["report"])
    assert isinstance(data, dict), "the report must be a JSON object"
    return data


def test_shape_report_json():
    report()


def test_total_requests():
    assert report().get("total_requests") == TRUTH["total_requests"]


def test_status_counts():
    got = {str(k): v for k, v in (report().get("status_counts") or {}).items()}
    assert got == TRUTH["status_counts"]


def test_top_ips():
    assert report().get("top_ips") == TRUTH["top_ips"]


def test_bytes_total():
    assert report().get("bytes_total") == TRUTH["bytes_total"]


def test_malformed_lines():
    assert report().get("malformed_lines") == TRUTH["malformed_lines"]


def test_error_paths():
    assert report().get("error_paths") == TRUTH["error_paths"]


def test_shape_errors_csv_header():
    rows = csv_rows(APP / TRUTH["csv"])
    assert rows and [c.strip() for c in rows[0]] == ["service", "errors"]


def test_errors_csv_rows():
    rows = [[c.strip() for c in r] for r in csv_rows(APP / TRUTH["csv"])[1:] if r]
    assert rows == TRUTH["rows"]


def test_error_codes():
    assert lines(APP / TRUTH["codes_file"]) == TRUTH["codes"]
