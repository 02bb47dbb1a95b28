#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mcp-calls.py -- SERVER-COMMAND...: drive an MCP server over stdio as a
client does (initialize, tools/list), then make the tool calls read from
stdin, one JSON object a line ({"name": ..., "arguments": {...}}), one at a
time. Prints one JSON line first ({"instructions", "run_description"}),
then each call's result, a line each."""
import json
import subprocess
import sys

server = subprocess.Popen(sys.argv[sys.argv.index("--") + 1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True)
next_id = 0


def request(method, params=None):
    global next_id
    next_id += 1
    message = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        message["params"] = params
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    for line in server.stdout:
        answer = json.loads(line)
        if answer.get("id") == next_id:
            return answer.get("result", answer.get("error"))
    sys.exit("the server ended")


init = request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "mcp-calls", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
tools = request("tools/list")
run = [t for t in tools["tools"] if t["name"] == "run"][0]
print(json.dumps({"instructions": init["instructions"], "run_description": run["description"]}), flush=True)
for line in sys.stdin:
    call = json.loads(line)
    print(json.dumps(request("tools/call", call)), flush=True)
server.stdin.close()
server.wait()
