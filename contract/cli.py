"""`compile-contract`: check, doctor, warm, rules, explain. Exit 0 ok, 1 error findings, 2 usage or internal errors (one
line on stderr, no traceback)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contract.document.load import Contract
    from contract.findings import Finding


class UsageError(Exception):
    """Exit 2 with a one-line message."""


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"compile-contract: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `compile-contract explain X | head`: the reader left; no traceback at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug of ours: exit 2, so a launcher never reads a crash as a refusal (exit 1)
        print(f"compile-contract: internal error: {_one_line(exc)} (please report)", file=sys.stderr)
        return 2


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """`Type: message` folded to one bounded line."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compile-contract", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="validate a contract, bind it to the model, and report")
    chk.add_argument("contract", help="path to the contract TOML")
    chk.add_argument("--model", help="pkg.module:attr returning the nn.Module (default: [contract] model)")
    chk.add_argument("--step", help="pkg.module:attr, step(model, i) for the dynamic probe (default: [contract] step)")
    chk.add_argument("--format", choices=("text", "json"), default="text")
    chk.add_argument("--strict", action="store_true", help="treat warnings as errors")
    chk.set_defaults(run=_cmd_check)
    doc = sub.add_parser(
        "doctor", help="environment and Inductor cache preflight for launchers (no model, no torch import)"
    )
    doc.add_argument("contract", nargs="?", help="path to the contract TOML (default: torch's defaults, no [cache])")
    doc.add_argument("--format", choices=("text", "json"), default="text")
    doc.add_argument("--strict", action="store_true", help="treat warnings as errors")
    doc.set_defaults(run=_cmd_doctor)
    warm = sub.add_parser(
        "warm", help="compile every region with its real settings and write the warm manifest ([cache] manifest)"
    )
    warm.add_argument("contract", help="path to the contract TOML")
    warm.add_argument("--model", help="pkg.module:attr returning the nn.Module (default: [contract] model)")
    warm.add_argument("--step", help="pkg.module:attr, step(model, i) (default: [contract] step)")
    warm.add_argument("--steps", type=int, default=None, help="most steps to run (default: [probe] steps)")
    warm.set_defaults(run=_cmd_warm)
    rules = sub.add_parser("rules", help="list every rule (code, severity, name)")
    rules.set_defaults(run=_cmd_rules)
    exp = sub.add_parser("explain", help="print a rule's documentation")
    exp.add_argument("code", help="rule code, e.g. CC001")
    exp.set_defaults(run=_cmd_explain)
    return parser


def _cmd_check(args: argparse.Namespace) -> int:
    from contract.document.load import ContractFileError, load
    from contract.document.refs import RefError, build_model, resolve
    from contract.findings import has_errors
    from contract.pipeline import check_loaded
    from contract.report.allow import finalize
    from contract.report.render import render_json, render_text

    sys.path.insert(0, os.getcwd())
    binding = model = None
    try:
        contract, findings = load(args.contract)
        meta = contract.meta if contract else None
        model_ref = args.model or (meta.model if meta else None)
        step_ref = args.step or (meta.step if meta else None)
        with _stdout_to_stderr():
            model = build_model(model_ref) if model_ref else None
            step = resolve(step_ref, "step") if step_ref else None
            if contract is None:
                findings = finalize(findings, None, strict=args.strict)
            else:
                contract, binding, findings = check_loaded(contract, findings, model, step=step, strict=args.strict)
    except (ContractFileError, RefError) as exc:
        raise UsageError(str(exc)) from None
    if contract is not None and model is None and not has_errors(findings):
        raise UsageError(f"{args.contract}: no model to bind; pass --model pkg.module:attr or set [contract] model")
    summary = _summary(binding)
    if args.format == "json":
        print(render_json(findings, args.contract, regions=_regions(binding)))
    else:
        print(render_text(findings, args.contract, summary=summary))
    return 1 if has_errors(findings) else 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from contract.document.load import ContractFileError
    from contract.findings import has_errors
    from contract.pipeline import doctor
    from contract.report.render import render_json, render_text

    try:
        _, findings = doctor(args.contract, strict=args.strict)
    except ContractFileError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        print(render_json(findings, args.contract))
    else:
        print(render_text(findings, args.contract or "(no contract: torch defaults)", title="doctor"))
    return 1 if has_errors(findings) else 0


