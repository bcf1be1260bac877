"""The verdict on the step's writes (CC310): state the compiled regions read and the step changes between calls.
Each write the loop walker recorded is judged against where the hot path reads it, replaying the step's compiled
calls to see which values each call meets: a certain storm past the region's budget is an error, a change that may
settle (a schedule, a flag set once, a float) a warning."""

from __future__ import annotations

import functools
import types
from collections import defaultdict
from typing import Any

import torch
from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.conditions import is_scalar
from contract.checks.hotpath.model import MISSING, Hazard, LoopWrite, ScanState
from contract.checks.hotpath.resolve import ANY_KEY


def classify_loop(state: ScanState, budgets: dict[str, int]) -> list[Hazard]:
    """State the compiled code reads and the step changes between calls: an error when it is certain to recompile
    more often than the region's recompile budget (a Python int/str/bool/enum changed on every call), else a
    warning (it may settle: a schedule, a flag set once, a float)."""
    by_key: dict[tuple[int, str], list[LoopWrite]] = defaultdict(list)
    for w in state.loop_writes:
        by_key[w.key].append(w)
    out = []
    for key, writes in by_key.items():
        read = read_of(state.reads, key)
        dormant = key in state.read_guards and key not in state.live_reads
        if read is None or dormant and not state.read_guards[key] & by_key.keys():
            continue  # never read, or read only behind state that is off now and that the step never turns on
        for w in writes:  # one line that writes what its callers pass: two callers, two values
            w.changing = w.changing or len({v.inputs for v in writes if v.where == w.where and v.inputs}) > 1
        moving = frozenset(state.unset_fields.get(key, set()) & state.record_fields)
        hazard = loop_hazard(writes, *read, budgets, state.loop_events, moving)
        if hazard is not None:
            out.append(hazard)
    return out


def read_of(reads: dict[tuple[int, str], tuple[str, str]], key: tuple[int, str]) -> tuple[str, str] | None:
    """Where the hot path reads what a write changes: the same key, or an item of the same container read or written
    with an index the scan cannot tell (`self.scaling[adapter]`)."""
    found = reads.get(key) or reads.get((key[0], ANY_KEY))
    if found is None and key[1] == ANY_KEY:
        found = next((where for (owner, _), where in reads.items() if owner == key[0]), None)
    return found


def pinned_by_step(state: ScanState) -> frozenset[tuple[int, str]]:
    """State the step sets to one constant, unconditionally, before every compiled call it makes (`sync(model)`
    marking each layer synced): every call sees that constant, whatever the compiled code writes during the call."""
    by_key: dict[tuple[int, str], list[LoopWrite]] = defaultdict(list)
    for w in state.loop_writes:
        by_key[w.key].append(w)
    pinned = set()
    for key, writes in by_key.items():
        if any(w.literal is MISSING or w.changing for w in writes) or len({repr(w.literal) for w in writes}) != 1:
            continue
        seen = seen_by_calls(state.loop_events, key, MISSING)
        if seen is not None and seen[0] | seen[1] == {repr(writes[0].literal)}:
            pinned.add(key)
    return frozenset(pinned)


def rebuilt_closure(value: Any, writes: list[LoopWrite]) -> bool:
    """A function with closure cells, or a `functools.partial`, that the step replaces with one built from a value
    that changes between calls: Dynamo guards on the cells' contents (the partial's arguments), so each new value is
    a recompile."""
    built = bool(getattr(value, "__closure__", None)) or isinstance(value, functools.partial)
    return built and any(w.moved for w in writes)


def seen_by_calls(
    events: list[tuple[tuple[int, str], Any] | None], key: tuple[int, str], current: Any
) -> tuple[set[str], set[str]] | None:
    """The constants of one state each compiled call sees, over a first step and a steady one (the walk replayed
    twice from the current value); None when the step makes no compiled call the walk saw."""
    if not any(e is None for e in events):
        return None
    value = repr(current)
    passes: tuple[set[str], set[str]] = (set(), set())
    for seen in passes:
        for event in events:
            if event is None:
                seen.add(value)
            elif event[0] == key:
                value = repr(event[1])
    return passes


def loop_hazard(
    writes: list[LoopWrite],
    read_at: str,
    region: str,
    budgets: dict[str, int],
    events: list[tuple[tuple[int, str], Any] | None] | None = None,
    fields_move: frozenset[str] = frozenset({"?"}),
) -> Hazard | None:
    """The hazard of the step's writes to one piece of state the hot path reads (None: it does not change)."""
    value, events = writes[0].value, events or []
    if rebuilt_closure(value, writes):
        first = writes[0]
        what = f"{first.what} (a closure the step rebuilds from a changing value, called at {read_at})"
        return Hazard(kind="loop-may", where=first.where, region=region, what=what, certain=False)
    if isinstance(value, (torch.Tensor, nn.Module)) or callable(value) and not is_scalar(value):
        return None
    slot = value is None and all(w.record or w.form == "restore" for w in writes) and any(w.record for w in writes)
    if slot and not fields_move:  # a slot the step fills with a new record every call (vLLM's attention metadata, a
        return None  # forward context): Dynamo guards its type and the fields the compiled code reads, none of which
        # the step changes
    literals = {repr(w.literal) for w in writes if w.literal is not MISSING}
    seen = seen_by_calls(events, writes[0].key, value) if literals else None
    toggled = seen is not None and len(seen[1]) > 1  # every step shows the compiled code more than one value
    moved = seen is not None and len(seen[0] | seen[1]) > 1  # the calls see it change (at least once)
    # a constant written only at some calls (`if self.steps_run == n: model.quantize = True`) is new to the next call
    moved = moved or any(w.conditional and w.literal is not MISSING and repr(w.literal) != repr(value) for w in writes)
    flips = len(literals) > 1 and any(w.cond_certain for w in writes) and (seen is None or moved)
    certain = any(w.certain for w in writes) or toggled or flips
    unordered = len(literals) > 1 and seen is None
    if not (certain or moved or unordered or any(w.changing and w.literal is MISSING for w in writes)):
        if not any(w.changing for w in writes) or seen is not None and not moved:
            return None
    first = next((w for w in writes if w.certain), writes[0])
    distinct = 2 if isinstance(value, bool) or len(literals) > 1 and not any(w.certain for w in writes) else None
    distinct = first.distinct if first.certain and first.distinct else distinct
    storm = certain and is_scalar(value) and (distinct is None or distinct - 1 > budgets.get(region, 0))
    storm = storm and not goes_dynamic(value, first.owner)
    shown = type(value).__name__ if value is not MISSING else "not set before the first call"
    if slot:
        shown = f"a new record every call, read for its {', '.join(sorted(fields_move))}"
    return Hazard(
        kind="loop" if storm else "loop-may",
        where=first.where,
        region=region,
        what=f"{first.what} ({shown}, read at {read_at})",
        certain=storm,
    )


def goes_dynamic(value: Any, owner: Any) -> bool:
    """An int held by a plain object (a generation cache's `seqlen_offset`), not by a module: Dynamo specializes it
    once, then its automatic dynamic shapes make it a symbol (measured on torch 2.13: two compiles), unlike an int on
    an `nn.Module`, which it keeps specializing (`allow_unspec_int_on_nn_module` is off)."""
    plain = not isinstance(owner, (nn.Module, dict, type, types.ModuleType))
    return type(value) is int and plain and _torch_scan.ints_go_dynamic()
