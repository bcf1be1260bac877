"""Precompiled bundles for `compile-contract warm`: build one, verify it in a fresh process, keep it only if it held.

A precompiled bundle is torch's portable cache artifacts with `precompile` entries (Dynamo's bytecode and guards,
`torch._dynamo.config.caching_precompile`): a start that loads it runs no Dynamo trace for what the warm run
compiled. Torch's own support differs by release and by model (docs/topics/warm-starts.md, "Precompiled bundles"),
so nothing is trusted on the version number alone. After the warm run has saved the plain artifacts, `attempt`:

1. compiles the regions again in the warm process with precompile on (the Inductor entries the first pass wrote to
   the local cache make this quick) and saves the bundle;
2. runs `contract.warm.precompile_worker` in a fresh process with an empty cache dir: it loads the bundle, runs the step
   through the warm run's steps and then a shape the warm run never saw in every region;
3. judges: the bundle is kept only if nothing crashed, every region instance's entry was installed and hit (no Dynamo
   compile during the warm run's shapes), and at least one region recompiled an unseen shape cleanly. Otherwise the
   plain artifacts stay, and the verdict says why (torch version and the failure).

A torch with a failure a verification run cannot see (`compile_formats.manifest.PRECOMPILE_KNOWN_BAD`, empty today) is not
tried at all.

The verdict is the manifest's `precompile` field; `enforce` switches precompile on only where it says `verified` for
the installed torch.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from compile_formats.manifest import precompile_known_bad
from contract.binding.targets import Binding

TIMEOUT_FACTOR = 10.0
"""The verification run may take this many times the warm run's own steps (it compiles an unseen shape too)."""
MIN_TIMEOUT_S = 600.0
"""...and at least this long."""
BYPASS_LOGGER = "torch._dynamo.output_graph"
"""Where torch says it will not save an entry ("Detected a package bypass: ..."), torch 2.11-2.15."""
DROPPED_LOGGER = "torch._dynamo.guards"
"""Where torch says a guard it cannot serialise is dropped ("... guard on ... is dropped with caching_precompile")."""


def verdict(*, verified: bool, torch: str | None, reason: str | None, **more: Any) -> dict[str, Any]:
    """The manifest's `precompile` field (docs/topics/warm-starts.md, "Warm manifest")."""
    checked = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return {"verified": verified, "torch": torch, "reason": reason, "checked_at": checked, **more}


def attempt(
    binding: Binding,
    step: Callable[[Any, int], Any],
    *,
    steps: int,
    refs: tuple[str, str, str],
    warm_seconds: float,
    expected: Collection[str],
) -> tuple[dict[str, Any], tuple[bytes, dict[str, list[str]]] | None]:
    """Build a precompiled bundle and verify it: (verdict, the bundle and its keys when verified, else None).

    `refs`: (contract path, model reference, step reference), what the fresh process rebuilds the model from;
    `expected`: the regions that compiled in the warm run (each of their instances must hit)."""
    from contract import _caches

    version = torch_version()
    if not _caches.precompile_available():
        return verdict(verified=False, torch=version, reason="this torch has no caching_precompile"), None
    bad = precompile_known_bad(version)
    if bad is not None:
        return verdict(verified=False, torch=version, reason=f"not tried on torch {version}: {bad}"), None
    notes = _TorchNotes()
    try:
        with notes:
            saved = _second_pass(binding, step, steps)
    except Exception as exc:  # the user's step or torch failing with precompile on is a verdict, not a warm failure
        return verdict(verified=False, torch=version, reason=f"building the bundle raised {_brief(exc)}"), None
    extra = {"dropped_guards": dict(notes.dropped), "bypassed": notes.bypassed[:3]}
    bypass = f" (torch bypassed an entry while saving it: {notes.bypassed[0]})" if notes.bypassed else ""
    if saved is None or not saved[1].get("precompile"):
        return verdict(
            verified=False, torch=version, reason=f"torch saved no precompile entries{bypass}", **extra
        ), None
    timeout = max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * warm_seconds)
    result = verify(saved[0], refs, steps=steps, timeout_s=timeout)
    ok, why, summary = judge(result, expected)
    reason = None if ok else f"{why}{bypass}"
    return verdict(verified=ok, torch=version, reason=reason, **summary, **extra), saved if ok else None


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def _second_pass(binding: Binding, step: Callable[[Any, int], Any], steps: int) -> tuple[bytes, Any] | None:
    """Compile every region again with precompile on (fresh wraps: torch makes a package per `torch.compile()`),
    run the warm run's steps, save the artifacts (now with `precompile` entries); precompile is off again after."""
    from contract import _caches
    from contract.binding.apply import apply, unapply

    unapply(binding)
    _caches.reset_dynamo()
    _caches.set_caching_precompile(True)
    try:
        apply(binding)
        for i in range(steps):
            step(binding.model, i)
        return _caches.save_cache_artifacts()
    finally:
        _caches.set_caching_precompile(False)


