"""Every installed domain's proposer kit, checked one way: a guide, the contract, and worked
examples that are exactly what the domain's generators make now (they are built on first use, never
committed, so this is what keeps the cache key honest)."""

from __future__ import annotations

import pytest

from autoenvscaling.domains.kit import domain_package, examples_key
from autoenvscaling.plugins import create_host
from autoenvscaling.tasks import read_task, short_name

HOST = create_host()
FIRST_PARTY = {"terminal", "swe", "professional", "computer_use", "gpu_kernels"}


def test_every_first_party_domain_has_a_kit():
    assert FIRST_PARTY <= set(HOST.domains.names())
    for name in FIRST_PARTY:
        domain = HOST.domains.get(name)()
        assert domain_package(domain) == f"autoenvscaling_{name}", name


@pytest.mark.parametrize("name", sorted(FIRST_PARTY))
def test_the_kit_examples_are_what_the_generators_make_now(name):
    domain = HOST.domains.get(name)()
    kit = domain.kit()
    assert kit is not None and kit.guide.strip() and kit.contract.strip()
    assert kit.examples and all(p.parent.name == examples_key(domain) for p in kit.examples)
    fresh = {short_name(t.name): t for t in domain.kit_tasks()}
    assert sorted(fresh) == [p.name for p in kit.examples], name
    for path in kit.examples:
        task = read_task(path)
        assert task.digest() == fresh[path.name].digest(), f"{name}: {path.name} differs from a fresh generation"
        assert task.provenance.domain == name
