"""Stand-ins for library code used by author C's cases (bitsandbytes, tensordict, DeepSpeed ZeRO-3, TensorRT-LLM
AutoDeploy, vLLM FlexAttention metadata, a VLA tokenizer). Each keeps the shape of the real library code that the
case's report is about; the numerics are simplified so everything runs on CPU in milliseconds."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch import nn

# --------------------------------------------------------------------------------------------------------------------
# bitsandbytes.nn.modules.Linear4bit (0.43): compute dtype decided lazily on the first forward.
# --------------------------------------------------------------------------------------------------------------------


class Params4bit(nn.Parameter):
    """4-bit packed weight with its quantization state (absmax per block); here an int8 tensor plus a scale."""

    def __new__(cls, data: torch.Tensor, requires_grad: bool = False):
        absmax = data.abs().amax(dim=-1, keepdim=True).clamp(min=1e-6)
        q = torch.round(data / absmax * 7).to(torch.float32)
        self = super().__new__(cls, q, requires_grad=requires_grad)
        self.quant_state = absmax / 7
        return self


def matmul_4bit(x: torch.Tensor, qweight: torch.Tensor, quant_state: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    w = qweight * quant_state  # dequantize
    out = x @ w.to(x.dtype).t()
    if bias is not None:
        out = out + bias
    return out


class Linear4bit(nn.Linear):
    def __init__(self, input_features: int, output_features: int, bias: bool = True, compute_dtype=None) -> None:
        super().__init__(input_features, output_features, bias)
        self.weight = Params4bit(self.weight.data)
        self.compute_dtype = compute_dtype
        self.compute_type_is_set = False if compute_dtype is None else True

    def set_compute_type(self, x: torch.Tensor) -> None:
        if x.dtype in [torch.float32, torch.bfloat16]:
            # the input is in a dtype that is safe to compute in, we switch compute_dtype to input dtype
            self.compute_dtype = x.dtype
        elif x.dtype == torch.float16:
            if self.compute_dtype == torch.float32 and (x.numel() == x.shape[-1]):
                warnings.warn("Input type into Linear4bit is torch.float16, but bnb_4bit_compute_dtype=torch.float32")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.compute_type_is_set:
            self.set_compute_type(x)
            self.compute_type_is_set = True

        inp_dtype = x.dtype
        if self.compute_dtype is not None:
            x = x.to(self.compute_dtype)
        bias = None if self.bias is None else self.bias.to(self.compute_dtype)
        out = matmul_4bit(x, self.weight, self.weight.quant_state, bias)
        return out.to(inp_dtype)


# --------------------------------------------------------------------------------------------------------------------
# vllm.forward_context / vllm.v1.attention.backends.flex_attention: per-step metadata with a rebuilt mask_mod.
# --------------------------------------------------------------------------------------------------------------------


@dataclass
class FlexAttentionMetadata:
    num_actual_tokens: int
    total_cache_tokens: int
    seq_len: int
    query_start_loc: torch.Tensor
    doc_ids: torch.Tensor
    mask_mod: object = None

    def get_paged_mask_mod(self):
        def final_mask_mod(b, h, q_idx, kv_idx):
            # causal within the request, and only the cache slots written so far
            q_req = self.doc_ids[q_idx]
            logical_q_idx = q_idx - self.query_start_loc[q_req]
            return (logical_q_idx + self.seq_len - self.num_actual_tokens >= kv_idx) & (kv_idx < self.seq_len)

        return final_mask_mod

    def __post_init__(self) -> None:
        self.mask_mod = self.get_paged_mask_mod()


class FlexAttentionMetadataBuilder:
    def __init__(self, max_model_len: int = 16) -> None:
        self.max_model_len = max_model_len

    def build(self, query_start_loc: torch.Tensor, num_tokens: int, seq_len: int) -> FlexAttentionMetadata:
        doc_ids = torch.bucketize(torch.arange(num_tokens), query_start_loc[1:], right=True)
        return FlexAttentionMetadata(num_tokens, self.max_model_len, seq_len, query_start_loc, doc_ids)


@dataclass
class ForwardContext:
    attn_metadata: object = None


_forward_context = ForwardContext()


def get_forward_context() -> ForwardContext:
    return _forward_context


def set_forward_context(attn_metadata) -> None:
    _forward_context.attn_metadata = attn_metadata


# --------------------------------------------------------------------------------------------------------------------
# tensordict.TensorDict (minimal): string keys stored in a plain dict `_tensordict`, as in tensordict/_td.py.
# --------------------------------------------------------------------------------------------------------------------


class TensorDict:
    def __init__(self, source: dict | None = None, batch_size=()) -> None:
        self._tensordict: dict[str, torch.Tensor] = {}
        self.batch_size = torch.Size(batch_size)
        for key, value in (source or {}).items():
            self._tensordict[key] = value

    def _set_str(self, key: str, value: torch.Tensor) -> "TensorDict":
        self._tensordict[key] = value
        return self

    def set(self, key: str, value: torch.Tensor) -> "TensorDict":
        return self._set_str(key, value)

    def __setitem__(self, key: str, value: torch.Tensor) -> None:
        self._set_str(key, value)

    def get(self, key: str, default=None):
        return self._tensordict.get(key, default)

    def __getitem__(self, key: str) -> torch.Tensor:
        return self._tensordict[key]

    def keys(self):
        return self._tensordict.keys()

    def select(self, *keys: str) -> "TensorDict":
        return TensorDict({k: self._tensordict[k] for k in keys}, batch_size=self.batch_size)


class SyncDataCollector:
    """Keeps one rollout TensorDict and refills its observation in place each step (torchrl reuses its buffers)."""

    def __init__(self, policy: nn.Module, obs_dim: int = 8, num_envs: int = 4, reuse_buffer: bool = True) -> None:
        self.policy = policy
        self.obs_dim = obs_dim
        self.num_envs = num_envs
        self.reuse_buffer = reuse_buffer
        self._shuttle = TensorDict({"observation": torch.zeros(num_envs, obs_dim)}, batch_size=(num_envs,))

    def _env_reset_or_step(self) -> torch.Tensor:
        return torch.randn(self.num_envs, self.obs_dim)

    def rollout_step(self) -> TensorDict:
        obs = self._env_reset_or_step()
        if self.reuse_buffer:
            self._shuttle["observation"] = obs
        else:
            # step_mdp-style: the next shuttle carries only the root observation keys
            self._shuttle = TensorDict({"observation": obs}, batch_size=(self.num_envs,))
        with torch.no_grad():
            self.policy(self._shuttle)
        return self._shuttle


# --------------------------------------------------------------------------------------------------------------------
# tensorrt_llm._torch.auto_deploy: SequenceInfo + cuda-graph warmup over a list of batch sizes.
# --------------------------------------------------------------------------------------------------------------------


@dataclass
class SequenceInfo:
    max_batch_size: int = 128
    max_seq_len: int = 16
    cuda_graph_batch_sizes: list = field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128])
    input_pos: torch.Tensor = None
    num_sequences: int = 0

    def __post_init__(self) -> None:
        self.input_pos = torch.zeros(self.max_batch_size, dtype=torch.long)

    def nest_sequences(self, batch_size: int) -> torch.Tensor:
        self.num_sequences = batch_size
        return torch.randint(0, 32, (batch_size, 1))

    def args_for_batch(self, input_ids: torch.Tensor) -> tuple:
        return input_ids, self.input_pos[: self.num_sequences]


# --------------------------------------------------------------------------------------------------------------------
# deepspeed.runtime.zero: ZeRO-3 parameter coordinator driven by module forward pre/post hooks.
# --------------------------------------------------------------------------------------------------------------------


class ZeroParamStatus:
    AVAILABLE = 1
    NOT_AVAILABLE = 2
    INFLIGHT = 3


class PartitionedParameterCoordinator:
    """Fetches (all-gathers) a submodule's partitioned parameters before its forward and releases them after."""

    def __init__(self) -> None:
        self.__step_id = 0
        self.__submodule_order: list = []
        self.is_complete_trace = False
        self.__n_available_params = 0

    @property
    def step_id(self) -> int:
        return self.__step_id

    def record_module(self, sub_module: nn.Module) -> None:
        if not self.is_complete_trace:
            self.__submodule_order.append(sub_module)

    @torch.compiler.disable
    @torch.no_grad()
    def fetch_sub_module(self, current_submodule: nn.Module, forward: bool = True) -> None:
        for param in current_submodule.parameters(recurse=False):
            if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:
                param.data = param.ds_tensor.view(param.ds_shape)  # all_gather of the partitions
                param.ds_status = ZeroParamStatus.AVAILABLE
                self.__n_available_params += param.numel()
        self.__step_id += 1

    @torch.compiler.disable
    @torch.no_grad()
    def release_sub_module(self, submodule: nn.Module, forward: bool = True) -> None:
        for param in submodule.parameters(recurse=False):
            param.ds_status = ZeroParamStatus.NOT_AVAILABLE
            self.__n_available_params -= param.numel()

    def reset_step(self) -> None:
        self.is_complete_trace = True
        self.__step_id = 0


