"""Library-style stand-ins used by author A's cases (a Kalman-filter demo step, a safe-action spec, an annealing
schedule, a torchvision-style normalize)."""
from __future__ import annotations

import torch


class BoundedSpec:
    """torchrl-style tensor spec: `is_in` checks a value lies within [low, high]."""

    def __init__(self, low: float, high: float, shape: tuple[int, ...]) -> None:
        self.low = torch.full(shape, low)
        self.high = torch.full(shape, high)

    def is_in(self, val: torch.Tensor) -> bool:
        within_bounds = (val >= self.low.to(val.device)).all() and (val <= self.high.to(val.device)).all()
        return bool(within_bounds)

    def project(self, val: torch.Tensor) -> torch.Tensor:
        return val.clamp(self.low, self.high)


def forward_hook_safe_action(module, args, output):
    """Registered on the policy: project the action into its spec when it falls outside."""
    spec = module.action_spec
    if not spec.is_in(output):
        output = spec.project(output)
    return output


def forward_hook_always_project(module, args, output):
    """Branch-free variant: clamp unconditionally (clamp is the identity inside the bounds)."""
    return module.action_spec.project(output)


class TemperatureSchedule:
    """Anneals a distillation temperature: each call advances the schedule by one step."""

    def __init__(self, start: float = 4.0, end: float = 1.0, total_steps: int = 100) -> None:
        self.start, self.end, self.total_steps = start, end, total_steps
        self.num_steps = 0

    def __call__(self) -> float:
        t = min(self.num_steps / self.total_steps, 1.0)
        self.num_steps += 1
        return self.start + (self.end - self.start) * t


def normalize_image(tensor: torch.Tensor, mean: list[float], std: list[float]) -> torch.Tensor:
    """torchvision.transforms.v2.functional.normalize_image before pytorch/vision#9314: eager validation of std."""
    mean_t = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std_t = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if (std_t == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    return (tensor - mean_t.view(-1, 1, 1)) / std_t.view(-1, 1, 1)


def normalize_image_checked_in_graph(tensor: torch.Tensor, mean: list[float], std: list[float]) -> torch.Tensor:
    """After pytorch/vision#9314: the zero-std check becomes an in-graph assert, no Python branch on a tensor."""
    mean_t = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std_t = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    torch._assert_async((std_t != 0).all(), "std evaluated to zero, leading to division by zero.")
    return (tensor - mean_t.view(-1, 1, 1)) / std_t.view(-1, 1, 1)


# --- a layer-config module in the style of timm.layers.config: process-wide switches read by the layers ---
def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x, approximate="tanh")


def _gelu_exact(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x)


_ACT_FN = _gelu_tanh


def set_exportable(exportable: bool) -> None:
    """Switch every layer to the export-friendly activation (what an export/eval callback calls)."""
    global _ACT_FN
    _ACT_FN = _gelu_exact if exportable else _gelu_tanh


def get_act_fn():
    return _ACT_FN
