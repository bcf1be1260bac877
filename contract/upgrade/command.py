"""`compile-contract upgrade CONTRACT --candidate PYTHON`: run the contract's step under the installed torch and
under the candidate's, each in its own subprocess, and report what the candidate changes.

Exit 0: the candidate passes; 1: it adds an error finding, breaks a region's recompile or graph-break budget, or the
step fails under it; 2: bad input (one line, no traceback): the contract, the candidate, a timeout.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.upgrade import BadInput
from contract.upgrade.compare import Report, build
from contract.upgrade.interpreter import create, current, locate, run_worker, vet

DEFAULT_TIMEOUT = 1800.0
"""Seconds each subprocess may take (a probe, or a worker's check and recorded run): a CPU inductor compile of a
real model takes minutes."""


class Options(BaseModel):
    """What the command line asked for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contract: Path
    candidate: str | None = None
    torch: str | None = None
    step: str | None = None
    steps: int | None = Field(default=None, ge=2, le=1000)
    format: Literal["text", "json", "sarif", "markdown"] = "text"
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)


def run(args: Any) -> int:
    """The CLI command: options from the parsed arguments, the report in the asked format on stdout, the exit code."""
    from pydantic import ValidationError

    from contract.upgrade.export import render_json, render_sarif
    from contract.upgrade.render import render_markdown, render_text

    fields = ("candidate", "torch", "step", "steps", "format", "timeout")
    try:
        opts = Options(contract=Path(args.contract), **{k: getattr(args, k) for k in fields})
    except ValidationError as exc:
        raise BadInput(f"{exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None
    report = upgrade(opts)
    render = {"json": render_json, "sarif": render_sarif, "markdown": render_markdown}.get(opts.format, render_text)
    print(render(report))
    return report.exit_code


def upgrade(opts: Options) -> Report:
    """Vet both interpreters, run the worker under each (the candidate first: its failures are the likely ones; one
    after the other: compile times are compared), compare."""
    from contract.upgrade.drift import compare_files

    contract = _contract(opts)
    python = locate(opts.candidate) if opts.candidate else create(str(opts.torch))
    pair = vet(current(), "current", opts.timeout), vet(python, "candidate", opts.timeout)
    args = [str(opts.contract.absolute()), *(["--step", opts.step] if opts.step else [])]
    args += ["--steps", str(opts.steps)] if opts.steps else []
    with tempfile.TemporaryDirectory(prefix="cc-upgrade-") as tmp:  # mode 0700: only this user reads the outputs
        dirs = [Path(tmp) / "current", Path(tmp) / "candidate"]
        results: list[dict[str, Any]] = [{}, {}]
        for i in (1, 0):
            dirs[i].mkdir(mode=0o700)
            results[i] = run_worker(pair[i].python, ("current", "candidate")[i], args, dirs[i], opts.timeout)
        _ran_here(results[0])
        drift = compare_files(dirs[0] / "outputs.pt", dirs[1] / "outputs.pt")
    return build(str(opts.contract), results[0], results[1], drift, _cold(contract))


def _contract(opts: Options) -> Any:
    """The contract, read here first: a file that does not parse or names no model or step is bad input."""
    from contract.document.load import ContractFileError, load

    try:
        contract, findings = load(opts.contract)
    except ContractFileError as exc:
        raise BadInput(str(exc)) from None
    if contract is None:
        first = findings[0] if findings else None
        detail = f": {first.location}: {first.code} {first.message}" if first else ""
        raise BadInput(f"{opts.contract}: the contract does not parse{detail}; `compile-contract check` lists all")
    meta = contract.meta
    if not (meta and meta.model):
        raise BadInput(f"{opts.contract}: no model to run; set [contract] model")
    if not (opts.step or meta.step):
        raise BadInput(f"{opts.contract}: upgrade runs the step under both torches; pass --step or set [contract] step")
    return contract


def _ran_here(result: dict[str, Any]) -> None:
    """The step must run under the installed torch: a baseline that fails compares nothing."""
    error = result.get("record_error")
    if error:
        raise BadInput(f"the step fails under the installed torch {result['torch']}: {error}")


def _cold(contract: Any) -> Any:
    """The cold-start predictor over this contract's warm manifest (read once)."""
    from contract.upgrade.cold import predict, read_manifest

    manifest, missing = read_manifest(contract)

    def cold(name: str, side: Any, run: Any, candidate: bool) -> Any:
        """One side's first start for one region."""
        return predict(manifest, missing, side.torch_dist, name, run, candidate=candidate)

    return cold
