#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A peer-to-peer client of bgrund --listen (dbus-next, or raw sockets),
for tests/integration/test-listen.sh. Usage: listen-client.py ADDRESS MODE ...

  launch COMMAND          Launch, then Wait; prints the record as JSON
  limit N                 holds N connections, then one more (busctl): prints
                          "held N", then "refused: MESSAGE" or "accepted";
                          closes one and tries again: "then accepted|refused…"
  waits N ID              on one connection, N Wait calls on job ID: prints
                          "waiting K" and the first error "refused NAME"; then
                          on a new connection one Wait more: "again ok|NAME"
  subscribe SECONDS       Subscribe, then prints each JobNew's id for SECONDS
  idle                    two connections that say nothing (one only the NUL):
                          prints the seconds until bgrund closed each
  garbage                 what a hostile client may send; prints one line
                          per attempt: "NAME closed" when bgrund hung up
  quiet-refused N         holds N connections, then 16 more (as many as bgrund
                          holds turned down) that authenticate but never
                          call: prints "held N", then how many of the 16
                          bgrund closed within 10 s: "quiet K of 16 closed"
  unread ID N PID         N ReadOutput calls of up to 4 MiB of job ID's output
                          on one connection that reads nothing for 3 s: then
                          prints "rss KB" of process PID (bgrund), reads what
                          comes until 3 s pass with nothing, and prints
                          "closed" when bgrund hung up (or "open"), then how
                          much came and how many LimitExceeded errors:
                          "bytes B refused R"
