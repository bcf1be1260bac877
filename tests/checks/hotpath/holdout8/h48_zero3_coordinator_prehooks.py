"""Hazard: DeepSpeed ZeRO-3 registers forward pre/post hooks on every submodule that drive its PartitionedParameterCoordinator: each pre-hook bumps the coordinator's step id, records the submodule order while the trace mode is RECORD and flips the parameters' `ds_status`; the engine's `reset_step()` after the step switches the trace to COMPLETE. With the model compiled the hooks are traced into the region, so the coordinator's Python state (mode, recorded order, per-parameter status) is guarded and the second step recompiles. From deepspeedai/DeepSpeed#6719 (ZeRO-3 with torch.compile: a lot of graph breaks and recompiles)."""
from __future__ import annotations

import enum

import torch
from torch import nn

LABEL = "pre-hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/issues/6719"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class ZeroParamStatus(enum.Enum):
    AVAILABLE = 1
    NOT_AVAILABLE = 2
    INFLIGHT = 3


class ZeRoTraceMode(enum.Enum):
    RECORD = 1
    COMPLETE = 2
    INVALID = 3


class PartitionedParameterCoordinator:
    def __init__(self) -> None:
        self.__submodule_order: list[nn.Module] = []
        self.__step_id = 0
        self.__trace_mode = ZeRoTraceMode.RECORD

    def is_record_trace(self) -> bool:
        return self.__trace_mode == ZeRoTraceMode.RECORD

    def record_module(self, sub_module: nn.Module) -> None:
        self.__submodule_order.append(sub_module)

    def fetch_sub_module(self, sub_module: nn.Module, forward: bool) -> None:
        if self.is_record_trace():
            self.record_module(sub_module)
        for param in sub_module.parameters(recurse=False):
            if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:
                param.ds_status = ZeroParamStatus.AVAILABLE  # all-gather (the full tensor is kept here)
        self.__step_id += 1

    def release_sub_module(self, sub_module: nn.Module) -> None:
        for param in sub_module.parameters(recurse=False):
            param.ds_status = ZeroParamStatus.NOT_AVAILABLE

    def reset_step(self) -> None:
        if self.is_record_trace():
            self.__trace_mode = ZeRoTraceMode.COMPLETE
        self.__step_id = 0


class DeepSpeedZeRoOffload:
    """Installs the ZeRO-3 module hooks (deepspeed/runtime/zero/parameter_offload.py)."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module
        self.param_coordinator = PartitionedParameterCoordinator()
        for param in module.parameters():
            param.ds_status = ZeroParamStatus.NOT_AVAILABLE
        self.setup_zero_stage3_hooks()

    def setup_zero_stage3_hooks(self) -> None:
        def _pre_forward_module_hook(module, *args):
            self.param_coordinator.fetch_sub_module(module, forward=True)

        def _post_forward_module_hook(module, input, output):
            self.param_coordinator.release_sub_module(module)

        for sub_module in self.module.modules():
            if next(sub_module.parameters(recurse=False), None) is None:
                continue
            sub_module.register_forward_pre_hook(_pre_forward_module_hook)
            sub_module.register_forward_hook(_post_forward_module_hook)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.LayerNorm1 = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.LayerNorm1(torch.relu(self.fc1(x))))


class DeepSpeedEngine:
    def __init__(self, model: nn.Module) -> None:
        self.module = model
        self.optimizer_offload = DeepSpeedZeRoOffload(model)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_batch(self, x: torch.Tensor, y: torch.Tensor) -> None:
        loss = nn.functional.cross_entropy(self.module(x), y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.optimizer_offload.param_coordinator.reset_step()  # engine.step() -> end of the ZeRO-3 step


def build() -> nn.Module:
    model = Net()
    model.engine = DeepSpeedEngine(model)  # plain attribute, not a submodule
    return model


def step(model: nn.Module, i: int) -> None:
    model.engine.train_batch(torch.randn(4, 8), torch.randint(0, 4, (4,)))
