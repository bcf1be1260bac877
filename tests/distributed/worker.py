"""One rank of a test job: join the job (gloo), enforce a contract, optionally run monitored steps, say what happened.

`python -m tests.distributed.worker SCENARIO CONTRACT` with the job's environment (see `launch.py`). Per-rank
behaviour comes from variables the test sets for that rank: `HAZARD=1` builds the demo's hazard model (a Python
counter on the hot path, CC301), `DIE_BEFORE_ENFORCE=1` exits with 3 after joining and before the exchange,
`CONTRACT` replaces the contract path. The FSDP2 scenarios read three more: `BLOCKS=sequential` makes the decoder's
blocks torch.nn's own `nn.Sequential` (compiled through `wrap_inline`) and `BLOCKS=llama` uses a tiny Hugging Face
Llama instead; `FSDP_METHOD=decode` makes the decoder call its blocks' `decode` (registered with
`register_fsdp_forward_method` when sharded) instead of their forward; `DIST_BACKEND=nccl` runs on one GPU per rank
(the device machine) instead of gloo on CPU. Output: `STARTED` or `REFUSED` and the report, then (monitored
scenarios) one line `SNAPSHOT {json}`. A refusal exits 1, as an engine that lets ContractViolation escape does.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

import contract
import monitor


class MLP(nn.Module):
    """Four 1 MiB layers: DDP with bucket_cap_mb=1 makes one gradient bucket each."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(nn.Linear(512, 512) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class Block(nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm(x))
        return x + self.mlp(self.norm(x))

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """A second entry point (as a generation path has), sharded through register_fsdp_forward_method."""
        return x + self.mlp(self.norm(x))


def sequential_block(dim: int = 32) -> nn.Sequential:
    """A block made of torch.nn's own classes only: Dynamo's trace rules skip all of its frames."""
    return nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))


class Decoder(nn.Module):
    """Llama-shaped: embedding, blocks, norm, head (tiny); `BLOCKS=sequential` builds `nn.Sequential` blocks."""

    def __init__(self, layers: int = 2, dim: int = 32, vocab: int = 64) -> None:
        super().__init__()
        torch.manual_seed(0)
        sequential = os.environ.get("BLOCKS") == "sequential"
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(sequential_block(dim) if sequential else Block(dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.method = os.environ.get("FSDP_METHOD", "forward")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = getattr(layer, self.method)(x) if self.method != "forward" else layer(x)
        return self.head(self.norm(x))


class Events:
    """The monitor's logger: keeps events (printed as part of the snapshot)."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def _keep(self, event: str, **fields: object) -> None:
        self.events.append({"event": event, **{k: v for k, v in fields.items() if isinstance(v, (int, str, bool))}})

    info = warning = error = debug = _keep


def enforce_or_exit(model: nn.Module, path: str, group=None):
    print(f"ENFORCE_AT {time.time()}", flush=True)
    try:
        binding = contract.enforce(model, path, group=group)
    except contract.ContractViolation as exc:
        print("REFUSED")
        print(exc)
        sys.stdout.flush()
        sys.exit(1)
    print("STARTED")
    return binding


def train(model: nn.Module, binding, steps: int, batch) -> None:
    """Monitored training steps (forward, backward, SGD), then the snapshot on one line."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    events = Events()
    with monitor.start(binding, serve=False, logger=events) as mon:
        for i in range(steps):
            out = model(batch(i))
            getattr(out, "logits", out).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
        snap = mon.snapshot()
    print("SNAPSHOT " + json.dumps({"regions": snap, "events": events.events}))


def main(scenario: str, path: str) -> int:
    dist.init_process_group(os.environ.get("DIST_BACKEND", "gloo"), timeout=datetime.timedelta(seconds=60))
    if device() == "cuda":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    path = os.environ.get("CONTRACT", path)
    if os.environ.get("DIE_BEFORE_ENFORCE") == "1":
        os._exit(3)
    if scenario == "enforce":
        from contract.demo import build_hazard_model, build_model

        enforce_or_exit(build_hazard_model() if os.environ.get("HAZARD") == "1" else build_model(), path)
    elif scenario == "stages":  # pipeline-style: ranks 0-1 and 2-3 are two stages with their own contracts
        from contract.demo import build_model

        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]  # every rank creates every group, in order
        stage = dist.get_rank() // 2
        enforce_or_exit(build_model(), path.replace(".toml", f"-stage{stage}.toml"), group=groups[stage])
    elif scenario == "ddp":
        inner = MLP()
        model = nn.parallel.DistributedDataParallel(inner, bucket_cap_mb=1)
        binding = enforce_or_exit(model, path)
        train(model, binding, 3, lambda i: torch.randn(8, 512))
    elif scenario == "fsdp-root":  # the whole model compiled over sharded blocks: what the startup check says
        from contract.pipeline import check

        model = Decoder()
        for block in model.layers:
            shard(block)
        _, _, findings = check(path, model)
        print("FINDINGS " + json.dumps(sorted({f.code for f in findings})))
    elif scenario.startswith("fsdp"):
        model = (llama() if os.environ.get("BLOCKS") == "llama" else Decoder()).to(device())
        if scenario == "fsdp-shard-then-compile":
            shard_decoder(model)
        binding = enforce_or_exit(model, path)
        if scenario == "fsdp-compile-then-shard":
            shard_decoder(model)
        train(model, binding, 3, lambda i: torch.randint(0, 64, (2, 16), device=device()))
    dist.destroy_process_group()
    return 0


def llama() -> nn.Module:
    """A tiny Hugging Face Llama (2 layers, random weights): its blocks are `model.layers.*`."""
    from tests.checks.hf_models import llama as build

    return build().train()


def shard_decoder(model: nn.Module) -> None:
    """Each block, then the root, as torchtitan does; a block's other entry point is registered with FSDP2."""
    from torch.distributed.fsdp import register_fsdp_forward_method

    method = getattr(model, "method", "forward")
    for block in model.layers if isinstance(model, Decoder) else model.model.layers:
        shard(block)
        if method != "forward":
            register_fsdp_forward_method(block, method)
    shard(model)


def device() -> str:
    """`cuda` under NCCL (one GPU per rank), else `cpu`."""
    return "cuda" if os.environ.get("DIST_BACKEND") == "nccl" else "cpu"


def shard(module: nn.Module) -> None:
    """FSDP2 over a mesh of the ranks on `device()` (named: the default mesh picks CUDA where a GPU is visible, which
    the gloo ranks of the CPU tests would share)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    fully_shard(module, mesh=init_device_mesh(device(), (dist.get_world_size(),)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))


def build_from_env() -> nn.Module:
    """The demo model, or its hazard variant on the rank `HAZARD_RANK` names (for the CLI run by every rank)."""
    from contract.demo import build_hazard_model, build_model

    return build_hazard_model() if os.environ.get("HAZARD_RANK") == os.environ.get("RANK") else build_model()
