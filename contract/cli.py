"""`compile-contract`: check, doctor, init, warm, upgrade, rules, explain, report. Exit 0 ok, 1 error findings, 2 usage or internal errors (one
line on stderr, no traceback)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    chk.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    chk.add_argument("--strict", action="store_true", help="treat warnings as errors")
    chk.set_defaults(run=_cmd_check)
    _init_parser(sub)
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
    warm.add_argument(
        "--pin",
        action="store_true",
        help="write the saved artifacts' sha256 into the contract ([cache] artifacts_sha256)",
    )
    warm.add_argument(
        "--no-precompile",
        action="store_true",
        help="save plain artifacts only: no precompiled bundle (Dynamo's code and guards) built or verified",
    )
    warm.set_defaults(run=_cmd_warm)
    _upgrade_parser(sub)
    rules = sub.add_parser("rules", help="list every rule (code, severity, name)")
    rules.set_defaults(run=_cmd_rules)
    exp = sub.add_parser("explain", help="print a rule's documentation")
    exp.add_argument("code", help="rule code, e.g. CC001")
    exp.set_defaults(run=_cmd_explain)
    rep = sub.add_parser(
        "report",
        help="post-mortem report of monitored runs: report.html, timeline.png, trace.json (Perfetto)",
        description="Render the monitor's events (`[monitor] events_path` files, or any log holding its JSON lines; "
        "one rank or many) into DIR: report.html, timeline.png (needs the `report` extra) and trace.json. Exit 0: "
        "written; 1: written, but no monitor event was readable; 2: usage errors.",
    )
    rep.add_argument("logs", nargs="+", metavar="LOG", help="event files or logs (a quoted glob is expanded)")
    rep.add_argument("-o", "--output", required=True, metavar="DIR", help="directory the report is written into")
    rep.set_defaults(run=_cmd_report)
    return parser


def _cmd_check(args: argparse.Namespace) -> int:
    from contract.document.load import ContractFileError, load
    from contract.document.refs import load_refs
    from contract.findings import has_errors
    from contract.pipeline import check_loaded, env_at_import
    from contract.report.allow import finalize
    from contract.report.ranks import agree, cli_ranks
    from contract.report.render import render_json, render_sarif, render_text

    sys.path.insert(0, os.getcwd())
    binding = model = None
    try:
        contract, findings = load(args.contract)
    except ContractFileError as exc:
        raise UsageError(str(exc)) from None
    meta = contract.meta if contract else None
    model_ref = args.model or (meta.model if meta else None)
    step_ref = args.step or (meta.step if meta else None)
    ranks = cli_ranks(contract, "check")  # every rank of a job runs this: one verdict for all
    with _stdout_to_stderr():
        # a failure is a CC010 finding, reported with the rest; with a twin the real model is only read: on meta
        model, step, unbuilt = load_refs(model_ref, step_ref, meta=_twin_named(contract))
        findings = [*findings, *unbuilt]
        if contract is None:
            findings = agree(ranks, None, finalize(findings, None, strict=args.strict), env_at_import())
        else:
            contract, binding, findings = check_loaded(
                contract, findings, model, step=step, strict=args.strict, ranks=ranks
            )
    if contract is not None and not model_ref and not has_errors(findings):
        raise UsageError(f"{args.contract}: no model to bind; pass --model pkg.module:attr or set [contract] model")
    summary = _summary(binding)
    if args.format == "json":
        print(render_json(findings, args.contract, regions=_regions(binding), step_given=step is not None))
    elif args.format == "sarif":
        print(render_sarif(findings, args.contract))
    else:
        print(render_text(findings, args.contract, summary=summary) + (NO_STEP_NOTE if binding and not step else ""))
    return 1 if has_errors(findings) else 0


def _twin_named(contract: Contract | None) -> bool:
    """The probe runs the step on `[probe] model`, so nothing runs the real model: `check` builds it on meta."""
    return contract is not None and contract.probe.enabled and contract.probe.model is not None


NO_STEP_NOTE = (
    "\nnote: no step given ([contract] step or --step): state the loop changes between calls was not scanned"
    " and the probe did not run"
)
"""What a pass without a step does not cover: loop-driven hazards are invisible to a scan of the model alone."""


def _init_parser(sub: Any) -> None:
    ini = sub.add_parser(
        "init", help="generate a commented contract from the model; with --step, record warm-up and budgets from a run"
    )
    ini.add_argument("model", nargs="?", help="pkg.module:attr returning the nn.Module (--update: [contract] model)")
    ini.add_argument("--step", help="pkg.module:attr, step(model, i): run it under the monitor and record budgets")
    ini.add_argument("-o", "--output", help="write the contract to this file (default: print it to stdout)")
    ini.add_argument(
        "--update", action="store_true", help="re-record the existing -o FILE; change only what the run contradicts"
    )
    ini.add_argument("--force", action="store_true", help="replace an existing -o FILE")
    ini.add_argument("--steps", type=_at_least_2, help="calls of the step to record (default 8; --update: [probe])")
    ini.add_argument("--backend", default="inductor", help="backend written to [defaults] and recorded with")
    ini.add_argument("--name", help="[contract] name (default: the model's class, kebab-case)")
    ini.add_argument(
        "--no-twin",
        action="store_true",
        help="do not write the probe's twin for a Hugging Face model (the step then runs on the model itself)",
    )
    ini.set_defaults(run=_cmd_init)


def _at_least_2(value: str) -> int:
    """`--steps`: an integer from 2 to 1000 (a recording needs a call after warm-up; `[probe] steps` bounds)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if not 2 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"{n} is out of range: record 2 to 1000 calls")
    return n


