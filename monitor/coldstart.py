"""Cache lookups per region instance: the warm run's recording, and `cold_compile` events against the manifest.

Each compile's FX-graph / AOTAutograd lookups (key, Inductor's own key components, hit or miss) arrive through
`_inductor.add_lookup_listener` while it compiles and are taken at its end callback (Dynamo serializes compiles), then
attributed to the region instance the monitor resolved. The instance's n-th compile is compared with its n-th compile
in the manifest: a miss where the manifest recorded that compile is a `cold_compile`, explained by the components
whose hash differs (`compile_formats.manifest`, the same comparison the startup prediction uses).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from compile_formats import manifest as mf
from contract.binding.targets import Binding, Target
from monitor import _inductor

MAX_CHANGED = 10
"""Changed components listed per `cold_compile` event (a torch upgrade changes hundreds)."""
IDS = 4096
"""Compile ids remembered for the lazy backward compiles that follow them."""
PENDING = 4096
"""Lookups kept for the compile in progress (a DDP-split graph makes a few per bucket; more is not one compile)."""


class _Compile:
    """One compile of a region instance: its place in the instance's history and the lookups seen so far."""

    __slots__ = ("label", "ordinal", "record", "seen", "target")

    def __init__(self, target: Target, ordinal: int) -> None:
        self.target = target
        self.label = f"{target.path or '<root>'}.{target.method}"
        self.ordinal = ordinal
        self.record: dict[str, Any] | None = None
        self.seen = dict.fromkeys(mf.CACHES, 0)


