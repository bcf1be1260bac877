"""CC304: what Dynamo cannot enter or is told to skip, found from the objects and torch's own code: a lock taken in a
helper the compiled forward calls (`threading`/`multiprocessing` locks, `contextlib.suppress`), an optimizer step
(torch.optim's wrapper calls `torch._dynamo.graph_break()` around the update) and an LR scheduler step (Dynamo
force-skips `torch/optim/lr_scheduler.py`) inside a compiled training step. A logger call behind a test the call's
own constants decide (`ranks=[0]`) runs on every call; `contextlib.nullcontext` and `torch.no_grad` are traced."""
import contextlib
import logging
import threading

import torch
from torch import nn, optim

logger = logging.getLogger("examples.cc304.locks")
_interrupt_lock = threading.RLock()
_missing_ok = contextlib.suppress(KeyError)
_quiet = contextlib.nullcontext()


def check_interrupted() -> None:
    with _interrupt_lock:  # expect: CC304
        pass
    with _missing_ok:  # expect: CC304
        pass


def log_dist(message: str, ranks=None) -> None:
    if ranks is None or 0 in ranks:
        logger.info(message)  # expect: CC304


def log_on(message: str, ranks=None) -> None:
    if 3 in ranks:
        logger.info(message)


class TrainStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = nn.Linear(8, 8)
        self.opt = optim.SGD(self.model.parameters(), lr=torch.tensor(0.1))
        self.sched = optim.lr_scheduler.StepLR(self.opt, step_size=2)

    def forward(self, x):
        check_interrupted()
        log_dist("step", ranks=[0])
        log_on("step", ranks=(0, 1))
        with _quiet, torch.no_grad():
            y = self.model(x)
        self.opt.step()  # expect: CC304
        self.sched.step()  # expect: CC304
        return y


def build() -> nn.Module:
    return TrainStep()