"""
import asyncio, json, os, socket, subprocess, sys, time
from dbus_next.aio import MessageBus
from dbus_next import Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"


def plain(v):
    if hasattr(v, "value") and hasattr(v, "signature"):
        return plain(v.value)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def call_msg(member, signature="", body=()):
    return Message(destination=DEST, path=PATH, interface=IFACE, member=member, signature=signature, body=list(body))


async def connect(address):
    return await MessageBus(bus_address=address).connect()


async def launch(address, command):
    bus = await connect(address)
    r = await bus.call(call_msg("Launch", "sssa{sv}", [command, "listen-test", "/", {}]))
    if r.message_type == MessageType.ERROR:
        print("error", r.error_name, r.body)
        return 1
    w = await bus.call(call_msg("Wait", "st", [r.body[0], 30_000_000]))
    print(json.dumps(plain(w.body[0])))
    return 0


async def limit(address, n):
    held = []
    for _ in range(n):
        held.append(await connect(address))
    print("held", len(held), flush=True)

    def busctl():
        # An sd-bus client in bus mode (Hello first), as bgrun is.
        p = subprocess.run(["busctl", f"--address={address}", "call", DEST, PATH, IFACE, "ListJobs", "s", ""],
                           capture_output=True, text=True, timeout=10)
        return "accepted" if p.returncode == 0 else "refused: " + p.stderr.strip()

    print(busctl(), flush=True)
    held.pop().disconnect()
    await asyncio.sleep(0.3)
    print("then", busctl(), flush=True)
    return 0


async def waits(address, n, job):
    bus = await connect(address)
    futures = [asyncio.ensure_future(bus.call(call_msg("Wait", "st", [job, 600_000_000]))) for _ in range(n)]
    done, pending = await asyncio.wait(futures, timeout=3)
    errors = [f.result().error_name for f in done if f.result().message_type == MessageType.ERROR]
    print("waiting", len(pending))
    print("refused", errors[0] if errors else "none")
    for f in pending:
        f.cancel()
    bus.disconnect()
    await asyncio.sleep(0.3)
    bus2 = await connect(address)
    f = asyncio.ensure_future(bus2.call(call_msg("Wait", "st", [job, 100_000])))
    r = await asyncio.wait_for(f, 5)
    print("again", "ok" if r.message_type != MessageType.ERROR else r.error_name)
    return 0


async def subscribe(address, seconds):
    bus = await connect(address)

    def on_message(msg):
        if msg.message_type == MessageType.SIGNAL and msg.member == "JobNew":
            print("JobNew", msg.body[0], flush=True)

    bus.add_message_handler(on_message)
    r = await bus.call(call_msg("Subscribe"))
    if r.message_type == MessageType.ERROR:
        print("error", r.error_name)
        return 1
    print("subscribed", flush=True)
    await asyncio.sleep(seconds)
    return 0


def unix_socket(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(address[len("unix:path="):])
    return s


def closed_by_peer(s, timeout=10):
    """True when bgrund hangs up within timeout (whatever it answered first)."""
    s.settimeout(timeout)
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def idle(address):
    silent, nul = unix_socket(address), unix_socket(address)
    nul.sendall(b"\0")
    start = time.monotonic()
    for name, s in (("silent", silent), ("nul", nul)):
        ok = closed_by_peer(s, 20)
        print(name, f"{time.monotonic() - start:.1f}" if ok else "never")
    return 0


def authenticated(address):
    s = unix_socket(address)
    s.sendall(b"\0AUTH EXTERNAL " + str(os.geteuid()).encode().hex().encode() + b"\r\n")
    line = s.recv(4096)
    if not line.startswith(b"OK"):
        raise RuntimeError(f"auth answered {line!r}")
    s.sendall(b"BEGIN\r\n")
    return s


def garbage(address):
    tries = []
    s = unix_socket(address)
    s.sendall(os.urandom(64 * 1024))
    tries.append(("random-bytes", s))
    s = unix_socket(address)
    s.sendall(b"\0" + b"A" * 4096)
    tries.append(("endless-auth-line", s))
    s = authenticated(address)
    # A method call header declaring a 1 GiB body: dropped before sd-bus
    # would allocate it.
    s.sendall(b"l\x01\x00\x01" + (1 << 30).to_bytes(4, "little") + (1).to_bytes(4, "little") + (0).to_bytes(4, "little"))
    tries.append(("huge-declared-body", s))
    s = authenticated(address)
    s.sendall(b"X" * 64)
    tries.append(("bad-header", s))
    s = authenticated(address)
    # Descriptors sent along: closed at once, never kept.
    r, w = os.pipe()
    socket.send_fds(s, [b"X" * 16], [r, w] * 100)
    os.close(r)
    os.close(w)
    tries.append(("fds-and-a-bad-header", s))
    for name, s in tries:
        print(name, "closed" if closed_by_peer(s, 10) else "open")
    # A flood: many connections at once, each sending what is no D-Bus.
    flood = [unix_socket(address) for _ in range(40)]
    for s in flood:
        try:
            s.sendall(b"\0AUTH EXTERNAL 30\r\n" + os.urandom(16 * 1024))
        except (ConnectionResetError, BrokenPipeError):
            pass
    print("flood", sum(closed_by_peer(s, 10) for s in flood), "of", len(flood), "closed")
    return 0


async def quiet_refused(address, n):
    held = [await connect(address) for _ in range(n)]
    print("held", len(held), flush=True)
    quiet = [authenticated(address) for _ in range(16)]
    print("quiet", sum(closed_by_peer(s, 10) for s in quiet), "of", len(quiet), "closed", flush=True)
    return 0


def unread(address, job, n, pid):
    s = authenticated(address)
    # dbus-next's own marshalling (Debian's 0.2.3), onto a raw socket that
    # is then not read: no client library would leave its replies unread.
    calls = b"".join(
        Message(destination=DEST, path=PATH, interface=IFACE, member="ReadOutput", signature="stu",
                body=[job, 0, 4 << 20], serial=k + 1)._marshall()
        for k in range(n))
    s.sendall(calls)
    time.sleep(3)
    with open(f"/proc/{pid}/status") as f:
        print("rss", next(line.split()[1] for line in f if line.startswith("VmRSS:")), flush=True)
    data, closed = b"", False
    s.settimeout(3)
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                closed = True
                break
            data += chunk
    except socket.timeout:
        pass
    except (ConnectionResetError, BrokenPipeError):
        closed = True
    print("closed" if closed else "open")
    # Each answer to ReadOutput carries its 4 MiB; each refusal names its error.
    print("bytes", len(data), "refused", data.count(b"org.bgrun.Runtime1.Error.LimitExceeded"))
    return 0


def main():
    address, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "launch":
        return asyncio.run(launch(address, args[0]))
    if mode == "limit":
        return asyncio.run(limit(address, int(args[0])))
    if mode == "waits":
        return asyncio.run(waits(address, int(args[0]), args[1]))
    if mode == "subscribe":
        return asyncio.run(subscribe(address, float(args[0])))
    if mode == "idle":
        return idle(address)
    if mode == "garbage":
        return garbage(address)
    if mode == "quiet-refused":
        return asyncio.run(quiet_refused(address, int(args[0])))
    if mode == "unread":
        return unread(address, args[0], int(args[1]), int(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


# Straight out: dbus-next may still hold readers of connections left open.
rc = main()
sys.stdout.flush()
os._exit(rc)
