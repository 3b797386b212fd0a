"""The Python calls of each line of a workload's iteration (`chain_lines.LINES`) on
mdarray, as ``sys.setprofile`` sees them once the line has run a few times: their number
and the call tree, per line. ``python tools/device/line_calls.py [WORKLOAD [LINE-NUMBER
...]]`` from the repository root (any backend; CG by default; the moderate size in 4 row
chunks on the first device)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "device")]


import mdarray  # noqa: E402


def traced(code, state) -> list:
    """The calls one run of `code` makes, indented by depth."""
    lines: list = []
    depth = [0]

    def seen(frame, event, arg):
        if event in ("call", "c_call"):
            if event == "call":
                where = frame.f_code.co_filename.replace(str(ROOT) + "/", "")
                name = f"{frame.f_code.co_name} {where}:{frame.f_code.co_firstlineno}"
            else:
                name = f"<{getattr(arg, '__qualname__', arg)}>"
            lines.append("  " * depth[0] + name)
            depth[0] += 1
        elif event in ("return", "c_return", "c_exception"):
            depth[0] -= 1

    sys.setprofile(seen)
    try:
        exec(code, state)  # (one CG line)
    finally:
        sys.setprofile(None)
    return lines


def main() -> None:
    from chain_lines import LINES, datasets, state_of  # noqa: PLC0415  (beside this file)

    name = sys.argv[1] if len(sys.argv) > 1 else "cg"
    lines = LINES[name]
    chosen = [int(a) for a in sys.argv[2:]] or range(len(lines))
    state = state_of(name, mdarray, datasets(name)[1])
    codes = [compile(line, line, "exec") for line in lines]
    for _ in range(5):
        for code in codes:
            exec(code, state)  # (the iteration, warm)
    for k in chosen:
        calls = traced(codes[k], state)
        print(f"== {lines[k]}: {len(calls)} calls")
        print("\n".join(calls))


if __name__ == "__main__":
    main()