def _cmd_init(args: argparse.Namespace) -> int:
    from contract.findings import has_errors
    from contract.init.build import InitError
    from contract.init.generate import Options
    from contract.report.render import render_text

    if args.update and not args.output:
        raise UsageError("--update needs -o FILE: the contract to re-record")
    if not args.update and not args.model:
        raise UsageError("init needs MODEL_REF: pkg.module:attr returning the nn.Module")
    sys.path.insert(0, os.getcwd())
    out = Path(args.output) if args.output else None
    opts = Options(
        model_ref=args.model,
        step_ref=args.step,
        steps=args.steps,
        backend=args.backend,
        name=args.name,
        command=_init_command(args),
        output=out,
        twin=not args.no_twin,
    )
    report = sys.stdout if out else sys.stderr
    try:
        result = _init_write(args, opts, out, report)
    except InitError as exc:
        raise UsageError(str(exc)) from None
    for line in result.notes:
        print(line, file=report)
    print(render_text(result.findings, str(out or "<stdout>"), summary=_summary(result.binding)), file=report)
    return 1 if has_errors(result.findings) else 0


def _init_write(args: argparse.Namespace, opts: Any, out: Path | None, report: Any) -> Any:
    """Generate or update, then write all or nothing: the file atomically (`--update`: only when it changed, with
    the diff printed), or the text to stdout."""
    from contract.init.build import InitError
    from contract.init.files import atomic_write, unified_diff
    from contract.init.generate import generate, update

    if out is not None and out.exists() and not (args.update or args.force):
        raise InitError(f"{out}: already exists; pass --update to re-record it, or --force to replace it")
    with _stdout_to_stderr():
        result = update(out, opts) if args.update and out is not None else generate(opts)
    if args.update and out is not None:
        diff = unified_diff(result.before, result.text, str(out))
        if diff:
            atomic_write(out, result.text, overwrite=True)
        print(diff or f"no change: the run agrees with {out}", file=report)
    elif out is not None:
        if result.twin is not None:  # first: the contract names it
            if result.twin.path.exists() and not args.force:
                raise InitError(f"{result.twin.path}: already exists; pass --force to replace it (or --no-twin)")
            atomic_write(result.twin.path, result.twin.text, overwrite=True)
        atomic_write(out, result.text, overwrite=True)
    else:
        sys.stdout.write(result.text)
    return result


def _init_command(args: argparse.Namespace) -> str:
    """The command line, as the file header quotes it."""
    parts = ["compile-contract init"]
    parts += [args.model] if args.model else []
    parts += [f"--step {args.step}"] if args.step else []
    parts += [f"--steps {args.steps}"] if args.steps else []
    parts += [f"--backend {args.backend}"] if args.backend != "inductor" else []
    parts += ["--no-twin"] if args.no_twin else []
    return " ".join(parts)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from contract.document.load import ContractFileError
    from contract.findings import has_errors
    from contract.pipeline import doctor
    from contract.report.render import render_json, render_text

    try:
        _, findings = doctor(args.contract, strict=args.strict, job="doctor")
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
    if args.pin and not contract.cache.artifacts:
        raise UsageError(f'{args.contract}: --pin needs [cache] artifacts; set artifacts = "warm-artifacts.bin"')
    return _warm(args, contract, findings)


