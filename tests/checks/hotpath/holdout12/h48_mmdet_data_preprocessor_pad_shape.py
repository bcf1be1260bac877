"""Hazard: with mmengine's `compile=True` the detector's data preprocessor runs inside the compiled region; `DetDataPreprocessor._get_pad_shape` computes each image's pad shape with `np.ceil` over the image sizes and writes it into every `DetDataSample`, and with RandomResize batches the numpy call pins each size as a constant, so every new image size recompiles (the same preprocessor with integer arithmetic goes dynamic after one recompile). From open-mmlab/mmdetection#11154 (the compile example fails at `_get_pad_shape` in data_preprocessor.py)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import BaseDataPreprocessor, DetDataSample

LABEL = "shape"
SOURCE = "https://github.com/open-mmlab/mmdetection/issues/11154"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class DetDataPreprocessor(BaseDataPreprocessor):
    def _get_pad_shape(self, data: dict) -> list[tuple[int, int]]:
        batch_pad_shape = []
        for ori_input in data["inputs"]:
            pad_h = int(np.ceil(ori_input.shape[1] / self.pad_size_divisor)) * self.pad_size_divisor
            pad_w = int(np.ceil(ori_input.shape[2] / self.pad_size_divisor)) * self.pad_size_divisor
            batch_pad_shape.append((pad_h, pad_w))
        return batch_pad_shape

    def forward(self, data: dict, training: bool = False) -> dict:
        batch_pad_shape = self._get_pad_shape(data)
        data = super().forward(data=data, training=training)
        inputs, data_samples = data["inputs"], data["data_samples"]
        batch_input_shape = tuple(inputs[0].size()[-2:])
        for data_sample, pad_shape in zip(data_samples, batch_pad_shape):
            data_sample.set_metainfo({"batch_input_shape": batch_input_shape, "pad_shape": pad_shape})
        return {"inputs": inputs, "data_samples": data_samples}


class RTMDet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.data_preprocessor = DetDataPreprocessor(mean=[103.5, 116.3, 123.7], std=[57.4, 57.1, 58.4], pad_size_divisor=4)
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.SiLU(), nn.AdaptiveAvgPool2d(1))
        self.bbox_head = nn.Linear(8, 4)

    def forward(self, data: dict, training: bool = True) -> torch.Tensor:
        data = self.data_preprocessor(data, training)
        feats = self.backbone(data["inputs"]).flatten(1)
        return self.bbox_head(feats)


def build() -> nn.Module:
    return RTMDet()


_SIZES = [(14, 16), (12, 18), (16, 13), (15, 15), (13, 17), (18, 12), (14, 14), (17, 16)]  # RandomResize output


def step(model: nn.Module, i: int) -> None:
    h, w = _SIZES[i]
    data = {
        "inputs": [torch.randint(0, 255, (3, h, w), dtype=torch.uint8), torch.randint(0, 255, (3, w, h), dtype=torch.uint8)],
        "data_samples": [DetDataSample({"img_shape": (h, w)}), DetDataSample({"img_shape": (w, h)})],
    }
    model(data).sum().backward()
