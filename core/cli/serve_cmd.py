"""``autoenvscaling serve MODEL``: a local model behind an OpenAI-compatible server (llama.cpp).

The server runs until Ctrl-C (or SIGTERM); the lines it prints say how to point ``run``,
``generate`` or any OpenAI client at it.
"""

from __future__ import annotations

import signal
from pathlib import Path

import click


@click.command()
@click.argument("model")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Listen port (default: a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Listen address.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Decoding threads (default: every core).")
@click.option("--context", type=click.IntRange(min=256), default=None,
              help="Context tokens (default: an embedded model's or a checkpoint's own, at most 32768; 8192 for a "
                   "GGUF file).")
@click.option("--log", type=click.Path(path_type=Path), default=None,
              help="Where the server's own output goes (default: a file in the cache).")
def serve(model: str, port: int | None, host: str, threads: int | None, context: int | None, log: Path | None) -> None:
    """Serve MODEL (embedded, embedded-qwen, a .gguf file, or a transformers checkpoint directory,
    converted to GGUF next to it) until interrupted."""
    from ..llm.serve import LocalServer

    server = LocalServer(model, port=port, host=host, threads=threads, context=context, log=log)
    # SIGTERM ends the server as Ctrl-C does: through the `with` below, which stops the child.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    click.echo(f"starting llama.cpp for {model} ...", err=True)
    with server:
        click.echo(f"serving {server.alias} at {server.base_url} (output: {server.log}); Ctrl-C stops it")
        click.echo(f"  autoenvscaling run --llm {server.alias} --base-url {server.base_url} --llm-backend llama-server")
        try:
            assert server.process is not None
            code = server.process.wait()
        except KeyboardInterrupt:
            click.echo("stopping", err=True)
            return
    raise click.ClickException(f"the server exited with status {code}; its output is in {server.log}")
