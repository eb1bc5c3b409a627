# Checks of the text_regex family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


def test_email_list():
    assert lines(APP / TRUTH["out"]) == TRUTH["emails"]


def test_domain_counts():
    rows = [[c.strip() for c in r] for r in csv_rows(APP / TRUTH["domains_out"]) if r]
    assert rows and rows[0] == ["domain", "addresses"], "header must be domain,addresses"
    assert rows[1:] == TRUTH["domains"]


def redacted():
    return text(APP / TRUTH["out"])


def test_redacted_emails():
    out = redacted()
    assert not EMAIL.search(out), "an e-mail address is still visible"
    assert out.count("[EMAIL]") == TRUTH["counts"]["email"]


def test_redacted_phones():
    out = redacted()
    assert not re.search(r"\d{3}-\d{3}-\d{4}|\(\d{3}\) \d{3}-\d{4}", out.replace("****-****-****-", "")), "a phone number is still visible"
    assert out.count("[PHONE]") == TRUTH["counts"]["phone"]


def test_redacted_cards():
    out = redacted()
    assert not re.search(r"\d{4}-\d{4}-\d{4}-\d{4}", out), "a full card number is still visible"
    assert out.count("****-****-****-") == TRUTH["counts"].get("card", 0)


def test_redacted_exact():
    assert redacted().rstrip("\n") == TRUTH["expected"].rstrip("\n"), "the redacted text differs from the expected one"


def test_dates_converted_lines():
    assert lines(APP / TRUTH["out"]) == TRUTH["expected_lines"]


def test_shape_no_old_dates():
    out = text(APP / TRUTH["out"])
    assert out.strip(), "the output is empty"
    assert not re.search(r"\b\d{2}/\d{2}/\d{4}\b", out), "a DD/MM/YYYY date is left"
    assert not re.search(r"\b[A-Z][a-z]{2} \d{2}, \d{4}\b", out), "a 'Mon DD, YYYY' date is left"
