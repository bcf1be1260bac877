"""Clean: the same kornia-style augmentation asks `is_autocast_enabled()` on every call, but the torch version it checks was parsed once at import into an int tuple, so the check is a comparison of constants that Dynamo folds away. From kornia/kornia#3802 (the fix: parse `torch.__version__` once at import; the comparators become pure integer-tuple comparisons). The reported break itself is gone on torch 2.13: the per-call `packaging` parse of the pre-fix helper also compiled once with no graph break when measured for this corpus, so only the fixed form is kept, as a clean case."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import AugmentationBase2D, torch_version_ge

LABEL = None
SOURCE = "https://github.com/kornia/kornia/pull/3802"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def is_autocast_enabled(both: bool = True) -> bool:
    if not torch_version_ge(2, 4):
        return torch.is_autocast_enabled()
    return torch.is_autocast_enabled("cpu") if both else False


class RandomBrightness(AugmentationBase2D):
    def __init__(self, brightness: tuple[float, float] = (0.8, 1.2), p: float = 1.0) -> None:
        super().__init__(p=p)
        self.brightness = brightness

    def generate_parameters(self, shape: torch.Size) -> dict[str, torch.Tensor]:
        low, high = self.brightness
        return {"factor": torch.empty(shape[0], 1, 1, 1).uniform_(low, high)}

    def apply_transform(self, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
        dtype = torch.get_autocast_dtype("cpu") if is_autocast_enabled() else x.dtype
        return (x * params["factor"]).clamp(0, 1).to(dtype)


class AugmentationPipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.brightness = RandomBrightness()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.brightness(images)


def build() -> nn.Module:
    return AugmentationPipeline()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.rand(2, 3, 8, 8))
