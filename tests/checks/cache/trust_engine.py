"""One engine start for the trust tests, as a real process: `python trust_engine.py CONTRACT [--strict] [--watch PATH]`.

Builds the tiny model, runs `contract.enforce()` (which loads `[cache] artifacts` first) and prints one JSON line:
the violation's findings if it refused, and how many times code in this process opened PATH (a `sys.addaudithook`
hook sees every `open`, `os.open` included), so a test can show the file was never read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.getcwd())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("contract")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--watch")
    args = parser.parse_args()
    watched = os.path.realpath(args.watch) if args.watch else None
    opened: list[str] = []

    def hook(event: str, hook_args: tuple) -> None:
        if event == "open" and watched and isinstance(hook_args[0], (str, bytes, os.PathLike)):
            if os.path.realpath(os.fsdecode(hook_args[0])) == watched:
                opened.append(event)

    sys.addaudithook(hook)
    from trust_model import build  # type: ignore[import-not-found]

    import contract

    out: dict = {"violation": None}
    try:
        contract.enforce(build(), args.contract, strict=args.strict)
    except contract.ContractViolation as exc:
        out["violation"] = [f.to_dict() for f in exc.findings]
    out["opened"] = len(opened)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
