"""The ranks' fingerprints compared: every component on which ranks differ is one finding (CC802-CC807) that names
the values and the ranks holding each; components declared in `[distributed] per_rank` may differ."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from contract.checks.ranks.rules import (
    CACHE_DIFFERS,
    CONFIG_DIFFERS,
    CONTRACT_DIFFERS,
    ENV_DIFFERS,
    REGION_DIFFERS,
    VERSION_DIFFERS,
)
from contract.findings import Finding, Rule, format_ranks, rank_label

UNSET = "<unset>"
"""The value of a component a rank does not have (an env var it lacks, a region it has no)."""
SHOWN_VALUES = 3
"""Distinct values a message names before `and N more`."""

_BY_KIND: dict[str, tuple[Rule, str]] = {
    "contract": (
        CONTRACT_DIFFERS,
        "ship one contract file to every rank; pipeline stages with their own contracts pass their stage's group "
        "(enforce(..., group=dp_group))",
    ),
    "region": (
        REGION_DIFFERS,
        "make the region's settings the same on every rank (one contract, no rank-dependent settings)",
    ),
    "version": (VERSION_DIFFERS, "run every rank in one environment (one image)"),
    "config": (CONFIG_DIFFERS, "set the compiler config in code every rank runs before enforce, or not at all"),
    "env": (
        ENV_DIFFERS,
        "export the same variable on every rank, or list it in [distributed] per_rank if it must differ",
    ),
    "cache": (CACHE_DIFFERS, "launch every rank with the same cache setup, or list it in [distributed] per_rank"),
}


def differences(
    groups: Sequence[tuple[Mapping[str, str], Sequence[int]]], per_rank: Sequence[str], leader: int
) -> list[Finding]:
    """One finding per component whose value is not the same on every rank. `groups` holds each distinct fingerprint
    with the ranks that reported it (identical ranks are compared once)."""
    if len(groups) < 2:
        return []
    components = sorted(set().union(*(fp for fp, _ in groups)))
    out = []
    for component in components:
        if any(fnmatch.fnmatchcase(component, p) for p in per_rank):
            continue
        by_value: dict[str, list[int]] = {}
        for fp, ranks in groups:
            by_value.setdefault(fp.get(component, UNSET), []).extend(ranks)
        if len(by_value) > 1:
            out.append(_finding(component, by_value, leader))
    return out


def _finding(component: str, by_value: dict[str, list[int]], leader: int) -> Finding:
    """The ranks holding the majority value (the leader's on a tie) against the others, each value shown."""
    ordered = sorted(by_value.items(), key=lambda kv: (-len(kv[1]), leader not in kv[1]))
    majority = ordered[0][0]
    shown = [f"{rank_label(format_ranks(ranks))} {_shown(component, value, majority)}" for value, ranks in ordered]
    more = f"; and {len(shown) - SHOWN_VALUES} more values" if len(shown) > SHOWN_VALUES else ""
    rule, fix = _BY_KIND.get(component.split(".", 1)[0], (CONFIG_DIFFERS, "make the ranks agree"))
    finding = rule.finding(component, f"ranks differ: {'; '.join(shown[:SHOWN_VALUES])}{more}", fix)
    minority = [r for value, ranks in ordered[1:] for r in ranks]
    return replace(finding, ranks=format_ranks(minority))


def _shown(component: str, value: str, majority: str) -> str:
    """How one rank's value reads: a region's settings as the keys that differ from the majority's."""
    if value == UNSET:
        return "lack it"
    if component.startswith("region.") and majority != UNSET and value != majority:
        mine, theirs = json.loads(value), json.loads(majority)
        keys = [k for k in mine if mine.get(k) != theirs.get(k)]
        return "have " + ", ".join(f"{k}={json.dumps(mine[k])}" for k in keys)[:200]
    if component.startswith("region."):
        return "have the majority's settings"
    return f"have {value[:120]}"
