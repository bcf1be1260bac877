"""`generate()` compiling itself (static cache, Hugging Face's default compile config: Inductor, `reduce-overhead`
CUDA graphs) under `GenerateContract`: the engine's compile verified at its first compile, counted under the region
over the model, recompiles for a new prompt length shown with their guard, CUDA-graph recordings charged to the
region; and the decode latency with the contract against the same model without it (interleaved calls).

Run on a GPU: `python bench/bench_generate_engine.py` (a small Llama from a config, random weights: nothing is
downloaded). `--mismatch` writes `mode = "max-autotune"` into the contract instead: the first compile is then an
`engine_compile_mismatch` breach.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from prometheus_client import CollectorRegistry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from contract.integrations.hf import GenerateContract

CONTRACT = """
[contract]
name = "llama-generate"
[[region]]
name = "model"
module = ""
compiled_by = "engine"
verify_at = "first_compile"
backend = "inductor"
mode = "{mode}"
recompile_budget = 4
"""


class Keep:
    """The monitor's logger: keeps (event, fields)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **fields: self.events.append((event, fields))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [f for e, f in self.events if e == name]


def build(layers: int, hidden: int) -> Any:
    """A Llama from a small config on the GPU, bf16, random weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=32000,
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=hidden // 128,
        max_position_embeddings=2048,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(config).to("cuda", torch.bfloat16).eval()


def call(generate: Any, prompt: int, new: int) -> float:
    """Seconds of one greedy `generate()` with a static cache."""
    ids = torch.randint(0, 32000, (1, prompt), device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    generate(ids, max_new_tokens=new, do_sample=False, cache_implementation="static")
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--new", type=int, default=32, help="tokens generated per call")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--mismatch", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = build(args.layers, args.hidden)
    keep = Keep()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "contract.toml"
        path.write_text(CONTRACT.format(mode="max-autotune" if args.mismatch else "reduce-overhead"))
        watch = GenerateContract(model, path, serve=False, registry=CollectorRegistry(), logger=keep)
        timeline = [(p, call(watch.generate, p, args.new)) for p in (16, 16, 16, 48, 48, 16)]
        snap = watch.monitor.snapshot()["model"]
        on, off = [], []
        # steady state: the adapter's generate against the model's own, interleaved (the monitor stays registered for
        # both: it runs only when Dynamo compiles)
        for i in range(args.rounds):
            for arm in ("on", "off") if i % 2 == 0 else ("off", "on"):
                (on if arm == "on" else off).append(
                    call(watch.generate if arm == "on" else model.generate, 16, args.new)
                )
        watch.stop()
    out = {
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(),
        "calls": [{"prompt": p, "seconds": round(s, 3)} for p, s in timeline],
        "compiles": snap["compiles"],
        "recompiles": snap["recompiles"],
        "cudagraph_recordings": snap["cudagraph_recordings"],
        "breached": snap["breaches"],
        "mismatch": [f["differences"] for f in keep.named("engine_compile_mismatch")],
        "guards": [f["guard"] for f in keep.named("recompile")],
        "unclaimed": len(keep.named("unclaimed_compile")),
        "steady_ms_on": round(statistics.median(on) * 1e3, 2),
        "steady_ms_off": round(statistics.median(off) * 1e3, 2),
        "ratio": round(statistics.median(on) / statistics.median(off), 4),
    }
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
