"""Clean: the same DeepSeek-V3 router with TLLM_LLM_ENABLE_DEBUG=1, but the NaN check is skipped while Dynamo traces (`torch.compiler.is_compiling()`), so the gate compiles once with no break; the debug check still runs in eager. Look-alike of h41, from NVIDIA/TensorRT-LLM#9217."""
from __future__ import annotations

import os
import warnings

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import enable_llm_debug

LABEL = None
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/pull/9217"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Deepseekv3RoutingImpl(nn.Module):
    def __init__(self, top_k: int = 2, n_group: int = 2, topk_group: int = 1) -> None:
        super().__init__()
        self.top_k = top_k
        self.n_group = n_group
        self.topk_group = topk_group

    @staticmethod
    def get_scores(logits: torch.Tensor, e_score_correction_bias: torch.Tensor):
        scores = torch.sigmoid(logits)
        scores_with_bias = scores + e_score_correction_bias
        if enable_llm_debug() and not torch.compiler.is_compiling():
            has_nan = torch.isnan(scores_with_bias).any()
            if has_nan:
                warnings.warn("Detected NAN in the tensor scores_with_bias. Please check if it matches the expectation.")
        return scores, scores_with_bias

    def noaux_tc(self, logits: torch.Tensor, e_score_correction_bias: torch.Tensor):
        scores, scores_with_bias = self.get_scores(logits, e_score_correction_bias)
        num_tokens, num_experts = scores_with_bias.shape
        group_scores = scores_with_bias.view(num_tokens, self.n_group, -1).topk(2, dim=-1)[0].sum(dim=-1)
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1)
        score_mask = group_mask.unsqueeze(-1).expand(num_tokens, self.n_group, num_experts // self.n_group).reshape(num_tokens, -1)
        tmp_scores = scores_with_bias.masked_fill(~score_mask.bool(), float("-inf"))
        topk_idx = torch.topk(tmp_scores, k=self.top_k, dim=-1, sorted=False)[1]
        topk_weight = scores.gather(1, topk_idx)
        return topk_weight / topk_weight.sum(dim=-1, keepdim=True), topk_idx


class DeepseekV3Gate(nn.Module):
    def __init__(self, hidden: int = 8, num_experts: int = 8) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_experts, hidden) * 0.1)
        self.register_buffer("e_score_correction_bias", torch.zeros(num_experts))
        self.routing_impl = Deepseekv3RoutingImpl()

    def forward(self, hidden_states: torch.Tensor):
        logits = torch.nn.functional.linear(hidden_states, self.weight)
        return self.routing_impl.noaux_tc(logits, self.e_score_correction_bias)


def build() -> nn.Module:
    os.environ["TLLM_LLM_ENABLE_DEBUG"] = "1"  # the user turned on debug mode for the whole run
    return DeepseekV3Gate()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
