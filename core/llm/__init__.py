"""LLM backends: one `chat` interface over hosted APIs, vLLM-style servers and local models.

Importing this package is cheap: the backends (and openai, torch, transformers) load on use.
"""


def builtin_llm_backends() -> dict[str, str]:
    """Backend kind -> "module:Class" import path, so registering them imports nothing heavy."""
    return {
        "openai": "autoenvscaling.llm.openai_backend:OpenAIBackend",
        "transformers": "autoenvscaling.llm.local_backend:TransformersBackend",
        "llama-server": "autoenvscaling.llm.serve:LlamaServerBackend",
    }
