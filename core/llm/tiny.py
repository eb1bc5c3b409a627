"""A tiny random model with the real SmolLM2 tokenizer and chat template: part of the testing kit.

Tests of generation, token accounting and training need a real transformers model but not a good
one; a 2-layer, 64-wide Llama builds in under a second and generates in milliseconds.
"""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.llm.embedded import embedded_model_path


def build_tiny_model(path: str | Path, *, seed: int = 0) -> Path:
    """Save a seeded random 2-layer Llama (hidden 64, 4 heads) plus the SmolLM2 tokenizer at `path`.

    Loadable by TransformersBackend(path) and by any transformers code. Same seed, same weights;
    the caller's torch random state is left untouched.
    """
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_path(), local_files_only=True)
    special = {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
               "pad_token_id": tokenizer.pad_token_id}
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        **special,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(**special)
    out = Path(path)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
