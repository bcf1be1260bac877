"""The evidence corpus: each case's recorded behaviour under real torch.compile, and the checker's recall on it.

Each case in `tests/checks/hotpath/corpus/` has a ground-truth `LABEL` (hazard kind, or None for a clean look-alike) and
`OBSERVED`, what real `torch.compile` (backend eager, 8 steps) did with it on torch 2.13; `OBSERVED_BY_TORCH`
(`{"2.11": {...}}`) records a torch minor that behaves differently. A label is a hazard on every torch version:
recall counts it even where the installed torch happens not to recompile. Run with `-s` to print the figures.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import torch

from contract.binding.resolve import glob_match
from contract.pipeline import check
from tests.checks.hotpath.test_holdout_behaviour import metrics_records, skipped_frames

CORPUS = Path(__file__).parent / "corpus"
STEPS = 8


def case_names() -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("[hc][0-9]*.py"))


def available(name: str) -> bool:
    """A case whose optional package (`REQUIRES`) is not installed is skipped (the suite still needs 40 others)."""
    required = re.search(r'^REQUIRES = "([\w.]+)"', (CORPUS / f"{name}.py").read_text(), re.MULTILINE)
    return required is None or importlib.util.find_spec(required.group(1)) is not None


def load_case(name: str) -> ModuleType:
    return importlib.import_module(f"tests.checks.hotpath.corpus.{name}")


def torch_minor(version: str = torch.__version__) -> str:
    """`2.11.0+cu130` -> `2.11`: behaviour is recorded per torch minor."""
    return ".".join(version.split("+")[0].split(".")[:2])


def recorded(case: ModuleType, minor: str | None = None) -> dict[str, int]:
    """What the case did on a torch minor (default: the installed one): its override, else `OBSERVED`."""
    return getattr(case, "OBSERVED_BY_TORCH", {}).get(minor or torch_minor(), case.OBSERVED)


def clean_here(spec: str, case: ModuleType, seen: object) -> bool:
    """The case (`corpus/name`) compiles each frame once without a break on the installed torch (`seen`, its record
    there), and neither hides a hazard from the counts (LATENT) nor keeps a stale value there (a `stale` measurement
    in `versions.PATTERNS`): an error on it stops an engine this torch runs fine."""
    from contract.checks.hotpath import versions

    clean = {"compiles_over_8_steps": getattr(case, "FRAMES", 1), "graph_breaks": 0}
    here = [p.seen.get(versions.torch_minor()) for p in versions.PATTERNS.values()]
    stale = any(s is not None and spec in s.cases and s.effect == versions.STALE for s in here)
    return seen == clean and not getattr(case, "LATENT", "") and not stale


def all_recorded(case: ModuleType) -> list[dict[str, int]]:
    """Every recorded behaviour of a case, on any torch minor."""
    return [case.OBSERVED, *getattr(case, "OBSERVED_BY_TORCH", {}).values()]


def observe(case: ModuleType) -> dict[str, int]:
    """Compile the case's region with plain `module.compile(backend="eager")`, run 8 steps, count Dynamo's events."""
    torch._dynamo.reset()
    torch.manual_seed(0)  # weights decide data-dependent branches (h25): same model whatever ran before
    model = case.build()
    for name, module in model.named_modules():
        if glob_match(getattr(case, "REGION", ""), name):
            module.compile(backend="eager")
    compiles: list[str] = []
    handler = callback_handler()
    start = lambda args: compiles.append(str(args.compile_id))  # noqa: E731 - a callback, registered below
    before, records = graph_break_counts(), metrics_records()
    handler.register_start_callback(start)
    try:
        for i in range(STEPS):
            case.step(model, i)
    finally:
        while start in handler.start_callbacks:
            handler.start_callbacks.remove(start)
        torch._dynamo.reset()
    breaks = sum(v - before.get(k, 0) for k, v in graph_break_counts().items()) + skipped_frames(records)
    return {"compiles_over_8_steps": len(compiles), "graph_breaks": breaks}


def callback_handler():
    """Dynamo's compile-callback registry (measured directly: the corpus must not depend on the code it measures)."""
    from torch._dynamo.callback import callback_handler as handler

    return handler


