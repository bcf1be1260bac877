"""Sphinx extension: the references generated from the code at build time, so they cannot drift from it.

A page asks for a generated block with a marker line, `<!-- generated: NAME [ARG] -->` (an HTML comment: on GitHub
the page shows the prose around it). Before MyST parses the page, the marker is replaced by markdown built from:

- `contract-table SECTION`: the schema's pydantic models (field docstrings, types, defaults), one table per TOML table;
- `rules`: the rule records joined in `contract/report/catalog.py` (code, name, severity, documentation);
- `cli-synopsis`, `cli-command NAME`: the argparse parser of `contract/cli.py`;
- `metrics`: the families the exporter emits (`monitor/exporter.py`), read from a real collector;
- `events`, `events adapters`: every monitor event, or the engine adapters' (`monitor/event_catalog.py`);
- `capabilities`: what the monitor's adapters read from torch and what is lost without it (their `probe()`);
- `runbooks`: every `ops/runbooks/*.md`, headings one level down;
- `torch-versions`: the hot-path patterns measured per torch minor (`contract/checks/hotpath/versions.py`).

A schema table, a subcommand or a rule range with no place in the docs is a build warning (an error under `-W`).
"""

from __future__ import annotations

import argparse
import re
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import ExtensionError
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- generated: ([a-z-]+)(?: ([\w.-]+))? -->$", re.MULTILINE)
RANGES = {
    "0": "the document (and the model and step it names)",
    "1": "compile settings",
    "2": "the Inductor cache",
    "3": "hot-path Python state (static scan)",
    "4": "the dynamic probe",
    "5": "binding regions to the model",
    "6": "custom operators",
    "7": "warm starts",
    "8": "the ranks of a job",
    "9": "compiles the engine makes itself",
}
"""What each hundreds digit of a rule code covers (a new range needs a line here: the build warns otherwise)."""

log = logging.getLogger(__name__)


# ---- markdown helpers ----


def _cell(text: str) -> str:
    """One table cell: whitespace folded (docstrings span lines), pipes escaped."""
    return " ".join(str(text).split()).replace("|", r"\|")


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A pipe table."""
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def shift_headings(text: str, levels: int) -> str:
    """Move every ATX heading outside code fences `levels` down (a `# comment` in a fence is not a heading)."""
    out, fence = [], ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence and stripped.startswith(fence):
            fence = ""
        elif not fence and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
        elif not fence and re.match(r"#{1,6} ", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def _toml(value: Any) -> str:
    """A default as TOML spells it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, list | tuple):
        return "`[" + ", ".join(_toml(v).strip("`") for v in value) + "]`"
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    return f"`{value}`"


# ---- contract reference: the schema's field docstrings ----

_BASE = {str: "string", int: "integer", float: "float", bool: "boolean", typing.Any: "any value"}


