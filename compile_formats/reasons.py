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


# -- Reading Dynamo's texts for people: one line, the user's file:line, whether Dynamo generalizes the guard --------
# The same reading serves the runtime events and the startup probe (which runs this monitor), so a guard or a break
# is described once.

_SOURCE = re.compile(r"#\s*([^#\n]*?):(\d+) in (\w+)")
_USER_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
_COMPILE_ID = re.compile(r"^\s*\[?\d+/\d+\]?:\s*")
SIZE_GUARD = re.compile(r"\bsize mismatch at index \d+\b")
"""A failed size guard (what automatic dynamic shapes answer by making that dimension dynamic)."""
_FLOAT_GUARD = re.compile(
    r"^[^#=]*?[\w\]')]\s*==\s*[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?\s*(?:#.*)?$|"
    r"^[^#=]*?[\w\]')]\s*==\s*[-+]?(?:inf|nan)\s*(?:#.*)?$",
    re.IGNORECASE,
)


def first_line(text: str) -> str:
    """First non-blank line, whitespace folded."""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


def brief(reason: str, limit: int = 240) -> str:
    """A guard or break reason on one short line (Dynamo's hints and user stack trace dropped; the shortened path of
    a guard's `# path:line in fn` comment made full where it can be)."""
    text = reason[: 8 * limit].split("(HINT")[0].split("\nUser stack trace:")[0]
    m = _SOURCE.search(text)
    if m:
        text = text[: m.start(1)] + _full_path(m.group(1).strip()) + text[m.end(1) :]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def guard_site(reason: str) -> str:
    """`file:line` of the user code a guard-failure text names, or "": the innermost frame of its "User stack trace"
    (full path), else its `# path:line in fn` comment (Dynamo shortens that path; made full again when exactly one
    loaded source file ends with it)."""
    trace = reason.split("User stack trace:", 1)
    frames = _USER_FRAME.findall(trace[1]) if len(trace) == 2 else []
    if frames:
        return f"{frames[-1][0]}:{frames[-1][1]}"
    m = _SOURCE.search(reason)
    return f"{_full_path(m.group(1).strip())}:{m.group(2)}" if m else ""


def generalizes(reason: str, dynamic: object) -> bool:
    """Whether every guard in a failure text is one Dynamo answers by making the value dynamic: a size under
    `dynamic = "auto"` (automatic dynamic shapes), a float (floats are unspecialized after one recompile)."""
    lines = [line for line in reason.split("\nUser stack trace:")[0].splitlines() if line.strip()]
    if not lines:
        return False
    for part in _COMPILE_ID.sub("", lines[0]).split("; "):
        if SIZE_GUARD.search(part) and dynamic == "auto" and "stride" not in part:
            continue
        if _FLOAT_GUARD.match(part.strip()):
            continue
        return False
    return True


_INSTANCE = re.compile(r"(?<![\w.])(?:L\[['\"]self['\"]\]|self|fn\.__self__)(?!\w)")
"""The compiled module instance in a guard: `self` / `L['self']` (a method's receiver) or `fn.__self__` (a
torch.nn module compiled whole), with or without an attribute after it."""


def names_instance(reason: str) -> bool:
    """Whether a guard-failure text's guard reads the compiled module instance (its attribute, its id or type, its
    parameter's shape): state that differs per instance, unlike a guard on an input (`tensor 'x' ...`). Only the guard
    itself is read: its source comment quotes code that may say `self` anyway."""
    head = _COMPILE_ID.sub("", first_line(reason[:HEAD_CHARS]), count=1).split("(HINT")[0].split(" #", 1)[0]
    return bool(_INSTANCE.search(head))


def break_summary(reason: str, limit: int = 160) -> str:
    """A graph-break reason as one line: its first line and Dynamo's explanation (a tensor in a Python `if` named)."""
    head = first_line(reason[:20_000])
    explanation = next(
        (
            line.split(":", 1)[1].strip()
            for line in reason[:20_000].splitlines()
            if line.strip().startswith("Explanation:")
        ),
        "",
    )
    text = f"{head}: {explanation}" if explanation and explanation not in head else head
    if head.startswith("generic_jump"):
        text += " (a tensor's value decides a Python branch)"
    return brief(text, limit)


def _full_path(short: str) -> str:
    """The loaded source file whose path ends with Dynamo's shortened `short`, when exactly one does."""
    import linecache
    import os
    import sys

    if os.path.isabs(short) or not short:
        return short
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())} | set(linecache.cache)
    # shorten_filename drops torch's common prefix plus one character: "/" normally, the path's first letter when
    # the common prefix is the root ("/tmp/m.py" -> "mp/m.py")
    found = {f for f in files if isinstance(f, str) and (f.endswith("/" + short) or f[2:] == short)}
    return found.pop() if len(found) == 1 else short