def graph_break_counts() -> dict[str, int]:
    """Dynamo's global graph-break counter (reason -> count), copied."""
    from torch._dynamo.utils import counters

    return dict(counters["graph_break"])


def write_contract(tmp_path: Path, name: str, region: str, *, probe: bool = True) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'[contract]\nname = "{name}"\nmodel = "tests.checks.hotpath.corpus.{name}:build"\n\n'
        f'[[region]]\nname = "r"\nmodule = "{region}"\nbackend = "eager"\n\n'
        f"[probe]\nsteps = {STEPS}\nenabled = {str(probe).lower()}\n"
    )
    return path


def findings_for(name: str, tmp_path: Path, *, probe: bool, step: bool | None = None) -> list:
    """CC3xx/CC4xx findings of `check()` on one case: with the probe (its step), or the static scan alone, given the
    step (`step=True`: the scan reads what it changes between calls; the probe is off) or not."""
    case = load_case(name)
    path = write_contract(tmp_path, name, getattr(case, "REGION", ""), probe=probe)
    torch.manual_seed(0)
    _, _, findings = check(path, case.build(), step=case.step if (probe if step is None else step) else None)
    return [f for f in findings if f.code[:3] in ("CC3", "CC4")]


def test_the_corpus_has_at_least_40_cases_with_hazards_of_every_kind_and_clean_look_alikes() -> None:
    labels = [load_case(n).LABEL for n in filter(available, case_names())]
    assert len(labels) >= 40 and labels.count(None) >= 15
    assert {
        "counter",
        "assigned",
        "float",
        "graph-break",
        "item-branch",
        "env",
        "dynamic-getattr",
        "batchnorm",
        "hook",
        "per-instance",
        "outside",
    } <= set(labels)


@pytest.mark.parametrize("name", case_names())
def test_case_behaves_under_real_torch_compile_as_recorded(name: str, capsys) -> None:
    if not available(name):
        pytest.skip("optional package not installed")
    case = load_case(name)
    assert observe(case) == recorded(case)


def test_every_clean_case_compiles_each_frame_once_without_graph_breaks_on_every_recorded_torch() -> None:
    for name in filter(available, case_names()):
        case = load_case(name)
        if case.LABEL is None:
            for seen in all_recorded(case):
                assert seen == {"compiles_over_8_steps": getattr(case, "FRAMES", 1), "graph_breaks": 0}, name


def test_every_hazard_case_misbehaves_on_some_recorded_torch() -> None:
    """A label is honest: on at least one recorded torch the case recompiles or breaks, unless it says why not."""
    for name in filter(available, case_names()):
        case = load_case(name)
        if case.LABEL is not None and not getattr(case, "LATENT", ""):
            clean = {"compiles_over_8_steps": getattr(case, "FRAMES", 1), "graph_breaks": 0}
            assert any(seen != clean for seen in all_recorded(case)), name


def test_version_overrides_name_torch_minors_and_record_both_counts() -> None:
    for name in filter(available, case_names()):
        for minor, seen in getattr(load_case(name), "OBSERVED_BY_TORCH", {}).items():
            assert torch_minor(minor) == minor and set(seen) == {"compiles_over_8_steps", "graph_breaks"}, name


