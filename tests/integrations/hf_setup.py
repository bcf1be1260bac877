"""A tiny Llama (random weights, no download: tests/checks/hf_models.py) and a Trainer on CPU whose batches change
sequence length at known steps (sequential sampling, one example per step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tests.checks import hf_models


class Examples(torch.utils.data.Dataset):
    """One causal-LM example per step, of the given lengths (labels = inputs)."""

    def __init__(self, lengths: list[int]) -> None:
        g = torch.Generator().manual_seed(0)
        self.items = [torch.randint(3, hf_models.VOCAB, (n,), generator=g) for n in lengths]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.items[i], "labels": self.items[i]}


def trainer(tmp_path: Path, lengths: list[int], *, eval_lengths: list[int] | None = None, **args: Any) -> Any:
    """A CPU Trainer on a fresh tiny Llama: one step per length, in order; no saving, reporting or logging."""
    from transformers import Trainer, TrainingArguments

    model = hf_models.llama().train()
    base: dict[str, Any] = {
        "output_dir": str(tmp_path / "out"),
        "use_cpu": True,
        "per_device_train_batch_size": 1,
        "per_device_eval_batch_size": 1,
        "max_steps": len(lengths),
        "train_sampling_strategy": "sequential",
        "save_strategy": "no",
        "report_to": "none",
        "logging_strategy": "no",
        "disable_tqdm": True,
        "learning_rate": 1e-3,
    }
    training = TrainingArguments(**{**base, **args})
    evals = Examples(eval_lengths) if eval_lengths else None
    return Trainer(model=model, args=training, train_dataset=Examples(lengths), eval_dataset=evals)
