"""Shared pieces of the trainer tests: a tiny model that solves one kind of toy task about half the
time (``half_solver``).

A random tiny model never writes a runnable command, so every group would score all zeros and GRPO
would have nothing to learn from. The fixture is the kit's tiny 2-layer Llama, fine-tuned for a few
seconds (plain next-token loss) on the solver's real prompt for a toy count-lines task, answered half
the time with the command that solves it and half the time with one that does nothing. Sampled at
temperature 1 it solves such tasks in about a quarter to a half of its rollouts, so groups have a
spread of rewards; on a write-file task it does not answer usefully and always scores 0 (an
all-equal group, which dynamic sampling must drop).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from trainer_helpers import IDLES, SOLVES, count_task, solver_messages  # noqa: E402


@pytest.fixture(scope="session")
def half_solver() -> Path:
    """Built once per machine: kept in the tests' cache under a digest of what makes it (the solver's
    prompt, the code of the tiny model, the chat template and this recipe, torch's and transformers'
    versions); the first worker to need it builds it under a lock, the others wait and read it."""
    import fcntl
    import hashlib
    import shutil

    import torch
    import transformers

    import autoenvscaling.llm.chat_template as chat_template
    import autoenvscaling.llm.tiny as tiny
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(f"bubblewrap is unavailable here: {why}")
    backend = BwrapBackend()
    try:
        messages = solver_messages(count_task(0), backend)
    finally:
        asyncio.run(backend.aclose())
    digest = hashlib.sha256()
    for part in (repr(messages), torch.__version__, transformers.__version__):
        digest.update(part.encode() + b"\0")
    for source in (tiny.__file__, chat_template.__file__, __file__, HERE / "trainer_helpers.py"):
        digest.update(Path(str(source)).read_bytes() + b"\0")
    cache = Path(os.environ.get("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")) / "trainer"
    cache.mkdir(parents=True, exist_ok=True)
    folder = cache / f"half-solver-{digest.hexdigest()[:16]}"
    with open(cache / "half-solver.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "model" / "config.json").is_file():
            partial = cache / f".{folder.name}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            _train_half_solver(partial / "model", messages)
            shutil.rmtree(folder, ignore_errors=True)
            partial.rename(folder)
    return folder / "model"


def _train_half_solver(path: Path, messages: list) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from autoenvscaling.llm.chat_template import ChatTemplate
    from autoenvscaling.llm.tiny import build_tiny_model

    build_tiny_model(path, seed=1)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    prompts = [ChatTemplate(tokenizer).render(messages)]
    end = tokenizer.decode([model.generation_config.eos_token_id])
    examples = []
    for prompt in prompts:
        for answer in (SOLVES, IDLES):
            ids = tokenizer(prompt + answer + end, add_special_tokens=False)["input_ids"]
            start = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
            examples.append((torch.tensor([ids]), start))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        for _ in range(120):  # ~10 s; the summed loss is then near 2 ln 2, the 50/50 split
            for ids, start in examples:
                keep = ids.shape[1] - start + 1  # only the answer's logits: the vocabulary is most of the cost
                logits = model(ids, logits_to_keep=keep).logits[0, :-1]
                loss = torch.nn.functional.cross_entropy(logits, ids[0, start:], reduction="sum")
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    model.save_pretrained(path)
