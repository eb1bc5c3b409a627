"""Try /app/solution.py against /app/reference.py on small random inputs: the agent's own check.

Not the verifier (which also lints, uses fresh seeds and more rounds, and times on a GPU), but the
same comparison: every element within rtol * |ref| + rtol * rms(ref). Without CUDA, Triton runs in
its interpreter. Usage: python3 /app/check.py [--rounds N] [--size NAME=VALUE ...]
"""

import argparse
import ast
import importlib.util
import json
import os
import sys
import types

TASK: dict = {}  # the task's small sizes and tolerance, filled in when the task is written


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def with_sizes(source, sizes):
    """``source`` with its top-level size assignments set to ``sizes`` (derived constants follow)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) in sizes:
            value = sizes[node.targets[0].id]
            node.value = ast.parse(repr(tuple(value) if isinstance(value, list) else int(value)), mode="eval").body
    return ast.unparse(ast.fix_missing_locations(tree))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", action="append", default=[], help="NAME=VALUE, a size constant of reference.py (an int or [a, b])")
    args = parser.parse_args()
    import torch

    cuda = torch.cuda.is_available()
    if not cuda:
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported (by the solution)
    sizes = dict(TASK.get("sizes", {}))
    sizes.update({k: json.loads(v) for k, v in (s.split("=", 1) for s in args.size)})
    ref = types.ModuleType("reference")
    reference = os.environ.get("REFERENCE", "/app/reference.py")
    with open(reference, encoding="utf-8") as f:
        exec(compile(with_sizes(f.read(), {} if cuda else sizes), reference, "exec"), ref.__dict__)
    sol = load(os.environ.get("SOLUTION", "/app/solution.py"), "solution")
    device, rtol = ("cuda" if cuda else "cpu"), float(TASK.get("rtol", 1e-4))
    for seed in range(args.rounds):
        torch.manual_seed(seed)
        init = ref.get_init_inputs()
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
        torch.manual_seed(1000 + seed)
        model = ref.Model(*init).to(device)
        torch.manual_seed(1000 + seed)
        new = sol.ModelNew(*init).to(device)
        with torch.no_grad():
            want, got = model(*inputs), new(*inputs)
        for i, (g, w) in enumerate(zip(*(o if isinstance(o, (tuple, list)) else (o,) for o in (got, want)))):
            if g.shape != w.shape or g.dtype != w.dtype:
                sys.exit(f"round {seed}, output {i}: got {tuple(g.shape)} {g.dtype}, want {tuple(w.shape)} {w.dtype}")
            g64, w64 = g.double().cpu(), w.double().cpu()
            limit = rtol * w64.abs() + rtol * float(w64.pow(2).mean().sqrt())
            bad = ~torch.isfinite(g64) | ((g64 - w64).abs() > limit)
            if bool(bad.any()):
                sys.exit(f"round {seed}, output {i}: {int(bad.sum())} of {g64.numel()} values differ beyond rtol {rtol:g}")
    print(f"ok: {args.rounds} rounds match ({'cuda' if cuda else 'Triton interpreter, small sizes ' + json.dumps(sizes)})")


if __name__ == "__main__":
    main()
