"""The hidden worker of `compile-contract upgrade`, run once under each torch (the parent starts it; not for users).

`python -m contract.upgrade.worker CONTRACT --out DIR [--step REF] [--steps N]` imports torch and the pipeline
(then creates DIR/imported: what failed after it did not fail on import), runs `check`'s pipeline on the contract,
then records `N` calls of the step under the contract and the monitor (`contract.init.record.record`, the recorder
`init` uses), and writes into DIR, a private directory the parent made: `result.json` (the findings, per region what
was compiled, recompiled and broken) and `outputs.pt` (the step's returned tensors, flattened to one name -> tensor
dict). Exit 0: written (a step that raised is reported in it); 2: the contract cannot be read.

The recording compiles into a fresh Inductor cache directory, DIR/inductor (`TORCHINDUCTOR_CACHE_DIR`, set after
`check` has inspected the caller's): compile seconds are cold under both torches, whatever the caller's cache holds,
and the candidate's artifacts stay out of it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

FORMAT = 1
"""`result.json` format; the parent refuses another (a worker of a different version of this project)."""
OUTPUT_BYTES = 256 << 20
"""Most bytes of step outputs kept (later outputs are counted as skipped): a drift report, not a checkpoint."""
_DEPTH = 8
"""How deep nested outputs are flattened."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: check, record, write."""
    args = _parser().parse_args(argv)
    sys.path.insert(0, os.getcwd())  # model and step references resolve as `compile-contract check` resolves them
    _import(Path(args.out))
    from contract.document.load import ContractFileError, load

    try:
        contract, findings = load(args.contract)
    except ContractFileError as exc:
        print(f"compile-contract upgrade: {exc}", file=sys.stderr)
        return 2
    result = _identity(args)
    if contract is None:
        result["findings"] = [f.to_dict() for f in findings]
        _write(Path(args.out), result, {})
        return 0
    step_ref = args.step or (contract.meta.step if contract.meta else None)
    result.update(_checked(contract, findings, step_ref))
    outputs: dict[str, Any] = {}
    if step_ref:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(args.out) / "inductor")
        result.update(_recorded(contract, step_ref, args.steps or contract.probe.steps, outputs))
    _write(Path(args.out), result, outputs)
    return 0


def _import(out: Path) -> None:
    """Import torch and what the run uses, then mark it: the parent tells a crash on import from a later one."""
    import torch  # noqa: F401

    import contract.init.record
    import contract.pipeline  # noqa: F401

    (out / "imported").touch()


def _parser() -> argparse.ArgumentParser:
    """The worker's arguments (the parent passes them; no help for users)."""
    parser = argparse.ArgumentParser(prog="python -m contract.upgrade.worker")
    parser.add_argument("contract")
    parser.add_argument("--out", required=True, help="private directory the parent made")
    parser.add_argument("--step")
    parser.add_argument("--steps", type=int)
    return parser


def _identity(args: argparse.Namespace) -> dict[str, Any]:
    """Which interpreter, torch and project produced this result."""
    from importlib import metadata

    import torch

    return {
        "format": FORMAT,
        "torch": torch.__version__,
        "torch_dist": metadata.version("torch"),
        "python": platform.python_version(),
        "executable": sys.executable,
        "project": metadata.version("torch-compile-contract"),
        "contract": str(Path(args.contract).absolute()),
        "step": args.step,
    }


def _checked(contract: Any, findings: list, step_ref: str | None) -> dict[str, Any]:
    """`compile-contract check`'s findings (the same stages: the references, then `check_loaded`)."""
    from contract.document.refs import load_refs
    from contract.pipeline import check_loaded

    meta = contract.meta
    twin = contract.probe.enabled and contract.probe.model is not None  # the probe runs the twin: model on meta
    model, step, unbuilt = load_refs(meta.model if meta else None, step_ref, meta=twin)
    _, binding, found = check_loaded(contract, [*findings, *unbuilt], model, step=step)
    return {
        "step": step_ref,
        "findings": [f.to_dict() for f in found],
        "region_modules": _region_modules(binding),
        "region_index": {r.name: r.index for r in contract.regions},
    }


def _region_modules(binding: Any) -> dict[str, list[str]]:
    """Region -> module paths it claims (locations of findings are mapped to regions with these)."""
    if binding is None:
        return {}
    return {name: sorted({t.path for t in rb.targets}) for name, rb in binding.regions.items()}


