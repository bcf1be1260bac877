"""Library-style code for author A's holdout7 cases: small stand-ins for MACE/e3nn utilities, torchmd-net's scatter,
fairchem's graph builder, torchtune's generation helpers, mujoco-torch's MjData, float8_experimental's sync function,
timm's fast-norm switch and torchtitan's FLOP counter. Each keeps the call shape of the library it stands for."""
from __future__ import annotations

import dataclasses
from typing import Optional

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

# --- mace.modules.utils ---------------------------------------------------------------------------------------------


def compute_forces(energy: torch.Tensor, positions: torch.Tensor, training: bool = True) -> torch.Tensor:
    grad_outputs: list[Optional[torch.Tensor]] = [torch.ones_like(energy)]
    gradient = torch.autograd.grad(
        outputs=[energy],
        inputs=[positions],
        grad_outputs=grad_outputs,
        retain_graph=training,
        create_graph=training,
        allow_unused=True,
    )[0]
    if gradient is None:
        return torch.zeros_like(positions)
    return -1 * gradient


def get_outputs(energy: torch.Tensor, positions: torch.Tensor, training: bool, compute_force: bool = True) -> dict:
    forces = compute_forces(energy, positions, training) if compute_force else None
    return {"energy": energy, "forces": forces}


# --- torchmdnet.utils / torch_scatter -------------------------------------------------------------------------------


def scatter(src: torch.Tensor, index: torch.Tensor, dim: int = 0, dim_size: Optional[int] = None, reduce: str = "sum") -> torch.Tensor:
    if dim_size is None:
        dim_size = int(index.max().item()) + 1
    out = torch.zeros(dim_size, *src.shape[1:], dtype=src.dtype, device=src.device)
    return out.index_add(dim, index, src)


# --- fairchem.core.graph --------------------------------------------------------------------------------------------


def radius_graph(pos: torch.Tensor, cutoff: float, max_num_neighbors: int = 32) -> torch.Tensor:
    """Edges (2, E) between atoms closer than `cutoff`; E changes as the atoms move (computed outside the model)."""
    dist = torch.cdist(pos, pos)
    mask = (dist < cutoff) & ~torch.eye(pos.shape[0], dtype=torch.bool)
    return mask.nonzero().t().contiguous()


