"""Hazard: a detector's compiled box assigner takes each image's ground-truth boxes as they come from the data pipeline; the number of boxes changes per image and includes images with zero or one box, and `bbox_overlaps` branches on `rows * cols == 0`, so Dynamo compiles a static graph, then a dynamic one, then separate graphs for the 0- and 1-box specialisations. From open-edge-platform/geti#4003 (fix torch compile in detection: the empty-box branch in bbox_overlaps)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/open-edge-platform/geti/pull/4003"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


def bbox_overlaps(bboxes1: torch.Tensor, bboxes2: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    rows = bboxes1.size(-2)
    cols = bboxes2.size(-2)
    if rows * cols == 0:
        return bboxes1.new_zeros(rows, cols)
    lt = torch.max(bboxes1[:, None, :2], bboxes2[None, :, :2])
    rb = torch.min(bboxes1[:, None, 2:], bboxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    area1 = (bboxes1[:, 2] - bboxes1[:, 0]) * (bboxes1[:, 3] - bboxes1[:, 1])
    area2 = (bboxes2[:, 2] - bboxes2[:, 0]) * (bboxes2[:, 3] - bboxes2[:, 1])
    return overlap / (area1[:, None] + area2[None, :] - overlap).clamp(min=eps)


class MaxIoUAssigner(nn.Module):
    def __init__(self, pos_iou_thr: float = 0.5) -> None:
        super().__init__()
        self.pos_iou_thr = pos_iou_thr

    def forward(self, priors: torch.Tensor, gt_bboxes: torch.Tensor) -> torch.Tensor:
        overlaps = bbox_overlaps(priors, gt_bboxes)
        if gt_bboxes.shape[0] == 0:
            return priors.new_zeros(priors.shape[0], dtype=torch.long)
        max_overlaps, argmax = overlaps.max(dim=1)
        return torch.where(max_overlaps >= self.pos_iou_thr, argmax + 1, 0)


class DetectionHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cls = nn.Linear(8, 3)
        self.assigner = MaxIoUAssigner()
        xy = torch.rand(16, 2)
        self.register_buffer("priors", torch.cat([xy, xy + 0.3], dim=1))

    def loss(self, feats: torch.Tensor, gt_bboxes: torch.Tensor) -> torch.Tensor:
        assigned = self.assigner(self.priors, gt_bboxes)
        return nn.functional.cross_entropy(self.cls(feats), (assigned > 0).long())


REGION = "assigner"

_GT_PER_IMAGE = [3, 5, 0, 2, 7, 1, 4, 6]  # what the dataset yields after filtering crowd/ignored boxes


def build() -> nn.Module:
    return DetectionHead()


def step(model: nn.Module, i: int) -> None:
    xy = torch.rand(_GT_PER_IMAGE[i], 2)
    gt_bboxes = torch.cat([xy, xy + 0.3], dim=1)
    model.loss(torch.randn(16, 8), gt_bboxes).backward()
