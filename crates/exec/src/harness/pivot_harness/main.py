"""The harness's entry point: `main()` runs the mode named on the command line."""

import json
import sys

from .base import compile_feedback


def mode_compile():
    codes = json.loads(sys.stdin.read())
    out = [compile_feedback(c) for c in codes]
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "compile":
        mode_compile()
        return
    # The other modes fork tasks: their modules load only here.
    from .hardening import probe_drop
    from .zygote import mode_once, mode_zygote

    if mode == "zygote":
        mode_zygote(
            sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", json.loads(sys.argv[6]),
            sys.argv[7] if len(sys.argv) > 7 else "",
        )
    elif mode == "once":
        mode_once()
    elif mode == "probe":
        sys.exit(0 if probe_drop(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]) else 1)
    else:
        sys.stderr.write("unknown mode %r\n" % mode)
        sys.exit(2)
