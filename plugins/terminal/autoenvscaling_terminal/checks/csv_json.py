# Checks of the csv_json family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)


def table():
    rows = [[c.strip() for c in r] for r in csv_rows(APP / TRUTH["out"]) if r]
    assert rows, "the CSV is empty"
    return rows


def test_shape_table_header():
    assert table()[0] == TRUTH["header"]


def test_table_groups():
    assert [r[0] for r in table()[1:]] == [r[0] for r in TRUTH["rows"]]


def test_table_values():
    got = {r[0]: r[1:] for r in table()[1:] if len(r) >= 3}
    for group, orders, revenue in TRUTH["rows"]:
        assert group in got, f"missing row for {group}"
        assert int(got[group][0]) == orders, f"{group}: orders {got[group][0]} != {orders}"
        assert re.fullmatch(r"-?\d+\.\d\d", got[group][1]), f"{group}: revenue {got[group][1]} needs two decimals"
        assert close(got[group][1], revenue), f"{group}: revenue {got[group][1]} != {revenue:.2f}"


def test_table_rows_exact():
    assert table()[1:] == TRUTH["rows"]


def records():
    data = load_json(APP / TRUTH["out"])
    assert isinstance(data, list) and all(isinstance(r, dict) for r in data), "expected a JSON array of objects"
    return data


def test_shape_records_array():
    assert len(records()) == len(TRUTH["records"])


def test_record_ids_and_order():
    assert [r.get("id") for r in records()] == [r["id"] for r in TRUTH["records"]]


def test_record_fields():
    got = {r.get("id"): r for r in records()}
    for want in TRUTH["records"]:
        assert got.get(want["id"]) == want, f"record {want['id']}: {got.get(want['id'])} != {want}"
