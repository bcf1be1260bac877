"""Inductor cache lookups are charged to their region, those of the lazily compiled backward included."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch._dynamo.utils import counters


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)).sum()


def torch_lookups() -> dict[tuple[str, str], int]:
    ind, aot = counters["inductor"], counters["aot_autograd"]
    return {
        ("fx_graph", "hit"): ind["fxgraph_cache_hit"],
        ("fx_graph", "miss"): ind["fxgraph_cache_miss"],
        ("aot_autograd", "hit"): aot["autograd_cache_hit"],
        ("aot_autograd", "miss"): aot["autograd_cache_miss"],
    }


@pytest.mark.slow
def test_every_cache_lookup_torch_counts_forward_and_lazy_backward_is_in_the_ledger(started, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    model = Mlp()
    before = torch_lookups()
    _, mon = started('[[region]]\nname = "mlp"\nmodule = ""\nbackend = "inductor"\n', model)
    model(torch.randn(4, 8)).backward()  # forward compiles now; the backward graph compiles lazily, here
    torch_delta = {k: v - before[k] for k, v in torch_lookups().items()}
    snap = mon.snapshot()["mlp"]
    ledger = {(c, r): snap["cache"][c][r] for c in ("fx_graph", "aot_autograd") for r in ("hit", "miss")}
    assert snap["backward_compiles"] == 1
    assert sum(torch_delta.values()) >= 2 and ledger == torch_delta
