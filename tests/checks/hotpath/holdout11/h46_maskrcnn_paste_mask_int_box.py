"""Hazard: Mask R-CNN's mask head pastes each predicted mask into the image with `w = int(box[2] - box[0] + TO_REMOVE)`, `h = int(box[3] - box[1] + TO_REMOVE)` taken from the predicted box tensor, so the compiled post-processing turns box coordinates into Python ints (a graph break on every call) and specialises on the resulting sizes. From pytorch/pytorch#93457 ([Dynamo] examples that recompile beyond cache size limit, case 1 from vision_maskrcnn)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/93457"
OBSERVED = {"compiles_over_8_steps": 12, "graph_breaks": 9}

TO_REMOVE = 1


def paste_mask_in_image(mask: torch.Tensor, box: torch.Tensor, im_h: int, im_w: int) -> torch.Tensor:
    box = box.round()
    w = int(box[2] - box[0] + TO_REMOVE)
    h = int(box[3] - box[1] + TO_REMOVE)
    w, h = max(w, 1), max(h, 1)
    mask = F.interpolate(mask[None, None], size=(h, w), mode="bilinear", align_corners=False)[0, 0]
    x0, y0 = int(box[0]), int(box[1])
    h, w = min(h, im_h - y0), min(w, im_w - x0)
    return F.pad(mask[:h, :w], (x0, im_w - x0 - w, y0, im_h - y0 - h))


class MaskRCNNPostProcessor(nn.Module):
    def __init__(self, image_size: tuple[int, int] = (16, 16)) -> None:
        super().__init__()
        self.image_size = image_size
        self.mask_logits = nn.Conv2d(4, 1, 1)

    def forward(self, mask_features: torch.Tensor, box: torch.Tensor) -> torch.Tensor:
        mask_prob = self.mask_logits(mask_features).sigmoid()[0, 0]
        return paste_mask_in_image(mask_prob, box, *self.image_size)


def build() -> nn.Module:
    return MaskRCNNPostProcessor()


def step(model: nn.Module, i: int) -> None:
    boxes = [(1.0, 2.0, 6.0, 9.0), (0.0, 0.0, 7.0, 7.0), (3.0, 3.0, 12.0, 8.0), (2.0, 5.0, 9.0, 14.0)]
    box = torch.tensor(boxes[i % 4]) + torch.rand(4) * 0.2  # the detector's predicted box for this image
    with torch.no_grad():
        model(torch.randn(1, 4, 7, 7), box)
