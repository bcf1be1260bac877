"""Map Dynamo's guard-failure text to a bounded category, so the `reason` metric label never explodes."""

from __future__ import annotations

import re

CATEGORIES: tuple[str, ...] = (
    "shape",
    "dtype",
    "device",
    "stride",
    "requires_grad",
    "type_id",
    "value",
    "global_state",
    "other",
)
"""The fixed label set of `torch_compile_recompiles_total{reason}` (every value pre-created at 0)."""

_PREFIX = re.compile(r"^\s*\[?[!\w@]*\d+/\d+\]?:\s*")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "global_state",
        re.compile(
            r"GLOBAL_STATE|global state|grad_mode|dispatch key set|___check_current_backend|"
            r"torch_function_mode|autocast|deterministic_algorithms",
            re.I,
        ),
    ),
    (
        "shape",
        re.compile(
            r"size mismatch|\bsize\(\)|\bsizes?\b.*(expected|==)|\bdim(ension)? mismatch|"
            r"rank mismatch|numel",
            re.I,
        ),
    ),
    ("stride", re.compile(r"stride mismatch|\bstride\(\)", re.I)),
    ("dtype", re.compile(r"dtype mismatch|\.dtype\b", re.I)),
    ("device", re.compile(r"device mismatch|\.device\b|device index", re.I)),
    ("requires_grad", re.compile(r"requires_grad", re.I)),
    (
        "type_id",
        re.compile(
            r"___check_type_id|___check_obj_id|TYPE_MATCH|ID_MATCH|isinstance|\btype\(|\bid\(|"
            r"is not None|is None|tensor .* mismatch",
            re.I,
        ),
    ),
    ("value", re.compile(r"==|!=|<=|>=|<|>|\bnot\b|len\(|___dict_contains|CONSTANT_MATCH|EQUALS_MATCH", re.I)),
)


HEAD_CHARS = 1000
"""Characters of a guard text looked at: the category is decided by its first line (texts can be megabytes)."""


def categorize(text: str | None) -> str:
    """Category of one guard-failure text (the first reason Dynamo reports); `other` when unknown."""
    if not text:
        return "other"
    lines = text[:HEAD_CHARS].strip().splitlines()
    if not lines:
        return "other"
    first = _PREFIX.sub("", lines[0], count=1)
    head = first.split("  #", 1)[0]
    for name, pattern in _RULES:
        if pattern.search(head):
            return name
    return "other"


def short(text: str | None, limit: int = 300) -> str:
    """A guard text cut to one bounded log field."""
    if not text:
        return ""
    one = " ".join(text[: 4 * limit].split())  # bounded before splitting: guard texts can be megabytes
    if len(one) <= limit and len(text) <= 4 * limit:
        return one
    return one[: limit - 3] + "..." if len(one) > limit - 3 else one + "..."
