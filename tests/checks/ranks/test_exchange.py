"""The verdict exchange over a real TCPStore, ranks played by threads with their own store clients: every rank reads
the same verdict, identical findings are grouped with their ranks, a silent rank or leader is named, and what the
ranks disagree on is reported by component."""

from __future__ import annotations

import datetime
import threading
import time

import pytest
import torch.distributed as dist

from contract.findings import Finding, format_ranks, rank_label
from contract.report.exchange import exchange, open_channel

TIMEOUT_S = 2.0


@pytest.fixture
def server():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=10), wait_for_workers=False)
    yield store


def client(server) -> dist.TCPStore:
    return dist.TCPStore("127.0.0.1", server.port, 1, False, timeout=datetime.timedelta(seconds=10))


def finding(code: str = "CC301", location: str = "m.py:3", severity: str = "error") -> Finding:
    return Finding(code=code, severity=severity, location=location, message=f"{code} at {location}", fix="fix it")


def run_ranks(server, world: int, own: dict[int, tuple[list[Finding], dict]], silent=()) -> dict[int, list[Finding]]:
    """Each rank in its own thread: open the channel, exchange its findings and fingerprint; `silent` ranks never
    take part."""
    out: dict[int, list[Finding]] = {}

    def rank(r: int) -> None:
        channel = open_channel(client(server), r, range(world), "tcc/test", TIMEOUT_S)
        findings, fp = own.get(r, ([], {}))
        out[r] = exchange(channel, findings, fp)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(world) if r not in silent]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return out


def test_rank_sets_read_as_runs_and_labels():
    assert format_ranks([7, 0, 1, 2, 3, 9, 10]) == "0-3,7,9-10" and format_ranks([5]) == "5"
    assert rank_label("5") == "rank 5" and rank_label("0-7") == "ranks 0-7"


def test_identical_findings_are_one_finding_with_every_rank_and_all_ranks_read_the_same_verdict(server):
    shared, own3 = finding(), finding("CC203", "/cache")
    verdicts = run_ranks(
        server, 4, {r: ([shared, own3] if r == 3 else [shared], {"version.torch": "2.13"}) for r in range(4)}
    )
    assert len(verdicts) == 4 and all(v == verdicts[0] for v in verdicts.values())
    ranks = {f.code: f.ranks for f in verdicts[0]}
    assert ranks == {"CC301": "0-3", "CC203": "3"}


def test_a_rank_that_never_reports_is_named_on_every_other_rank(server):
    verdicts = run_ranks(server, 3, {}, silent={2})
    assert set(verdicts) == {0, 1} and verdicts[0] == verdicts[1]
    [missing] = [f for f in verdicts[0] if f.code == "CC801"]
    assert (
        missing.ranks == "2" and "rank 2 did not report within 2 s" in missing.message and "2 of 3" in missing.message
    )


def test_a_silent_leader_gives_every_other_rank_the_same_refusal_naming_it(server):
    verdicts = run_ranks(server, 3, {}, silent={0})
    assert set(verdicts) == {1, 2} and verdicts[1] == verdicts[2]
    assert [(f.code, f.ranks) for f in verdicts[1]] == [("CC801", "0")]


def test_components_the_ranks_disagree_on_are_findings_naming_ranks_and_values(server):
    fps = {
        r: (
            {"version.torch": "2.13.0", "env.TORCHINDUCTOR_MAX_AUTOTUNE": "1"}
            if r == 1
            else {"version.torch": "2.13.0"}
        )
        for r in range(3)
    }
    verdicts = run_ranks(server, 3, {r: ([], fp) for r, fp in fps.items()})
    [diff] = verdicts[0]
    assert (diff.code, diff.location, diff.ranks) == ("CC806", "env.TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    assert "ranks 0,2 lack it" in diff.message and "rank 1 have 1" in diff.message


def test_a_store_nobody_serves_is_a_local_refusal_not_a_hang():
    from contract.report.exchange import Channel

    class Gone:
        def set(self, *args):
            raise ConnectionError("Broken pipe")

    channel = Channel(store=Gone(), rank=1, members=(0, 1), namespace="tcc/x/1", timeout_s=1)
    [own, gone] = exchange(channel, [finding("CC301")], {})
    assert own.code == "CC301" and gone.code == "CC801" and "could not be exchanged" in gone.message


class SlowReader:
    """A rank's real store client that is slow to read the verdict (a loaded host): `wait` starts late."""

    def __init__(self, store: dist.TCPStore, delay_s: float) -> None:
        self.store, self.delay_s, self.read_at = store, delay_s, 0.0

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def wait(self, keys, timeout):
        time.sleep(self.delay_s)
        self.store.wait(keys, timeout)
        self.read_at = time.monotonic()


def test_the_rank_hosting_the_store_leaves_only_after_every_rank_has_read_the_verdict(server):
    slow = SlowReader(client(server), 0.5)
    out: dict[int, tuple[list[Finding], float]] = {}

    def rank(r: int, store, hosts: bool) -> None:
        channel = open_channel(store, r, range(2), "tcc/linger", TIMEOUT_S, hosts_store=hosts)
        found = exchange(channel, [finding()] if r == 0 else [], {})
        out[r] = (found, time.monotonic())

    threads = [
        threading.Thread(target=rank, args=(0, server, True)),
        threading.Thread(target=rank, args=(1, slow, False)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert out[0][0] == out[1][0] and [(f.code, f.ranks) for f in out[0][0]] == [("CC301", "0")]
    assert out[0][1] >= slow.read_at > 0  # the host returned (and could exit) only after the slow rank had read
