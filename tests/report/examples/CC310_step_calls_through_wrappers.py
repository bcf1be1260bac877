"""CC310: what the step does reaches a compiled region through wrappers too. An engine module whose forward calls the
compiled model is called under `torch.no_grad()` for a periodic evaluation and with grad otherwise (each mode its
own graph; located at the step's calls); a sampler object built on the fly (`Sampler(model).generate(...)`) passes
per-request floats unpacked from a table of tuples. Settings the same on every request are not reported."""
import torch
from torch import nn

REGION = "model"
REQUESTS = [(0.8, 0.95, 1), (0.7, 0.9, 1), (1.0, 0.95, 1)]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, temperature=1.0, top_p=1.0, top_k=1):
        return torch.softmax(self.proj(x) / temperature, -1) * top_p * top_k


class Engine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = Net()

    def forward(self, *inputs):
        return self.model(*inputs)


class Sampler:
    def __init__(self, model: nn.Module) -> None:
        self.model = model

    @torch.no_grad()
    def generate(self, x, temperature: float, top_p: float, top_k: int):
        return self.model(x, temperature, top_p, top_k)  # expect: CC310


def build() -> nn.Module:
    return Engine()


def step(engine, i):
    engine(torch.randn(2, 8)).sum().backward()  # expect: CC310 warning (with grad; under no_grad below)
    if i % 4 == 3:
        with torch.no_grad():
            engine(torch.randn(2, 8))
    temperature, top_p, top_k = REQUESTS[i % 3]
    Sampler(engine.model).generate(torch.randn(2, 8), temperature=temperature, top_p=top_p, top_k=top_k)
