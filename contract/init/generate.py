"""The two flows of `compile-contract init`: generate a new contract, or update an existing one from a new recording.

Both finish with the checker's own verdict on the result (`check_loaded` against the real model, the probe included
when there is a step), so what `init` reports is what `compile-contract check` will say.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract.binding.resolve import bind
from contract.binding.rules import NESTED, OVERLAP
from contract.document.load import Contract, loads
from contract.document.refs import RefError, load_twin, resolve
from contract.document.schema import ProbeSpec
from contract.findings import Finding
from contract.init.build import Built, InitError, build
from contract.init.engine import propose_engine
from contract.init.environment import DEFAULT_BACKEND, read_environment
from contract.init.propose import propose
from contract.init.record import Recording, StepError, record
from contract.init.twin import Twin, plan, twin_notes
from contract.init.twin import build as build_twin
from contract.init.update import Change, edit
from contract.init.update import plan as changes_from
from contract.init.write import Draft, render


@dataclass(kw_only=True)
class Options:
    """What the command line asked for."""

    model_ref: str | None = None
    step_ref: str | None = None
    steps: int | None = None
    """Calls of the step to record (None: `[probe] steps` of the contract, 8 for a new one)."""
    backend: str = DEFAULT_BACKEND
    name: str | None = None
    command: str = "compile-contract init"
    output: Path | None = None
    """Where the contract goes (`-o`); a Hugging Face model's twin is written next to it (None: stdout, no twin)."""
    twin: bool = True
    """Write a twin for a Hugging Face model and probe on it (`--no-twin`: probe the model itself)."""


@dataclass(kw_only=True)
class Result:
    """The document and what the checker says about it."""

    text: str
    findings: list[Finding]
    binding: Any
    notes: list[str] = field(default_factory=list)
    """Report lines: how the model was built, the regions, what was recorded or changed."""
    changes: list[Change] = field(default_factory=list)
    before: str = ""
    """The document before `--update` (empty for a new one)."""
    twin: Twin | None = None
    """The twin file to write next to the contract (a new contract for a Hugging Face model)."""


def generate(opts: Options) -> Result:
    """A new contract for the model: propose, record (with a step), check, annotate."""
    if not opts.model_ref:
        raise InitError("no model: pass MODEL_REF (pkg.module:attr returning the nn.Module)")
    step = _step(opts.step_ref)
    built, twin, twin_model = _models(opts, step)
    proposal = propose_engine(built.model) or propose(built.model)
    draft = Draft(
        name=opts.name or _kebab(type(built.model).__name__),
        model_ref=opts.model_ref,
        step_ref=opts.step_ref,
        command=opts.command,
        backend=opts.backend,
        env=read_environment(),
        proposal=proposal,
        build_note=built.note,
        twin=twin,
    )
    contract = _parsed(render(draft))
    _claims_once(contract, built.model)
    if step is not None:
        draft.recording = _record(contract, twin_model or built.model, step, opts)
        contract = _parsed(render(draft))
    _, binding, findings = _check(contract, built.model, step, twin_model)
    draft.findings = findings
    text = render(draft)
    _parsed(text)
    notes = [built.note, *twin_notes(twin, built.model, wanted=opts.twin, stdout=opts.output is None)]
    notes += [*_region_notes(proposal), *_recording_notes(draft.recording, twin.ref if twin else None)]
    return Result(text=text, findings=findings, binding=binding, notes=notes, twin=twin)


def _models(opts: Options, step: Callable | None) -> tuple[Built, Twin | None, Any]:
    """The model (on meta when nothing runs it) and, for a Hugging Face model written to a file, its twin built
    from the twin file's text: the step then runs on the twin, never on the model."""
    assert opts.model_ref is not None
    if not opts.twin or opts.output is None:
        return build(opts.model_ref, meta=step is None), None, None
    built = build(opts.model_ref, meta=True)
    twin = plan(built.model, opts.model_ref, opts.output)
    if twin is None:
        return (built if step is None else build(opts.model_ref, meta=False)), None, None
    return built, twin, build_twin(twin)


def update(path: Path, opts: Options) -> Result:
    """Re-record an existing contract; only the keys the run contradicts change."""
    old = _read(path)
    contract = _parsed(old, path)
    meta = contract.meta
    model_ref = opts.model_ref or (meta.model if meta else None)
    step_ref = opts.step_ref or (meta.step if meta else None)
    if not model_ref:
        raise InitError(f"{path}: no model to record: pass MODEL_REF or set [contract] model")
    step = _step(step_ref)
    if step is None:
        raise InitError(f"{path}: --update records a run: pass --step pkg.module:attr or set [contract] step")
    twin_model = _named_twin(path, contract.probe.model) if contract.probe.enabled else None
    built = build(model_ref, meta=twin_model is not None)
    opts = dataclasses.replace(opts, model_ref=model_ref, step_ref=step_ref, steps=opts.steps or contract.probe.steps)
    recording = _record(contract, twin_model or built.model, step, opts)
    changes = changes_from(contract, recording)
    new = edit(old, changes) if changes else old
    contract = _parsed(new, path, ours=bool(changes))
    _, binding, findings = _check(contract, built.model, step, twin_model)
    notes = [built.note, *_recording_notes(recording, contract.probe.model if twin_model is not None else None)]
    return Result(text=new, findings=findings, binding=binding, notes=notes, changes=changes, before=old)


