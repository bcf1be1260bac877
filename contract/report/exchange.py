"""One startup verdict for all the ranks of a job, reached through a key-value store every rank can reach.

Every rank publishes its findings (after its own `[[allow]]` and `--strict`) and its fingerprint, then waits for the
verdict. The first member (the leader) waits up to `timeout_s` for the others, groups identical findings with the
ranks that have them, adds what the ranks disagree on (CC802-CC807) and the ranks that never reported (CC801), and
publishes the verdict. Every rank reads that one verdict, so every rank starts or refuses with the same report. A rank
that gets no verdict within `timeout_s` plus a margin publishes an abort in its place; the store's compare-and-set
keeps whichever came first, so the ranks still agree. Nothing here is a collective: a broken NCCL communicator cannot
block it, and every store operation has its own timeout.

Cost (see `bench/bench_rank_exchange.py`): each rank writes two keys (a 40-byte head, its findings and fingerprint
compressed) and reads the verdict; identical ranks share one digest, so the leader reads one head per rank and one
body per distinct (findings, fingerprint) pair.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contract.checks.ranks.agree import differences
from contract.checks.ranks.rules import MISSING_RANK
from contract.findings import Finding, Severity, format_ranks, rank_label

VERDICT_LIMIT = 200
"""Distinct findings a verdict carries one by one; beyond that they are summarized per code (bounded at any scale)."""
MARGIN_S = 5.0
"""How much longer than the leader the other ranks wait for its verdict, plus a millisecond per rank for its decision
(measured: 1.6 s at 16,384 identical ranks, 12 s when every rank differs; bench/bench_rank_exchange.py)."""


@dataclass(frozen=True)
class Channel:
    """Where the ranks of one exchange meet."""

    store: Any
    """A key-value store every member reaches (`set`, `get`, `wait`, `check`, `multi_get`, `compare_set`, `add`):
    the process group's rendezvous store, or one the CLI opens."""
    rank: int
    """This process's rank."""
    members: tuple[int, ...]
    """The ranks taking part, in order; the first is the leader."""
    namespace: str
    """Key prefix unique to this exchange (job, restart, group, n-th exchange)."""
    timeout_s: float
    """How long the leader waits for the others' reports."""
    hosts_store: bool = False
    """This process serves the store (rank 0 of an srun-style launch): its exit takes the store down."""

    @property
    def leader(self) -> int:
        """The rank that decides the verdict."""
        return self.members[0]

    def key(self, *parts: object) -> str:
        """A key of this exchange."""
        return "/".join([self.namespace, *map(str, parts)])


def open_channel(
    store: Any, rank: int, members: Sequence[int], scope: str, timeout_s: float, *, hosts_store: bool = False
) -> Channel:
    """A channel for this process's next exchange in `scope`: every rank counts its own exchanges on the store, so the
    n-th call on each rank meets the n-th call on the others."""
    count = store.add(f"{scope}/calls/{rank}", 1)
    namespace = f"{scope}/{count}"
    return Channel(
        store=store,
        rank=rank,
        members=tuple(members),
        namespace=namespace,
        timeout_s=timeout_s,
        hosts_store=hosts_store,
    )


def exchange(
    channel: Channel,
    findings: list[Finding],
    fingerprint: Mapping[str, str],
    *,
    per_rank: Sequence[str] = (),
    allowed: Callable[[Finding], bool] = lambda f: False,
) -> list[Finding]:
    """This rank's findings in, everyone's verdict out (the same list on every rank). `allowed` silences cross-rank
    findings the leader's `[[allow]]` covers; `per_rank` names components that may differ."""
    present: list[int] = []
    try:
        _publish(channel, findings, fingerprint)
        if channel.rank == channel.leader:
            present = _reported(channel)
            channel.store.compare_set(channel.key("verdict"), "", _decide(channel, present, per_rank, allowed))
        verdict = _read_verdict(channel)
    except Exception as exc:  # the store is gone (its host died) or refused: this rank decides alone, and refuses
        return [*findings, _unreachable(channel, exc)]
    _acknowledge(channel, len(present) if channel.hosts_store else 0)
    return verdict


def _acknowledge(channel: Channel, readers: int) -> None:
    """Say this rank has read the verdict; the store's host (`readers` > 0) stays until every rank that reported has
    read it, or the timeout, so its own refusal and exit cannot take the verdict away from the others."""
    try:
        read = channel.store.add(channel.key("read"), 1)
        deadline = time.monotonic() + channel.timeout_s
        while read < readers and time.monotonic() < deadline:
            time.sleep(0.005)
            read = channel.store.add(channel.key("read"), 0)
    except Exception:  # the verdict is already read: a store gone now changes nothing for this rank
        pass


def _publish(channel: Channel, findings: list[Finding], fingerprint: Mapping[str, str]) -> None:
    """The body (findings and fingerprint, compressed) first, then the head that says it is there."""
    dicts = [f.to_dict() for f in findings]
    body = zlib.compress(json.dumps({"findings": dicts, "fingerprint": dict(fingerprint)}).encode())
    head = {"f": _digest(sorted(_digest(d) for d in dicts)), "p": _digest(dict(fingerprint))}
    channel.store.set(channel.key("body", channel.rank), body)
    channel.store.set(channel.key("head", channel.rank), json.dumps(head))


