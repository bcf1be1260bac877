"""Library-style stand-ins used by author B's cases (ComfyUI model patcher, transformers logits processors)."""
from __future__ import annotations

import torch


class LowVramPatch:
    """ComfyUI `comfy.model_patcher.LowVramPatch`: applies the LoRA patches of one weight key on the fly."""

    def __init__(self, key: str, patches: dict) -> None:
        self.key = key
        self.patches = patches

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        for down, up, strength in self.patches[self.key]:
            weight = weight + strength * (up @ down)
        return weight


class ModelPatcher:
    """ComfyUI-style patcher: every `load()` (each new generation / each KSampler run) re-creates the
    per-module weight functions, as `patch_model(..., lowvram_model_memory=...)` does."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.patches: dict[str, list] = {}

    def add_patches(self, key: str, down: torch.Tensor, up: torch.Tensor, strength: float) -> None:
        self.patches.setdefault(key, []).append((down, up, strength))

    def load(self) -> None:
        for name, module in self.model.named_modules():
            if hasattr(module, "weight_function") and f"{name}.weight" in self.patches:
                module.weight_function = [LowVramPatch(f"{name}.weight", self.patches)]


class LogitsProcessor:
    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class TemperatureLogitsWarper(LogitsProcessor):
    def __init__(self, temperature: float) -> None:
        self.temperature = temperature

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        return scores / self.temperature


class TopKLogitsWarper(LogitsProcessor):
    def __init__(self, top_k: int, filter_value: float = -float("inf")) -> None:
        self.top_k = top_k
        self.filter_value = filter_value

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        kth = torch.topk(scores, self.top_k)[0][..., -1, None]
        return scores.masked_fill(scores < kth, self.filter_value)


class LogitsProcessorList(list):
    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


def get_logits_processor(temperature: float, top_k: int) -> LogitsProcessorList:
    """`GenerationMixin._get_logits_processor`: builds a fresh list of processors for every `generate()` call."""
    return LogitsProcessorList([TemperatureLogitsWarper(temperature), TopKLogitsWarper(top_k)])