def type_text(annotation: Any, metadata: Iterable[Any] = ()) -> str:
    """A TOML-flavoured type with its constraints, from a pydantic annotation (`integer ≥ 0`, `array of string`)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = [m for a in args[1:] for m in getattr(a, "metadata", [a])]
        return type_text(args[0], [*inner, *metadata])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a) for a in args if a is not type(None)) + _constraints(metadata)
    if origin is typing.Literal:
        return "one of " + ", ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a}`" for a in args)
    if origin is list:
        return f"array of {type_text(args[0])}" + _constraints(metadata, unit="items")
    if origin is dict:
        return f"table of {type_text(args[1])}" + _constraints(metadata)
    return _BASE.get(annotation, getattr(annotation, "__name__", str(annotation))) + _constraints(metadata)


def _constraints(metadata: Iterable[Any], unit: str = "characters") -> str:
    """` ≥ 0`, `, non-empty`, `, 1 to 32 items`, `, matching ^rediss?://` from annotated-types / pydantic metadata."""
    numeric, other, low, high = [], [], None, None
    for m in metadata:
        for attr, fmt in (("ge", "≥ {}"), ("gt", "> {}"), ("le", "≤ {}"), ("lt", "< {}")):
            if getattr(m, attr, None) is not None:
                numeric.append(fmt.format(getattr(m, attr)))
        low = getattr(m, "min_length", None) if getattr(m, "min_length", None) is not None else low
        high = getattr(m, "max_length", None) if getattr(m, "max_length", None) is not None else high
        if getattr(m, "pattern", None) is not None:
            other.append(f"matching `{m.pattern}`")
    if low is not None and high is not None:
        other.insert(0, f"{low} to {high} {unit}")
    elif low is not None:
        other.insert(0, "non-empty" if low == 1 else f"at least {low} {unit}")
    elif high is not None:
        other.insert(0, f"at most {high} {unit}")
    return (" " + " and ".join(numeric) if numeric else "") + "".join(", " + o for o in other)


def contract_table(section: str) -> str:
    """The keys of one contract table: key, type, default, meaning (the field's docstring)."""
    from contract.document.schema import REGION_DEFAULTS, SECTIONS, Settings

    if section not in SECTIONS:
        raise ExtensionError(f"contract-table: no table [{section}] in contract/document/schema.py SECTIONS")
    fields = SECTIONS[section].model_fields
    if section == "region":  # [defaults] and [[region]] share the settings; region-only keys first
        order = [k for k in fields if k not in Settings.model_fields] + list(Settings.model_fields)
        fields = {k: fields[k] for k in order}
    rows = []
    for key, field in fields.items():
        if field.is_required():
            default = "required"
        elif key in REGION_DEFAULTS and section in ("region", "defaults"):
            default = _toml(REGION_DEFAULTS[key])
        else:
            default = _toml(field.get_default(call_default_factory=True))
        if section == "region" and key not in Settings.model_fields:
            default += " (region only)"
        rows.append((f"`{key}`", type_text(field.annotation, field.metadata), default, field.description or ""))
    return _table(("key", "type", "default", "meaning"), rows)


# ---- rules reference: the rule records ----


def rules_reference() -> str:
    """Every rule, grouped by code range: heading, severity, its documentation (what `explain CODE` prints)."""
    from contract.report.catalog import RULES

    out: list[str] = []
    current = ""
    for rule in RULES:
        digit = rule.code[2]
        if digit != current:
            current = digit
            if digit not in RANGES:
                log.warning(f"rules: no title for the range CC{digit}xx; add it to RANGES in {Path(__file__).name}")
            out.append(f"## CC{digit}xx: {RANGES.get(digit, 'rules')}\n")
        out.append(f"### {rule.code} {rule.name}\n")
        out.append(f"Severity: **{rule.severity}**. `compile-contract explain {rule.code}` prints this.\n")
        out.append(shift_headings(rule.doc.strip(), 2) + "\n")
    return "\n".join(out)


def rule_ranges() -> set[str]:
    """The hundreds digits in use."""
    from contract.report.catalog import RULES

    return {r.code[2] for r in RULES}


def torch_versions() -> str:
    """The hot-path patterns measured per torch minor (`contract/checks/hotpath/versions.py`): one row per pattern,
    one column per measured minor, each cell the effect and the corpus case that shows it."""
    from contract.checks.hotpath.versions import ALL_MINORS, PATTERNS

    header = ["pattern", "rule", *(f"torch {m[0]}.{m[1]}" for m in ALL_MINORS)]
    rows = []
    for name, pattern in PATTERNS.items():
        cells = [pattern.seen.get(m) for m in ALL_MINORS]
        shown = [_seen(s) if s else "not measured" for s in cells]
        rows.append([f"`{name}`: {pattern.shown}", pattern.rule, *shown])
    cases = sorted({c for p in PATTERNS.values() for s in p.seen.values() for c in s.cases})
    return _table(header, rows) + "\n\nCases: " + ", ".join(f"`{c}`" for c in cases) + "."


def _seen(seen: Any) -> str:
    """`clean (corpus/h04, corpus/h58)`: one measurement, its cases by corpus and number."""
    return f"{seen.effect} (" + ", ".join(f"`{c.split('_')[0]}`" for c in seen.cases) + ")"


# ---- CLI reference: the argparse parser ----


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from contract.cli import _parser  # the one parser `compile-contract` runs

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _usage(parser: argparse.ArgumentParser) -> str:
    return " ".join(parser.format_usage().removeprefix("usage: ").split())


def cli_synopsis() -> str:
    """One usage line per subcommand, with its one-line help."""
    from contract.cli import _parser

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    rows = [(f"[`{name}`](#{name})", helps.get(name, "")) for name in sub.choices]
    usage = "\n".join(_usage(p) for p in sub.choices.values())
    return f"```text\n{usage}\n```\n\n" + _table(("command", "what it does"), rows)


def cli_command(name: str) -> str:
    """A subcommand's usage and its arguments: name, meaning, default and choices as the parser has them."""
    commands = _subcommands()
    if name not in commands:
        raise ExtensionError(f"cli-command: `compile-contract {name}` is not a subcommand of contract/cli.py")
    parser = commands[name]
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        metavar = " ".join(action.metavar) if isinstance(action.metavar, tuple) else action.metavar
        shown = ", ".join(action.option_strings) or (metavar or action.dest).upper()
        if action.option_strings and action.nargs != 0:
            shown += " " + (metavar or action.dest.upper())
        notes = [action.help or ""]
        if action.choices:
            notes.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
        if action.default not in (None, False, argparse.SUPPRESS) and action.nargs != 0:
            notes.append(f"default `{action.default}`")
        if action.required and action.option_strings:
            notes.append("required")
        rows.append((f"`{shown}`", "; ".join(n for n in notes if n)))
    usage = f"```text\n{_usage(parser)}\n```\n"
    about = f"\n{parser.description}\n" if parser.description else ""
    return usage + about + ("\n" + _table(("argument", "meaning"), rows) if rows else "\nNo arguments.")


# ---- metrics: the exporter's families ----


def metrics_table() -> str:
    """Every family a rank exports, read from a real monitor over a one-region model (one compile no region claims,
    so the per-code families have a sample), and `target_info`."""
    import tempfile

    import torch
    from prometheus_client import CollectorRegistry

    import monitor
    from contract.binding.apply import apply
    from contract.pipeline import check
    from monitor.exporter import rank_info

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text('[contract]\nname = "c"\n[defaults]\nbackend = "eager"\n[[region]]\nname = "r"\nmodule = ""\n')
        _, binding, _ = check(path, torch.nn.Linear(2, 2))
        registry = CollectorRegistry()
        assert binding is not None
        with monitor.start(apply(binding), registry=registry, serve=False, logger=_Quiet()):
            torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
            families = list(registry.collect())
    rows = []
    for family in families:
        if family.name == "target":  # target_info: its own row below
            continue
        name = family.name + ("_total" if family.type == "counter" else "")
        rows.append((f"`{name}`", family.type, _labels(family.samples), family.documentation))
    info_doc = (rank_info.__doc__ or "").split(":", 1)[-1].strip()
    rows.append(("`target_info`", "gauge", ", ".join(rank_info({})), f"Always 1: {info_doc}"))
    return _table(("metric", "type", "labels", "meaning"), rows)


class _Quiet:
    """The monitor's logger while the table is built: its events are not the build's output."""

    def __getattr__(self, level: str) -> Any:
        return lambda *a, **k: None


def _labels(samples: Iterable[Any]) -> str:
    """Label names, with the fixed values of each label that is not contract data (`reason` ∈ shape, dtype, ...)."""
    values: dict[str, list[str]] = {}
    for sample in samples:
        for key, value in sample.labels.items():
            if value not in values.setdefault(key, []):
                values[key].append(value)
    free = {"region", "contract", "contract_sha256", "code"}
    return "; ".join(k if k in free else f"{k} ∈ " + ", ".join(v) for k, v in values.items()) or "none"


def events_table(which: str | None) -> str:
    """Every monitor event (`monitor.event_catalog`): level, fields, when; `adapters`: the engine adapters' only."""
    from monitor.event_catalog import CATALOG, STOP_EVENTS

    names = STOP_EVENTS if which == "adapters" else tuple(CATALOG)
    rows = [(f"`{n}`", CATALOG[n].level, CATALOG[n].fields, CATALOG[n].when) for n in names]
    return _table(("event", "level", "fields", "when"), rows)


def capabilities_table() -> str:
    """Every capability the monitor's adapters probe: its `capability` label, the torch internal it reads, and what the
    monitor does not count while the installed torch lacks it (the `monitor_degraded` event's `effect`)."""
    from monitor import _dynamo, _dynamo_records, _inductor
    from monitor.capabilities import NAMES

    found = {c.name: c for c in (*_dynamo.probe(), *_dynamo_records.probe(), *_inductor.probe())}
    rows = [(f"`{n}`", found[n].reads, found[n].effect) for n in NAMES]
    return _table(("capability", "reads", "when lost"), rows)


# ---- alerts and runbooks ----


def alerts_table(env: BuildEnvironment) -> str:
    """Every alert of `ops/prometheus/alerts.yml`: severity, how long it holds, the runbook's first sentence."""
    import yaml

    path = ROOT / "ops" / "prometheus" / "alerts.yml"
    env.note_dependency(str(path))
    rows = []
    for group in yaml.safe_load(path.read_text())["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rows.append(_alert_row(env, rule))
    return _table(("alert", "severity", "for", "meaning (runbook)"), rows)


def _alert_row(env: BuildEnvironment, rule: dict[str, Any]) -> tuple[str, ...]:
    name = rule["alert"]
    runbook = ROOT / rule.get("annotations", {}).get("runbook_url", "")
    if not runbook.is_file():
        log.warning(f"alerts: {name} has no runbook file ({runbook.relative_to(ROOT)})")
        meaning = ""
    else:
        env.note_dependency(str(runbook))
        meaning = _first_sentence(_section(runbook.read_text(), "Meaning"))
    held = rule.get("for", "") or (f"keeps firing {rule['keep_firing_for']}" if "keep_firing_for" in rule else "–")
    link = f"[{name}](runbooks.md#{name.lower()})"
    return (link, rule.get("labels", {}).get("severity", ""), held, meaning)


def _section(text: str, title: str) -> str:
    """The first paragraph under `## title`."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?:\n\n|\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


def _first_sentence(text: str) -> str:
    """Up to the first full stop followed by a new sentence (a sentence ending in a colon ends in a stop here)."""
    flat = " ".join(text.split())
    match = re.match(r"(.+?\.)\s+(?=[A-Z`(])", flat)
    sentence = match.group(1) if match else flat
    return sentence[:-1] + "." if sentence.endswith(":") else sentence


def runbooks(env: BuildEnvironment) -> str:
    """Every runbook of `ops/runbooks/`, each a section of the page (the files stay where the alerts link them)."""
    out = []
    for path in sorted((ROOT / "ops" / "runbooks").glob("*.md")):
        env.note_dependency(str(path))
        out.append(f"Source: `ops/runbooks/{path.name}`.\n\n" + shift_headings(path.read_text(), 1).strip())
        out[-1] = _title_first(out[-1])
    return "\n\n".join(out)


def _title_first(text: str) -> str:
    """Put a runbook's heading above its `Source:` line."""
    source, _, body = text.partition("\n\n")
    title, _, rest = body.partition("\n")
    return f"{title}\n\n{source}\n{rest}" if title.startswith("## ") else text


# ---- wiring ----

GENERATORS: dict[str, Callable[[BuildEnvironment, str | None], str]] = {
    "contract-table": lambda _env, arg: contract_table(arg or ""),
    "rules": lambda _env, _arg: rules_reference(),
    "cli-synopsis": lambda _env, _arg: cli_synopsis(),
    "cli-command": lambda _env, arg: cli_command(arg or ""),
    "metrics": lambda _env, _arg: metrics_table(),
    "capabilities": lambda _env, _arg: capabilities_table(),
    "events": lambda _env, arg: events_table(arg),
    "runbooks": lambda env, _arg: runbooks(env),
    "alerts": lambda env, _arg: alerts_table(env),
    "torch-versions": lambda _env, _arg: torch_versions(),
}


def expand(env: BuildEnvironment, docname: str, text: str) -> str:
    """Replace every marker of a page with its generated markdown, noting what was generated where."""
    seen = _generated(env).setdefault(docname, set())

    def one(match: re.Match[str]) -> str:
        name, arg = match.group(1), match.group(2)
        if name not in GENERATORS:
            raise ExtensionError(f"{docname}: unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
        seen.add(f"{name} {arg}" if arg else name)
        return GENERATORS[name](env, arg)

    return MARKER.sub(one, text)


def _generated(env: BuildEnvironment) -> dict[str, set[str]]:
    if not hasattr(env, "compile_contract_generated"):
        env.compile_contract_generated = {}  # type: ignore[attr-defined]
    return env.compile_contract_generated  # type: ignore[attr-defined]


def _source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    source[0] = expand(app.env, docname, source[0])


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _generated(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _generated(env).update({d: s for d, s in _generated(other).items() if d in docnames})


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Pages with generated blocks are read again on every build: the code they come from may have changed."""
    return [d for d, blocks in _generated(env).items() if blocks and d not in removed]


def _check_coverage(app: Sphinx, env: BuildEnvironment) -> None:
    """Every schema table, subcommand and rule range has its generated block somewhere; every page is in a folder."""
    from contract.document.schema import SECTIONS

    blocks = set().union(*_generated(env).values()) if _generated(env) else set()
    wanted = {f"contract-table {s}" for s in SECTIONS if s != "defaults"}  # `region` documents [defaults] too
    wanted |= {f"cli-command {c}" for c in _subcommands()} | {
        "rules",
        "cli-synopsis",
        "metrics",
        "capabilities",
        "events",
        "runbooks",
        "alerts",
        "torch-versions",
    }
    for block in sorted(wanted - blocks):
        log.warning(f"docs: no page has `<!-- generated: {block} -->`: it is undocumented")
    for digit in sorted(rule_ranges() - set(RANGES)):
        log.warning(f"docs: rule range CC{digit}xx has no title in RANGES")
    for doc in sorted(d for d in env.found_docs if "/" not in d and d != env.config.root_doc):
        log.warning(
            f"docs: {doc}.md sits at the top of docs/: move it into start/, topics/ or reference/ (docs/index.md)"
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("source-read", _source_read)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-check-consistency", _check_coverage)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
