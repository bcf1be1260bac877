"""The warm manifest and the comparisons made against it: pure data and logic, no torch import.

`compile-contract warm` writes the manifest (JSON, `"version": 1`): the environment the cache keys depend on, and per
region instance the compiles it made with the FX-graph / AOTAutograd keys and Inductor's own per-component hashes
of each key (`FxGraphCachePickler.debug_lines()`: one `[hash] name: value` line per ingredient). The startup checks
(`check`, `doctor`, `enforce`) and the runtime monitor both compare against it through this module, so the
prediction and the explanation of a cold compile are one implementation. Field reference: docs/topics/warm-starts.md, "Warm manifest".
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSION = 1
"""Manifest format version; a reader refuses any other."""
CACHES = ("fx_graph", "aot_autograd")
"""The caches whose lookups the manifest records."""
PREVIEW = 160
"""Characters kept of a component's value (enough to name it, bounded for size)."""
MAX_BYTES = 64 << 20
"""A manifest larger than this is refused unread (a hand-written or corrupted file)."""


PRECOMPILE_KNOWN_BAD: dict[str, str] = {}
"""Torch minors (`"2.13"`) whose precompiled entries are never used, whatever a verification saw, with why: only for a
failure a verification run cannot see (it finds the rest itself). None today: the one such failure measured, a guard
miss after a load minting a global name the load installed (`AssertionError: Name '__builtins_dict___N' already
exists in scope` on 2.13 and 2.14, on whichever compile reaches that number), is recovered from instead
(`contract._caches.names_past`). docs/topics/warm-starts.md lists each torch's verdict."""


def precompile_known_bad(torch_version: str) -> str | None:
    """Why precompiled entries are never used with this torch (`2.13.0+cpu` -> its minor's entry), else None."""
    minor = ".".join(torch_version.split("+", 1)[0].split(".")[:2])
    return PRECOMPILE_KNOWN_BAD.get(minor)


class ManifestError(Exception):
    """The manifest cannot be used: one line saying why."""


@dataclass(frozen=True, kw_only=True)
class Change:
    """One compile-relevant component whose value differs from the manifest's."""

    component: str
    """What changed: `torch`, `inductor_config[max_autotune]`, `env TORCHINDUCTOR_MAX_AUTOTUNE`, `gm`, ..."""
    old: str
    """Value recorded in the manifest (`unset` when it was absent)."""
    new: str
    """Value now."""
    certain: bool = True
    """True when the component enters the cache keys (a change means a miss); False when it only may."""

    def text(self) -> str:
        """`component old -> new`, the form logs and findings show."""
        return f"{self.component} {self.old} -> {self.new}"


@dataclass(frozen=True, kw_only=True)
class Cost:
    """What compiling cold costs, from the manifest's recorded compiles."""

    seconds: float
    """Cold compile seconds."""
    instances: int
    """Region instances that compile."""
    compiles: int
    """Compiles."""

    def text(self) -> str:
        """`about 412 s of compiling across 80 region instances`."""
        s = "" if self.instances == 1 else "s"
        return f"about {_seconds(self.seconds)} of compiling across {self.instances} region instance{s}"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


