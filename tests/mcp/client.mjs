// SPDX-License-Identifier: MIT
// bgrun mcp driven by the official MCP TypeScript SDK, as an agent drives it:
// Client + StdioClientTransport, which starts the server with the SDK's
// default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER only).
//
//   node client.mjs SCENARIO -- SERVER-COMMAND...
//
// Prints "ok - WHAT" per check and exits 1 at the first that fails (with
// what it saw); tests/integration/test-mcp.sh runs the scenarios. Scenarios
// that leave a job for the shell to look at print "JOB <id>" and
// "SERVER_PID <pid>".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [scenario, dashes, command, ...args] = process.argv.slice(2);
if (!scenario || dashes !== "--" || !command) {
  console.error("usage: node client.mjs SCENARIO -- SERVER-COMMAND...");
  process.exit(2);
}

function check(cond, what, seen) {
  if (!cond) {
    console.log(`not ok - ${what}${seen === undefined ? "" : `: ${JSON.stringify(seen).slice(0, 2000)}`}`);
    process.exit(1);
  }
  console.log(`ok - ${what}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// No env: the SDK's default environment, as an agent starts the server.
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "bgrun-test", version: "1.0.0" });
await client.connect(transport);

const call = (name, a = {}, options = {}) =>
  client.callTool({ name, arguments: a }, undefined, { timeout: 120000, ...options });

// A protocol error of a call: the SDK rejects with McpError(code).
async function callError(name, a) {
  try {
    const r = await call(name, a);
    return { result: r };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

const scenarios = {
  // bgrun mcp --sandbox workspace --workspace WS (WS in BGRUN_TEST_WORKSPACE,
  // OTHER a job of another server in BGRUN_TEST_OTHER_JOB): every run
  // confined at least so, the workspace whatever cwd says, nothing looser,
  // and the tools on this server's jobs only.
  async sandbox() {
    const ws = process.env.BGRUN_TEST_WORKSPACE, other = process.env.BGRUN_TEST_OTHER_JOB;
    let r = await call("run", { command: "touch bgrun-mcp-from-root 2>&1 | sed 's/.*: //'; touch " + ws +
      "/written && echo ws-written; echo $BGRUN_SANDBOX", cwd: "/" });
    check(!r.isError && r.structuredContent.output === "Read-only file system\nws-written\nworkspace\n" &&
      r.structuredContent.sandbox === "workspace", "run with cwd /: only the server's workspace is written", r);
    r = await call("run", { command: "touch " + ws + "/ro 2>&1 | sed 's/.*: //'", sandbox: "read-only" });
    check(!r.isError && r.structuredContent.output === "Read-only file system\n" &&
      r.structuredContent.sandbox === "read-only", "run may ask for more: read-only", r);
    r = await call("run", { command: "touch " + ws + "/off", sandbox: "off" });
    check(r.isError && r.content[0].text.includes("sandbox 'workspace'") && r.content[0].text.includes("never less"),
      "run asking for off is an isError naming the server's sandbox", r);
    r = await call("run", { command: "true", network: true });
    check(r.isError && r.content[0].text.includes("may not ask for the network"), "run asking for the network: isError", r);
    r = await call("status", { id: other });
    check(r.isError && r.content[0].text.includes("was not launched by this server"), "status of another's job: isError", r);
    r = await call("kill", { id: other });
    check(r.isError, "kill of another's job: isError", r);
    r = await call("list", { session: "*" });
    check(r.isError, "list of all sessions: isError", r);
    // Its session is the record of what the agent ran: a run stays in it.
    r = await call("run", { command: "touch ran-elsewhere", session: "other" });
    check(r.isError && r.content[0].text.includes("all in its own session"), "run in another session: isError", r);
    r = await call("list", {});
    check(!r.isError && !r.structuredContent.jobs.some((j) => j.session === "other"), "nothing ran in another session", r);
    const { tools } = await client.listTools();
    const run = tools.find((t) => t.name === "run");
    check(run.inputSchema.properties.sandbox?.enum?.includes("read-only") && run.outputSchema.properties.sandbox,
      "run's schemas have sandbox", run);
  },
  // queue and parallel: a run that must wait is answered at once, queued,
  // and starts when the session has room; past parallel without queue:
  // an isError result naming the limit.
  async queue() {
    const { tools } = await client.listTools();
    const run = tools.find((t) => t.name === "run");
    check(run.inputSchema.properties.queue?.type === "boolean" && run.inputSchema.properties.parallel?.minimum === 1,
      "run's schema has queue and parallel", run.inputSchema.properties);
    const session = "mcp-queue-" + process.pid;
    let r = await call("run", { command: "sleep 3", session, parallel: 1, queue: true, wait_sec: 0 });
    check(!r.isError && r.structuredContent.status === "running", "the first of parallel 1 runs", r);
    const blocker = r.structuredContent.id;
    r = await call("run", { command: "echo second", session, parallel: 1, queue: true });
    check(!r.isError && r.structuredContent.status === "queued" && r.structuredContent.exit_code === -1,
      "the second is answered at once, queued (not after wait_sec)", r);
    const second = r.structuredContent.id;
    r = await call("run", { command: "true", session, parallel: 1 });
    check(r.isError && r.content[0].text.includes("MaxParallel=1"), "past parallel without queue: isError naming it", r);
    const bad = await callError("run", { command: "true", session, parallel: 0, queue: true });
    check(bad.code === -32602 && bad.message.includes("'parallel'"), "parallel 0: invalid params naming it", bad);
    r = await call("wait", { id: second, timeout_sec: 30 });
    check(!r.isError && r.structuredContent.status === "exited" && r.structuredContent.output === "second\n",
      "wait on the queued job returns its end", r);
    r = await call("status", { id: blocker });
    check(r.structuredContent.status === "exited", "the first ended before it", r);
  },
  // Every tool once, and what a model reads of each.
  async tools() {
    check(client.getServerVersion()?.name === "bgrun", "serverInfo.name is bgrun", client.getServerVersion());
    check((client.getInstructions() ?? "").includes("run"), "instructions say when to use run");
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    check(JSON.stringify(names) === JSON.stringify(
      ["forget", "kill", "list", "output", "run", "status", "stop", "wait", "write_input"]), "the nine tools", names);
    for (const t of tools) {
      check(t.inputSchema?.type === "object" && t.outputSchema?.type === "object" && t.description.length > 40,
        `${t.name} has input and output schemas and a description`);
      const ro = ["status", "list", "output", "wait"].includes(t.name);
      const de = ["kill", "stop", "forget"].includes(t.name);
      check(t.annotations?.readOnlyHint === ro && (ro || t.annotations?.destructiveHint === de),
        `${t.name} annotations`, t.annotations);
    }

    let r = await call("run", { command: "echo hello; echo err >&2; exit 3" });
    check(!r.isError && r.structuredContent.status === "exited" && r.structuredContent.exit_code === 3,
      "run: a shell command line, waited for, its exit code", r);
    check(r.structuredContent.output === "hello\nerr\n" && r.content[0].text.includes("hello"),
      "run: stdout and stderr in output and in the text", r);
    const first = r.structuredContent.id;

    r = await call("run", { argv: ["printf", "%s|", "a b", "$HOME", "it's"] });
    check(r.structuredContent.output === "a b|$HOME|it's|", "run: argv runs exactly those words", r);

    r = await call("run", { command: "echo $BGRUN_T $HOME", env: { BGRUN_T: "x1" }, cwd: "/" });
    check(r.structuredContent.output.startsWith("x1 /"), "run: env is added to the server's", r);

    r = await call("run", { command: "pwd", cwd: "/tmp" });
    check(r.structuredContent.output === "/tmp\n", "run: cwd", r);

    r = await call("run", { command: "printf 'a\\377b\\n'" });
    check(r.structuredContent.output === "a\ufffdb\n", "run: bytes that are not UTF-8 are replaced", r);

    r = await call("run", { command: "printf '\\033[1mbold\\033[0m\\n50%%\\r100%%\\n'", tty: true });
    check(r.structuredContent.output === "bold\n100%\n", "run: a tty job's output as logs --plain gives it",
      r.structuredContent);

    // A long output: the head, one marker, the tail, and the middle by offset.
    r = await call("run", { command: "seq 1 20000" });
    const out = r.structuredContent.output;
    const m = out.match(/\n\[bgrun: (\d+) bytes left out here; read them with output offset=(\d+)\]\n/);
    check(m && Buffer.byteLength(out) <= 16384 && out.startsWith("1\n2\n") && out.endsWith("19999\n20000\n"),
      "run: a long output is its head, one marker line and its tail, within 16 KiB", out.slice(0, 200));
    check(r.structuredContent.output_truncated === true, "run: output_truncated says so");
    const o = await call("output", { id: r.structuredContent.id, offset: Number(m[2]), max_bytes: 100 });
    // At most 100 bytes, ending after a newline of the last quarter (the contract's rule for a range).
    const n = o.structuredContent.output.length;
    check(n <= 100 && n > 75 && o.structuredContent.output.endsWith("\n") &&
      o.structuredContent.next_offset === Number(m[2]) + n && o.structuredContent.complete === false,
      "output: the middle by the marker's offset, ending at a line's end", o.structuredContent);

    // A job that goes on after run answers; output follows it.
    r = await call("run", { command: "echo one; sleep 1.5; echo two", wait_sec: 0.3 });
    check(r.structuredContent.status === "running" && r.structuredContent.output === "one\n",
      "run: answers after wait_sec with what ran so far; the job goes on", r.structuredContent);
    const slow = r.structuredContent.id;
    r = await call("output", { id: slow, wait_sec: 5 });
    check(r.structuredContent.output === "two\n", "output: wait_sec waits for new output, from where run stopped",
      r.structuredContent);
    r = await call("wait", { id: slow, timeout_sec: 10 });
    check(r.structuredContent.status === "exited" && r.structuredContent.exit_code === 0 &&
      r.structuredContent.output === "", "wait: the end, and no output read twice", r.structuredContent);

    // Input.
    r = await call("run", { command: "while read l; do echo \"got $l\"; done; echo bye", stdin: true, wait_sec: 0 });
    const reader = r.structuredContent.id;
    r = await call("write_input", { id: reader, text: "hi\n", wait_sec: 1 });
    check(r.structuredContent.output === "got hi\n", "write_input: the output that followed", r.structuredContent);
    r = await call("write_input", { id: reader, eof: true });
    check(r.structuredContent.output === "bye\n", "write_input eof ends the input", r.structuredContent);
    r = await call("wait", { id: reader });
    check(r.structuredContent.status === "exited" && r.structuredContent.exit_code === 0, "and the job ends",
      r.structuredContent);
    r = await call("write_input", { id: first, text: "x" });
    check(r.isError && /No input/.test(r.content[0].text), "write_input to a job without input: isError", r);

    // Ending jobs.
    r = await call("run", { command: "trap 'echo bye; exit 7' TERM; sleep 100 & wait", wait_sec: 0.5 });
    const server = r.structuredContent.id;
    r = await call("stop", { id: server, grace_sec: 5 });
    check(r.structuredContent.status === "killed" && r.structuredContent.dead === true &&
      r.structuredContent.method === "signal" && r.structuredContent.exit_code === 7,
      "stop: the signal, the grace, the final fields", r.structuredContent);
    r = await call("run", { command: "sleep 100", wait_sec: 0 });
    const sleeper = r.structuredContent.id;
    r = await call("kill", { id: sleeper });
    check(r.structuredContent.dead === true && r.structuredContent.confirmed_at > 0, "kill", r.structuredContent);

    r = await call("status", { id: first });
    check(r.structuredContent.id === first && r.structuredContent.exit_code === 3 &&
      r.structuredContent.containment?.contained === true, "status: the record", r.structuredContent);
    r = await call("list");
    const ids = r.structuredContent.jobs.map((j) => j.id);
    check(ids.includes(first) && ids.includes(sleeper) && r.structuredContent.jobs.every((j) => j.session.startsWith("mcp-")),
      "list: this server's session", r.structuredContent);
    r = await call("forget", { id: first });
    check(!r.isError && JSON.stringify(r.structuredContent) === "{}", "forget", r);
    r = await call("status", { id: first });
    check(r.isError && /No such job/.test(r.content[0].text), "a forgotten job: an isError result", r);
    r = await call("forget", { id: (await call("run", { command: "sleep 100", wait_sec: 0 })).structuredContent.id });
    check(r.isError && /still running/.test(r.content[0].text), "forget of a running job says to stop it", r);
    r = await call("run", { command: "true", cwd: "/nonexistent" });
    check(r.isError && /Invalid argument/.test(r.content[0].text), "a bad cwd is an isError result", r);

    // Malformed calls: JSON-RPC errors naming what was wrong; the server goes on.
    let e = await callError("run", { command: "true", argv: ["true"] });
    check(e.code === -32602 && /exactly one/.test(e.message), "run with command and argv: -32602", e);
    e = await callError("run", {});
    check(e.code === -32602 && /command/.test(e.message), "run with neither: -32602", e);
    e = await callError("status", { id: "x", bogus: 1 });
    check(e.code === -32602 && /'bogus'/.test(e.message), "an unknown argument: -32602 naming it", e);
    e = await callError("wait", { id: "x", timeout_sec: "1" });
    check(e.code === -32602 && /'timeout_sec'/.test(e.message), "an argument of the wrong type: -32602 naming it", e);
    e = await callError("nosuchtool", {});
    check(e.code === -32602, "an unknown tool: -32602", e);
    check((await client.ping()) !== undefined, "ping");
  },

  // The README's line works: a job runs, and its record is there.
  // Programs behave for a reader that is not a terminal (issue #32 rows
  // 2, 3, 5): unbuffered Python, no pager, no colour; the call's env wins;
  // output reads come back whole, once, each ending at a line's end.
  async reader() {
    let r = await call("run", { command: "env" });
    const env = r.structuredContent.output;
    for (const v of ["NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat", "GIT_EDITOR=true",
                     "PYTHONUNBUFFERED=1", "GIT_TERMINAL_PROMPT=0", "LANG=C.UTF-8"])
      check(env.split("\n").includes(v), `a job's environment has ${v}`, env);
    r = await call("run", { command: "echo $TERM $PAGER $LANG", env: { PAGER: "less", LANG: "C" } });
    check(r.structuredContent.output === "dumb less C\n", "the call's env wins over the reader's defaults", r);
    r = await call("run", { command: "echo $TERM", tty: true });
    check(r.structuredContent.output.trim() === "xterm-256color", "a tty job's TERM is xterm-256color", r);

    // Still running: answered at its wait_sec, the line already there (not a wall-clock bound).
    r = await call("run", { command: "python3 -c 'print(\"ready\"); import time; time.sleep(30)'", wait_sec: 2 });
    check(r.structuredContent.status === "running" && r.structuredContent.output.includes("ready"),
      "python's first line is in the run result within wait_sec 2 (not buffered)", r);
    await call("kill", { id: r.structuredContent.id });

    r = await call("run", { command: "d=$(mktemp -d) && cd $d && git init -q && " +
                                     "git -c user.email=t@example.org -c user.name=t commit -q --allow-empty -m one && " +
                                     "git log; echo done; rm -rf $d", tty: true, wait_sec: 10 });
    check(r.structuredContent.status === "exited" && r.structuredContent.output.includes("done") &&
          r.structuredContent.output.includes("one"), "git log in a tty job ends without input (no pager)", r);

    r = await call("run", { command: "seq -f 'line %g of the output' 1 3000" });
    const id = r.structuredContent.id;
    check(r.structuredContent.status === "exited", "a 3,000-line job ended", r);
    let offset = 0, whole = "", pieces = 0, cut = 0;
    for (;;) {
      r = await call("output", { id, offset, max_bytes: 1000 });
      const o = r.structuredContent.output;
      if (o.length === 0)
        break;
      pieces++;
      if (!o.endsWith("\n"))
        cut++;
      whole += o;
      check(r.structuredContent.next_offset === offset + Buffer.byteLength(o), "next_offset follows the piece", r);
      offset = r.structuredContent.next_offset;
      if (r.structuredContent.complete)
        break;
    }
    const want = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of the output\n`).join("");
    check(whole === want, `max_bytes 1000 reads give the output whole and once (${pieces} pieces)`, whole.slice(-200));
    check(cut === 0, "every piece ends at a line's end", cut);
    r = await call("output", { id });
    check(r.structuredContent.output.length <= 16384 && !r.structuredContent.output.includes("[bgrun:"),
      "output without max_bytes is one range, no marker", r.structuredContent.output.slice(0, 200));
  },

  async basic() {
    const r = await call("run", { command: "echo hello from $(id -un)" });
    check(!r.isError && r.structuredContent.status === "exited" && r.structuredContent.exit_code === 0 &&
      /^hello from /.test(r.structuredContent.output), "run through the README's command line", r);
    console.log(`MECHANISM ${r.structuredContent.mechanism}`);
    const s = await call("status", { id: r.structuredContent.id });
    check(s.structuredContent.status === "exited", "status", s.structuredContent);
    const l = await call("list");
    check(l.structuredContent.jobs.some((j) => j.id === r.structuredContent.id), "list", l.structuredContent);
  },

  // A kill is answered while a wait on the same job is pending.
  async concurrency() {
    const r = await call("run", { command: "sleep 100", wait_sec: 0 });
    const id = r.structuredContent.id;
    const order = [];
    const waiting = call("wait", { id, timeout_sec: 60 }).then((w) => { order.push("wait"); return w; });
    await sleep(500);
    const k = await call("kill", { id });
    order.push("kill");
    check(k.structuredContent.dead === true, "kill answered while a wait is pending");
    const w = await waiting;
    check(order.join() === "kill,wait" && w.structuredContent.status === "killed",
      "the wait ends with the kill, after it", { order, w: w.structuredContent });
  },

  // Many waits pending (issue #30: 200 made kill fail with the bus daemon's
  // "maximum number of pending replies"): a wait holds no call to bgrund, so
  // a kill, a status and the waits' own ends are answered as ever.
  async waits() {
    const n = Number(process.env.BGRUN_TEST_WAITS ?? 200);
    const r = await call("run", { command: "sleep 300", wait_sec: 0 });
    const id = r.structuredContent.id;
    const other = (await call("run", { command: "sleep 300", wait_sec: 0 })).structuredContent.id;
    const waits = [];
    for (let i = 0; i < n; i++)
      waits.push(call("wait", { id, timeout_sec: 120 }));
    await sleep(1500);
    let t0 = Date.now();
    const s = await call("status", { id: other });
    check(!s.isError && s.structuredContent.status === "running", `status answered with ${n} waits pending`,
      s.content?.[0]?.text);
    const k = await call("kill", { id: other });
    check(!k.isError && k.structuredContent.dead === true, `kill answered with ${n} waits pending`,
      k.content?.[0]?.text);
    console.log(`NOTE: status and kill with ${n} waits pending: ${Date.now() - t0} ms`);
    t0 = Date.now();
    await call("kill", { id });
    const ended = await Promise.all(waits);
    const bad = ended.filter((w) => w.isError || w.structuredContent.status !== "killed");
    check(bad.length === 0, `all ${n} waits end with their job`, bad[0]?.content?.[0]?.text);
    console.log(`NOTE: ${n} waits answered ${Date.now() - t0} ms after their job's kill`);
  },

  // Cancelling a wait: no answer, the job runs on.
  async cancel() {
    const r = await call("run", { command: "sleep 100", wait_sec: 0 });
    const id = r.structuredContent.id;
    const ac = new AbortController();
    const t0 = Date.now();
    const waiting = call("wait", { id, timeout_sec: 60 }, { signal: ac.signal }).then(() => "answered",
      (e) => `rejected: ${e.message}`);
    await sleep(700);
    ac.abort("the test cancels");
    const how = await waiting;
    check(/^rejected: .*cancel/.test(how) && Date.now() - t0 < 5000, "the cancelled wait ends at once", how);
    // The server got notifications/cancelled and sends nothing for it: a
    // ping after it is the next answer, and the server is well.
    check((await client.ping()) !== undefined, "the server goes on");
    const s = await call("status", { id });
    check(s.structuredContent.status === "running", "the job runs on", s.structuredContent);
    await call("kill", { id });
  },

  // A run cancelled (AbortSignal, then the SDK's own request timeout; and
  // one aborted at once, before bgrund answered its Launch), each followed
  // by a retry as a model makes it: the command's effect happens at most
  // once in full, and nothing of a cancelled run runs on unseen. F in
  // BGRUN_TEST_FILE.
  async cancel_run() {
    const f = process.env.BGRUN_TEST_FILE;
    const command = (tag) => `echo start ${tag} >> ${f}; sleep 3; echo done ${tag} >> ${f}`;
    const runs = async (tag) => (await call("list", {})).structuredContent.jobs.filter((j) => j.command === command(tag));
    // AbortSignal, after the Launch was answered.
    const ac = new AbortController();
    const first = call("run", { command: command("a"), wait_sec: 30 }, { signal: ac.signal }).then(() => "answered",
      (e) => `rejected: ${e.message}`);
    await sleep(1000);
    ac.abort("the agent gave up");
    check(/^rejected/.test(await first), "the aborted run is not answered");
    let r = await call("run", { command: command("a"), wait_sec: 30 });
    check(r.structuredContent.status === "exited", "the retry runs to its end", r.structuredContent);
    // The SDK's request timeout sends notifications/cancelled too.
    const timedOut = await call("run", { command: command("b"), wait_sec: 30 }, { timeout: 1000 }).then(() => "answered",
      (e) => `rejected: ${e.message}`);
    check(/^rejected: .*timed out/i.test(timedOut), "the run past the SDK's timeout", timedOut);
    r = await call("run", { command: command("b"), wait_sec: 30 });
    check(r.structuredContent.status === "exited", "its retry runs to its end", r.structuredContent);
    // Aborted at once: most likely before bgrund answered the Launch.
    const at = new AbortController();
    const early = call("run", { command: command("c"), wait_sec: 30 }, { signal: at.signal }).catch((e) => e.message);
    at.abort("at once");
    await early;
    // Until none of them runs (a stop is bgrund's, soon), then what became of each.
    for (let i = 0; i < 600; i++) {
      const all = [...await runs("a"), ...await runs("b"), ...await runs("c")];
      if (all.every((j) => j.status !== "running")) break;
      await sleep(50);
    }
    for (const tag of ["a", "b", "c"]) {
      const jobs = await runs(tag);
      const ended = jobs.filter((j) => j.status === "killed").length;
      check(jobs.every((j) => j.status !== "running"), `no run of ${tag} runs on`, jobs);
      check(ended === 1 || (tag === "c" && jobs.length === 0), `the cancelled run of ${tag} was stopped`, jobs);
    }
  },

  // notifications/progress while a call with a progressToken waits.
  // Each says the output so far and its last complete line (cleaned as
  // logs --plain cleans it), when output grows and at least every 10 s.
  // The job goes on only when told (a gate file each step), so that what
  // it wrote is known at every notification, however slow the machine.
  async progress() {
    const dir = mkdtempSync(join(tmpdir(), "bgrun-progress-"));
    const gate = (n) => join(dir, `gate${n}`);
    const hold = (n) => `until [ -e ${gate(n)} ]; do sleep 0.05; done`;
    const open = (n) => existsSync(gate(n)) || writeFileSync(gate(n), "");
    const seen = [];
    const lineOf = (p) => (p.message ?? "").replace(/^.*last line: /, "");
    let r;
    try {
      r = await call("run", {
        command: `echo step 1; ${hold(1)}; printf 'step 2 \\033[31min colour\\033[0m\\n'; ${hold(2)}; printf partial; ` +
          `${hold(3)}; echo ' end'`, wait_sec: 100 }, { onprogress: (p) => {
          const before = seen.at(-1);
          seen.push(p);
          if (lineOf(p) === "step 1") open(1);
          if (lineOf(p) === "step 2 in colour") open(2);
          // After partial: one that says nothing new (10 s with no growth).
          if (existsSync(gate(2)) && before && p.message === before.message) open(3);
        } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    check(r.structuredContent.status === "exited", "the run ended", r.structuredContent);
    check(seen.length >= 3 && seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress),
      "notifications/progress, their progress growing", seen);
    const lines = seen.map(lineOf);
    check(lines.includes("step 1") && lines.includes("step 2 in colour"), "each new line, cleaned", seen);
    check(seen.every((p) => /^\d+ bytes of output so far/.test(p.message) && !/partial/.test(p.message)),
      "the bytes so far, never a line not ended", seen);
    check(seen.some((p, i) => i > 0 && p.message === seen[i - 1].message), "one while nothing comes", seen);
  },

  // A job left running for the shell to see what becomes of it.
  async leave() {
    const r = await call("run", { command: "sleep 300", wait_sec: 0 });
    check(r.structuredContent.status === "running", "a job runs");
    console.log(`JOB ${r.structuredContent.id}`);
    console.log(`SERVER_PID ${transport.pid}`);
    if (process.env.MCP_TEST_HOLD) {
      // The shell kills the server; this client waits to be told to go.
      await sleep(Number(process.env.MCP_TEST_HOLD) * 1000);
    }
  },

  // A run bgrund did not answer in time (stopped): the isError names its
  // request_id and tells no retry; a run with it runs the command once.
  async once() {
    const mark = process.env.MCP_TEST_MARK, pid = process.env.MCP_TEST_BGRUND;
    const { execFileSync } = await import("node:child_process");
    execFileSync("kill", ["-STOP", pid]);
    let t0 = Date.now(), r;
    try {
      r = await call("run", { command: `echo ran >> ${mark}`, wait_sec: 0 });
    } finally {
      execFileSync("kill", ["-CONT", pid]);
    }
    const ms = Date.now() - t0, text = r.content?.[0]?.text ?? "";
    check(r.isError && ms <= 4000, `an isError within the 3 s deadline + 1 s (${ms} ms)`, text);
    const rid = /request_id "([^"]+)"/.exec(text)?.[1];
    check(/^mcp-[0-9a-f]{32}$/.test(rid ?? "") && !/try again/i.test(text), "it names its request_id, no retry", text);
    const again = await call("run", { command: `echo ran >> ${mark}`, request_id: rid, wait_sec: 10 });
    check(!again.isError && again.structuredContent.status === "exited" && again.structuredContent.request_id === rid,
      "a run with that request_id", again.structuredContent ?? again.content);
    const third = await call("run", { command: `echo ran >> ${mark}`, request_id: rid, wait_sec: 10 });
    check(third.structuredContent?.id === again.structuredContent.id, "another answers the same job", third.structuredContent);
    const other = await call("run", { command: "echo other", request_id: rid, wait_sec: 0 });
    check(other.isError && /another command/.test(other.content?.[0]?.text), "another command under it is refused",
      other.content);
    // Argv, exactly, with no shell.
    const words = await call("run", { argv: ["printf", "%s|", "a b", "$HOME", "*"], wait_sec: 10 });
    check(words.structuredContent?.output === "a b|$HOME|*|", "argv runs the words exactly", words.structuredContent);
  },

  // One run of true, timed, many times: the benchmark's row.
  async bench() {
    const n = Number(process.env.MCP_BENCH_N ?? 30);
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const r = await call("run", { command: "true", wait_sec: 10 });
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.structuredContent.status !== "exited") check(false, "bench run", r);
    }
    ms.sort((a, b) => a - b);
    console.log(`MEDIAN_MS ${ms[Math.floor(n / 2)].toFixed(2)}`);
  },
};

if (!scenarios[scenario]) {
  console.error(`no scenario ${scenario}`);
  process.exit(2);
}
await scenarios[scenario]();
await client.close();