def _warm(args: argparse.Namespace, contract: Contract, findings: list[Finding]) -> int:
    """Build, bind, run the recording warm start; print where the manifest went."""
    from contract.document.refs import RefError, build_model, resolve
    from contract.findings import has_errors
    from contract.report.allow import finalize
    from contract.report.render import n_of, render_text
    from contract.warm.run import WarmError, cache_dir_env, run

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
            refs = (args.contract, model_ref, step_ref)
            steps = args.steps or contract.probe.steps
            result = (
                None
                if has_errors(bound)
                else run(binding, step, steps=steps, refs=refs, precompile=not args.no_precompile)
            )
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
    if result.precompile is not None:
        print(_precompile_line(result.precompile))
    if result.kernels is not None:
        k = result.kernels
        print(
            f"kernels: {n_of(len(k['files']), 'C++ kernel')} packed in {k['path']} ({k['bytes']} bytes): enforce "
            "installs them into the cache dir, so a CPU host with an empty cache builds none"
        )
    if result.artifacts:
        _pinned(args, contract, result.artifacts["sha256"])
    elif args.pin:
        print("warning: torch saved no artifacts (nothing was compiled through its caches): nothing to pin")
    for cache in result.caches_off:
        print(f"warning: {cache} was off during the run: its keys are not recorded and a restart cannot be warm")
    for name in result.never:
        print(
            f"warning: region {name!r} never compiled in {n_of(result.steps, 'step')}: the manifest has no keys for it"
        )
    return 0


def _precompile_line(verdict: dict) -> str:
    """One line: the bundle was verified (and what it holds), or why the plain artifacts were kept."""
    if verdict.get("verified"):
        regions = verdict.get("regions") or {}
        hits = sum(r.get("loads", {}).get("hit", 0) for r in regions.values())
        return (
            f"precompile: verified with torch {verdict.get('torch')} in a fresh process ({hits} region instance "
            f"loads hit, shapes it never saw recompiled cleanly): the artifacts hold Dynamo's code and guards"
        )
    return f"precompile: not used with torch {verdict.get('torch')}: {verdict.get('reason')}; plain artifacts saved"


def _pinned(args: argparse.Namespace, contract: Contract, digest: str) -> None:
    """Print the new artifacts' digest; with --pin write it into the contract (every other byte kept, atomically),
    else say whether the contract's pin still matches."""
    from contract.init.build import InitError
    from contract.init.files import atomic_write, unified_diff
    from contract.init.update import set_key

    print(f"artifacts sha256: {digest}")
    pin = contract.cache.artifacts_sha256
    if not args.pin:
        if pin is None:
            print(f'pin it: add artifacts_sha256 = "{digest}" to [cache], or run warm again with --pin')
        elif pin != digest:
            print(
                f"warning: [cache] artifacts_sha256 pins {pin}: enforce will refuse the new artifacts; pin them with --pin"
            )
        return
    path = Path(args.contract)
    try:
        before = path.read_text(encoding="utf-8")
        after = set_key(before, "cache", "artifacts_sha256", f'"{digest}"', after="artifacts")
        diff = unified_diff(before, after, str(path))
        if diff:
            atomic_write(path, after, overwrite=True)
    except (InitError, OSError) as exc:
        raise UsageError(f"{path}: cannot pin the artifacts: {exc}") from None
    print(diff or f"no change: {path} already pins these artifacts", end="" if diff else "\n")


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


def _upgrade_parser(sub: Any) -> None:
    from contract.upgrade import command

    upg = sub.add_parser(
        "upgrade", help="what a candidate torch changes for this model, region by region", description=command.__doc__
    )
    upg.add_argument("contract", help="path to the contract TOML")
    which = upg.add_mutually_exclusive_group(required=True)
    which.add_argument("--candidate", metavar="PYTHON", help="python of an environment with the candidate torch")
    which.add_argument("--torch", metavar="VERSION", help="create that environment with scripts/torch-env.sh")
    upg.add_argument("--step", help="pkg.module:attr, step(model, i) (default: [contract] step)")
    upg.add_argument("--steps", type=_at_least_2, help="calls of the step to record (default: [probe] steps)")
    upg.add_argument("--format", choices=("text", "json", "sarif", "markdown"), default="text")
    upg.add_argument(
        "--timeout",
        type=float,
        default=command.DEFAULT_TIMEOUT,
        help="seconds each interpreter may take (default %(default)g)",
    )
    upg.set_defaults(run=_cmd_upgrade)


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from contract.upgrade import BadInput
    from contract.upgrade.command import run

    try:
        return run(args)
    except BadInput as exc:
        raise UsageError(str(exc)) from None


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


def _cmd_report(args: argparse.Namespace) -> int:
    from monitor.report import ReportError, write_report

    try:
        out = write_report(args.logs, args.output, parallel=True)
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    run = out.run
    print(
        f"report: {len(run.reading.events)} events from {len(run.reading.files)} file(s), {len(run.ranks)} rank(s), "
        f"{len(run.regions)} region(s), {len(run.divergence)} cross-rank divergence row(s)"
    )
    for path in (out.html, out.png, out.trace):
        if path is not None:
            print(f"  {path}")
    print("  open report.html in a browser; trace.json in https://ui.perfetto.dev or chrome://tracing")
    for line in ([out.png_note] if out.png_note else []) + out.notes:
        print(f"note: {line}", file=sys.stderr)
    if not run.reading.events:
        print("compile-contract report: no monitor event in the inputs; the report is empty", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