class Manifest:
    """A validated manifest (read-only view over its JSON data, with an index by region instance)."""

    def __init__(self, data: dict[str, Any], path: Path | str = "<memory>") -> None:
        _validate(data)
        self.data = data
        self.path = Path(path)
        self._index = {
            label: compiles for r in data["regions"].values() for label, compiles in r.get("instances", {}).items()
        }

    @property
    def environment(self) -> dict[str, Any]:
        """The environment fingerprint at warm time (absent keys: not recorded)."""
        return self.data.get("environment") or {}

    @property
    def cache(self) -> dict[str, Any]:
        """Cache dir and switches at warm time."""
        return self.data.get("cache") or {}

    @property
    def pgo(self) -> dict[str, Any]:
        """Profile-guided dynamic-shape state: job id, state file (relative to the cache dir), present."""
        return self.data.get("pgo") or {}

    @property
    def artifacts(self) -> dict[str, Any] | None:
        """What `warm` saved as portable artifacts (path, bytes, keys), or None."""
        return self.data.get("artifacts")

    @property
    def kernels(self) -> dict[str, Any] | None:
        """The kernel pack `warm` wrote on CPU (path, bytes, sha256, files, host), or None."""
        return self.data.get("kernels")

    @property
    def precompile(self) -> dict[str, Any] | None:
        """The warm run's precompile verdict (`verified`, `torch`, `reason`, ...), None when it made none."""
        return self.data.get("precompile")

    def precompile_verified(self, torch_version: str) -> bool:
        """The warm run verified its precompiled bundle with exactly this torch (`enforce` switches precompile on)."""
        verdict = self.precompile
        same = bool(verdict and verdict.get("verified") is True and verdict.get("torch") == torch_version)
        return same and precompile_known_bad(torch_version) is None

    @property
    def regions(self) -> dict[str, Any]:
        """Region name -> `{source, settings, instances: {label: [compile, ...]}}`."""
        return self.data["regions"]

    def shared(self, cache: str) -> dict[str, list[str]]:
        """The components most of the cache's keys share: name -> [hash, preview]."""
        return (self.data.get("components") or {}).get(cache) or {}

    def compile_record(self, label: str, ordinal: int) -> dict[str, Any] | None:
        """The `ordinal`-th compile (0-based) the instance made in the warm run, if any."""
        compiles = self._index.get(label)
        return compiles[ordinal] if compiles is not None and 0 <= ordinal < len(compiles) else None

    def compiles(self, regions: Collection[str] | None = None) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(region, instance label, compile record) of every recorded compile (of `regions` only, if given)."""
        for name, region in self.regions.items():
            if regions is None or name in regions:
                for label, compiles in region.get("instances", {}).items():
                    for record in compiles:
                        yield name, label, record

    def cost(self, regions: Collection[str] | None = None, only: Collection[int] | None = None) -> Cost:
        """Cold cost of every recorded compile (of `regions`; of the compiles whose `id()` is in `only`)."""
        seconds, labels, n = 0.0, set(), 0
        for _, label, record in self.compiles(regions):
            if only is None or id(record) in only:
                seconds += cold_seconds(record)
                labels.add(label)
                n += 1
        return Cost(seconds=seconds, instances=len(labels), compiles=n)

    def keys(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(cache, key, compile record) of every recorded lookup that has a key."""
        for _, _, record in self.compiles():
            for lookup in record.get("lookups", []):
                if lookup.get("key"):
                    yield lookup["cache"], lookup["key"], record


def cold_seconds(record: Mapping[str, Any]) -> float:
    """A compile's cold cost: its recorded cold seconds, else its measured seconds."""
    value = record.get("cold_seconds", record.get("seconds", 0.0))
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


# -- reading and writing ------------------------------------------------------------------------------------------


def read(path: str | Path) -> Manifest:
    """Read and validate a manifest; ManifestError (one line) when it is missing, unreadable or invalid."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ManifestError("no such file") from None
    except OSError as exc:
        raise ManifestError(f"cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise ManifestError(f"larger than {MAX_BYTES >> 20} MiB")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ManifestError(f"not JSON ({str(exc)[:120]})") from None
    return Manifest(data, path)


def write(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write a manifest atomically (`write_atomic`)."""
    write_atomic(Path(path), json.dumps(data, indent=1, allow_nan=False).encode("utf-8"))


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file atomically (a temp file in the same dir, fsynced, renamed over the old one): a reader on another
    rank or host sees the old bytes or the new, never half; the manifest, the artifacts and the kernel pack use it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # shipped to other hosts and users: readable like any file written without mkstemp
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _validate(data: Any) -> None:
    """The structure readers rely on; anything else is a ManifestError naming the JSON path."""
    if not isinstance(data, dict):
        raise ManifestError("not a JSON object")
    if data.get("version") != VERSION:
        raise ManifestError(f"format version {data.get('version')!r}, this reader knows {VERSION}")
    for key in ("environment", "cache", "pgo", "components"):
        _expect(data.get(key, {}), dict, key)
    if data.get("precompile") is not None:
        _expect(data["precompile"], dict, "precompile")
        if not isinstance(data["precompile"].get("verified"), bool):
            raise ManifestError("precompile.verified: expected true or false")
    if data.get("kernels") is not None:
        _expect(data["kernels"], dict, "kernels")
        _expect(data["kernels"].get("files"), dict, "kernels.files")
    _expect(data.get("regions"), dict, "regions")
    for name, region in data["regions"].items():
        _expect(region, dict, f"regions.{name}")
        _expect(region.get("instances", {}), dict, f"regions.{name}.instances")
        for label, compiles in region.get("instances", {}).items():
            _expect(compiles, list, f"regions.{name}.instances.{label}")
            for i, record in enumerate(compiles):
                _record(record, f"regions.{name}.instances.{label}[{i}]")


