"""Observed torch.compile behaviour of every case in the hold-out corpora (tests/checks/hotpath/holdout*/).

For each case module: reset Dynamo, seed, build the model, compile every module whose name matches REGION with
`module.compile(backend="eager")`, count Dynamo compile starts through a start callback and graph breaks through
`torch._dynamo.utils.graph_break_reasons`, run `step(model, i)` for i in range(8) and compare with OBSERVED.

The corpus stands alone: nothing here imports the project's scanner or monitor.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from types import ModuleType

import pytest
import torch
import torch._dynamo
import torch._dynamo.callback
import torch._dynamo.utils

from tests.checks.hotpath import (
    holdout,
    holdout2,
    holdout3,
    holdout4,
    holdout5,
    holdout6,
    holdout7,
    holdout8,
    holdout9,
    holdout10,
    holdout11,
    holdout12,
    holdout13,
    holdout14,
    holdout15,
    holdout16,
)

STEPS = 8
CORPORA: dict[str, ModuleType] = {
    "holdout": holdout,
    "holdout2": holdout2,
    "holdout3": holdout3,
    "holdout4": holdout4,
    "holdout5": holdout5,
    "holdout6": holdout6,
    "holdout7": holdout7,
    "holdout8": holdout8,
    "holdout9": holdout9,
    "holdout10": holdout10,
    "holdout11": holdout11,
    "holdout12": holdout12,
    "holdout13": holdout13,
    "holdout14": holdout14,
    "holdout15": holdout15,
    "holdout16": holdout16,
}
MIN_CASES = {
    "holdout": 45,
    "holdout2": 25,
    "holdout3": 10,
    "holdout4": 10,
    "holdout5": 10,
    "holdout6": 10,
    "holdout7": 10,
    "holdout8": 10,
    "holdout9": 10,
    "holdout10": 10,
    "holdout11": 10,
    "holdout12": 10,
    "holdout13": 10,
    "holdout14": 10,
    "holdout15": 10,
    "holdout16": 10,
}
"""Each corpus keeps at least the cases it was built with."""


def case_names(corpus: str) -> list[str]:
    """The case modules of one hold-out corpus, `hNN_*` hazards and `cNN_*` clean look-alikes."""
    path = CORPORA[corpus].__path__
    return sorted(i.name for i in pkgutil.iter_modules(path) if i.name[:1] in ("h", "c") and i.name[1:3].isdigit())


CASE_NAMES = case_names("holdout")
ALL_CASES = [(corpus, name) for corpus in CORPORA for name in case_names(corpus)]
FULL = os.environ.get("COMPILE_CONTRACT_CORPUS") == "full"
"""`COMPILE_CONTRACT_CORPUS=full` re-measures every case (about ten minutes on two cores: do it when torch or a
corpus changes). By default each corpus's first hazard and first clean look-alike are re-measured: a check that the
harness and the pinned torch still behave as recorded. The recall test runs every case either way."""


def sampled(corpus: str) -> list[str]:
    names = case_names(corpus)
    return names if FULL else [next(n for n in names if n[0] == kind) for kind in "hc"]


MEASURED_CASES = [(corpus, name) for corpus in CORPORA for name in sampled(corpus)]


def region_matches(pattern: str, name: str) -> bool:
    """Glob over dotted module names: `*` is one segment, `**` one or more segments, "" is the root only."""
    if pattern == "":
        return name == ""
    if name == "":
        return False
    return _match(pattern.split("."), name.split("."))


def _match(pat: list[str], parts: list[str]) -> bool:
    if not pat:
        return not parts
    head, rest = pat[0], pat[1:]
    if head == "**":
        return any(_match(rest, parts[k:]) for k in range(1, len(parts) + 1))
    if not parts:
        return False
    if head != "*" and head != parts[0]:
        return False
    return _match(rest, parts[1:])


def load_case(name: str, corpus: str = "holdout") -> ModuleType:
    return importlib.import_module(f"{CORPORA[corpus].__name__}.{name}")


def _non_default_dynamo_config() -> dict[str, object]:
    """Dynamo config entries that something in this process changed from their defaults, mapped to the default."""
    config = torch._dynamo.config
    changed: dict[str, object] = {}
    for name, entry in getattr(config, "_config", {}).items():
        if getattr(entry, "alias", None) or getattr(entry, "deprecated", False):
            continue
        try:
            if getattr(config, name) != entry.default:
                changed[name] = entry.default
        except Exception:
            continue
    return changed


def measure(case: ModuleType, steps: int = STEPS) -> dict[str, int]:
    """Run one case under torch.compile(backend="eager") and return what Dynamo did over `steps` calls of step().

    Dynamo config is measured at its defaults: entries another test left changed are patched back for the run.
    """
    with torch._dynamo.config.patch(_non_default_dynamo_config()):
        return _measure(case, steps)


def _measure(case: ModuleType, steps: int) -> dict[str, int]:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = case.build()
    region = getattr(case, "REGION", "")
    targets = [module for name, module in model.named_modules() if region_matches(region, name)]
    assert targets, f"REGION {region!r} matches no module of {type(model).__name__}"
    for module in targets:
        module.compile(backend="eager")

    compile_ids: list[str] = []

    def on_start(args) -> None:
        compile_ids.append(str(args.compile_id))

    handler = torch._dynamo.callback.callback_handler
    reasons = torch._dynamo.utils.graph_break_reasons
    before = len(reasons)
    records = metrics_records()
    handler.register_start_callback(on_start)
    try:
        for i in range(steps):
            case.step(model, i)
    finally:
        handler.start_callbacks.remove(on_start)
    breaks = sum(1 for reason in reasons[before:] if getattr(reason, "graph_break", True))
    breaks += skipped_frames(records)
    return {"compiles_over_8_steps": len(compile_ids), "graph_breaks": breaks}


def metrics_records() -> list[object]:
    """Dynamo's compilation-metrics records so far (a bounded deque; copied to mark where a run starts)."""
    return list(torch._dynamo.utils.get_compilation_metrics())


