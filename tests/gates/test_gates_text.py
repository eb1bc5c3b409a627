"""Decontamination (13-gram overlap with a held-out set) and near-duplicates within a suite."""

from __future__ import annotations

import asyncio
import json

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.text import DecontaminationGate, NearDuplicateGate, load_held_out, words
from autoenvscaling.tasks.harbor import read_task

LONG = ("Write a command line tool that reads a CSV file of transactions, groups them by account, "
        "and prints the running balance of every account in ascending order of account number.")


def _ctx(**kwargs):
    return GateContext(backend=None, runner=None, settings=kwargs.pop("settings", GateSettings()), **kwargs)


def _task(defects, instruction: str, name: str = "t"):
    good = read_task(defects / "good")
    from autoenvscaling.tasks import Task

    return Task.create(name, good.config, instruction, good.files)


def test_words_ignore_case_and_punctuation():
    assert words("Hello, WORLD!  `hello.txt`") == ["hello", "world", "hello", "txt"]


def test_a_shared_13_gram_fails_and_names_the_text(defects):
    held = ["Unrelated text about compilers and linkers.", "Intro. " + LONG.upper().replace(",", " ;") + " Outro."]
    result = asyncio.run(DecontaminationGate().check(_task(defects, LONG), _ctx(held_out=held)))
    assert result.status == "fail"
    assert "with held-out text #2" in result.reason
    assert result.evidence[0].values["overlaps"] == len(words(LONG)) - 12
    assert result.evidence[0].values["held_out_texts"] == [1]


def test_twelve_shared_words_are_not_contamination(defects):
    twelve = " ".join(words(LONG)[:12])
    result = asyncio.run(DecontaminationGate().check(_task(defects, LONG), _ctx(held_out=[twelve + " something else entirely"])))
    assert result.status == "pass"
    assert result.evidence[0].values == {"held_out": 1, "ngram": 13, "overlaps": 0}


def test_short_instructions_are_checked_whole(defects):
    short = "Create a file called hello.txt with Hello, world! as the content."
    held = ["Tasks: create a file called hello txt with hello world as the content, then stop."]
    result = asyncio.run(DecontaminationGate().check(_task(defects, short), _ctx(held_out=held)))
    assert result.status == "fail"


def test_no_held_out_set_passes_and_says_so(defects):
    result = asyncio.run(DecontaminationGate().check(_task(defects, LONG), _ctx()))
    assert (result.status, result.reason) == ("pass", "no held-out set configured")


def test_held_out_loaders(tmp_path, defects, harbor_cookbook):
    jsonl = tmp_path / "h.jsonl"
    jsonl.write_text(json.dumps({"instruction": "a"}) + "\n" + json.dumps("b") + "\n\n" + json.dumps({"problem_statement": "c"}) + "\n")
    assert load_held_out(jsonl) == ["a", "b", "c"]
    txt = tmp_path / "h.txt"
    txt.write_text("first text\n\nsecond text\n")
    assert load_held_out(txt) == ["first text", "second text"]
    texts = load_held_out(harbor_cookbook)
    assert len(texts) == 6  # three single-instruction tasks + three steps of multi-step
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": 1}]))
    with pytest.raises(UsageError, match="has no text"):
        load_held_out(bad)


def test_near_duplicate_names_the_other_task(defects, harbor_cookbook):
    simple = read_task(harbor_cookbook / "simple-task")
    suite = [read_task(harbor_cookbook / n) for n in ("multi-reward", "skills")] + [simple.renamed("already-there")]
    copy = simple.renamed("copy-of-simple").with_files({"tests/test.sh": simple.files["tests/test.sh"].text + "\n# tweak\n"})
    result = asyncio.run(NearDuplicateGate().check(copy, _ctx(suite_tasks=suite)))
    assert result.status == "fail"
    assert result.reason.startswith("near-duplicate of suite task 'already-there' (Jaccard 0.9")
    assert result.evidence[0].values["closest"] == "already-there"


def test_distinct_tasks_and_the_task_itself_pass(defects, harbor_cookbook):
    suite = [read_task(harbor_cookbook / n) for n in ("multi-reward", "skills", "simple-task")]
    simple = read_task(harbor_cookbook / "simple-task")  # same name: re-validating an admitted task
    result = asyncio.run(NearDuplicateGate().check(simple, _ctx(suite_tasks=suite)))
    assert result.status == "pass"
    assert result.evidence[0].values["jaccard"] < 0.8
    assert result.evidence[0].values["suite"] == 3


def test_shared_verifier_boilerplate_alone_is_not_a_near_copy(defects):
    """Generated tasks of one domain share most verifier code: a different instruction keeps a task
    apart, and so does a different verifier under the same instruction."""
    base = _task(defects, LONG, "already-there")
    other = ("Find every file under the home directory that is larger than ten megabytes and has not been "
             "modified in the last thirty days, then archive them into one compressed tarball in backup.")
    same_checks = _task(defects, other, "same-checks")  # identical verifier files, new instruction
    result = asyncio.run(NearDuplicateGate().check(same_checks, _ctx(suite_tasks=[base])))
    values = result.evidence[0].values
    assert result.status == "pass" and values["verifier_jaccard"] == 1.0 and values["instruction_jaccard"] < 0.2
    test_sh = base.files["tests/test.sh"].text
    new_checks = base.renamed("new-checks").with_files(
        {"tests/test.sh": "\n".join(f"grep -q 'answer {i}' /app/out.txt || exit 1" for i in range(60)) + "\n"})
    assert test_sh != new_checks.files["tests/test.sh"].text
    result = asyncio.run(NearDuplicateGate().check(new_checks, _ctx(suite_tasks=[base])))
    values = result.evidence[0].values
    assert result.status == "pass" and values["instruction_jaccard"] == 1.0 and values["verifier_jaccard"] < 0.8
    copy = base.renamed("copy")
    result = asyncio.run(NearDuplicateGate().check(copy, _ctx(suite_tasks=[base, same_checks, new_checks])))
    assert result.status == "fail" and "instruction 1.00, verifier 1.00" in result.reason