def _record(record: Any, where: str) -> None:
    _expect(record, dict, where)
    _expect(record.get("lookups", []), list, f"{where}.lookups")
    for j, lookup in enumerate(record.get("lookups", [])):
        _expect(lookup, dict, f"{where}.lookups[{j}]")
        if lookup.get("cache") not in CACHES or not isinstance(lookup.get("key") or "", str):
            raise ManifestError(f"{where}.lookups[{j}]: needs cache in {CACHES} and a string key")
        _expect(lookup.get("components", {}), dict, f"{where}.lookups[{j}].components")


def _expect(value: Any, kind: type, where: str) -> None:
    if not isinstance(value, kind):
        raise ManifestError(f"{where}: expected a JSON {'object' if kind is dict else 'array'}")


# -- Inductor's cache-key components ------------------------------------------------------------------------------

_LINE = re.compile(r"^\[([A-Za-z0-9]+)\] ([^:\n]+?): ?(.*)$", re.DOTALL)
Components = dict[str, tuple[str, str]]
"""Component name -> (hash, value preview), parsed from Inductor's debug lines."""


def parse_components(lines: Collection[str]) -> Components:
    """Inductor's `[hash] name: value` lines -> name -> (hash, preview); lines of another shape are skipped."""
    out: Components = {}
    for line in lines:
        m = _LINE.match(line) if isinstance(line, str) else None
        if m:
            name = m.group(2)
            out[name] = (m.group(1), "" if name == "gm" else preview(m.group(3)))
    return out


def preview(value: str) -> str:
    """A value's first line, printable characters only, bounded (`<binary>` for bytes torch hashes)."""
    first = value.split("\n", 1)[0].strip()
    if first and not first.isprintable():
        return "<binary>"
    return first if len(first) <= PREVIEW else first[: PREVIEW - 1] + "…"


def split_shared(graphs: list[Components]) -> tuple[dict[str, list[str]], list[dict[str, list[str]]]]:
    """The (hash, preview) most graphs have per name (stored once), and per graph only what differs from it."""
    votes: dict[str, Counter[tuple[str, str]]] = {}
    for comps in graphs:
        for name, value in comps.items():
            votes.setdefault(name, Counter())[value] += 1
    shared = {name: list(c.most_common(1)[0][0]) for name, c in votes.items()}
    own = [
        {n: list(v) for n, v in comps.items() if tuple(shared[n]) != v}
        | {n: ["", ""] for n in shared if n not in comps}
        for comps in graphs
    ]
    return shared, own


def recorded_components(shared: Mapping[str, list[str]], own: Mapping[str, list[str]]) -> Components:
    """A recorded key's full components: the shared table overlaid with its own (an empty hash: absent)."""
    merged = {n: (v[0], v[1]) for n, v in shared.items() if isinstance(v, list) and len(v) == 2}
    for n, v in own.items():
        if isinstance(v, list) and len(v) == 2:
            merged[n] = (v[0], v[1])
    return {n: v for n, v in merged.items() if v[0]}


