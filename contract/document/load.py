"""Load a contract document: TOML -> validated sections -> regions, every problem reported as a finding."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from contract.document.rules import (
    DUPLICATE_REGION,
    INVALID_VALUE,
    MISSING_KEY,
    TOML_SYNTAX,
    TOO_LARGE,
    UNKNOWN_KEY,
    WRONG_SHAPE,
)
from contract.document.schema import (
    ARRAY_SECTIONS,
    MAX_REGIONS,
    SECTIONS,
    AllowSpec,
    CacheSpec,
    ContractMeta,
    DistributedSpec,
    MonitorSpec,
    ProbeSpec,
    Region,
    RegionSpec,
    Settings,
    resolve_region,
)
from contract.findings import Finding

MAX_BYTES = 1 << 20
_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


class ContractFileError(Exception):
    """The contract file cannot be read at all (a usage error: exit 2, one line)."""


@dataclass(frozen=True, kw_only=True)
class Contract:
    """A loaded contract: valid sections (invalid keys dropped and reported) and resolved regions."""

    path: Path
    """Absolute path of the document."""
    sha256: str
    """Hash of the document bytes (exported as the `contract_sha256` info label)."""
    meta: ContractMeta | None
    """`[contract]`, or None when it is invalid."""
    defaults: Settings
    """`[defaults]`."""
    regions: tuple[Region, ...]
    """Resolved regions, in document order (those without a valid module are left out; one with a bad or missing
    name is kept under its placeholder `region[i]`, so its other findings are reported too)."""
    cache: CacheSpec = field(default_factory=CacheSpec)
    """`[cache]`."""
    monitor: MonitorSpec = field(default_factory=MonitorSpec)
    """`[monitor]`."""
    probe: ProbeSpec = field(default_factory=ProbeSpec)
    """`[probe]`."""
    distributed: DistributedSpec = field(default_factory=DistributedSpec)
    """`[distributed]`."""
    allow: tuple[AllowSpec, ...] = ()
    """`[[allow]]` entries."""
    region_tables: int = 0
    """How many `[[region]]` tables the document writes, valid or not (0: the contract binds nothing, CC009)."""

    @property
    def name(self) -> str:
        """Contract name, or the file stem when `[contract]` is invalid."""
        return self.meta.name if self.meta else self.path.stem

    def resolve_path(self, value: str) -> Path:
        """Paths in the contract are relative to the contract file."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else (self.path.parent / p).resolve()


def load(path: str | Path) -> tuple[Contract | None, list[Finding]]:
    """Read and validate a contract file; None when it does not even parse."""
    path = Path(path).absolute()
    return _load(_read(path), path)


def loads(text: str, path: str | Path = "contract.toml") -> tuple[Contract | None, list[Finding]]:
    """Validate a contract given as text, as if it were the file `path` (never read: it names the findings' file and
    anchors the document's relative paths); None when it does not even parse."""
    return _load(text.encode("utf-8"), Path(path).absolute())


def _load(raw: bytes, path: Path) -> tuple[Contract | None, list[Finding]]:
    """Parse and validate the bytes of the contract at `path`."""
    findings: list[Finding] = []
    data = _parse(raw, path, findings)
    if data is None:
        return None, findings
    sections = _validate_sections(data, findings)
    regions = _resolve_regions(sections, findings)
    contract = Contract(
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        meta=sections.get("contract"),
        defaults=sections.get("defaults") or Settings(),
        regions=regions,
        cache=sections.get("cache") or CacheSpec(),
        monitor=sections.get("monitor") or MonitorSpec(),
        probe=sections.get("probe") or ProbeSpec(),
        distributed=sections.get("distributed") or DistributedSpec(),
        allow=tuple(a for a in sections.get("allow") or () if a is not None),
        region_tables=_count_tables(data.get("region")),
    )
    return contract, findings


def _count_tables(value: Any) -> int:
    """Entries of a `[[region]]` array as written (a single `[region]` table counts as one: CC007 reports it)."""
    if value is None:
        return 0
    return len(value) if isinstance(value, list) else 1


