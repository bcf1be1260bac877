"""The contract document's schema: one pydantic model per TOML table, unknown keys are errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

MAX_REGIONS = 512
"""A contract is written by hand: more regions than this is a generated mistake and would blow up metric cardinality."""

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IMPORT_REF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_REGION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
_GLOB_SEGMENT = re.compile(r"^(\*\*|[A-Za-z0-9_*?\[\]!-]+)$")


def _custom(kind: str, message: str, fix: str) -> PydanticCustomError:
    """A validation error carrying its own one-line fix (`{name}` is replaced by the key it is reported at)."""
    return PydanticCustomError(kind, message, {"fix": fix})


def _import_ref(value: str) -> str:
    if not _IMPORT_REF.match(value):
        raise _custom(
            "import_ref",
            'must look like "package.module:attribute"',
            'write {name} = "package.module:attribute" (dotted import path, one colon, no spaces), '
            'e.g. "my_pkg.models:build"',
        )
    return value


def _torch_spec(value: str) -> str:
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        raise _custom(
            "version_spec", 'must be a version requirement such as ">=2.11" or ">=2.11,<2.14"', _torch_spec_fix(value)
        ) from None
    return value


def _torch_spec_fix(value: str) -> str:
    """Suggest `>=VERSION` for a bare version (the usual mistake), else the syntax."""
    try:
        Version(value.strip())
    except InvalidVersion:
        return 'write {name} = ">=2.11": an operator before each version, commas between them (">=2.11,<2.14")'
    return f'write {{name}} = ">={value.strip()}" (or "=={value.strip()}.*" to pin that release)'


def _region_name(value: str) -> str:
    if not _REGION_NAME.match(value):
        raise _custom(
            "region_name",
            "must start with a letter or _, then up to 63 of letters, digits, _ . : -",
            f'write {{name}} = "{_as_region_name(value)}" (a letter or _, then letters, digits, _ . : -; at most 64)',
        )
    return value


def _as_region_name(value: str) -> str:
    """The closest valid region name: other characters become `_`, a leading digit gets a `_` prefix."""
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", value.strip())
    name = name if re.match(r"^[A-Za-z_]", name) else "_" + name
    return name[:64]


def _module_glob(value: str) -> str:
    if value == "":
        return value
    if not all(_GLOB_SEGMENT.match(seg) for seg in value.split(".")):
        raise _custom(
            "module_glob",
            'must be dotted module names; "*" matches one segment, "**" several, "" the root',
            f'write {{name}} = {_as_module_glob(value)} (names from model.named_modules(); "*" one '
            f'segment, "**" several, "" the root)',
        )
    return value


def _as_module_glob(value: str) -> str:
    """The glob with `/`, spaces and empty segments dropped, when that makes it valid; else an example."""
    segments = [seg for seg in re.split(r"[./\s]+", value.strip()) if seg]
    if segments and all(_GLOB_SEGMENT.match(seg) for seg in segments):
        return '"' + ".".join(segments) + '"'
    return '"layers.*"'


def _identifier(value: str) -> str:
    if not _IDENT.match(value):
        raise _custom(
            "identifier",
            "must be a Python identifier",
            f"write a Python identifier as the method or argument is spelled in the code, e.g. "
            f'"{_as_identifier(value)}"',
        )
    return value


def _as_identifier(value: str) -> str:
    """The closest identifier: other characters become `_`, a leading digit gets a `_` prefix."""
    name = re.sub(r"\W", "_", value.strip(), flags=re.ASCII) or "forward"
    return name if not name[0].isdigit() else "_" + name


_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


def _sha256(value: str) -> str:
    if not _SHA256.match(value):
        raise _custom(
            "sha256",
            "must be a SHA-256 digest: 64 hexadecimal digits",
            'write {name} = "<64 hex digits>" as `compile-contract warm` prints it '
            "(or `sha256sum FILE`; `compile-contract warm CONTRACT --pin` writes it)",
        )
    return value.lower()


def _dynamic(value: Any) -> bool | str:
    if value is True or value is False or value == "auto":
        return value
    raise _custom("dynamic_value", 'must be true, false or "auto"', _dynamic_fix(value))


def _dynamic_fix(value: Any) -> str:
    """`true`/`false` written as strings is the usual mistake: say to drop the quotes."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return f"write {{name}} = {value.strip().lower()}, without quotes"
    return 'write {name} = true (every shape dynamic), false (static) or "auto" (dynamic after a shape change)'