def diff_components(recorded: Components, current: Components) -> list[Change]:
    """Components whose hash differs between a recorded key and a new one (Inductor's own hashes)."""
    out = []
    for name in [*current, *(n for n in recorded if n not in current)]:
        old, new = recorded.get(name), current.get(name)
        if old is None or new is None or old[0] != new[0]:
            out.append(Change(component=name, old=_shown(old), new=_shown(new)))
    return out


def _shown(value: tuple[str, str] | None) -> str:
    if value is None:
        return "absent"
    return value[1] if value[1] and value[1] != "<binary>" else f"hash {value[0][:10]}"


# -- the environment the keys depend on ---------------------------------------------------------------------------

SCALARS: tuple[tuple[str, str, bool], ...] = (
    ("torch", "torch", True),
    ("torch_git", "torch (git revision)", True),
    ("triton", "triton", True),
    ("cuda", "CUDA", True),
    ("gpu", "GPU", True),
    ("gpu_capability", "GPU capability", True),
    ("cache_key_tag", "cache_key_tag (TORCH_COMPILE_CACHE_KEY_TAG)", True),
    ("cpu_threads", "CPU threads (Inductor's cpp_runtime_thread_count)", True),
    ("python", "Python", False),
)
"""(environment key, display name, enters the keys for certain) of the scalar components, in report order."""
CONFIG_SECTIONS: tuple[tuple[str, str, bool], ...] = (
    ("inductor", "inductor_config", True),
    ("functorch", "functorch_config", True),
    ("dynamo", "dynamo_config", False),
)
"""(section, display prefix, certain): Inductor's portable config is in every FX-graph key and functorch's saved
config in every AOTAutograd key; Dynamo's config only shapes the traced graph, so it may or may not change them."""


def environment_changes(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[Change]:
    """Every compile-relevant component of `current` that differs from `recorded` (keys absent from either are not
    compared). Config keys are left out when torch itself changed: a new torch brings new config keys anyway."""
    out: list[Change] = []
    for key, label, certain in SCALARS:
        if key in recorded and key in current and recorded[key] != current[key]:
            if (key == "cpu_threads" and not recorded.get("cpu_threads_in_key")) or (
                key == "torch_git" and any(c.component == "torch" for c in out)
            ):
                continue
            out.append(Change(component=label, old=_value(recorded[key]), new=_value(current[key]), certain=certain))
    if not any(c.component == "torch" for c in out):
        out += _config_changes(recorded.get("config"), current.get("config"))
    out += _env_changes(recorded.get("env"), current.get("env"))
    return out


def _config_changes(recorded: Any, current: Any) -> list[Change]:
    if not isinstance(recorded, dict) or not isinstance(current, dict):
        return []
    out = []
    for section, prefix, certain in CONFIG_SECTIONS:
        old, new = recorded.get(section), current.get(section)
        if isinstance(old, dict) and isinstance(new, dict):
            for key in sorted(set(old) | set(new)):
                if old.get(key, _ABSENT) != new.get(key, _ABSENT):
                    out.append(
                        Change(
                            component=f"{prefix}[{key}]",
                            old=_value(old.get(key, _ABSENT)),
                            new=_value(new.get(key, _ABSENT)),
                            certain=certain,
                        )
                    )
    return out


def _env_changes(recorded: Any, current: Any) -> list[Change]:
    """Compile-relevant environment variables set, unset or changed (only when both sides recorded them)."""
    if not isinstance(recorded, dict) or not isinstance(current, dict):
        return []
    out = []
    for var in sorted(set(recorded) | set(current)):
        if recorded.get(var) != current.get(var):
            old, new = recorded.get(var), current.get(var)
            out.append(
                Change(
                    component=f"env {var}",
                    old="unset" if old is None else _value(old),
                    new="unset" if new is None else _value(new),
                    certain=False,
                )
            )
    return out


_ABSENT = object()


def _value(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text if text != "" else '""'
    return text if len(text) <= 80 else text[:79] + "…"
