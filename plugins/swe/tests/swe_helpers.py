"""A third-party repository for the swe tests: a small library nobody in this plugin wrote, with its
own tests and a git history (a buggy first version, then a commit that fixes it), built in a
temporary directory. Flat layout (the package at the root), as many real projects have."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

ROMAN_BUGGY = '''    for value, symbol in NUMERALS:
        while number > value:
'''
ROMAN_FIXED = '''    for value, symbol in NUMERALS:
        while number >= value:
'''

LIBRARY = '''"""Small numeric helpers: roman numerals, clamping, running statistics."""

NUMERALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(number):
    """The roman numeral of ``number`` (1..3999); ValueError outside that range."""
    if number < 1 or number > 3999:
        raise ValueError("out of range")
    out = []
''' + ROMAN_FIXED + '''            out.append(symbol)
            number -= value
    return "".join(out)


def from_roman(text):
    """The integer a roman numeral stands for; ValueError for an empty or invalid numeral."""
    if not text:
        raise ValueError("empty numeral")
    values = {symbol: value for value, symbol in NUMERALS if len(symbol) == 1}
    total = 0
    for i, char in enumerate(text):
        if char not in values:
            raise ValueError(f"bad numeral {char!r}")
        value = values[char]
        if i + 1 < len(text) and values.get(text[i + 1], 0) > value:
            total -= value
        else:
            total += value
    if to_roman(total) != text:
        raise ValueError("non-canonical numeral")
    return total


def clamp(value, low, high):
    """``value`` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError("low > high")
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    """The arithmetic mean; ValueError for no values."""
    if not values:
        raise ValueError("no values")
    return sum(values) / len(values)


def spread(values):
    """max - min of the values (0 for a single value); ValueError for no values."""
    if not values:
        raise ValueError("no values")
    low = high = values[0]
    for v in values[1:]:
        if v < low:
            low = v
        if v > high:
            high = v
    return high - low
'''

TESTS = '''import pytest

from numtools import clamp, from_roman, mean, spread, to_roman


@pytest.mark.parametrize("number,text", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"),
                                         (400, "CD"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3999, "MMMCMXCIX")])
def test_to_roman(number, text):
    assert to_roman(number) == text


def test_to_roman_range():
    with pytest.raises(ValueError):
        to_roman(0)
    with pytest.raises(ValueError):
        to_roman(4000)


def test_roundtrip():
    for n in range(1, 300):
        assert from_roman(to_roman(n)) == n


def test_from_roman_subtractive():
    assert from_roman("XLII") == 42


def test_from_roman_rejects():
    for bad in ("", "ABC", "IIII", "VX"):
        with pytest.raises(ValueError):
            from_roman(bad)


def test_clamp_inside():
    assert clamp(5, 1, 10) == 5


def test_clamp_low():
    assert clamp(-3, 1, 10) == 1


def test_clamp_high():
    assert clamp(30, 1, 10) == 10


def test_clamp_edges():
    assert clamp(1, 1, 10) == 1 and clamp(10, 1, 10) == 10


def test_clamp_bad_bounds():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_single():
    assert mean([7]) == 7


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_spread():
    assert spread([3, 9, 1, 4]) == 8


def test_spread_single():
    assert spread([5]) == 0


def test_spread_negative():
    assert spread([-2, -9, -4]) == 7


def test_spread_empty():
    with pytest.raises(ValueError):
        spread([])