ImportRef = Annotated[str, AfterValidator(_import_ref)]
TorchSpec = Annotated[str, AfterValidator(_torch_spec)]
RegionName = Annotated[str, AfterValidator(_region_name)]
ModuleGlob = Annotated[str, AfterValidator(_module_glob)]
Identifier = Annotated[str, AfterValidator(_identifier)]
Dynamic = Annotated[Any, AfterValidator(_dynamic)]
Sha256 = Annotated[str, AfterValidator(_sha256)]
NonNegInt = Annotated[int, Field(ge=0)]
OnBreach = Literal["alert", "eager", "fail"]
CompiledBy = Literal["contract", "engine"]
VerifyAt = Literal["start", "first_compile"]


class _Table(BaseModel):
    """Base for every table: frozen, strict types (TOML already typed them), unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True)


class ContractMeta(_Table):
    """`[contract]`: identity of the document and how to build the model."""

    name: Annotated[str, Field(min_length=1, max_length=128)]
    """Contract name; the `contract` label of `torch_compile_contract_info`."""
    model: ImportRef | None = None
    """`"pkg.module:attr"`: a callable returning the `nn.Module`, so `compile-contract check FILE` needs no flags."""
    step: ImportRef | None = None
    """`"pkg.module:attr"`: `step(model, i)` runs one iteration of the loop; enables the dynamic probe."""
    torch: TorchSpec | None = None
    """Version requirement on the installed torch, e.g. `">=2.11"`."""
    description: str = ""
    """Free text."""


class Settings(_Table):
    """Compile settings and budgets of a region; `[defaults]` holds the same keys, inherited by every region."""

    methods: Annotated[list[Identifier], Field(min_length=1, max_length=32)] | None = None
    """Methods compiled on each matched module, e.g. `["forward", "decode_step"]`."""
    enabled: bool | None = None
    """`false` keeps the region eager (`torch.compiler.disable`, also inside a compiled parent); needs `reason`."""
    backend: Annotated[str, Field(min_length=1)] | None = None
    """`torch.compile` backend (custom backends included)."""
    mode: Annotated[str, Field(min_length=1)] | None = None
    """Inductor mode: `"default"`, `"reduce-overhead"`, `"max-autotune"`, `"max-autotune-no-cudagraphs"`; unset:
    torch's default."""
    fullgraph: bool | None = None
    """Graph breaks are compile errors."""
    dynamic: Dynamic | None = None
    """`true`, `false`, or `"auto"` (torch's `dynamic=None`: automatic dynamic after a shape change)."""
    options: dict[str, Any] | None = None
    """Inductor options table (`torch.compile(options=...)`); quote names with dots:
    `{ "triton.cudagraphs" = false }`."""
    dynamic_dims: dict[Identifier, list[NonNegInt]] | None = None
    """Argument name -> dims marked dynamic before each call reaches Dynamo, e.g. `{ input_ids = [1] }`."""
    recompile_budget: NonNegInt | None = None
    """Recompiles each region instance may make after warm-up."""
    graph_break_budget: NonNegInt | None = None
    """Distinct graph-break sites each region instance may have (`fullgraph` implies 0)."""
    on_breach: OnBreach | None = None
    """On a budget breach: `"alert"` (structured error event + metric), `"eager"` (this region alone falls back to
    its original callables), `"fail"` (the next call of the region raises `RecompileBudgetExceeded`)."""
    warmup_compiles: Annotated[int, Field(ge=1)] | None = None
    """Compiles per region instance that count as warm-up when the engine never calls `mark_warm()`."""
    recompile_limit: Annotated[int, Field(ge=1)] | None = None
    """Per-region Dynamo recompile limit (`torch.compile(recompile_limit=)`, torch >= 2.12); unset: torch's global
    limit (8)."""
    compile_seconds_budget: Annotated[float, Field(gt=0)] | None = None
    """Seconds one compile of a region instance may take (its first compile, or a recompile counted after
    warm-up); longer is a breach handled by `on_breach`; unset: no budget. A region kept eager (`enabled = false`)
    never compiles, so a budget there never applies (not a finding, like the other budgets)."""
    compiled_by: CompiledBy | None = None
    """Who compiles the region: `"contract"` (`enforce` compiles it with these settings) or `"engine"` (the engine
    compiles it; `enforce` compiles nothing and verifies the engine used these settings, CC901-CC905)."""
    verify_at: VerifyAt | None = None
    """When an `"engine"` region is verified: `"start"` (`enforce` finds the engine's compile on every bound module)
    or `"first_compile"` (engines that compile lazily, such as `generate()`: the monitor checks the settings at
    each instance's first compile, or from the engine's compile object when its first call fired none; a mismatch is
    a breach handled by `on_breach`)."""