def _read(path: Path) -> bytes:
    """Read the file or raise a one-line, actionable ContractFileError."""
    try:
        if path.is_dir():
            raise ContractFileError(f"{path}: is a directory; pass the contract's .toml file")
        with path.open("rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ContractFileError(
            f"{path}: no such contract file; check the path (contracts live in contracts/)"
        ) from None
    except OSError as exc:
        raise ContractFileError(f"{path}: cannot read the contract ({exc.strerror}); check its permissions") from None


def _parse(raw: bytes, path: Path, findings: list[Finding]) -> dict[str, Any] | None:
    """Decode and parse TOML; syntax problems become CC002 (with line and column) or CC006."""
    if len(raw) > MAX_BYTES:
        findings.append(
            TOO_LARGE.finding(
                str(path),
                f"document is larger than {MAX_BYTES >> 20} MiB",
                "write regions as globs; a contract is a short hand-written file",
            )
        )
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        findings.append(
            TOML_SYNTAX.finding(
                f"{path}:{line}", f"not UTF-8 text (byte {exc.start})", "save the contract as UTF-8 TOML"
            )
        )
        return None
    deep = _deep_key_line(text)
    if deep is not None:
        findings.append(
            TOML_SYNTAX.finding(
                f"{path}:{deep}",
                f"a dotted key or table header with more than {MAX_KEY_DEPTH} parts",
                "flatten the key or table header",
            )
        )
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        findings.append(_syntax_finding(str(exc), path))
    except RecursionError:
        findings.append(_too_deep(str(path)))
    else:
        deep_at = _nested_past_limit(data)
        if deep_at is None:
            return data
        findings.append(_too_deep(deep_at))
    return None


MAX_NESTING = 32
"""Arrays/tables nested deeper than this are refused, whatever the interpreter's recursion limit (Inductor raises
it to 2000 after a compile, so relying on RecursionError alone made the outcome depend on what ran before)."""


def _too_deep(location: str) -> Finding:
    return TOML_SYNTAX.finding(
        location, f"arrays or tables nested more than {MAX_NESTING} levels deep", "flatten the nested arrays or tables"
    )


def _nested_past_limit(data: dict[str, Any]) -> str | None:
    """Dotted location of the first value nested deeper than MAX_NESTING (iterative: no recursion of ours)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_NESTING:
            return where
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            if isinstance(child, (dict, list)):
                loc = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key)
                stack.append((child, loc, depth + 1))
    return None


MAX_KEY_DEPTH = 100
"""tomllib is quadratic in the parts of one dotted key (100,000 parts: minutes), so deeper keys are refused first."""
_KEY_TOKENS = re.compile(
    r""" \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"   # multi-line basic string
       | '\'\'.*?'\'\'                  # multi-line literal string
       | "(?:[^"\\\n]|\\.)*"           # basic string
       | '[^'\n]*'                       # literal string
       | \#[^\n]*                        # comment
       | [=,{}\n]                        # ends a key
       | \.                              # one more key part
    """,
    re.DOTALL | re.VERBOSE,
)


def _deep_key_line(text: str) -> int | None:
    """Line of the first dot chain (outside strings and comments) longer than MAX_KEY_DEPTH parts, if any."""
    if text.count(".") < MAX_KEY_DEPTH:
        return None
    chain = 0
    for m in _KEY_TOKENS.finditer(text):
        if m.group() == ".":
            chain += 1
            if chain >= MAX_KEY_DEPTH:
                return text.count("\n", 0, m.start()) + 1
        elif m.group()[0] in "=,{}\n":
            chain = 0
    return None


def _syntax_finding(message: str, path: Path) -> Finding:
    """CC002 at `file:line:col` from tomllib's message."""
    pos = _TOML_POS.search(message)
    where = f"{path}:{pos.group(1)}:{pos.group(2)}" if pos else str(path)
    text = _TOML_POS.sub("", message).strip()
    return TOML_SYNTAX.finding(where, f"invalid TOML: {text}", "correct the syntax at that line and column")