def skipped_frames(before: list[object]) -> int:
    """Frames Dynamo gave up on since `before` was taken: they run eager with no graph-break record (torch 2.13: any
    break inside a Python loop skips the whole frame), so each counts as one graph break. Recompile-limit refusals
    are not breaks."""
    seen = {id(r) for r in before}
    fresh = [r for r in torch._dynamo.utils.get_compilation_metrics() if id(r) not in seen]
    return sum(
        1
        for r in fresh
        if getattr(r, "fail_type", None)
        and not getattr(r, "has_guarded_code", False)
        and not str(getattr(r, "fail_reason", "") or "").startswith("Dynamo recompile limit exceeded")
    )


def torch_minor() -> str:
    """The installed torch's minor (`2.15.0+cu132` -> `2.15`): behaviour is recorded per torch minor."""
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def expected(case: ModuleType) -> dict[str, int] | str:
    """OBSERVED, or the per-torch override: the counts, or the name of the error compiling raises on that torch."""
    overrides = getattr(case, "OBSERVED_BY_TORCH", {})
    return overrides.get(torch_minor(), case.OBSERVED)


def misbehaves(observed: dict[str, int], frames: int) -> bool:
    return observed["compiles_over_8_steps"] > frames or observed["graph_breaks"] > 0


def _skip_if_unavailable(case: ModuleType) -> None:
    for requirement in getattr(case, "REQUIRES", ()):
        try:
            importlib.import_module(requirement)
        except ImportError as exc:
            pytest.skip(f"optional {requirement} is not importable: {exc}")


@pytest.mark.parametrize(("corpus", "name"), ALL_CASES)
def test_case_is_well_formed(corpus: str, name: str) -> None:
    case = load_case(name, corpus)
    assert case.__doc__ and case.__doc__.split(":")[0] in ("Hazard", "Clean"), "docstring starts with Hazard:/Clean:"
    assert isinstance(case.SOURCE, str) and case.SOURCE.startswith("https://"), "SOURCE is the report's URL"
    assert set(case.OBSERVED) == {"compiles_over_8_steps", "graph_breaks"}
    assert callable(case.build) and callable(case.step)
    if name.startswith("h"):
        assert isinstance(case.LABEL, str) and case.LABEL and case.__doc__.startswith("Hazard")
    else:
        assert case.LABEL is None and case.__doc__.startswith("Clean")
        assert not hasattr(case, "LATENT"), "LATENT only applies to hazards"


@pytest.mark.parametrize(("corpus", "name"), MEASURED_CASES)
def test_observed_behaviour(corpus: str, name: str) -> None:
    case = load_case(name, corpus)
    _skip_if_unavailable(case)
    if isinstance(expected(case), str):  # a torch on which compiling the case fails: the error's type is recorded
        with pytest.raises(Exception) as failed:
            measure(case)
        assert type(failed.value).__name__ == expected(case)
        return
    observed = measure(case)
    assert observed == expected(case)
    frames = getattr(case, "FRAMES", 1)
    if case.LABEL is None:  # labelled on torch 2.13: another torch may still break there (OBSERVED_BY_TORCH)
        clean = {"compiles_over_8_steps": frames, "graph_breaks": 0}
        assert case.OBSERVED == clean, "a clean case compiles each frame once"
    elif not hasattr(case, "LATENT"):
        recorded = [case.OBSERVED, *getattr(case, "OBSERVED_BY_TORCH", {}).values()]
        counted = [seen for seen in recorded if isinstance(seen, dict)]
        assert any(misbehaves(seen, frames) for seen in counted), "a hazard recompiles or breaks on some torch"


@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus_size_and_balance(corpus: str) -> None:
    names = case_names(corpus)
    hazards = [n for n in names if n.startswith("h")]
    assert len(names) >= MIN_CASES[corpus]
    assert 0.55 <= len(hazards) / len(names) <= 0.75


def test_region_glob() -> None:
    assert region_matches("", "") and not region_matches("", "layers.0")
    assert region_matches("layers.*", "layers.0") and not region_matches("layers.*", "layers.0.attn")
    assert region_matches("layers.**", "layers.0.attn") and not region_matches("layers.**", "layers")
    assert not region_matches("layers.*", "")


if __name__ == "__main__":  # print the measured behaviour of every case (how OBSERVED values were recorded)
    import sys

    args = sys.argv[1:]
    corpus_name = args.pop(0).removeprefix("--corpus=") if args and args[0].startswith("--corpus=") else "holdout"
    for case_name in args or case_names(corpus_name):
        try:
            module = load_case(case_name, corpus_name)
            got = measure(module)
            mark = "" if got == expected(module) else "   <-- differs from OBSERVED"
            print(f"{case_name:42s} {got}{mark}")
        except Exception as exc:
            print(f"{case_name:42s} ERROR {type(exc).__name__}: {str(exc)[:300]}")