class RegionSpec(Settings):
    """`[[region]]`: a glob of submodules, the methods compiled on them, and their settings."""

    name: RegionName
    """Unique region name; the `region` metric label. Letters, digits, `_ . : -`, up to 64."""
    module: ModuleGlob
    """Glob over `model.named_modules()` names: `*` matches one dotted segment (`layers.*` is each layer, not its
    children), `**` spans several, `""` is the root model."""
    reason: str | None = None
    """Why the region is kept eager; required with `enabled = false`."""


class CacheSpec(_Table):
    """`[cache]`: the Inductor cache discipline checked before start."""

    dir: Annotated[str, Field(min_length=1)] | None = None
    """Inductor cache directory; relative paths resolve against the contract file; unset: the
    `TORCHINDUCTOR_CACHE_DIR` torch uses."""
    min_free_gib: Annotated[float, Field(ge=0)] = 1.0
    """Free space required on the cache filesystem, in GiB."""
    min_free_inodes: NonNegInt = 10_000
    """Free inodes required on the cache filesystem (Inductor writes many small files)."""
    fx_graph_cache: bool = False
    """Require the FX graph cache to be enabled."""
    autograd_cache: bool = False
    """Require the AOTAutograd cache to be enabled."""
    remote: Annotated[str, Field(pattern=r"^rediss?://")] | None = None
    """Remote cache URL (`redis://host:port`, `rediss://` for TLS); must answer `PING` at start."""
    require_persistent: bool = False
    """Refuse tmpfs and the default `/tmp/torchinductor_<user>` cache dir."""
    manifest: Annotated[str, Field(min_length=1)] | None = None
    """Warm manifest (JSON, relative to the contract file): `compile-contract warm` writes it; `check`, `doctor`,
    `enforce` and the monitor compare against it (CC7xx, `cold_compile`) and predict a cold start."""
    artifacts: Annotated[str, Field(min_length=1)] | None = None
    """PyTorch's portable cache artifacts (relative to the contract file): `warm` saves them, `enforce` loads them
    before anything compiles, so a host with an empty cache starts warm (CC707 when that fails). They hold compiled code the engine runs:
    the file must be this user's (or root's) and writable by nobody else (CC211)."""
    artifacts_sha256: Sha256 | None = None
    """SHA-256 of the `artifacts` file as `warm` saved it (`warm --pin` writes it here): `enforce` refuses any
    other file (CC212) before torch reads a byte; unset, `--strict` reports it (CC213)."""
    require_warm: bool = False
    """A certain cold-start prediction (CC701–CC705, CC707) is an error, not a warning (engines that must not start
    cold)."""


