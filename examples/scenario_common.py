"""Shared plumbing for the scenario scripts: load a contract (optionally on another backend), check, apply, print."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
"""Repository root (contracts are named relative to it, whatever the working directory)."""


def contract_path(path: str | Path, backend: str | None = None) -> Path:
    """The contract itself, or a temporary copy with every `backend = ...` set to `backend` (fast CPU runs)."""
    path = Path(path) if Path(path).is_absolute() else ROOT / path
    if backend is None:
        return path
    text = re.sub(r'(?m)^backend = "[^"]*"', f'backend = "{backend}"', path.read_text())
    if 'backend = "' not in text:
        text = text.replace("[defaults]\n", f'[defaults]\nbackend = "{backend}"\n', 1)
    if "[defaults]" not in text:
        text = text.replace("\n[[region]]", f'\n[defaults]\nbackend = "{backend}"\n\n[[region]]', 1)
    tmp = Path(tempfile.mkdtemp(prefix="cc-scenario-")) / path.name
    tmp.write_text(text)
    return tmp


def check_and_apply(path: Path, model: Any, *, refuse: bool = True) -> tuple[Any, list[Any]]:
    """Startup: check (no probe) and apply; with `refuse`, errors stop here like `enforce()` would."""
    from contract.binding.apply import apply
    from contract.findings import has_errors
    from contract.pipeline import ContractViolation, check

    _, binding, findings = check(path, model)
    if binding is None or (refuse and has_errors(findings)):
        raise ContractViolation(findings, path)
    return apply(binding), findings


def print_findings(findings: Iterable[Any], title: str = "findings") -> None:
    """One line per finding (code, severity, location, message)."""
    findings = list(findings)
    print(f"{title}: {len(findings) or 'none'}")
    for f in findings:
        print(f"  {f.code} {f.severity:<7} {f.location}: {f.message}")


def print_snapshot(snap: dict[str, dict[str, Any]], *, reasons: bool = False) -> None:
    """Per region: compiles, recompiles, graph breaks, breach state (and the last recompile reasons)."""
    for name, s in snap.items():
        print(
            f"  {name:<12} compiles={s['compiles']:<3} recompiles={s['recompiles']:<3} "
            f"graph_breaks={s['graph_breaks']:<3} breached={s['breached']} limit_hits={s.get('recompile_limit_hits', 0)} "
            f"compile_s={s['compile_seconds']:.2f}"
        )
        for reason in (s.get("last_reasons") or [])[-3:] if reasons else ():
            print(f"      reason: {reason[:140]}")


def event_logger(echo: bool = True) -> Any:
    """A structlog logger for the monitor that keeps every event (`.events`) and, with `echo`, prints it."""
    import structlog

    events: list[dict[str, Any]] = []

    def keep(_: Any, method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        events.append({"level": method, **event_dict})
        if not echo:
            raise structlog.DropEvent
        return event_dict

    logger = structlog.wrap_logger(
        structlog.PrintLogger(), processors=[keep, structlog.dev.ConsoleRenderer(colors=False)]
    )
    logger.events = events
    return logger
