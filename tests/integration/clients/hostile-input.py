#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What tests/integration/test-hostile.sh's users send bgrund, marshalled by
hand on the system bus (cost.py's client); each mode prints one JSON line.

    hostile-input.py launch-option KEY COUNT [distinct]
        one Launch of "true" whose options hold KEY: an array of COUNT
        strings ("x", or with distinct "V000001=1", ... for an environment);
        {"answer", "name", "message", "ms"}
    hostile-input.py write-input ID...
        WriteInput of "x\\n" to each job, all sent at once on one connection;
        {"answers": [{"answer", "name", "ms"} per job, ms from its send]}
    hostile-input.py wait-flood JOB CONNECTIONS WAITS
        CONNECTIONS connections opened, then WAITS Waits (an hour's timeout)
        on JOB sent on each, then every connection closed at once;
        {"connections", "sent", "ms"}
    hostile-input.py call METHOD SIG JSON-ARGS [REPEAT [CPU-PID]]
        the Manager's METHOD, REPEAT times (default 1) one after another,
        after 5 unmeasured when REPEAT > 1; {"answer", "name", "message", "ms", "median_ms"},
        and with CPU-PID "cpu_ms": that process's CPU time from the last
        call's send to its answer
"""
import json, os, statistics, sys, time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402


def launch_option(key, count, distinct):
    if distinct:
        values = ["V%07d=1" % i for i in range(count)]
    else:
        values = cost.Repeat("x", count)
    conn = cost.Conn()
    body = cost.body_of("sssa{sv}", ["true", "hostile", "/", [(key, cost.V("as", values))]])
    t = time.monotonic()
    r = conn.call(cost.message(conn.next_serial(), "Launch", sig="sssa{sv}", body=body), timeout=120)
    out = cost.describe(r)
    out["ms"] = round((time.monotonic() - t) * 1000, 1)
    out["body_bytes"] = len(body)
    print(json.dumps(out))


def write_input(ids):
    conn = cost.Conn()
    sent = {}
    for job in ids:
        data = cost.message(conn.next_serial(), "WriteInput", sig="sayb",
                            body=cost.body_of("sayb", [job, b"x\n", 0]))
        sent[conn.serial] = time.monotonic()
        conn.send(data)
    answers = {}
    deadline = time.monotonic() + 30
    while len(answers) < len(ids) and time.monotonic() < deadline:
        m = conn.recv_one(deadline - time.monotonic())
        if m is None:
            break
        if m.reply_serial in sent and m.reply_serial not in answers:
            answers[m.reply_serial] = dict(cost.describe(m), ms=round((time.monotonic() - sent[m.reply_serial]) * 1000, 1))
    print(json.dumps({"answers": [answers.get(s, {"answer": "none", "ms": None}) for s in sent]}))


def wait_flood(job, n, waits):
    t = time.monotonic()
    conns = [cost.Conn(fds=False) for _ in range(n)]
    body = cost.body_of("st", [job, 3600 * 1000000])
    for c in conns:
        c.send(b"".join(cost.message(c.next_serial(), "Wait", sig="st", body=body) for _ in range(waits)))
    for c in conns:
        c.close()
    print(json.dumps({"connections": n, "sent": n * waits, "ms": round((time.monotonic() - t) * 1000, 1)}))


def call(method, sig, args, repeat, cpu_pid=None):
    conn = cost.Conn()
    for _ in range(5 if repeat > 1 else 0):
        cost.call_method(conn, method, sig, args)
    times = []
    for _ in range(repeat):
        c = cost.cpu_ns(cpu_pid) if cpu_pid else 0
        r, took = cost.call_method(conn, method, sig, args)
        times.append(took * 1000)
        spent = cost.cpu_ns(cpu_pid) - c if cpu_pid else None
    out = cost.describe(r)
    out["ms"] = round(times[-1], 2)
    out["median_ms"] = round(statistics.median(times), 3)
    if cpu_pid:
        # bgrund's CPU from the call's send to its answer (of the last call).
        out["cpu_ms"] = round(spent / 1e6, 2)
    print(json.dumps(out))


def main():
    mode = sys.argv[1]
    if mode == "launch-option":
        launch_option(sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4 and sys.argv[4] == "distinct")
    elif mode == "write-input":
        write_input(sys.argv[2:])
    elif mode == "wait-flood":
        wait_flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "call":
        call(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 1,
             int(sys.argv[6]) if len(sys.argv) > 6 else None)
    else:
        sys.exit("unknown mode " + mode)


main()