class MonitorSpec(_Table):
    """`[monitor]`: where the runtime monitor exports its metrics."""

    addr: str = "127.0.0.1"
    """Address the metrics server binds; loopback unless told otherwise."""
    port: Annotated[int, Field(ge=0, le=65535)] | None = None
    """Base port (each torchrun rank serves on `port + LOCAL_RANK`); `0` picks a free port; unset: no server."""
    tls_cert: str | None = None
    """PEM certificate for HTTPS (relative to the contract file)."""
    tls_key: str | None = None
    """PEM private key for HTTPS (relative to the contract file)."""
    snapshot_path: str | None = None
    """Textfile-collector file written on exit (`{rank}` is replaced by the rank)."""
    events_path: str | None = None
    """Per-rank JSON-lines file every monitor event is appended to, for `compile-contract report`; `{rank}` is
    replaced by the rank, relative paths resolve against the contract file."""
    pushgateway: str | None = None
    """Pushgateway URL the final snapshot is pushed to on exit."""
    push_timeout_s: Annotated[float, Field(gt=0, le=60)] = 2.0
    """Timeout of that push, in seconds."""
    log_format: Literal["auto", "json", "console"] = "auto"
    """Log renderer: `auto` is `json` when not on a TTY and `console` on a TTY; or forced."""
    unclaimed_compile_budget: NonNegInt | None = None
    """Dynamo compiles no region claims (an engine's whole-model compile, a compiled loss or sampler) the process may
    make; one more is a breach handled by `unclaimed_on_breach`; unset: counted, no budget."""
    unclaimed_on_breach: Literal["alert", "fail"] = "alert"
    """Action when `unclaimed_compile_budget` is exceeded: `"alert"` (log and metric) or `"fail"` (the next unclaimed
    compile raises `monitor.RecompileBudgetExceeded` in the thread that compiles, which Dynamo re-raises as
    `InternalTorchDynamoError` with the breach as its `__context__`: `monitor.breach_of(exc)` finds it)."""


class ProbeSpec(_Table):
    """`[probe]`: the dynamic probe run at startup when a `step` is named."""

    enabled: bool = True
    """Run the dynamic probe when a `step` is named."""
    steps: Annotated[int, Field(ge=2, le=1000)] = 8
    """Iterations of `step(model, i)` (CC406 needs at least one step after a region's last recompile)."""
    backend: Annotated[str, Field(min_length=1)] = "eager"
    """Cheap backend the probe compiles with."""
    model: ImportRef | None = None
    """`"pkg.module:attr"`, a callable returning a small twin of the model (the same classes, fewer and narrower
    layers) that the probe runs the step on, while every other check reads the real model (which `check` then builds
    on the meta device: a 70B model needs no memory); the regions bind to both (docs/topics/twin-probe.md)."""


class DistributedSpec(_Table):
    """`[distributed]`: how the ranks of a job agree on one startup verdict."""

    enabled: bool = True
    """Exchange findings with the other ranks when torch.distributed is initialized (or `enforce` gets a group)."""
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 30.0
    """How long the ranks wait for each other's reports (covers the startup skew between ranks); a rank still
    missing then is a finding (CC801), and every rank exits within about twice this."""
    per_rank: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=64)] = Field(
        default_factory=list
    )
    """Components allowed to differ between ranks (globs over the names CC802-CC807 report: `cache.dir`, `env.X`,
    `config.inductor.X`, `version.X`, `region.NAME`), e.g. `["env.TORCHINDUCTOR_CACHE_DIR", "cache.dir"]` for a
    per-node cache directory."""


class AllowSpec(_Table):
    """`[[allow]]`: silence one finding, with a reason."""

    code: Annotated[str, Field(pattern=r"^CC\d{3}$")]
    """Rule code to silence, e.g. `"CC504"`."""
    where: Annotated[str, Field(min_length=1)]
    """Location the finding must have: exact, or a `*`/`[...]` glob; it also matches a location it is a path suffix
    of at a `/` boundary."""
    reason: Annotated[str, Field(min_length=1)]
    """Why this finding is acceptable (mandatory)."""


SECTIONS: dict[str, type[_Table]] = {
    "contract": ContractMeta,
    "defaults": Settings,
    "region": RegionSpec,
    "cache": CacheSpec,
    "monitor": MonitorSpec,
    "probe": ProbeSpec,
    "distributed": DistributedSpec,
    "allow": AllowSpec,
}
"""Top-level tables; `region` and `allow` are arrays of tables."""
ARRAY_SECTIONS = frozenset({"region", "allow"})

