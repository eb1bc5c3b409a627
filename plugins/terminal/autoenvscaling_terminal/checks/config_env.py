# Checks of the config_env family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
import configparser


def ini():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    try:
        parser.read_string(text(APP / TRUTH["path"]))
    except configparser.Error as exc:
        raise AssertionError(f"the file is no longer valid INI: {exc}") from None
    return {s: dict(parser[s]) for s in parser.sections()}


def test_ini_requested_values():
    got = ini()
    for section, values in TRUTH["want"].items():
        for key, value in values.items():
            assert got.get(section, {}).get(key) == value, f"[{section}] {key} should be {value!r}"


def test_ini_whole_config():
    assert ini() == TRUTH["want"], "the configuration differs from the requested one"
    comments = [l.rstrip() for l in text(APP / TRUTH["path"]).splitlines() if l.startswith(("#", ";"))]
    assert comments == TRUTH["comments"], "comments were changed or lost"


def env_pairs():
    out = []
    for line in lines(APP / TRUTH["out"]):
        assert "=" in line, f"not a KEY=VALUE line: {line!r}"
        key, _, value = line.partition("=")
        out.append((key, value))
    return out


def test_env_keys():
    assert sorted(k for k, _ in env_pairs()) == sorted(TRUTH["merged"])


def test_env_values():
    got = dict(env_pairs())
    for key, value in TRUTH["merged"].items():
        assert got.get(key) == value, f"{key}={got.get(key)!r}, expected {value!r}"


def test_env_format():
    pairs = env_pairs()
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys, key=lambda s: s.encode()), "lines are not sorted by key"
    assert pairs == list(TRUTH["merged"].items())


def validation():
    data = load_json(APP / TRUTH["out"])
    assert isinstance(data, dict), "the report must be a JSON object"
    return data


def test_shape_validation_files():
    assert sorted(validation()) == sorted(TRUTH["report"])


def check_field(field):
    got = validation()
    for name, want in TRUTH["report"].items():
        assert sorted((got.get(name) or {}).get(field, [None])) == want[field], f"{name}: {field} should be {want[field]}"


def test_validation_missing():
    check_field("missing")


def test_validation_invalid():
    check_field("invalid")


def test_validation_unknown():
    check_field("unknown")