def _decide(channel: Channel, present: list[int], per_rank: Sequence[str], allowed: Callable[[Finding], bool]) -> str:
    """The leader's verdict from the ranks `present`: findings grouped by the ranks that have them, disagreements,
    missing ranks."""
    heads = dict(zip(present, channel.store.multi_get([channel.key("head", r) for r in present]), strict=True))
    groups: dict[tuple[str, str], list[int]] = {}
    for rank, raw in heads.items():
        head = json.loads(raw)
        groups.setdefault((head["f"], head["p"]), []).append(rank)
    found: dict[str, tuple[dict, list[int]]] = {}
    prints: dict[str, tuple[dict, list[int]]] = {}
    for ((_, p), ranks), raw in zip(groups.items(), _bodies(channel, [r[0] for r in groups.values()]), strict=True):
        body = json.loads(zlib.decompress(raw))
        for f in body["findings"]:
            found.setdefault(_digest(f), (f, []))[1].extend(ranks)
        prints.setdefault(p, (body["fingerprint"], []))[1].extend(ranks)
    shared = [f for f in differences(list(prints.values()), per_rank, channel.leader) if not allowed(f)]
    missing = sorted(set(channel.members) - set(present))
    return _verdict(channel, [_with_ranks(f, ranks) for f, ranks in found.values()], shared, missing)


def _bodies(channel: Channel, ranks: list[int], chunk: int = 512) -> list[bytes]:
    """The bodies of these ranks, a few hundred per round trip (one per distinct group of identical ranks)."""
    out: list[bytes] = []
    for i in range(0, len(ranks), chunk):
        out += channel.store.multi_get([channel.key("body", r) for r in ranks[i : i + chunk]])
    return out


def _reported(channel: Channel) -> list[int]:
    """The members whose head arrived within the timeout (every one, unless some crashed, hang or are late)."""
    keys = [channel.key("head", r) for r in channel.members]
    try:
        channel.store.wait(keys, datetime.timedelta(seconds=channel.timeout_s))
        return list(channel.members)
    except Exception:  # a timeout: find out who is missing, key by key (only on this path)
        return [r for r, k in zip(channel.members, keys, strict=True) if channel.store.check([k])]


def _with_ranks(f: dict, ranks: list[int]) -> Finding:
    return Finding(**{**f, "ranks": format_ranks(ranks)})


def _verdict(channel: Channel, local: list[Finding], shared: list[Finding], missing: list[int]) -> str:
    """The verdict text every rank reads: each finding once with its ranks, bounded in size at any number of ranks."""
    findings = [*local, *shared]
    if missing:
        findings.append(_missing(channel, missing))
    findings.sort(key=lambda f: (f.severity != "error", f.code, f.location, f.ranks))
    kept = findings[:VERDICT_LIMIT] + _summarized(findings[VERDICT_LIMIT:])
    reported = len(channel.members) - len(missing)
    return json.dumps(
        {"v": 1, "world": len(channel.members), "reported": reported, "findings": [_out(f) for f in kept]}
    )


def _out(f: Finding) -> dict:
    return {**f.to_dict(), "ranks": f.ranks}


def _missing(channel: Channel, missing: list[int]) -> Finding:
    """CC801: ranks that did not publish their findings in time."""
    ranks = format_ranks(missing)
    reported = len(channel.members) - len(missing)
    return replace(
        MISSING_RANK.finding(
            "ranks",
            f"{rank_label(ranks)} did not report within {channel.timeout_s:g} s (crashed, stuck, or still starting); "
            f"{reported} of {len(channel.members)} ranks reported",
            f"read {rank_label(ranks)}'s own output for why it stopped; if it only starts later, call enforce at the "
            "same point on every rank or raise [distributed] timeout_s",
        ),
        ranks=ranks,
    )


def _summarized(rest: list[Finding]) -> list[Finding]:
    """Findings past the verdict's limit, one per code: how many there were, on which ranks, the first of them."""
    out = []
    for code in dict.fromkeys(f.code for f in rest):
        same = [f for f in rest if f.code == code]
        ranks = sorted({int(r) for f in same for r in _expand(f.ranks)})
        severity: Severity = "error" if any(f.severity == "error" for f in same) else "warning"
        out.append(
            Finding(
                code=code,
                severity=severity,
                location=same[0].location,
                message=f"{len(same)} more distinct {code} findings (e.g. {same[0].message[:200]})",
                fix=same[0].fix,
                ranks=format_ranks(ranks),
            )
        )
    return out


def _expand(ranks: str) -> list[int]:
    out: list[int] = []
    for run in filter(None, ranks.split(",")):
        lo, _, hi = run.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def _read_verdict(channel: Channel) -> list[Finding]:
    """The verdict, once there is one; a rank that waits past the leader's timeout plus a margin puts an abort in
    its place, and every rank reads whichever was set first."""
    key = channel.key("verdict")
    try:
        margin = MARGIN_S + len(channel.members) / 1000
        channel.store.wait([key], datetime.timedelta(seconds=channel.timeout_s + margin))
    except Exception:  # no verdict in time: the leader crashed, hangs, or started far later than this rank
        channel.store.compare_set(key, "", _verdict(channel, [], [], [channel.leader]))
    data = json.loads(channel.store.get(key))
    return [Finding(**f) for f in data["findings"]]


def _unreachable(channel: Channel, exc: BaseException) -> Finding:
    """CC801 for a store this rank cannot reach: the ranks cannot agree, so none starts."""
    text = " ".join(str(exc).split())[:200]
    return MISSING_RANK.finding(
        "ranks",
        f"the ranks' verdict could not be exchanged ({type(exc).__name__}: {text}); the rank hosting the store "
        f"(rank {channel.leader} unless torchrun's agent hosts it) probably stopped",
        f"read rank {channel.leader}'s output; under srun-style launch, its exit takes the store down with it",
    )


def _digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