REGION_DEFAULTS: dict[str, Any] = {
    "methods": ("forward",),
    "enabled": True,
    "backend": "inductor",
    "mode": None,
    "fullgraph": False,
    "dynamic": "auto",
    "options": {},
    "dynamic_dims": {},
    "recompile_budget": 0,
    "graph_break_budget": 0,
    "on_breach": "alert",
    "warmup_compiles": 1,
    "recompile_limit": None,
    "compile_seconds_budget": None,
    "compiled_by": "contract",
    "verify_at": "start",
}
"""Effective value of each setting when neither the region nor `[defaults]` sets it."""


@dataclass(frozen=True, kw_only=True)
class Region:
    """A region with `[defaults]` merged in: what the checker validates and the binder applies."""

    index: int
    """Position in the document, for locations (`region[index].key`)."""
    name: str
    """Unique name, the metric label."""
    module: str
    """Module glob."""
    methods: tuple[str, ...]
    """Methods compiled on each matched module."""
    enabled: bool
    """False: kept eager."""
    reason: str | None
    """Why kept eager."""
    backend: str
    """Backend name."""
    mode: str | None
    """Inductor mode."""
    fullgraph: bool
    """No graph breaks allowed at compile time."""
    dynamic: bool | str
    """True, False or "auto"."""
    options: dict[str, Any]
    """Inductor options."""
    dynamic_dims: dict[str, tuple[int, ...]]
    """Argument name -> dims marked dynamic."""
    recompile_budget: int
    """Recompiles allowed per instance after warm-up."""
    graph_break_budget: int
    """Distinct graph-break sites each region instance may have."""
    on_breach: str
    """alert, eager or fail."""
    warmup_compiles: int
    """Compiles per instance counted as warm-up without `mark_warm()`."""
    recompile_limit: int | None
    """Per-region Dynamo recompile limit, or None for torch's global one."""
    compile_seconds_budget: float | None = None
    """Seconds one counted compile of an instance may take, or None (no budget)."""
    compiled_by: str = "contract"
    """`contract` (enforce compiles it) or `engine` (enforce verifies the engine's compile)."""
    verify_at: str = "start"
    """`start` or `first_compile`: when an engine region's settings are verified."""

    @property
    def engine(self) -> bool:
        """The engine compiles this region; the contract only verifies and monitors it."""
        return self.compiled_by == "engine"

    def loc(self, key: str = "") -> str:
        """Contract location of one of this region's keys."""
        return f"region[{self.index}].{key}" if key else f"region[{self.index}]"

    def compile_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `torch.compile` / `nn.Module.compile` (options copied: torch pops from it)."""
        kwargs: dict[str, Any] = {
            "backend": self.backend,
            "fullgraph": self.fullgraph,
            "dynamic": None if self.dynamic == "auto" else self.dynamic,
        }
        if self.mode is not None:
            kwargs["mode"] = self.mode
        if self.options:
            kwargs["options"] = dict(self.options)
        if self.recompile_limit is not None:
            kwargs["recompile_limit"] = self.recompile_limit
        return kwargs


def resolve_region(index: int, spec: RegionSpec, defaults: Settings) -> Region:
    """Merge a region with `[defaults]` and the built-in defaults."""
    own = spec.model_dump(exclude_unset=True)
    inherited = defaults.model_dump(exclude_unset=True)
    merged = {**REGION_DEFAULTS, **inherited, **own}
    return Region(
        index=index,
        name=spec.name,
        module=spec.module,
        methods=tuple(merged["methods"]),
        enabled=merged["enabled"],
        reason=spec.reason,
        backend=merged["backend"],
        mode=merged["mode"],
        fullgraph=merged["fullgraph"],
        dynamic=merged["dynamic"],
        options=dict(merged["options"]),
        dynamic_dims={k: tuple(v) for k, v in merged["dynamic_dims"].items()},
        recompile_budget=merged["recompile_budget"],
        graph_break_budget=merged["graph_break_budget"],
        on_breach=merged["on_breach"],
        warmup_compiles=merged["warmup_compiles"],
        recompile_limit=merged["recompile_limit"],
        compile_seconds_budget=merged["compile_seconds_budget"],
        compiled_by=merged["compiled_by"],
        verify_at=merged["verify_at"],
    )