'''


def git(repo: Path, *args: str, date: int = 1_690_000_000) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Third Party", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
           "GIT_COMMITTER_NAME": "Third Party", "GIT_COMMITTER_EMAIL": "dev@example.invalid",
           "GIT_AUTHOR_DATE": f"@{date} +0000", "GIT_COMMITTER_DATE": f"@{date} +0000",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def third_party_repo(root: Path) -> Path:
    """``root/numtools``: a git repository with four commits, the second a real fix, the last a feature."""
    repo = root / "numtools"
    (repo / "tests").mkdir(parents=True)
    (repo / "numtools.py").write_text(LIBRARY.replace(ROMAN_FIXED, ROMAN_BUGGY))
    (repo / "tests" / "test_numtools.py").write_text(TESTS)
    (repo / "README.md").write_text("numtools: small numeric helpers\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "First version of numtools")
    (repo / "numtools.py").write_text(LIBRARY)
    git(repo, "commit", "-qam", "Fix to_roman for numbers equal to a numeral's value", date=1_690_100_000)
    (repo / "README.md").write_text("numtools: small numeric helpers (roman numerals, clamp, stats)\n")
    git(repo, "commit", "-qam", "Describe the helpers in the README", date=1_690_200_000)
    (repo / "numtools.py").write_text(LIBRARY + '\n\ndef median(values):\n    """The middle value."""\n'
                                      '    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n')
    git(repo, "commit", "-qam", "Add median()", date=1_690_300_000)
    return repo


def generate(repo: str | Path, *, seed: int, level: int = 1, strategy: str = "mutation", llm=None, commit=None):
    """(instance, attempts) for one seed, screened in a real bwrap sandbox."""
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling_swe.generate import GenerateSettings, SweGenerator
    from autoenvscaling_swe.repos import open_repository

    async def go():
        backend = make_backend("bwrap")
        repository = open_repository(str(repo))
        try:
            async with SweGenerator(backend, repository, repository.snapshot(commit),
                                    settings=GenerateSettings(llm=llm, max_attempts=20)) as gen:
                inst = await gen.instance(seed=seed, level=level, strategy=strategy)
                return inst, list(gen.attempts)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def docker_backend_or_skip():
    """The docker backend on the engine at DOCKER_HOST; skips without one (fails under
    AUTOENVSCALING_REQUIRE_DOCKER=1, as in CI)."""
    from autoenvscaling.errors import AESError
    from autoenvscaling.sandbox.select import make_backend

    async def probe():
        backend = make_backend("docker")
        try:
            await backend.call(lambda: backend.client.ping(), what="ping")
        finally:
            await backend.aclose()

    try:
        asyncio.run(probe())
    except (AESError, Exception) as exc:  # noqa: BLE001 - any reason the engine is unusable
        message = f"no Docker-API engine: {exc}"
        if os.environ.get("AUTOENVSCALING_REQUIRE_DOCKER") == "1":
            pytest.fail(message + " [AUTOENVSCALING_REQUIRE_DOCKER=1]")
        pytest.skip(message)
    return "docker"


def trial(task, agent, backend_name: str = "bwrap"):
    """One attempt of ``agent`` on ``task``, verified with the protected view."""
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend

    async def go():
        backend = make_backend(backend_name)
        try:
            return await TrialRunner(backend, host=create_host()).run(task, agent)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def validate(task, *, skip=(), backend_name: str = "bwrap"):
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    async def go():
        backend = make_backend(backend_name)
        try:
            validator = Validator(host=create_host(), backend=backend, settings=GateSettings(skip=tuple(skip)))
            return await validator.validate(task)
        finally:
            await backend.aclose()

    return asyncio.run(go())


# A small library that shares its name and part of its API with more-itertools, which Debian's
# python3-pytest pulls in (python3-more-itertools) and setuptools vendors: the case of a repository
# whose code under test the image may already hold a copy of.
CHUNKED_BUGGY = "        if len(chunk) < n:\n            return\n"
CHUNKED_FIXED = "        if not chunk:\n            return\n"
MORE = '''"""Iterator helpers."""

from itertools import islice

_marker = object()


def chunked(iterable, n, strict=False):
    """Break *iterable* into lists of length *n*; the last one may be shorter."""
    iterator = iter(iterable)
    while True:
        chunk = list(islice(iterator, n))
''' + CHUNKED_FIXED + '''        yield chunk


def first(iterable, default=_marker):
    """The first item of *iterable*, or *default*; ValueError when empty without a default."""
    for item in iterable:
        return item
    if default is _marker:
        raise ValueError("first() was called on an empty iterable")
    return default


def last(iterable, default=_marker):
    """The last item of *iterable*, or *default*; ValueError when empty without a default."""
    item = default
    for item in iterable:
        pass
    if item is _marker:
        raise ValueError("last() was called on an empty iterable")
    return item


def ilen(iterable):
    """The number of items in *iterable*."""
    return sum(1 for _ in iterable)
'''
RECIPES = '''"""Recipes from the itertools documentation."""

from collections import deque
from itertools import islice


def take(n, iterable):
    """The first *n* items of *iterable* as a list."""
    return list(islice(iterable, n))


def tail(n, iterable):
    """An iterator over the last *n* items of *iterable*."""
    return iter(deque(iterable, maxlen=n))


def nth(iterable, n, default=None):
    """The *n*-th item of *iterable*, or *default*."""
    return next(islice(iterable, n, None), default)


def quantify(iterable, pred=bool):
    """How many times *pred* is true for the items of *iterable*."""
    return sum(map(pred, iterable))
'''
MORE_TESTS = '''import pytest

from more_itertools import chunked, first, ilen, last, nth, quantify, tail, take


def test_chunked_even():
    assert list(chunked([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]


def test_chunked_uneven():
    assert list(chunked([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]


def test_chunked_short():
    assert list(chunked("ab", 3)) == [["a", "b"]]


def test_chunked_empty():
    assert list(chunked([], 3)) == []


def test_first():
    assert first([3, 4]) == 3 and first([], "x") == "x"
    with pytest.raises(ValueError):
        first([])


def test_last():
    assert last(range(5)) == 4 and last([], None) is None


def test_ilen():
    assert ilen(x for x in range(10) if x % 3 == 0) == 4


def test_take_and_tail():
    assert take(2, range(10)) == [0, 1] and list(tail(2, range(10))) == [8, 9]


def test_nth():
    assert nth(range(10), 3) == 3 and nth(range(3), 5, "none") == "none"


def test_quantify():
    assert quantify([0, 1, 2, 0]) == 2
'''


def more_itertools_repo(root: Path) -> Path:
    """``root/more-itertools``: a git repository whose second commit fixes chunked()."""
    repo = root / "more-itertools"
    (repo / "more_itertools").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "more_itertools" / "__init__.py").write_text("from .more import *  # noqa\nfrom .recipes import *  # noqa\n")
    (repo / "more_itertools" / "more.py").write_text(MORE.replace(CHUNKED_FIXED, CHUNKED_BUGGY))
    (repo / "more_itertools" / "recipes.py").write_text(RECIPES)
    (repo / "tests" / "test_more.py").write_text(MORE_TESTS)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "First version")
    (repo / "more_itertools" / "more.py").write_text(MORE)
    git(repo, "commit", "-qam", "Fix chunked() dropping the last chunk when it is shorter", date=1_690_100_000)
    return repo
