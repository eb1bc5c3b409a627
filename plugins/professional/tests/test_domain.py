"""The professional domain as the flywheel and proposers see it: the proposer kit (current worked
examples that pass every gate) and, slow, the plugin author's contract on real sandboxes for every
family at two difficulties."""

from __future__ import annotations

import pytest
from autoenvscaling.plugins import create_host
from autoenvscaling.tasks import read_task
from autoenvscaling.testing import assert_domain_contract
from prof_helpers import bwrap, validate

from autoenvscaling_professional.domain import ProfessionalDomain


def test_the_proposer_kit_has_a_guide_the_contract_and_examples_of_its_families():
    kit = ProfessionalDomain().kit()
    assert kit.guide.startswith("# Writing professional") and kit.contract.startswith("# The professional task contract")
    assert "professional-controls" in kit.contract and "computed_values" in kit.guide
    assert sorted(read_task(p).provenance.family for p in kit.examples) == ["memo_docx", "summary_formulas"]


@pytest.mark.slow  # the examples are generated tasks: the fast set runs every gate on generated tasks already
@bwrap
def test_the_kit_examples_pass_every_gate():
    for path in ProfessionalDomain().kit().examples:
        report = validate(read_task(path))
        assert report.status == "valid", (path.name, report.reason)


@bwrap
@pytest.mark.slow
def test_the_plugin_author_contract_holds_on_real_sandboxes(bwrap_backend):

    assert_domain_contract(ProfessionalDomain(), backend=bwrap_backend, seeds=(0, 1), difficulties=("easy", "hard"),
                           host=create_host())
