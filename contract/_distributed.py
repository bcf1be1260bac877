"""Adapter for the private `torch.distributed` APIs the startup side needs (torch 2.11 to 2.15): the wrappers a
region sees through (DDP, FSDP2, activation checkpointing) and where the ranks' verdict travels.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; the wrapper reads, the FSDP2 method
wrapper and the rendezvous store run on all five, one process over gloo). Same in all five: DDP's `.module`,
`OptimizedModule._orig_mod`, `ActivationWrapper` and `_checkpoint_wrapped_module`,
`distributed_c10d._get_default_store`, `get_process_group_ranks`, `FSDPModule`, and `register_fsdp_forward_method`'s
`functools.wraps`'d local `wrapped_method` (the function is identical in all five). Nothing differs.
"""

from __future__ import annotations

from typing import Any

import torch

# Wrappers (binding). A region glob names the user's model, whatever wraps it: DistributedDataParallel keeps the model
# as `.module`, torch.compile's OptimizedModule (`torch._dynamo.eval_frame.OptimizedModule`, private) as `._orig_mod`,
# activation-checkpoint wrappers (`ActivationWrapper`, private base of CheckpointWrapper and OffloadWrapper in
# `torch.distributed.algorithms._checkpoint.checkpoint_wrapper`) as `._checkpoint_wrapped_module`. FSDP2's
# `fully_shard` swaps the class in place (same object, same paths): nothing to unwrap. Same names in 2.11-2.15.

WRAPPED_ATTR = {"ddp": "module", "optimized": "_orig_mod", "checkpoint": "_checkpoint_wrapped_module"}
"""Wrapper kind -> the attribute (a submodule name) holding the module it wraps."""


def wrapper_kind(module: Any) -> str | None:
    """`ddp`, `optimized` or `checkpoint` for a wrapper a region sees through; None for any other module."""
    if isinstance(module, torch.nn.parallel.DistributedDataParallel):
        return "ddp"
    try:
        from torch._dynamo.eval_frame import OptimizedModule

        if isinstance(module, OptimizedModule):
            return "optimized"
    except ImportError:
        pass
    try:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import ActivationWrapper
    except ImportError:  # torch built without distributed
        return None
    return "checkpoint" if isinstance(module, ActivationWrapper) else None


# Ranks (CC8xx). The ranks' startup verdict travels through the rendezvous store of the default process group
# (`distributed_c10d._get_default_store()`, private, present in 2.11-2.15): no collective is involved, so a broken
# or slow NCCL communicator cannot block it, and every store operation carries its own timeout. Under torchrun the
# store is the agent's and outlives any worker; under srun-style launch rank 0 hosts it.


def process_group(group: Any = None) -> tuple[int, list[int], str] | None:
    """(this process's global rank, the group's member ranks in order, the group's name) of `group` (the default
    group when None); None when torch.distributed is unavailable or not initialized."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        return None
    members = list(dist.get_process_group_ranks(group)) if group is not None else list(range(dist.get_world_size()))
    name = str(getattr(group, "group_name", "") or "default") if group is not None else "default"
    return dist.get_rank(), members, name


def rendezvous_store() -> Any:
    """The default process group's rendezvous store (TCPStore behind a PrefixStore)."""
    from torch.distributed import distributed_c10d

    return distributed_c10d._get_default_store()


def is_fsdp_sharded(module: Any) -> bool:
    """Whether `fully_shard` (FSDP2) was applied to the module (its class became `FSDP<Name>`; public since 2.6)."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # torch built without distributed
        return False
    return isinstance(module, FSDPModule)


# FSDP2 forward methods. `register_fsdp_forward_method(module, name)` (public) replaces `module.<name>` with a bound
# local function `wrapped_method` that runs FSDP's pre/post-forward (under `torch._dynamo.disable`) around the method,
# made with `functools.wraps` (so its `__wrapped__` is the method, its `__qualname__` the method's; its code object
# keeps its own name). Same in torch 2.11-2.15.


def fsdp_forward_method(module: Any, method: str) -> Any:
    """The method `register_fsdp_forward_method` wrapped on this module, or None when it is not such a wrapper."""
    fn = getattr(module.__dict__.get(method), "__func__", None)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name != "wrapped_method" or "fsdp" not in code.co_filename:
        return None
    return getattr(fn, "__wrapped__", None) if is_fsdp_sharded(module) else None


def register_fsdp_method(module: Any, method: str, fn: Any) -> Any:
    """Install `fn` as the method with FSDP2's pre/post-forward around it, and return what is installed."""
    from torch.distributed.fsdp import register_fsdp_forward_method

    setattr(module, method, fn)
    register_fsdp_forward_method(module, method)
    return getattr(module, method)
