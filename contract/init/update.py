"""`init --update`: change only the keys a new recording contradicts, keep every other byte of the document.

A key is contradicted when the monitor, running the recorded step under the contract as written, would breach:
- `recompile_budget`: the recompiles it would count exceed the budget. If the warm-up grew (a region now needs more
  compiles before it settles), `warmup_compiles` is raised to what it needed first; the budget is raised only by what
  still counts after that. A region that never settled gets no raise (a storm is a bug to fix, not a budget).
- `graph_break_budget`: more distinct break sites than the budget; the sites are listed in a comment above the key.
Looser values than the run needed are the user's choice and stay. An inherited key (from `[defaults]`) is written into
the region's own table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contract.document.load import Contract
from contract.document.schema import Region
from contract.init.build import InitError
from contract.init.notes import comment, shown
from contract.init.record import Recording, RegionRecord, counted, guard_text, settled_at, warmup_compiles


@dataclass(frozen=True, kw_only=True)
class Change:
    """One key of one region to set."""

    index: int
    region: str
    key: str
    old: int
    new: int
    why: list[str]
    """Comment lines written above the key."""

    def describe(self) -> str:
        """`region layers: recompile_budget 0 -> 1`."""
        return f"region {self.region}: {self.key} {self.old} -> {self.new}"


def plan(contract: Contract, recording: Recording) -> list[Change]:
    """The changes the recording calls for, region by region in document order."""
    out: list[Change] = []
    for region in contract.regions:
        rec = recording.regions.get(region.name)
        if rec is None or not rec.compiles:
            continue
        out += _recompile_changes(region, rec, recording.steps)
        if rec.break_sites > region.graph_break_budget and not region.fullgraph:
            sites = [f"{shown(site) if site else '(frame skipped)'}: {head}" for (site, head) in rec.breaks]
            why = comment(
                f"init --update: {_n(rec.break_sites, 'distinct graph-break site')} per instance (fix or accept): "
                + "; ".join(sites[:8]),
                indent="  ",
            )
            out.append(_change(region, "graph_break_budget", region.graph_break_budget, rec.break_sites, why))
    return out


def _recompile_changes(region: Region, rec: RegionRecord, steps: int) -> list[Change]:
    """Raise warm-up first when that is what grew, then the budget by what still counts."""
    if settled_at(rec, steps) is None or counted(rec, region.warmup_compiles) <= region.recompile_budget:
        return []
    out = []
    warm = region.warmup_compiles
    needed = warmup_compiles(rec, steps)
    if needed > warm:
        why = comment(
            f"init --update: {needed} compiles per instance before it settled ({guard_text(rec, 0)})", indent="  "
        )
        out.append(_change(region, "warmup_compiles", warm, needed, why))
        warm = needed
    still = counted(rec, warm)
    if still > region.recompile_budget:
        why = comment(
            f"init --update: {_n(still, 'recompile')} of one instance after warm-up ({guard_text(rec, -1)})",
            indent="  ",
        )
        out.append(_change(region, "recompile_budget", region.recompile_budget, still, why))
    return out


def _change(region: Region, key: str, old: int, new: int, why: list[str]) -> Change:
    """A change of one region key."""
    return Change(index=region.index, region=region.name, key=key, old=old, new=new, why=why)


def _n(count: int, word: str) -> str:
    """`1 recompile`, `2 recompiles`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def edit(text: str, changes: list[Change]) -> str:
    """The document with each change applied: a key written in the region's table gets its value replaced (the rest
    of its line kept), a missing one is added at the end of the table; the comment goes above. Nothing else moves."""
    from contract.document.lines import entries

    found = entries(text)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, list[str], str | None]] = []  # (line index, lines to insert before, replacement)
    for ch in changes:
        table = f"region[{ch.index}]"
        key = next((e for e in found if e.loc == f"{table}.{ch.key}"), None)
        if key is not None:
            edits.append((key.line - 1, ch.why, _replace(lines[key.line - 1], ch)))
            continue
        last = max((e.end for e in found if e.table == table), default=None)
        if last is None:
            raise InitError(f"{table} ({ch.region}) is not a [[region]] table of the document; cannot add {ch.key}")
        edits.append((last, [*ch.why, f"{ch.key} = {ch.new}"], None))
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for index, before, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        if replacement is not None:
            lines[index] = replacement
        if index == len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        lines[index:index] = [line + newline for line in before]
    return "".join(lines)


_VALUE = re.compile(r"^(\s*[A-Za-z0-9_-]+\s*=\s*)([^\s#]+)(.*)$", re.DOTALL)


def _replace(line: str, ch: Change) -> str:
    """The key's line with its value replaced, its indentation and trailing comment kept."""
    m = _VALUE.match(line)
    if not m:
        raise InitError(f"cannot edit {ch.key} of region {ch.region!r} in place: write it as `{ch.key} = {ch.old}`")
    return f"{m.group(1)}{ch.new}{m.group(3)}"


def set_key(text: str, table: str, key: str, value: str, *, after: str | None = None) -> str:
    """The document with `[table] key = value` (a TOML literal): a key already written gets its value replaced (its
    indentation and trailing comment kept), a new one goes on the line after the `after` key (else at the end of the
    table). Every other byte stays as it was (`warm --pin` writes `artifacts_sha256` this way); the result is parsed
    back and must differ from the document in that one key only."""
    from contract.document.lines import entries

    found = entries(text)
    lines = text.splitlines(keepends=True)
    written = next((e for e in found if e.loc == f"{table}.{key}"), None)
    if written is not None:
        m = _VALUE.match(lines[written.line - 1])
        if not m or written.end != written.line:
            raise InitError(f"cannot edit [{table}] {key} in place: write it on one line as `{key} = {value}`")
        lines[written.line - 1] = f"{m.group(1)}{value}{m.group(3)}"
        return _checked(text, "".join(lines), table, key, value)
    anchor = next((e for e in found if after and e.loc == f"{table}.{after}" and e.table == table), None)
    index = anchor.end if anchor else max((e.end for e in found if e.table == table), default=None)
    if index is None:
        raise InitError(f"the document has no [{table}] table to add {key} to; write [{table}] as a table")
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if index == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    lines[index:index] = [f"{key} = {value}{newline}"]
    return _checked(text, "".join(lines), table, key, value)


def _checked(before: str, after: str, table: str, key: str, value: str) -> str:
    """`after`, when TOML reads it as `before` with only `[table] key` set to `value`; else InitError."""
    import tomllib

    try:
        old, new = tomllib.loads(before), tomllib.loads(after)
        wanted = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError as exc:
        raise InitError(f"cannot set [{table}] {key}: {exc}") from None
    got = new.get(table, {}).pop(key, None) if isinstance(new.get(table), dict) else None
    if isinstance(old.get(table), dict):
        old[table].pop(key, None)
    if got != wanted or old != new:
        raise InitError(f"cannot set [{table}] {key} in place: write it yourself as `{key} = {value}` in [{table}]")
    return after