class _TorchNotes(logging.Filter):
    """While the bundle is built: torch's "package bypass" and "guard dropped" warnings are counted, not printed."""

    def __init__(self) -> None:
        super().__init__()
        self.bypassed: list[str] = []
        self.dropped: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "Detected a package bypass" in text:
            why = text.split("Detected a package bypass:", 1)[-1].strip()
            if why not in self.bypassed:
                self.bypassed.append(" ".join(why.split())[:300])
            return False
        if "is dropped with caching_precompile" in text:
            self.dropped[text.split(" ", 1)[0]] += 1
            return False
        return True

    def __enter__(self) -> _TorchNotes:
        for name in (BYPASS_LOGGER, DROPPED_LOGGER):
            logging.getLogger(name).addFilter(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in (BYPASS_LOGGER, DROPPED_LOGGER):
            logging.getLogger(name).removeFilter(self)


def verify(bundle: bytes, refs: tuple[str, str, str], *, steps: int, timeout_s: float) -> dict[str, Any]:
    """Run the verification worker in a fresh process with an empty cache dir; its JSON result, or one saying how
    the process ended (a crash of the interpreter, a timeout)."""
    contract, model, step = refs
    with tempfile.TemporaryDirectory(prefix="compile-contract-verify-") as tmp:
        bundle_path, out, cache = Path(tmp, "bundle.bin"), Path(tmp, "result.json"), Path(tmp, "cache")
        bundle_path.write_bytes(bundle)
        cache.mkdir()
        cmd = [sys.executable, "-m", "contract.warm.precompile_worker", "--contract", contract, "--model", model]
        cmd += ["--step", step, "--steps", str(steps), "--bundle", str(bundle_path), "--out", str(out)]
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), "TORCH_CACHING_PRECOMPILE": "1"}
        started = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return {"crash": f"the verification run did not finish in {timeout_s:.0f} s"}
        seconds = time.perf_counter() - started
        if not out.exists():
            tail = " | ".join(line.strip() for line in proc.stderr.strip().splitlines()[-3:])
            return {"crash": f"the verification process exited with code {proc.returncode}: {tail[-400:]}"}
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        result["process_s"] = round(seconds, 3)
        return result


def judge(result: dict[str, Any], expected: Collection[str]) -> tuple[bool, str | None, dict[str, Any]]:
    """(verified, why not, summary for the manifest) from a verification result: nothing crashed, every instance of
    the `expected` regions (those the warm run compiled) hit, and at least one region recompiled an unseen shape
    cleanly."""
    summary = _summary(result)
    if result.get("crash"):
        return False, f"the verification run failed: {result['crash']}", summary
    for name, region in summary["regions"].items():
        if name not in expected:
            continue
        missed = {s: n for s, n in region["loads"].items() if s != "hit"}
        if missed:
            return False, f"region {name!r}: {_loads_text(missed, region)}", summary
        if region["compiled"]:
            return False, f"region {name!r}: {region['compiled']} Dynamo compiles during the warm run's shapes", summary
    unseen = summary["unseen"]
    crashed = {n: u for n, u in unseen.items() if u.get("result") == "crashed"}
    if crashed:
        name, u = next(iter(crashed.items()))
        return False, f"a shape the warm run never saw crashed region {name!r} after the load: {u['error']}", summary
    if not any(u.get("result") == "recompiled" for u in unseen.values()):
        whys = "; ".join(f"{n}: {u.get('why')}" for n, u in unseen.items()) or "no region"
        return False, f"no region could be run with a shape the warm run never saw ({whys})", summary
    return True, None, summary


def _loads_text(missed: dict[str, int], region: dict[str, Any]) -> str:
    parts = ", ".join(f"{n} {state}" for state, n in missed.items())
    why = f" ({region['reason']})" if region.get("reason") else ""
    return f"{parts} of {region['instances']} instance loads did not install the precompiled entry{why}"


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """Per region: instances, load states, load seconds, compiles during the warm shapes; the unseen-shape results."""
    regions: dict[str, dict[str, Any]] = {}
    compiled = result.get("compiled") or {}
    for inst in (result.get("instances") or {}).values():
        region = regions.setdefault(
            inst["region"],
            {"instances": 0, "loads": Counter(), "load_s": 0.0, "compiled": compiled.get(inst["region"], 0)},
        )
        region["instances"] += 1
        region["loads"][str(inst["state"])] += 1
        region["load_s"] = round(region["load_s"] + (inst["seconds"] or 0.0), 3)
        if inst.get("reason") and not region.get("reason"):
            region["reason"] = inst["reason"]
    for region in regions.values():
        region["loads"] = dict(region["loads"])
    return {
        "regions": regions,
        "unseen": result.get("unseen") or {},
        "first_step_s": result.get("first_step_s"),
    }


def _brief(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