class ColdStart:
    """Attributes cache lookups to compiles; records them (`warm`) and explains misses against the manifest."""

    def __init__(self, binding: Binding, *, say: Callable[..., None], on_cold: Callable[[str], None], record: bool):
        self._say, self._on_cold = say, on_cold
        self._lock = threading.Lock()
        self._pending: list[_inductor.Lookup] = []
        self._ordinals: dict[tuple[str, int], int] = {}
        self._by_id: OrderedDict[str, _Compile] = OrderedDict()
        self._env: list[mf.Change] | None = None
        self.recording: dict[str, dict[str, list[dict[str, Any]]]] | None = {} if record else None
        self.manifest, self.manifest_error = _load(binding)
        self.active = (self.manifest is not None or record) and _inductor.add_lookup_listener(self._on_lookup)
        if self.manifest is not None:  # read now: inside a compile, torch's config carries that compile's patches
            self._env = _environment(self.manifest)

    def stop(self) -> None:
        """Stop listening (idempotent)."""
        if self.active:
            _inductor.remove_lookup_listener(self._on_lookup)
            self.active = False

    def _on_lookup(self, lookup: _inductor.Lookup) -> None:
        with self._lock:
            if len(self._pending) < PENDING:
                self._pending.append(lookup)

    def take(self) -> list[_inductor.Lookup]:
        """The lookups since the previous take (those of the compile that just ended)."""
        if not self._pending:
            return []
        with self._lock:
            out, self._pending = self._pending, []
        return out

    def on_reset(self) -> None:
        """Dynamo forgot every compile: each instance's next compile is its first again."""
        self._ordinals.clear()
        self._by_id.clear()

    def preloaded(self, target: Target) -> None:
        """The instance's code came from a precompiled entry: every compile the manifest recorded for it is done, so
        its next Dynamo compile (a guard miss) is compared with nothing recorded."""
        if self.manifest is not None:
            label = f"{target.path or '<root>'}.{target.method}"
            done = sum(1 for _, lab, _ in self.manifest.compiles() if lab == label)
            self._ordinals[(target.region, id(target.module))] = done

    def on_compile(
        self, target: Target, compile_id: str, seconds: float, lookups: list[_inductor.Lookup], *, explain: bool = True
    ) -> None:
        """A Dynamo frame compile attributed to `target` (`explain=False`: its `cold_compile` was already said)."""
        if not self.active:
            return
        key = (target.region, id(target.module))
        ordinal = self._ordinals.get(key, 0)
        self._ordinals[key] = ordinal + 1
        entry = _Compile(target, ordinal)
        self._by_id[compile_id] = entry
        if len(self._by_id) > IDS:
            self._by_id.popitem(last=False)
        self._handle(entry, compile_id, seconds, lookups, "DYNAMO", explain)

    def on_aux(self, compile_id: str, trigger: str, seconds: float, lookups: list[_inductor.Lookup]) -> None:
        """A lazy backward (or CUDA-graph recording) of a compile seen before: part of that compile."""
        entry = self._by_id.get(compile_id) if self.active else None
        if entry is not None:
            self._handle(entry, compile_id, seconds, lookups, trigger)

    def _handle(
        self,
        entry: _Compile,
        cid: str,
        seconds: float,
        lookups: list[_inductor.Lookup],
        trigger: str,
        explain: bool = True,
    ) -> None:
        if self.recording is not None:
            self._record(entry, cid, seconds, lookups)
        if self.manifest is not None and explain:
            self._explain(entry, cid, seconds, lookups, trigger)

    # -- the warm run ---------------------------------------------------------------------------------------------
    def _record(self, entry: _Compile, cid: str, seconds: float, lookups: list[_inductor.Lookup]) -> None:
        if entry.record is None:
            entry.record = {"compile_id": cid, "seconds": 0.0, "cold_seconds": 0.0, "lookups": []}
            region = self.recording.setdefault(entry.target.region, {})  # type: ignore[union-attr]
            region.setdefault(entry.label, []).append(entry.record)
        saved = sum(lk.saved_s or 0.0 for lk in lookups if lk.cache == "fx_graph" and lk.state == "hit")
        entry.record["seconds"] = round(entry.record["seconds"] + seconds, 6)
        entry.record["cold_seconds"] = round(entry.record["cold_seconds"] + seconds + saved, 6)
        for lk in lookups:
            item: dict[str, Any] = {"cache": lk.cache, "key": lk.key, "state": lk.state}
            if lk.lines:
                item["_parsed"] = mf.parse_components(lk.lines)
            entry.record["lookups"].append(item)

    def recorded(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(region -> {label: [compile, ...]}, cache -> shared components) for the manifest, components split into
        the table most keys share and what each key has of its own."""
        regions = self.recording or {}
        shared: dict[str, Any] = {}
        for cache in mf.CACHES:
            items = [
                lk
                for inst in regions.values()
                for compiles in inst.values()
                for rec in compiles
                for lk in rec["lookups"]
                if lk["cache"] == cache and "_parsed" in lk
            ]
            table, own = mf.split_shared([lk.pop("_parsed") for lk in items])
            for lk, mine in zip(items, own, strict=True):
                lk["components"] = mine
            if table:
                shared[cache] = table
        return regions, shared

    # -- runtime: misses the manifest did not predict -------------------------------------------------------------
    def _explain(
        self, entry: _Compile, cid: str, seconds: float, lookups: list[_inductor.Lookup], trigger: str
    ) -> None:
        assert self.manifest is not None
        recorded = self.manifest.compile_record(entry.label, entry.ordinal)
        positions = []
        for lk in lookups:
            positions.append(entry.seen[lk.cache])
            entry.seen[lk.cache] += 1
        missed = [(lk, i) for lk, i in zip(lookups, positions, strict=True) if lk.state == "miss"]
        if recorded is None or not _cold(lookups):
            return
        causes: set[str] = set()
        changes: list[mf.Change] = []
        for lk, i in sorted(missed, key=lambda m: m[0].cache != "fx_graph"):  # FX first: it carries components
            cause, found = self._why(lk, _nth(recorded, lk.cache, i))
            causes.add(cause)
            if found is None:  # no components for this key: the environment's differences, unless FX named some
                found = [] if changes else list(self._env or ())
            changes += [c for c in found if c.component not in {x.component for x in changes}]
        self._on_cold(entry.target.region)
        self._say(
            "warning",
            "cold_compile",
            region=entry.target.region,
            module=entry.target.path or "<root>",
            method=entry.target.method,
            instance=entry.label,
            compile_id=cid,
            trigger=trigger,
            seconds=round(seconds, 3),
            recorded_seconds=round(mf.cold_seconds(recorded), 3),
            misses={c: sum(lk.cache == c for lk, _ in missed) for c in mf.CACHES},
            cause="key_changed" if "key_changed" in causes else sorted(causes)[0],
            changed=[c.text() for c in changes[:MAX_CHANGED]] + _more(len(changes)),
            cache_dir=os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
        )

    def _why(self, lookup: _inductor.Lookup, recorded: dict[str, Any] | None) -> tuple[str, list[mf.Change] | None]:
        """Why one lookup missed: its key differs (and which of Inductor's components: None when the key has none
        recorded, e.g. AOTAutograd on torch 2.13, which computes them only under DEBUG logging), or the same key is
        absent from the cache."""
        if recorded is None:
            return "not_recorded", []
        if recorded.get("key") and recorded.get("key") == lookup.key:
            return "entry_missing", []
        assert self.manifest is not None
        had = mf.recorded_components(self.manifest.shared(lookup.cache), recorded.get("components") or {})
        if lookup.lines and had:
            return "key_changed", mf.diff_components(had, mf.parse_components(lookup.lines))
        return "key_changed", None


def _environment(manifest: mf.Manifest) -> list[mf.Change]:
    """The environment fingerprint's differences from the manifest (the explanation when a key has no components)."""
    from compile_formats.fingerprint import full_environment

    current = full_environment(os.environ)
    current.pop("env", None)
    return mf.environment_changes(manifest.environment, current) or [
        mf.Change(component="components", old="recorded", new="unavailable for this key on this torch")
    ]


def _cold(lookups: list[_inductor.Lookup]) -> bool:
    """Inductor compiled code: an FX-graph lookup missed, or the AOTAutograd one did and no FX-graph lookup hit
    (an AOTAutograd miss whose graphs then hit the FX-graph cache only re-traces: seconds, not a cold compile)."""
    fx = [lk.state for lk in lookups if lk.cache == "fx_graph"]
    return "miss" in fx or ("hit" not in fx and any(lk.state == "miss" for lk in lookups))


def _nth(record: dict[str, Any], cache: str, n: int) -> dict[str, Any] | None:
    same = [lk for lk in record.get("lookups", []) if lk.get("cache") == cache]
    return same[n] if n < len(same) else None


def _more(n: int) -> list[str]:
    return [f"... {n - MAX_CHANGED} more"] if n > MAX_CHANGED else []


def _load(binding: Binding) -> tuple[mf.Manifest | None, str | None]:
    """The contract's warm manifest, when it names one that exists (the startup check reports the others)."""
    contract = binding.contract
    if not contract.cache.manifest:
        return None, None
    path = contract.resolve_path(contract.cache.manifest)
    try:
        return mf.read(path), None
    except mf.ManifestError as exc:
        return None, None if not path.exists() else f"{path}: {exc}"