def radius_graph_pbc_padded(pos: torch.Tensor, cutoff: float, max_edges: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Same edges, padded to a fixed `max_edges` with a validity mask (fixed-shape edge list)."""
    edge_index = radius_graph(pos, cutoff)
    n = edge_index.shape[1]
    padded = torch.zeros(2, max_edges, dtype=edge_index.dtype)
    padded[:, : min(n, max_edges)] = edge_index[:, :max_edges]
    mask = torch.arange(max_edges) < n
    return padded, mask


# --- mujoco_torch.types / device_put --------------------------------------------------------------------------------


@dataclasses.dataclass
class MjData:
    qpos: torch.Tensor
    qvel: torch.Tensor
    nefc: int  # number of active constraint rows, changes with contacts
    ncon: int  # number of contacts


@dataclasses.dataclass
class MjDataT:
    qpos: torch.Tensor
    qvel: torch.Tensor
    nefc: torch.Tensor  # 0-d int tensor (what the fix wraps the count in)
    ncon: torch.Tensor


def device_put(qpos: torch.Tensor, qvel: torch.Tensor, nefc: int, ncon: int) -> MjData:
    return MjData(qpos=qpos, qvel=qvel, nefc=nefc, ncon=ncon)


def device_put_tensors(qpos: torch.Tensor, qvel: torch.Tensor, nefc: int, ncon: int) -> MjDataT:
    return MjDataT(qpos=qpos, qvel=qvel, nefc=torch.tensor(nefc), ncon=torch.tensor(ncon))


# --- float8_experimental.float8_linear_utils -----------------------------------------------------------------------


def sync_float8_amax_and_scale_history(model: torch.nn.Module) -> None:
    """Called by the training loop after every optimizer step: folds the amax history into the scales and marks each
    Float8Linear as synced."""
    for child in model.modules():
        if getattr(child, "is_float8_linear", False):
            with torch.no_grad():
                amax = child.fp8_amax_history_x.max()
                child.fp8_scale_x.copy_(448.0 / torch.clamp(amax, min=1e-12))
            child.amax_and_scale_synced = True


# --- timm.layers.fast_norm ------------------------------------------------------------------------------------------

_USE_FAST_NORM = False


def is_fast_norm() -> bool:
    return _USE_FAST_NORM


def set_fast_norm(enable: bool = True) -> None:
    global _USE_FAST_NORM
    _USE_FAST_NORM = enable


def get_autocast_dtype(device: str = "cuda") -> torch.dtype:
    return torch.get_autocast_dtype(device)


def is_autocast_enabled(device: str = "cuda") -> bool:
    return torch.is_autocast_enabled(device)


def fast_layer_norm(x: torch.Tensor, normalized_shape, weight, bias, eps: float = 1e-5) -> torch.Tensor:
    if torch.jit.is_scripting():
        return F.layer_norm(x, normalized_shape, weight, bias, eps)
    if is_autocast_enabled(x.device.type):
        dt = get_autocast_dtype(x.device.type)
        x, weight, bias = x.to(dt), weight.to(dt), bias.to(dt) if bias is not None else None
    with torch.amp.autocast(device_type=x.device.type, enabled=False):
        x = F.layer_norm(x, normalized_shape, weight, bias, eps)
    return x


# --- torchtitan.tools.utils (FLOP counting for MFU) -----------------------------------------------------------------


class MFUTracker:
    """Counts the FLOPs of the training step with FlopCounterMode to report MFU."""

    def __init__(self) -> None:
        self.flops: list[int] = []

    def measure(self):
        self._mode = FlopCounterMode(display=False)
        return self._mode

    def record(self) -> None:
        self.flops.append(self._mode.get_total_flops())


# --- cuequivariance (Irreps objects) --------------------------------------------------------------------------------


class Irrep:
    def __init__(self, l: int, p: int) -> None:
        self.l, self.p = l, p

    @property
    def dim(self) -> int:
        return 2 * self.l + 1

    def __repr__(self) -> str:
        return f"{self.l}{'e' if self.p == 1 else 'o'}"


class MulIrrep(tuple):
    def __new__(cls, mul: int, ir: Irrep):
        return super().__new__(cls, (mul, ir))

    @property
    def mul(self) -> int:
        return self[0]

    @property
    def ir(self) -> Irrep:
        return self[1]

    @property
    def dim(self) -> int:
        return self.mul * self.ir.dim


class Irreps(tuple):
    """cue.Irreps("O3", "4x0e + 1x1o") reduced: a tuple of (mul, ir) with a computed `dim`."""

    def __new__(cls, group: str, spec: str):
        items = []
        for term in spec.split("+"):
            mul, ir = term.strip().split("x")
            items.append(MulIrrep(int(mul), Irrep(int(ir[0]), 1 if ir[1] == "e" else -1)))
        obj = super().__new__(cls, items)
        obj.group = group
        return obj

    @property
    def dim(self) -> int:
        return sum(mul_ir.dim for mul_ir in self)

    def __repr__(self) -> str:
        return " + ".join(f"{m.mul}x{m.ir!r}" for m in self)


# --- torchao.quantization.prototype.qat (8da4w) ---------------------------------------------------------------------


def _fake_quantize_per_channel_group(w: torch.Tensor, groupsize: int, n_bit: int = 4) -> torch.Tensor:
    qmax = 2 ** (n_bit - 1) - 1
    wg = w.reshape(-1, groupsize)
    scale = wg.abs().amax(dim=-1, keepdim=True).clamp(min=1e-6) / qmax
    q = torch.clamp(torch.round(wg / scale), -qmax - 1, qmax)
    return (wg + (q * scale - wg).detach()).reshape_as(w)  # straight-through estimator


class Int8DynActInt4WeightQATLinear(torch.nn.Linear):
    def __init__(self, in_features: int, out_features: int, bias: bool = False, groupsize: int = 4) -> None:
        super().__init__(in_features, out_features, bias=bias)
        self.groupsize = groupsize
        self._fake_quant_enabled = True

    def enable_fake_quant(self, enabled: bool = True) -> None:
        self._fake_quant_enabled = enabled

    def disable_fake_quant(self) -> None:
        self.enable_fake_quant(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fake_quant_enabled:
            scale = x.abs().amax(dim=-1, keepdim=True).clamp(min=1e-6) / 127
            x = x + (torch.clamp(torch.round(x / scale), -128, 127) * scale - x).detach()
            w = _fake_quantize_per_channel_group(self.weight, self.groupsize)
        else:
            w = self.weight
        return F.linear(x, w)


def enable_8da4w_fake_quant(mod: torch.nn.Module) -> None:
    if isinstance(mod, Int8DynActInt4WeightQATLinear):
        mod.enable_fake_quant()


def disable_8da4w_fake_quant(mod: torch.nn.Module) -> None:
    if isinstance(mod, Int8DynActInt4WeightQATLinear):
        mod.disable_fake_quant()


class Int8DynActInt4WeightQATQuantizer:
    def __init__(self, groupsize: int = 4) -> None:
        self.groupsize = groupsize

    def prepare(self, model: torch.nn.Module) -> torch.nn.Module:
        for name, child in list(model.named_children()):
            if type(child) is torch.nn.Linear:
                new = Int8DynActInt4WeightQATLinear(child.in_features, child.out_features, groupsize=self.groupsize)
                new.weight = child.weight
                setattr(model, name, new)
            else:
                self.prepare(child)
        return model


# --- a research repo's probing utilities (module-level feature bank) ------------------------------------------------

FEATURE_BANK: list = []


def stash_features(name: str, feats: torch.Tensor) -> None:
    """Keep a detached copy of a block's output for the linear probe run at the end of the epoch."""
    FEATURE_BANK.append((name, feats.detach()))


def consume_features() -> list:
    out = list(FEATURE_BANK)
    FEATURE_BANK.clear()
    return out