def _cmd_warm(args: argparse.Namespace) -> int:
    from contract.document.load import ContractFileError, load
    from contract.findings import has_errors
    from contract.report.allow import finalize
    from contract.report.render import render_text

    sys.path.insert(0, os.getcwd())
    try:
        contract, findings = load(args.contract)
    except ContractFileError as exc:
        raise UsageError(str(exc)) from None
    if contract is None or has_errors(findings):
        print(render_text(finalize(findings, contract), args.contract, title="warm"))
        return 1
    if not contract.cache.manifest:
        raise UsageError(f'{args.contract}: [cache] has no manifest; set manifest = "warm-manifest.json" to write one')
    return _warm(args, contract, findings)


def _warm(args: argparse.Namespace, contract: Contract, findings: list[Finding]) -> int:
    """Build, bind, run the recording warm start; print where the manifest went."""
    from contract.document.refs import RefError, build_model, resolve
    from contract.findings import has_errors
    from contract.report.allow import finalize
    from contract.report.render import n_of, render_text
    from monitor.warm import WarmError, cache_dir_env, run

    meta = contract.meta
    model_ref = args.model or (meta.model if meta else None)
    step_ref = args.step or (meta.step if meta else None)
    if not model_ref or not step_ref:
        raise UsageError(
            f"{args.contract}: warm needs a model and a step; pass --model/--step or set them in [contract]"
        )
    try:
        cache_dir_env(contract)
        with _stdout_to_stderr():
            from contract.binding.resolve import bind

            model, step = build_model(model_ref), resolve(step_ref, "step")
            binding, bound = bind(contract, model)
            result = None if has_errors(bound) else run(binding, step, steps=args.steps or contract.probe.steps)
    except (RefError, WarmError) as exc:
        raise UsageError(str(exc)) from None
    if result is None:
        print(render_text(finalize(findings + bound, contract), args.contract, title="warm"))
        return 1
    art = f"; artifacts {result.artifacts['path']} ({result.artifacts['bytes']} bytes)" if result.artifacts else ""
    print(
        f"warm manifest written: {result.path} ({n_of(len(result.compiled), 'region')} compiled, "
        f"{n_of(result.compiles, 'compile')}, {result.cold_seconds:.1f} s cold, {n_of(result.steps, 'step')}{art})"
    )
    for cache in result.caches_off:
        print(f"warning: {cache} was off during the run: its keys are not recorded and a restart cannot be warm")
    for name in result.never:
        print(
            f"warning: region {name!r} never compiled in {n_of(result.steps, 'step')}: the manifest has no keys for it"
        )
    return 0


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While the user's model, step and imports run, their prints go to stderr: stdout carries only the report."""
    sys.stdout.flush()
    saved = _redirect_fd(1, 2)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _redirect_fd(fd: int, to: int) -> int | None:
    """Point `fd` at `to` (output of subprocesses and C code), returning a copy of the old one; None when
    sys.stdout is not that fd (captured or replaced in-process), where the Python-level redirect is enough."""
    try:
        if sys.stdout.fileno() != fd:
            return None
    except (AttributeError, OSError, ValueError):
        return None
    saved = os.dup(fd)
    os.dup2(to, fd)
    return saved


def _summary(binding: object) -> str:
    from contract.report.render import n_of

    if binding is None:
        return ""
    regions = binding.regions  # type: ignore[attr-defined]
    targets = sum(len(rb.targets) for rb in regions.values())
    return f"({n_of(len(regions), 'region')}, {n_of(targets, 'module method')})"


def _regions(binding: object) -> dict[str, list[str]]:
    """Region -> bound `module.method` paths, for scripts."""
    if binding is None:
        return {}
    return {name: [f"{t.path or '<root>'}.{t.method}" for t in rb.targets] for name, rb in binding.regions.items()}  # type: ignore[attr-defined]


def _cmd_rules(args: argparse.Namespace) -> int:
    from contract.report.catalog import RULES

    for rule in RULES:
        print(f"{rule.code}  {rule.severity:<7}  {rule.name}")
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    from contract.report.catalog import RULES, get

    rule = get(args.code)
    if rule is None:
        close = difflib.get_close_matches(args.code.upper(), [r.code for r in RULES], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; run `compile-contract rules` for the list"
        raise UsageError(f"unknown rule code {args.code!r}{hint}")
    print(f"{rule.code} {rule.name} ({rule.severity})\n\n{rule.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
