"""Hazard: after `model.fuse()` every ultralytics `Conv` runs `forward_fuse`, and the user compiles the layers of `DetectionModel.model`; all the Conv layers share the one `forward_fuse` code object but differ in kernel size, stride, activation and input shape, so each layer fails the guards of the graphs compiled for the others and Dynamo recompiles `forward_fuse` layer after layer (toward the recompile limit on a real YOLO with dozens of Conv layers). From ultralytics/ultralytics#6022 (Compile YOLO models using torch.compile: lots of recompiles of forward_fuse in conv.py)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/ultralytics/ultralytics/issues/6022"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 0}
REGION = "model.*"


def autopad(k: int, p: int | None = None, d: int = 1) -> int:
    return k // 2 if p is None else p


class Conv(nn.Module):
    """Standard convolution with args(ch_in, ch_out, kernel, stride, padding, groups, dilation, activation)."""

    default_act = nn.SiLU()  # default activation

    def __init__(self, c1, c2, k=1, s=1, p=None, g=1, d=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p, d), groups=g, dilation=d, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = self.default_act if act is True else act if isinstance(act, nn.Module) else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))

    def forward_fuse(self, x):
        return self.act(self.conv(x))


def fuse_conv_and_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                      dilation=conv.dilation, groups=conv.groups, bias=True).requires_grad_(False)
    w_bn = torch.diag(bn.weight.div(torch.sqrt(bn.eps + bn.running_var)))
    fused.weight.copy_(torch.mm(w_bn, conv.weight.view(conv.out_channels, -1)).view(fused.weight.shape))
    b_bn = bn.bias - bn.weight.mul(bn.running_mean).div(torch.sqrt(bn.running_var + bn.eps))
    fused.bias.copy_(b_bn)
    return fused


class DetectionModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layers = [
            Conv(3, 8, 3, 2),  # 0-P1/2
            Conv(8, 8, 3, 2),  # 1-P2/4
            Conv(8, 8, 1, 1),  # 2
            Conv(8, 8, 3, 2),  # 3-P3/8
            Conv(8, 8, 5, 1, act=nn.ReLU()),  # 4
            Conv(8, 8, 3, 2),  # 5-P4/16
            Conv(8, 8, 1, 1, act=False),  # 6 head stem
        ]
        for i, m in enumerate(layers):
            m.i, m.f, m.type = i, -1, "ultralytics.nn.modules.conv.Conv"
        self.model = nn.Sequential(*layers)
        self.save: list[int] = []

    def fuse(self) -> "DetectionModel":
        for m in self.model.modules():
            if isinstance(m, Conv) and hasattr(m, "bn"):
                m.conv = fuse_conv_and_bn(m.conv, m.bn)
                delattr(m, "bn")  # remove batchnorm
                m.forward = m.forward_fuse  # update forward
        return self

    def forward(self, x):
        return self._predict_once(x)

    def _predict_once(self, x):
        y = []
        for m in self.model:
            if m.f != -1:  # if not from previous layer
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            x = m(x)  # run
            y.append(x if m.i in self.save else None)  # save output
        return x


def build() -> nn.Module:
    return DetectionModel().eval().fuse()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 3, 32, 32))  # one letterboxed frame per predictor call