def _step(ref: str | None) -> Callable | None:
    """Import the step early: a bad reference fails before anything is built."""
    if ref is None:
        return None
    try:
        return resolve(ref, "step")
    except RefError as exc:
        raise InitError(str(exc)) from None


def _named_twin(path: Path, ref: str | None) -> Any:
    """The twin `[probe] model` names (the step is recorded on it), or a one-line error."""
    if ref is None:
        return None
    model, failed = load_twin(ref)
    if failed:
        raise InitError(f"{path}: probe.model: {failed[0].message}; {failed[0].fix}")
    return model


def _record(contract: Contract, model: Any, step: Callable, opts: Options) -> Recording:
    """The monitored run; the step's failure is bad input (nothing written)."""
    try:
        return record(contract, model, step, steps=opts.steps or ProbeSpec().steps, step_ref=opts.step_ref or "")
    except StepError as exc:
        raise InitError(str(exc)) from None


def _check(contract: Contract, model: Any, step: Callable | None, twin: Any = None) -> tuple[Any, Any, list[Finding]]:
    """The checker's verdict on the contract, exactly as `compile-contract check` runs it (with the twin built from
    the text of the file not yet written)."""
    from contract.pipeline import check_loaded

    return check_loaded(contract, [], model, step=step, twin=twin)


def _read(path: Path) -> str:
    """The existing contract's text, or a one-line error."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InitError(f"{path}: no such contract to update; run init without --update to create it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InitError(f"{path}: cannot read the contract ({exc}); check the path and its permissions") from None


def _parsed(text: str, path: Path | None = None, *, ours: bool = False) -> Contract:
    """Load the text through the real loader: an error in the user's document is theirs to fix (update); in text we
    generated or edited it is a bug of ours (an internal error, nothing written)."""
    contract, findings = loads(text, path if path is not None else "contract.toml")
    if contract is None or findings:
        where = str(path) if path else "the generated contract"
        first = findings[0] if findings else None
        detail = f"{first.location}: {first.code} {first.message}" if first else "it does not parse"
        if path is None or ours:
            raise RuntimeError(f"{where} does not load cleanly after init wrote it ({detail})")
        raise InitError(f"{where}: fix the document first ({detail}); `compile-contract check` lists every problem")
    return contract


def _claims_once(contract: Contract, model: Any) -> None:
    """Every module method belongs to one region: the binder reports no overlap (CC502) or nesting (CC504)."""
    _, findings = bind(contract, model)
    bad = [f for f in findings if f.code in (OVERLAP.code, NESTED.code)]
    if bad:
        raise RuntimeError(f"proposed regions overlap: {bad[0].location}: {bad[0].message}")


def _region_notes(proposal: Any) -> list[str]:
    """Report lines: the regions and the modules left eager."""
    regions = ", ".join(f"{r.name} = {r.module or '<root>'!r}" for r in proposal.regions)
    out = [f"regions: {regions}"]
    if proposal.left_out:
        out.append("left eager: " + ", ".join(f"{lo.path} ({lo.cls})" for lo in proposal.left_out))
    return out


def _recording_notes(recording: Recording | None, twin: str | None = None) -> list[str]:
    """Report lines: per region, whether it settled and what was set (and that the step ran on the twin)."""
    if recording is None:
        return ["not recorded: pass --step to record warm-up, budgets and compile times from a run"]
    from contract.init.record import counted, settled_at, warmup_compiles

    on = f" on the twin {twin}" if twin else ""
    out = [f"recorded {recording.steps} calls of {recording.step_ref}{on} with backend {recording.backend!r}:"]
    for name, rec in recording.regions.items():
        if not rec.compiles:
            out.append(f"  {name}: never called")
            continue
        at = settled_at(rec, recording.steps)
        warm = warmup_compiles(rec, recording.steps)
        state = f"settled from call {at + 1}" if at is not None else "NOT SETTLED (compiled in every call)"
        out.append(
            f"  {name}: {state}; {len(rec.compiles)} compiles, warm-up {warm}, "
            f"{counted(rec, warm) if at is not None else 0} recompiles after it, {rec.break_sites} break sites"
        )
    return out


def _kebab(cls: str) -> str:
    """`LlamaForCausalLM` -> `llama-for-causal-lm`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", cls).lower() or "model"
