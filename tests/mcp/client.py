"""Drives `pivot-lsp mcp` through the official MCP Python SDK (`mcp` on PyPI), as an agent's
client would: starts the server over stdio, initializes, then runs the steps of a plan and
prints what each returned as one JSON document. The Rust test (server/tests/fast/mcp.rs)
writes the plan and asserts on the transcript; this script decides nothing.

    python client.py PLAN.json

PLAN.json: {"command": EXE, "args": [...], "cwd": DIR, "timeout": SECONDS,
            "steps": [{"op": "list_tools"} | {"op": "list_resources"} |
                      {"op": "read", "uri": URI} |
                      {"op": "call", "tool": NAME, "args": {...}}]}

Each step's entry is {"ok": RESULT} (the SDK's result, as JSON by alias) or {"error": TEXT}
(a JSON-RPC error or a timeout: a step that hangs is an error, not a hung test).
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def step(session, s):
    op = s["op"]
    if op == "list_tools":
        return await session.list_tools()
    if op == "list_resources":
        return await session.list_resources()
    if op == "read":
        return await session.read_resource(s["uri"])
    if op == "call":
        return await session.call_tool(s["tool"], s.get("args", {}))
    raise ValueError(f"unknown op {op!r}")


async def run(plan):
    server = StdioServerParameters(
        command=plan["command"], args=plan["args"], cwd=plan["cwd"]
    )
    timeout = plan.get("timeout", 60)
    out = {"steps": []}
    async with stdio_client(server) as (read, write), ClientSession(
        read, write
    ) as session:
        with anyio.fail_after(timeout):
            init = await session.initialize()
        out["initialize"] = dump(init)
        for s in plan["steps"]:
            try:
                with anyio.fail_after(timeout):
                    out["steps"].append({"ok": dump(await step(session, s))})
            except TimeoutError:
                out["steps"].append({"error": f"no answer in {timeout} s"})
            except MCPError as e:  # a JSON-RPC error: the test reads its text
                out["steps"].append({"error": f"{type(e).__name__}: {e}"})
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    json.dump(anyio.run(run, plan), sys.stdout)


if __name__ == "__main__":
    main()