def _validate_sections(data: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
    """Validate each top-level table on its own, so one bad section does not hide the others."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in SECTIONS:
            findings.append(_unknown_key((key,), list(SECTIONS)))
        elif key in ARRAY_SECTIONS:
            out[key] = _validate_array(key, value, findings)
        elif not isinstance(value, dict):
            findings.append(WRONG_SHAPE.finding(key, f"{key} must be a table", f"write it as [{key}]"))
        else:
            out[key] = _validate_table(SECTIONS[key], value, (key,), findings)
    if "contract" not in data:
        findings.append(
            MISSING_KEY.finding(
                "contract", "the [contract] table is required", 'add [contract] with name = "<model name>"'
            )
        )
    return out


def _validate_array(key: str, value: Any, findings: list[Finding]) -> list[Any]:
    """Validate `[[region]]` / `[[allow]]` entries one by one."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        findings.append(WRONG_SHAPE.finding(key, f"{key} must be an array of tables", f"write each entry as [[{key}]]"))
        return []
    if key == "region" and len(value) > MAX_REGIONS:
        findings.append(
            TOO_LARGE.finding(
                key,
                f"{len(value)} regions (limit {MAX_REGIONS})",
                "cover many modules with one glob region (model.layers.*)",
            )
        )
        return []
    if key == "region":
        return [_validate_region(item, i, findings) for i, item in enumerate(value)]
    return [_validate_table(SECTIONS[key], item, (key, i), findings) for i, item in enumerate(value)]


_FILL_NAME = "_"
"""A valid name the retry of a region with a bad or missing `name` validates with, before it gets its placeholder."""


def _validate_region(item: dict[str, Any], index: int, findings: list[Finding]) -> RegionSpec | None:
    """A region whose `name` is bad or missing is still checked, as `region[i]`, so its other findings show too."""
    spec = _validate_table(RegionSpec, item, ("region", index), findings, fill={"name": _FILL_NAME})
    if spec is None or item.get("name") == spec.name:
        return spec
    return spec.model_copy(update={"name": placeholder_name(index)})


def placeholder_name(index: int) -> str:
    """The name a region with an invalid `name` is checked under; never a valid name, so it cannot collide."""
    return f"region[{index}]"


def _validate_table(
    model: type[BaseModel],
    value: dict[str, Any],
    loc: tuple,
    findings: list[Finding],
    fill: dict[str, Any] | None = None,
) -> Any:
    """Validate one table; on errors, report them all, then retry without the bad keys (`fill` stands in for
    those of its keys that are bad or missing) to keep the rest."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    findings.extend(_error_finding(model, value, loc, err) for err in _dedupe(errors, value))
    bad = {err["loc"][0] for err in errors if err["loc"] and err["type"] != "missing"}
    kept = {k: v for k, v in value.items() if k not in bad}
    try:
        return model.model_validate({**(fill or {}), **kept})
    except ValidationError:
        return None


def _dedupe(errors: Sequence[Mapping[str, Any]], value: dict[str, Any]) -> list[dict]:
    """One error per key: union members report one error each, keep the first."""
    seen: set[tuple] = set()
    out = []
    for err in errors:
        key = _data_loc(err, value)
        if key not in seen:
            seen.add(key)
            out.append({**err, "loc": key})
    return out


def _data_loc(err: Mapping[str, Any], value: Any) -> tuple:
    """Cut pydantic's loc down to the keys that exist in the document (drops union member tags)."""
    out: list = []
    parts = err["loc"]
    for i, part in enumerate(parts):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        elif not (err["type"] == "missing" and i == len(parts) - 1):
            break
        out.append(part)
    return tuple(out)


def _error_finding(model: type[BaseModel], value: dict[str, Any], loc: tuple, err: dict) -> Finding:
    """Translate one pydantic error into CC001 / CC003 / CC004."""
    full = loc + tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        return _unknown_key(full, list(model.model_fields))
    where = format_loc(full)
    if err["type"] == "missing":
        return MISSING_KEY.finding(where, f"{full[-1]} is required", f"add {full[-1]} = ... to {format_loc(loc)}")
    got = _preview(err.get("input"))
    return INVALID_VALUE.finding(where, f"{_message(err)} (got {got})", _fix_for(err))


def _unknown_key(loc: tuple, known: list[str]) -> Finding:
    """CC001 with a "did you mean" when a known key is close."""
    key = str(loc[-1])
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    fix = f"did you mean {close[0]}?" if close else f"remove it; known keys here: {', '.join(sorted(known))}"
    where = format_loc(loc)
    return UNKNOWN_KEY.finding(where, f"unknown key {key!r}", fix)


def _message(err: dict) -> str:
    """Pydantic's message, lower-cased start, without trailing period."""
    msg = err["msg"].rstrip(".")
    msg = msg.removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


_FIXES = {
    "bool_type": "write {name} = true or false, without quotes",
    "int_type": "write {name} as an integer, without quotes",
    "float_type": "write {name} as a number, without quotes",
    "string_type": "write {name} as a quoted string",
    "list_type": "write {name} as an array, e.g. {example}",
    "dict_type": "write {name} as an inline table, e.g. {name} = {{ key = value }}",
    "greater_than_equal": "use a value >= {ge}",
    "greater_than": "use a value > {gt}",
    "less_than_equal": "use a value <= {le}",
    "literal_error": "use one of: {expected}",
    "string_pattern_mismatch": "use a value matching {pattern}",
    "string_too_short": "use a non-empty value",
    "string_too_long": "shorten {name} to at most {max_length} characters",
    "too_short": "list at least {min_length} item in {name}, e.g. {example}",
    "too_long": "list at most {max_length} items in {name}; cover the rest with another region",
}
"""Fix templates by pydantic error type; the schema's own validators carry their fix in the error (`ctx["fix"]`)."""

_FIELD_FIXES = {
    ("remote", "string_pattern_mismatch"): 'write remote = "redis://host:6379" (rediss:// for TLS)',
    (
        "code",
        "string_pattern_mismatch",
    ): 'write code = "CC301": CC and three digits (`compile-contract rules` lists them)',
}
"""Fixes for built-in constraints where the field gives a better example than the constraint does."""

_EXAMPLES = {"methods": '["forward"]', "dynamic_dims": "[1]"}
"""Example values by top-level field, for the array fixes."""


def _fix_for(err: dict) -> str:
    """A fix line: the validator's own, else one for the field, else one for the error type."""
    name = next((p for p in reversed(err["loc"]) if isinstance(p, str)), "the value")
    field_name = str(err["loc"][0]) if err["loc"] else name
    ctx = err.get("ctx") or {}
    if "fix" in ctx:
        return str(ctx["fix"]).replace("{name}", name)
    fix = _FIELD_FIXES.get((field_name, err["type"]))
    if fix:
        return fix
    template = _FIXES.get(err["type"])
    if template:
        return template.format(**{**ctx, "name": name, "example": _EXAMPLES.get(field_name, "[...]")})
    return f"correct {field_name} (`compile-contract explain CC003`; docs/reference/contract.md)"


def _preview(value: Any) -> str:
    """Short repr of a bad value (hostile inputs stay one short line)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def format_loc(loc: tuple) -> str:
    """('region', 2, 'mode') -> 'region[2].mode'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{_loc_key(part)}" if out else _loc_key(part))
    return out


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""TOML bare keys (a key containing a dot, such as the option `triton.cudagraphs`, is quoted)."""


def _loc_key(key: object) -> str:
    """A key as TOML writes it: bare when it can be, else quoted, escaped and cut (locations stay one short line)."""
    key = str(key)
    if _BARE_KEY.match(key):
        return key
    cut = key if len(key) <= 64 else key[:61] + "..."
    return '"' + "".join(ch if ch.isprintable() and ch not in '"\\' else json.dumps(ch)[1:-1] for ch in cut) + '"'


def _resolve_regions(sections: dict[str, Any], findings: list[Finding]) -> tuple[Region, ...]:
    """Merge `[defaults]` into each valid region; duplicate names are CC005."""
    defaults = sections.get("defaults") or Settings()
    regions: list[Region] = []
    seen: dict[str, int] = {}
    for i, spec in enumerate(sections.get("region") or []):
        if spec is None:
            continue
        if spec.name in seen:
            findings.append(
                DUPLICATE_REGION.finding(
                    f"region[{i}].name",
                    f"region name {spec.name!r} is already used by region[{seen[spec.name]}]",
                    "give each region a unique name (it is the metric label)",
                )
            )
            continue
        seen[spec.name] = i
        regions.append(resolve_region(i, spec, defaults))
    return tuple(regions)
