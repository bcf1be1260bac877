"""Library-style stand-ins used by author A's cases (an optimizer, an augmentation base class, a trainer state)."""
from __future__ import annotations

import torch


class ZeroShampooLite:
    """Trimmed ZeroShampooWithAdamGraftingOptimizer: per-block state dict with a Python int `step`."""

    def __init__(self, params, lr=1e-3, adam_betas=(0.9, 0.999), adam_eps=1e-8, shampoo_beta=0.9,
                 start_preconditioning=4, precondition_frequency=4) -> None:
        self.param_groups = [{"params": list(params)}]
        self.defaults = dict(lr=lr, adam_betas=adam_betas, adam_eps=adam_eps, shampoo_beta=shampoo_beta,
                             start_preconditioning=start_preconditioning,
                             precondition_frequency=precondition_frequency)
        for group in self.param_groups:
            group.update(self.defaults)
        self.state: dict[str, dict] = {}
        for k, p in enumerate(self.param_groups[0]["params"]):
            s1, s2 = (p.shape[0], 1) if p.ndim == 1 else (p.shape[0], p.shape[-1])
            self.state[f"param_{k}"] = {
                "step": 0,
                "m_adam": torch.zeros(s1, s2),
                "v_adam": torch.zeros(s1, s2),
                "left_preconditioner_accum": 1e-6 * torch.eye(s1),
                "right_preconditioner_accum": 1e-6 * torch.eye(s2),
            }

    def zero_grad(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.detach_()
                    p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        group = self.param_groups[0]
        for k, p in enumerate(group["params"]):
            state = self.state[f"param_{k}"]
            s1, s2 = (p.shape[0], 1) if p.ndim == 1 else (p.shape[0], p.shape[-1])
            g = p.grad.view(s1, s2)
            state["step"] += 1
            b1, b2 = group["adam_betas"]
            state["left_preconditioner_accum"].mul_(group["shampoo_beta"]).add_(g @ g.t(), alpha=0.1)
            state["right_preconditioner_accum"].mul_(group["shampoo_beta"]).add_(g.t() @ g, alpha=0.1)
            state["m_adam"].mul_(b1).add_(g, alpha=1 - b1)
            state["v_adam"].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = state["m_adam"] / (1 - b1 ** state["step"])
            v_hat = state["v_adam"] / (1 - b2 ** state["step"])
            update = m_hat / (torch.sqrt(v_hat) + group["adam_eps"])
            if state["step"] >= group["start_preconditioning"]:
                if state["step"] % group["precondition_frequency"] == 0:
                    state["left"] = state["left_preconditioner_accum"] + torch.eye(s1)
                    state["right"] = state["right_preconditioner_accum"] + torch.eye(s2)
                update = state["left"] @ state["m_adam"] @ state["right"]
            p.view(s1, s2).add_(update, alpha=-group["lr"])


class _BasicAugmentationBase(torch.nn.Module):
    """Trimmed kornia.augmentation.base: the shared batch-probability gate every augmentation goes through."""

    def __init__(self, p: float = 0.5, p_batch: float = 1.0, same_on_batch: bool = False) -> None:
        super().__init__()
        self.p = p
        self.p_batch = p_batch
        self.same_on_batch = same_on_batch
        self._p_gen = torch.distributions.Bernoulli(torch.tensor(float(p)))
        self._p_batch_gen = torch.distributions.Bernoulli(torch.tensor(float(p_batch)))

    def __batch_prob_generator__(self, batch_shape: torch.Size, p: float, p_batch: float, same_on_batch: bool):
        batch_prob = torch.tensor([p_batch]).bernoulli()
        if batch_prob.sum() == 1:  # data-dependent branch on a tensor value
            elem_prob = torch.full((batch_shape[0],), p).bernoulli()
        else:
            elem_prob = torch.zeros(batch_shape[0])
        return elem_prob.bool()

    def __batch_prob_generator_compile_safe__(self, batch_shape: torch.Size, p: float, p_batch: float, same_on_batch: bool):
        batch_prob = torch.tensor([p_batch]).bernoulli()
        if torch.compiler.is_compiling():  # branchless: batch_prob is (1,) in {0, 1}
            elem_prob = batch_prob * torch.full((batch_shape[0],), p).bernoulli()
        elif batch_prob.sum() == 1:
            elem_prob = torch.full((batch_shape[0],), p).bernoulli()
        else:
            elem_prob = torch.zeros(batch_shape[0])
        return elem_prob.bool()


class GradScaleTracker:
    """A training-utility object that, once warm-up is over, attaches a backward pre-hook doubling the incoming
    gradient of the layers it tracks (loss-scaling style)."""

    def __init__(self, warmup_steps: int = 3, scale: float = 2.0) -> None:
        self.warmup_steps = warmup_steps
        self.scale = scale
        self.handles: list = []

    def _hook(self, module, grad_output):
        return tuple(g * self.scale for g in grad_output)

    def maybe_attach(self, model: torch.nn.Module, step: int) -> None:
        if step == self.warmup_steps and not self.handles:
            for m in model.modules():
                if isinstance(m, torch.nn.Linear):
                    self.handles.append(m.register_full_backward_pre_hook(self._hook))


class ActivationLogger:
    """Debug logger that records the input norm of each block in eager runs; under compile it steps aside."""

    def __init__(self) -> None:
        self.records: list[float] = []

    def pre_forward(self, module, args, kwargs):
        if torch.compiler.is_compiling():
            return args, kwargs
        self.records.append(float(args[0].norm()))
        print(f"[activation-logger] {type(module).__name__} input norm {self.records[-1]:.3f}")
        return args, kwargs


def activation_fn(x: torch.Tensor) -> torch.Tensor:
    """Module-level activation that a training script swaps out ("patches") mid-run."""
    return torch.nn.functional.gelu(x)


def set_activation(name: str) -> None:
    global activation_fn
    activation_fn = {"gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu, "relu": torch.relu}[name]


class ZeroShampooTensorStep(ZeroShampooLite):
    """ZeroShampooLite with the step counter kept as a tensor and preconditioning done every step past warm-up."""

    def __init__(self, params, **kwargs) -> None:
        super().__init__(params, **kwargs)
        for state in self.state.values():
            state["step"] = torch.zeros(())

    @torch.no_grad()
    def step(self) -> None:
        group = self.param_groups[0]
        for k, p in enumerate(group["params"]):
            state = self.state[f"param_{k}"]
            s1, s2 = (p.shape[0], 1) if p.ndim == 1 else (p.shape[0], p.shape[-1])
            g = p.grad.view(s1, s2)
            state["step"] += 1
            b1, b2 = group["adam_betas"]
            state["left_preconditioner_accum"].mul_(group["shampoo_beta"]).add_(g @ g.t(), alpha=0.1)
            state["right_preconditioner_accum"].mul_(group["shampoo_beta"]).add_(g.t() @ g, alpha=0.1)
            state["m_adam"].mul_(b1).add_(g, alpha=1 - b1)
            state["v_adam"].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = state["m_adam"] / (1 - torch.pow(b1, state["step"]))
            v_hat = state["v_adam"] / (1 - torch.pow(b2, state["step"]))
            adam = m_hat / (torch.sqrt(v_hat) + group["adam_eps"])
            left = state["left_preconditioner_accum"] + torch.eye(s1)
            right = state["right_preconditioner_accum"] + torch.eye(s2)
            shampoo = left @ state["m_adam"] @ right
            use_shampoo = state["step"] >= group["start_preconditioning"]
            p.view(s1, s2).add_(torch.where(use_shampoo, shampoo, adam) * -group["lr"])


class TVTensorLike(torch.Tensor):
    """Trimmed torchvision.tv_tensors.TVTensor: a tensor subclass whose __torch_function__ unwraps results to plain
    tensors, with the override hidden from Dynamo as the torchvision PR did (`torch._dynamo.disable`)."""

    @staticmethod
    def _wrap(tensor: torch.Tensor) -> "TVTensorLike":
        return tensor.as_subclass(TVTensorLike)

    @classmethod
    @torch._dynamo.disable
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            output = func(*args, **(kwargs or {}))
        return output


class NJTLike:
    """A jagged-tensor stand-in dispatching through __torch_function__ (as in the report)."""

    def __init__(self, values: torch.Tensor, offsets: torch.Tensor) -> None:
        self._values = values
        self._offsets = offsets

    def sin(self):
        return torch.sin(self)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.sin:
            self = args[0]
            return NJTLike(func(self._values), self._offsets)
        raise NotImplementedError(func)


def broadcast(src: torch.Tensor, other: torch.Tensor, dim: int) -> torch.Tensor:
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    return src.expand(other.size())


def scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out=None, dim_size=None) -> torch.Tensor:
    """torch_scatter.scatter_sum as shipped: sizes the output from the data when dim_size is not given."""
    index = broadcast(index, src, dim)
    if out is None:
        size = list(src.size())
        if dim_size is not None:
            size[dim] = dim_size
        elif index.numel() == 0:
            size[dim] = 0
        else:
            size[dim] = int(index.max()) + 1
        out = torch.zeros(size, dtype=src.dtype, device=src.device)
        return out.scatter_add_(dim, index, src)
    return out.scatter_add_(dim, index, src)
