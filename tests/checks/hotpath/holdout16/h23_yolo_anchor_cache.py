"""Hazard: the YOLO detection head caches its anchors from inside `forward` at inference: `if self.dynamic or self.shape != shape: self.anchors, self.strides = make_anchors(...); self.shape = shape`. Compiled, the first call traces with `shape = None` and re-assigns it, so the second call fails the guard on `self.shape` and recompiles; validating with `rect=True` (letterboxed batches of another size) rebuilds the anchors and recompiles again (4 compiles over 8 steps). From ultralytics/ultralytics#21996 (removing the `disable_dynamo` wrapper that had kept `Detect.inference()` out of the compiled graph for `rect=True` validation)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import Detect, make_anchors

LABEL = "assigned"
SOURCE = "https://github.com/ultralytics/ultralytics/pull/21996"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class CachedAnchorDetect(Detect):
    def forward(self, feats: list[torch.Tensor]) -> torch.Tensor:
        feats = [cv(f) for cv, f in zip(self.cv, feats)]
        shape = feats[0].shape  # BCHW
        if self.dynamic or self.shape != shape:
            self.anchors, self.strides = make_anchors(feats, self.stride, 0.5)
            self.shape = shape
        return self.decode(feats)


class TinyYOLO(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.p3 = nn.Conv2d(3, 8, 3, stride=8, padding=1)
        self.p4 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.detect = CachedAnchorDetect()

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        p3 = self.p3(img)
        return self.detect([p3, self.p4(p3)])


def build() -> nn.Module:
    return TinyYOLO().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    # square 32x32 batches, then rect=True validation batches letterboxed to 32x48
    img = torch.randn(2, 3, 32, 32) if i < 5 else torch.randn(2, 3, 32, 48)
    model(img)
