"""Which job this process is a rank of, and the channel its verdict goes through: the process group's rendezvous
store for `enforce`/`check` (torch.distributed initialized, or a group given), a store opened from the job's
environment for the CLI run inside a job (torchrun's agent store, or rank 0's on `MASTER_PORT` as srun-style launch
does). One process, or a job without a group: the verdict stays local."""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract.document.load import Contract
from contract.document.schema import DistributedSpec
from contract.env import EnvSnapshot
from contract.findings import Finding
from contract.report.allow import silenced
from contract.report.exchange import Channel, exchange, open_channel


@dataclass(frozen=True)
class Ranks:
    """This process's place in its job."""

    world: int = 1
    """Ranks in the job (the group's size, else `WORLD_SIZE`); 1 for a single process."""
    channel: Channel | None = None
    """Where the verdict is exchanged; None when it stays local."""


def scope(environ: Mapping[str, str], name: str) -> str:
    """Keys unique to this job, this restart and `name`: a restarted job never reads an earlier attempt's verdict."""
    job = environ.get("TORCHELASTIC_RUN_ID") or ".".join(
        filter(None, (environ.get("SLURM_JOB_ID"), environ.get("SLURM_STEP_ID")))
    )
    attempt = environ.get("TORCHELASTIC_RESTART_COUNT") or environ.get("SLURM_RESTART_COUNT") or "0"
    return f"tcc/{job or 'job'}/{attempt}/{name}"


def spec(contract: Contract | None) -> DistributedSpec:
    """The contract's `[distributed]` table (defaults when the document did not load)."""
    return contract.distributed if contract is not None else DistributedSpec()


def job_ranks(contract: Contract | None, group: Any = None, environ: Mapping[str, str] | None = None) -> Ranks:
    """The ranks of the process group (`group`, else the default one) when there are several and `[distributed]
    enabled`; else the world `WORLD_SIZE` claims, with no channel."""
    env = os.environ if environ is None else environ
    world = _int(env.get("WORLD_SIZE"), 1)
    if not spec(contract).enabled:
        return Ranks(world=world)
    from contract import _distributed

    found = _distributed.process_group(group)
    if found is None:
        return Ranks(world=world)
    rank, members, name = found
    if len(members) < 2:
        return Ranks(world=len(members))
    store, timeout = _distributed.rendezvous_store(), spec(contract).timeout_s
    hosts = rank == 0 and not _agent_store(env)  # env:// rendezvous: global rank 0 serves the store
    channel = open_channel(store, rank, members, scope(env, name), timeout, hosts_store=hosts)
    return Ranks(world=len(members), channel=channel)


def cli_ranks(contract: Contract | None, command: str, environ: Mapping[str, str] | None = None) -> Ranks:
    """For `compile-contract check/doctor` run by every rank of a job: a store from the job's environment (torchrun's
    agent store when it hosts one, else rank 0 serves one on MASTER_PORT), no process group."""
    env = os.environ if environ is None else environ
    world, rank = _int(env.get("WORLD_SIZE"), 1), _int(env.get("RANK"), -1)
    if world < 2 or rank < 0 or not spec(contract).enabled or not env.get("MASTER_ADDR") or not env.get("MASTER_PORT"):
        return Ranks(world=world)
    import torch.distributed as dist

    timeout = spec(contract).timeout_s
    agent = _agent_store(env)
    store = dist.TCPStore(
        env["MASTER_ADDR"],
        int(env["MASTER_PORT"]),
        world,
        is_master=rank == 0 and not agent,
        timeout=datetime.timedelta(seconds=timeout),
        wait_for_workers=False,
    )
    channel = open_channel(
        store, rank, range(world), scope(env, f"cli-{command}"), timeout, hosts_store=rank == 0 and not agent
    )
    return Ranks(world=world, channel=channel)


def agree(
    ranks: Ranks,
    contract: Contract | None,
    findings: list[Finding],
    snapshot: EnvSnapshot,
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """This rank's findings, or the job's one verdict when there is a channel."""
    if ranks.channel is None:
        return findings
    from contract.checks.ranks.fingerprint import fingerprint

    env = os.environ if environ is None else environ
    own = fingerprint(contract, snapshot, env)
    per_rank = spec(contract).per_rank
    return exchange(ranks.channel, findings, own, per_rank=per_rank, allowed=lambda f: silenced(f, contract))


def _agent_store(env: Mapping[str, str]) -> bool:
    """torchrun's agent serves the store (it outlives every worker)."""
    return env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