def _recorded(contract: Any, step_ref: str, steps: int, outputs: dict[str, Any]) -> dict[str, Any]:
    """Record `steps` calls of the step on a fresh model (the twin when the probe names one), seeded alike in both
    interpreters; the step's failure is part of the result, not a crash of the worker."""
    from contract.document.refs import RefError, build_model, load_twin, resolve
    from contract.init.record import StepError, record

    guards: dict[str, int] = {}
    try:
        step = resolve(step_ref, "step")
        _seed()
        model = _model(contract, build_model, load_twin)
        _seed()
        capture = _capturing(step, outputs, guards)
        recording = record(contract, model, capture, steps=steps, step_ref=step_ref)
    except (RefError, StepError) as exc:
        return {"steps": steps, "record_error": str(exc)}
    regions = [_region(r, recording.regions.get(r.name), steps, guards) for r in contract.regions if r.enabled]
    return {"steps": steps, "backend": recording.backend, "regions": regions, "record_error": None}


def _seed() -> None:
    """The same random state under both torches (torch's generators, Python's `random`, numpy's global one)."""
    import random

    import torch

    random.seed(0)
    torch.manual_seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)


def _model(contract: Any, build_model: Callable, load_twin: Callable) -> Any:
    """The model the step runs on: the twin `[probe] model` names (as `init` records), else the contract's model."""
    from contract.document.refs import RefError

    probe = contract.probe
    if probe.enabled and probe.model is not None:
        twin, failed = load_twin(probe.model)
        if failed:
            raise RefError(f"probe.model: {failed[0].message}", failed[0].fix)
        return twin
    if contract.meta is None or not contract.meta.model:
        raise RefError("the contract names no model ([contract] model)", "set [contract] model")
    return build_model(contract.meta.model)


def _capturing(step: Callable, outputs: dict[str, Any], guards: dict[str, int]) -> Callable:
    """The step, also keeping what each call returned and the guard counts of the compiles it made."""
    from contract import _torch

    @functools.wraps(step)
    def run(model: Any, i: int) -> Any:
        """The step's call, its outputs kept."""
        out = step(model, i)
        _flatten(out, f"call{i}", outputs, [0])
        guards.update(_torch.guard_counts())
        return out

    return run


def _flatten(value: Any, key: str, out: dict[str, Any], used: list[int], depth: int = 0) -> None:
    """Tensors (and numbers) of a nested output -> `call0.logits[1]`-style names, copied to the CPU, bounded."""
    import torch

    if isinstance(value, bool | int | float):
        value = torch.tensor(value)
    if isinstance(value, torch.Tensor):
        tensor = value.detach().to("cpu", copy=True).as_subclass(torch.Tensor)
        size = tensor.numel() * tensor.element_size()
        if used[0] + size <= OUTPUT_BYTES:
            out[key] = tensor
            used[0] += size
        return
    if depth >= _DEPTH:
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(v, f"{key}.{k}", out, used, depth + 1)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _flatten(v, f"{key}[{i}]", out, used, depth + 1)


def _region(region: Any, rec: Any, steps: int, guards: dict[str, int]) -> dict[str, Any]:
    """One region's run as plain data: what `upgrade` compares and its budgets, from the recorder's record."""
    from contract.init.record import counted, guard_text, settled_at

    compiles = rec.compiles if rec is not None else []
    known = [guards[c.compile_id] for c in compiles if c.compile_id in guards]
    return {
        "name": region.name,
        "compiles": len(compiles),
        "recompiles": sum(c.recompile for c in compiles),
        "graph_breaks": len(rec.breaks) if rec else 0,
        "compile_seconds": round(sum(c.seconds for c in compiles), 4),
        "guard_count": sum(known) if known else None,
        "instances": len({c.path for c in compiles}),
        "breaks": [{"site": site, "reason": reason} for site, reason in (rec.breaks if rec else {})],
        "recompile_guards": [guard_text(rec, i) for i in range(len(rec.guards))] if rec else [],
        "settled_at": settled_at(rec, steps) if rec else None,
        "limit_hits": rec.limit_hits if rec else 0,
        "budget_recompiles": counted(rec, region.warmup_compiles) if rec else 0,
        "budget_graph_breaks": rec.break_sites if rec else 0,
        "recompile_budget": region.recompile_budget,
        "graph_break_budget": region.graph_break_budget,
    }


def _write(out: Path, result: dict[str, Any], outputs: dict[str, Any]) -> None:
    """`outputs.pt` (tensors only), then `result.json` (the parent reads it last: its presence means done)."""
    import torch

    if outputs:
        torch.save(outputs, out / "outputs.pt")
    result["outputs"] = len(outputs)
    (out / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
