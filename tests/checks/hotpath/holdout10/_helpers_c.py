"""Library stand-ins for author C's holdout10 cases (an engine wrapper, an attention op, a config system)."""
from __future__ import annotations

import torch
from torch import nn


class DeepSpeedLikeEngine(nn.Module):
    """Wraps the user model like `deepspeed.DeepSpeedEngine`: forward delegates to `self.module`."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        super().__init__()
        self.module = model
        self.optimizer = optimizer
        self.global_steps = 0

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def step(self) -> None:
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.global_steps += 1


class fmha:  # noqa: N801 - mirrors `xformers.ops.fmha`
    """Stand-in for xformers' fused attention entry point: its Python dispatcher (operator selection over the
    registered C++/CUDA kernels) is not something Dynamo can trace, so calling it from compiled code breaks the graph."""

    class LowerTriangularMask:
        pass

    @staticmethod
    @torch._dynamo.disable
    def memory_efficient_attention(q, k, v, attn_bias=None, p: float = 0.0):
        # BMHK layout like xformers
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        causal = isinstance(attn_bias, fmha.LowerTriangularMask)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
        return out.transpose(1, 2)


memory_efficient_attention = fmha.memory_efficient_attention


# --- a DeepSpeed-style logging utility module (deepspeed/utils/logging.py) ---
import logging as _logging

logger = _logging.getLogger("DeepSpeed")
logger.setLevel(_logging.WARNING)


def log_dist(message: str, ranks=None, level: int = _logging.INFO) -> None:
    """Log on the given ranks only (rank 0 here)."""
    if ranks is None or 0 in ranks:
        logger.log(level, f"[Rank 0] {message}")


def log_dist_unless_compiling(message: str, ranks=None, level: int = _logging.INFO) -> None:
    """Same, but skipped while Dynamo traces (what DISABLE_LOGS_WHILE_COMPILING does)."""
    if torch.compiler.is_compiling():
        return
    log_dist(message, ranks=ranks, level=level)


# --- a TransformerEngine-style module library (transformer_engine/pytorch) ---
def no_torch_dynamo(recursive: bool = True):
    """TE's decorator: keep Dynamo out of the fused-kernel modules' forward."""

    def wrapper(f):
        return torch._dynamo.disable(f, recursive=recursive)

    return wrapper


class TELinear(nn.Linear):
    """Stand-in for transformer_engine.pytorch.Linear (its forward runs the fused cuBLASLt/FP8 path)."""

    @no_torch_dynamo()
    def forward(self, inp: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return super().forward(inp)


class TELayerNormMLP(nn.Module):
    """Stand-in for transformer_engine.pytorch.LayerNormMLP."""

    def __init__(self, hidden_size: int, ffn_hidden_size: int) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(hidden_size)
        self.fc1 = nn.Linear(hidden_size, ffn_hidden_size)
        self.fc2 = nn.Linear(ffn_hidden_size, hidden_size)

    @no_torch_dynamo()
    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(self.layer_norm(inp))))
