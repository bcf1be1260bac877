"""Library-style stand-ins used by author A's holdout13 cases (a sampler, an FSDP-like sharding helper, float8 utilities)."""
from __future__ import annotations

import math

import torch
from torch import nn


# --- k-diffusion / EDM style sampler -------------------------------------------------------------------------------


def get_sigmas_karras(n: int, sigma_min: float = 0.002, sigma_max: float = 80.0, rho: float = 7.0) -> list[float]:
    """Karras et al. noise levels, returned as plain Python floats (as many samplers keep them)."""
    ramp = [i / max(n - 1, 1) for i in range(n)]
    min_inv_rho, max_inv_rho = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
    return [(max_inv_rho + r * (min_inv_rho - max_inv_rho)) ** rho for r in ramp]


class EulerSampler:
    def __init__(self, steps: int = 8) -> None:
        self.sigmas = get_sigmas_karras(steps)

    def denoise(self, model: nn.Module, x: torch.Tensor, i: int) -> torch.Tensor:
        sigma = self.sigmas[i]
        with torch.no_grad():
            denoised = model(x, sigma)
        return denoised


# --- FSDP-like sharding helper (torch.distributed.fsdp.fully_shard stand-in) ---------------------------------------


class _ShardState:
    def __init__(self, module: nn.Module) -> None:
        self.module = module
        self.flat_param = torch.cat([p.detach().reshape(-1) for p in module.parameters()])
        self.unsharded = False

    @torch.compiler.disable
    def pre_forward(self, module: nn.Module, args):
        # all-gather stand-in: copy the flat shard back into the parameters
        offset = 0
        with torch.no_grad():
            for p in module.parameters():
                n = p.numel()
                p.copy_(self.flat_param[offset : offset + n].view_as(p))
                offset += n
        self.unsharded = True
        return args

    @torch.compiler.disable
    def post_forward(self, module: nn.Module, args, output):
        self.unsharded = False  # reshard after forward
        return output


def fully_shard(module: nn.Module) -> nn.Module:
    """Registers the (dynamo-disabled) unshard / reshard hooks the way FSDP2 does on the module it wraps."""
    state = _ShardState(module)
    module._fsdp_state = state
    module.register_forward_pre_hook(state.pre_forward)
    module.register_forward_hook(state.post_forward)
    return module


# --- float8 training utilities (torchao.float8 / float8_experimental stand-ins) ------------------------------------

E4M3_MAX_POS = 448.0
EPS = 1e-12


def amax_to_scale(amax: torch.Tensor) -> torch.Tensor:
    return E4M3_MAX_POS / torch.clamp(amax.float(), min=EPS)


def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    """Called by the training loop once per step, outside the compiled region."""
    for child in model.modules():
        if getattr(child, "is_float8_linear", False):
            with torch.no_grad():
                child.fp8_amax_history_input.copy_(torch.roll(child.fp8_amax_history_input, 1))
                child.fp8_scale_input.copy_(amax_to_scale(child.fp8_amax_history_input.max()))
            child.amax_and_scale_synced = True


def precompute_float8_dynamic_scale_for_fsdp(model: nn.Module) -> None:
    """One all-reduce for every float8 weight's amax after optimizer.step(); stores the scale on each linear."""
    linears = [m for m in model.modules() if getattr(m, "is_float8_linear", False)]
    if not linears:
        return
    with torch.no_grad():
        amaxes = torch.stack([m.weight.abs().max() for m in linears])
        scales = amax_to_scale(amaxes)
    for m, scale in zip(linears, scales):
        m.precomputed_scale = scale.reshape(1, 1)  # the shape the report found: [[s]] instead of a scalar


def precompute_float8_dynamic_scale_squeezed(model: nn.Module) -> None:
    """The fixed version: the scale is written in place into a 0-d buffer that exists from construction."""
    linears = [m for m in model.modules() if getattr(m, "is_float8_linear", False)]
    with torch.no_grad():
        for m in linears:
            m.precomputed_scale.copy_(amax_to_scale(m.weight.abs().max()).squeeze())


def cosine(i: int, total: int) -> float:
    return 0.5 * (1 + math.cos(math.pi * i / total))
