"""A small decoder shipped with the package, so a new user sees the product work with no model of their own.

`build_model()` is clean. `build_hazard_model()` carries the classic incident: its MoE router keeps Python `int`
counters incremented in forward, so Dynamo guards on their values and recompiles every step.
Run: `python -m contract.demo contracts/demo.toml --steps 4`.
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn

VOCAB, DIM, HEADS, EXPERTS, LAYERS = 256, 64, 4, 4, 4


class Attention(nn.Module):
    """Causal self-attention with fused QKV."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Router(nn.Module):
    """Top-1 router; counts tokens routed beyond an expert's capacity in a buffer, in place, under no_grad."""

    def __init__(self, dim: int, experts: int, capacity: float = 1.25) -> None:
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False)
        self.capacity = capacity
        self.overflow_total: torch.Tensor
        self.register_buffer("overflow_total", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.gate(x).argmax(-1)
        counts = nn.functional.one_hot(choice.flatten(), self.gate.out_features).sum(0)
        limit = int(self.capacity * choice.numel() / self.gate.out_features)
        with torch.no_grad():
            self.overflow_total.add_((counts - limit).clamp(min=0).sum())
        return choice


class HazardRouter(Router):
    """The incident: Python-int counters on the hot path (Dynamo specializes on their values)."""

    def __init__(self, dim: int, experts: int, capacity: float = 1.25) -> None:
        super().__init__(dim, experts, capacity)
        self.batches = 0
        self.overflow_count = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.gate(x).argmax(-1)
        self.batches += 1
        self.overflow_count += self.batches % 2
        return choice


class MoE(nn.Module):
    """Mixture of experts with a top-1 router."""

    def __init__(self, dim: int, experts: int, router: type[Router] = Router) -> None:
        super().__init__()
        self.router = router(dim, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)) for _ in range(experts)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.router(x)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            out = out + expert(x) * (choice == i).unsqueeze(-1).to(x.dtype)
        return out


class Block(nn.Module):
    """Pre-norm decoder block: attention, then a MoE feed-forward."""

    def __init__(self, dim: int, heads: int, experts: int, router: type[Router] = Router) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.moe = MoE(dim, experts, router)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.moe(self.norm2(x))


class TinyDecoder(nn.Module):
    """Embedding, decoder blocks, final norm, LM head."""

    def __init__(self, router: type[Router] = Router, layers: int = LAYERS) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block(DIM, HEADS, EXPERTS, router) for _ in range(layers))
        self.norm = nn.LayerNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def build_model() -> TinyDecoder:
    """The clean demo model (deterministic weights)."""
    torch.manual_seed(0)
    return TinyDecoder().eval()


def build_hazard_model() -> TinyDecoder:
    """The demo model with the Python-int counter router."""
    torch.manual_seed(0)
    return TinyDecoder(router=HazardRouter).eval()


def step(model: nn.Module, i: int) -> torch.Tensor:
    """One inference step on a fixed-shape batch of tokens."""
    gen = torch.Generator().manual_seed(i)
    tokens = torch.randint(0, VOCAB, (2, 16), generator=gen)
    with torch.no_grad():
        return model(tokens)


def main(argv: list[str] | None = None) -> int:
    """Check the contract, apply it, and run a few steps."""
    from contract.document.load import ContractFileError, load
    from contract.document.refs import RefError
    from contract.document.refs import build_model as build
    from contract.pipeline import ContractViolation, enforce

    parser = argparse.ArgumentParser(prog="python -m contract.demo", description=main.__doc__)
    parser.add_argument("contract", nargs="?", default="contracts/demo.toml")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument(
        "--skip-check", action="store_true", help="apply without refusing on findings (show the monitor)"
    )
    args = parser.parse_args(argv)
    try:
        contract, _ = load(args.contract)
        model = build(
            contract.meta.model if contract and contract.meta and contract.meta.model else "contract.demo:build_model"
        )
        binding = _apply_unchecked(model, args.contract) if args.skip_check else enforce(model, args.contract)
    except (ContractFileError, RefError) as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 2
    except ContractViolation as exc:
        print(f"engine refused to start:\n{exc}", file=sys.stderr)
        return 1
    import monitor

    with monitor.start(binding) as mon:
        for i in range(args.steps):
            out = step(model, i)
            print(f"step {i}: logits {tuple(out.shape)} mean {out.float().mean().item():+.5f}")
            if i == 0:
                mon.mark_warm()
        summary = mon.snapshot()
    states = {name: rb.state for name, rb in binding.regions.items()}
    print(f"regions: {states}")
    for name, s in summary.items():
        print(
            f"region {name}: compiles={s['compiles']} recompiles={s['recompiles']} graph_breaks={s['graph_breaks']} "
            f"compile_seconds={s['compile_seconds']:.2f} breached={s['breached']} eager_fallback={s['eager_fallback']}"
        )
    print(_report_pointer(binding))
    return 0


def _report_pointer(binding) -> str:
    """Where the post-mortem report comes from: the event files, or the key that writes them."""
    from monitor.events import report_hint

    events = binding.contract.monitor.events_path
    if not events:
        return "post-mortem report: set [monitor] events_path, then run `compile-contract report EVENT_FILES -o DIR`"
    return f"post-mortem report: {report_hint(str(binding.contract.resolve_path(events)))}"


def _apply_unchecked(model: nn.Module, path: str):
    """`--skip-check`: check and apply, reporting findings instead of refusing (the hazard demo)."""
    from contract.binding.apply import apply
    from contract.pipeline import check

    _, binding, findings = check(path, model)
    for f in findings:
        print(f"finding (not enforced): {f.code} {f.location}: {f.message}", file=sys.stderr)
    if binding is None:
        raise SystemExit(2)
    return apply(binding)


if __name__ == "__main__":
    sys.exit(main())