class DeepSpeedZeRoOffload:
    """Registers the ZeRO-3 hooks on every submodule that owns parameters (stage3 `setup_zero_stage3_hooks`)."""

    def __init__(self, module: nn.Module, deepcompile: bool = False) -> None:
        self.module = module
        self.deepcompile = deepcompile
        self.param_coordinator = PartitionedParameterCoordinator()
        for m in module.modules():
            for p in m.parameters(recurse=False):
                p.ds_tensor = p.data.clone().flatten()
                p.ds_shape = p.shape
                p.ds_status = ZeroParamStatus.NOT_AVAILABLE
            if any(True for _ in m.parameters(recurse=False)):
                m.register_forward_pre_hook(self._pre_forward_module_hook)
                m.register_forward_hook(self._post_forward_module_hook)

    def get_param_coordinator(self) -> PartitionedParameterCoordinator:
        return self.param_coordinator

    def _pre_forward_module_hook(self, module: nn.Module, *args) -> None:
        if self.deepcompile and torch.compiler.is_compiling():
            return  # DeepCompile: the compiled graph gathers/releases parameters itself; hooks are the eager fallback
        param_coordinator = self.get_param_coordinator()
        param_coordinator.record_module(module)
        param_coordinator.fetch_sub_module(module, forward=True)

    def _post_forward_module_hook(self, module: nn.Module, input, output) -> None:
        if self.deepcompile and torch.compiler.is_compiling():
            return
        self.get_param_coordinator().release_sub_module(module, forward=True)


# --------------------------------------------------------------------------------------------------------------------
# A VLA policy's prompt tokenizer (OpenTau / PI0-style): whitespace vocabulary, padded to a fixed length.
# --------------------------------------------------------------------------------------------------------------------


class PromptTokenizer:
    def __init__(self, max_length: int = 8) -> None:
        words = "pick up the red blue green cube open close drawer push button place it in bowl".split()
        self.vocab = {w: i + 2 for i, w in enumerate(words)}
        self.pad_id, self.unk_id = 0, 1
        self.max_length = max_length

    def __call__(self, text: str) -> torch.Tensor:
        ids = [self.vocab.get(w, self.unk_id) for w in text.lower().split()][: self.max_length]
        ids = ids + [self.pad_id] * (self.max_length - len(ids))
        return torch.tensor(ids, dtype=torch.long).unsqueeze(0)


TASKS = [
    "pick up the red cube",
    "open the drawer",
    "push the blue button",
    "place the green cube in the bowl",
    "close the drawer",
    "pick up the blue cube",
    "place it in the drawer",
    "push the red button",
]