def test_static_scan_and_probe_recall_with_zero_false_positives(tmp_path: Path, capsys) -> None:
    """`static` is the scan given the step (probe off), `static_no_step` the scan alone, `probe` both with the probe."""
    rows, alone = {}, {}
    for name in filter(available, case_names()):
        hazard = load_case(name).LABEL is not None
        static = findings_for(name, tmp_path, probe=False, step=True)
        # probe recall counts the scan's findings too: a hazard the scan found needs no probe run (most of the time)
        dynamic = [] if hazard and static else findings_for(name, tmp_path, probe=True)
        rows[name] = (hazard, static, dynamic)
        alone[name] = (hazard, findings_for(name, tmp_path, probe=False), [])
    figures = summarize(rows)
    no_step = summarize(alone)
    figures.update({f"static_no_step_{k[7:]}": no_step[k] for k in no_step if k.startswith("static_")})
    here = [n for n in rows if clean_here(f"corpus/{n}", load_case(n), recorded(load_case(n)))]
    figures["errors_where_clean_on_this_torch"] = sorted(
        n for n in here for f in rows[n][1] + rows[n][2] + alone[n][1] if f.severity == "error"
    )
    with capsys.disabled():
        print("\n" + "\n".join(f"{k}: {v}" for k, v in figures.items()))
    assert figures["errors_where_clean_on_this_torch"] == []  # h04, h05, h54, h58 on torch 2.14 and 2.15
    assert figures["static_false_positives"] == [] and figures["static_no_step_false_positives"] == []
    assert figures["probe_error_false_positives"] == 0
    assert figures["static_recall"] >= 0.9 and figures["probe_recall"] >= 0.95


@pytest.mark.parametrize(
    ("minor", "expected"),
    [
        ((2, 11), []),
        ((2, 12), [("CC301", "error")]),
        ((2, 15), [("CC301", "error")]),
        ((2, 16), [("CC301", "error")]),
        ((2, 10), []),
    ],
)
def test_is_exporting_guard_follows_what_each_torch_was_measured_to_do(
    minor, expected, tmp_path: Path, monkeypatch
) -> None:
    """h44 `if not is_exporting(): self.calls += 1`: dead under compile on 2.11, a storm from 2.12 on (measured to
    2.15; a newer torch reads as the newest measured, an older one as the oldest)."""
    from contract.checks.hotpath import conditions, versions

    monkeypatch.setattr(versions, "torch_minor", lambda: minor)
    monkeypatch.setattr(conditions, "_KNOWN_UNDER_COMPILE", {})
    found = findings_for("h44_not_exporting_counter", tmp_path, probe=False)
    assert [(f.code, f.severity) for f in found] == expected, [str(f) for f in found]


def test_on_torch_2_11_cell_and_class_counters_say_what_that_torch_does(tmp_path: Path, monkeypatch) -> None:
    from contract.checks.hotpath import versions

    monkeypatch.setattr(versions, "torch_minor", lambda: (2, 11))
    for name in ("h03_class_attribute", "h05_closure_cell"):
        (found,) = findings_for(name, tmp_path, probe=False)
        assert found.severity == "error" and "torch 2.11" in found.message and "first call's value" in found.message


def summarize(rows: dict[str, tuple[bool, list, list]]) -> dict[str, object]:
    """Recall over hazards, false positives over clean cases (any severity, and errors), static and with probe."""
    hazards = [n for n, (h, _, _) in rows.items() if h]
    clean = [n for n, (h, _, _) in rows.items() if not h]
    out: dict[str, object] = {"cases": len(rows), "hazards": len(hazards), "clean": len(clean)}
    for label, idx in (("static", 1), ("probe", 2)):
        found = [n for n in hazards if (rows[n][1] + rows[n][2] if idx == 2 else rows[n][1])]
        out[f"{label}_recall"] = round(len(found) / len(hazards), 3)
        out[f"{label}_missed"] = sorted(set(hazards) - set(found))
        flagged = [n for n in clean if (rows[n][1] + rows[n][2] if idx == 2 else rows[n][1])]
        out[f"{label}_false_positives"] = sorted(flagged)
        out[f"{label}_error_false_positives"] = sum(
            1 for n in clean for f in (rows[n][1] + rows[n][2] if idx == 2 else rows[n][1]) if f.severity == "error"
        )
    return out
