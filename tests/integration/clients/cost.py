#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The cost test's generator (tests/integration/test-cost.sh, tools/cost),
and the small D-Bus client the hostile-*.py helpers share: messages
marshalled by hand (busctl and sd-bus refuse to send some of what a hostile
caller may), sent on the system bus or on a bgrund --listen socket, with
file descriptors attached.

    cost.py ping ADDRESS [PID]      Peer.Ping to bgrund every 10 ms until
                                    SIGTERM; prints {"pings", "worst_ms",
                                    "median_ms", "errors", "outstanding_ms",
                                    "bus_worst_ms": the bus daemon's own
                                    GetId's, on the system bus; with PID,
                                    bgrund's: "worst_cpu_ms", the CPU time
                                    bgrund spent while a Ping waited}
    cost.py run [--listen ADDRESS] [--repeat N] [--connections N]
                [--deadline SEC] [--rss-pid PID] [--only REGEX]
                [--cpu-pid PID --cpu-bound BASE_NS,NS_PER_BYTE]
                [--skip REGEX] [--list] JOB
                                    every hostile input of the table below,
                                    for every method bgrund's objects list
                                    (introspected: the manager, JOB's object,
                                    and with --listen the bus-daemon object of
                                    that socket) and every Launch option of
                                    src/core/launch-options.h; prints
                                    one JSON line per call that did not get
                                    an error reply in time (a reply does for
                                    a well-typed call), then a summary;
                                    --rss-pid: the largest VmRSS of PID
                                    meanwhile; --cpu-pid (one connection):
                                    PID's CPU time for each input, sent
                                    alone, against BASE_NS + NS_PER_BYTE per
                                    byte of the message; --only, --skip: the inputs
                                    whose label matches; --list: print the
                                    inputs, send nothing
ADDRESS: "system" or unix:path=PATH. Both the introspection (busctl) and
the inputs are as whoever runs `run` (the test: alice).
"""
import json, os, re, signal, socket, struct, subprocess, sys, time
import xml.etree.ElementTree as ET

SYSTEM_BUS = "/run/dbus/system_bus_socket"
DEST, MANAGER_PATH = "org.bgrun.Runtime1", "/org/bgrun/Runtime1"
MANAGER_IFACE, JOB_IFACE = "org.bgrun.Runtime1.Manager", "org.bgrun.Runtime1.Job"
JOB_PREFIX = "/org/bgrun/Runtime1/job/"
MIB = 1024 * 1024
# What one hostile message may carry: the body, under the 4 MiB a --listen
# socket takes (bus_listen.h) with room for the header.
BODY_MAX = 4 * MIB - 4096

# --- marshalling -----------------------------------------------------------

ALIGN = {"y": 1, "b": 4, "n": 2, "q": 2, "i": 4, "u": 4, "x": 8, "t": 8, "d": 8,
         "s": 4, "o": 4, "g": 1, "v": 1, "a": 4, "(": 8, "{": 8, "h": 4}
FIXED = {"y": "B", "b": "I", "n": "h", "q": "H", "i": "i", "u": "I", "x": "q", "t": "Q",
         "d": "d", "h": "I"}


class V:
    """A variant: its signature and value."""
    def __init__(self, sig, value):
        self.sig, self.value = sig, value


class Repeat:
    """An array's elements: VALUE N times (marshalled once where it can be)."""
    def __init__(self, value, n):
        self.value, self.n = value, n


def split_types(sig):
    """The complete types a signature holds, in order."""
    out, i = [], 0
    while i < len(sig):
        j = end_of_type(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def end_of_type(sig, i):
    c = sig[i]
    if c == "a":
        return end_of_type(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        i += 1
        while sig[i] != close:
            i = end_of_type(sig, i)
        return i + 1
    return i + 1


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def pad(self, n):
        self.buf += b"\0" * (-len(self.buf) % n)

    def write(self, sig, value):
        c = sig[0]
        self.pad(ALIGN[c])
        if c in FIXED:
            self.buf += struct.pack("<" + FIXED[c], value)
        elif c in "so":
            b = value if isinstance(value, bytes) else value.encode()
            self.buf += struct.pack("<I", len(b)) + b + b"\0"
        elif c == "g":
            b = value.encode()
            self.buf += bytes([len(b)]) + b + b"\0"
        elif c == "v":
            self.write("g", value.sig)
            self.write(value.sig, value.value)
        elif c == "(":
            for t, v in zip(split_types(sig[1:-1]), value):
                self.write(t, v)
        elif c == "{":
            k, v = split_types(sig[1:-1])
            self.write(k, value[0])
            self.write(v, value[1])
        elif c == "a":
            self.write_array(sig[1:], value)
        else:
            raise ValueError("cannot marshal " + sig)

    def write_array(self, elem, value):
        at = len(self.buf)
        self.buf += b"\0\0\0\0"
        self.pad(ALIGN[elem[0]])
        start = len(self.buf)
        if elem == "y" and isinstance(value, (bytes, bytearray)):
            self.buf += value
        elif isinstance(value, RawArray):
            self.buf += value.data
        elif isinstance(value, Repeat):
            self.write_repeat(elem, value)
        else:
            for v in value:
                self.write(elem, v)
        struct.pack_into("<I", self.buf, at, len(self.buf) - start)

    def write_repeat(self, elem, rep):
        """The first few copies marshalled, until one would start where the
        first did (modulo 8, so with the same padding inside), then those
        bytes repeated."""
        n, a = rep.n, ALIGN[elem[0]]
        first = len(self.buf)
        m = 0
        while m < n:
            self.write(elem, rep.value)
            m += 1
            if m == n:
                return
            self.pad(a)
            if len(self.buf) % 8 == first % 8 or m == 16:
                break
        if len(self.buf) % 8 != first % 8:
            for _ in range(n - m):
                self.write(elem, rep.value)
            return
        chunk = bytes(self.buf[first:])
        full, rem = divmod(n - m, m)
        if rem == 0:
            full, rem = full - 1, m
        self.buf += chunk * full
        for _ in range(rem):
            self.write(elem, rep.value)


class RawArray:
    """An array's elements, marshalled already (each starting aligned)."""
    def __init__(self, data):
        self.data = data


def body_of(sig, values):
    w = Writer()
    for t, v in zip(split_types(sig), values):
        w.write(t, v)
    return bytes(w.buf)


def message(serial, member, path=MANAGER_PATH, iface=MANAGER_IFACE, dest=DEST, sig="", body=b"",
            n_fds=0, flags=0, type_=1, sender=None):
    """A message marshalled by hand; type_ 1 a call, 4 a signal; sender a
    SENDER field of the caller's own (what only a direct connection keeps)."""
    w = Writer()
    w.buf += b"l" + bytes([type_, flags, 1]) + struct.pack("<II", len(body), serial)
    fields = [(1, "o", path), (2, "s", iface), (3, "s", member), (6, "s", dest), (7, "s", sender)]
    if sig:
        fields.append((8, "g", sig))
    if n_fds:
        fields.append((9, "u", n_fds))
    # The header fields, a(yv), marshalled after the 12 bytes above.
    w.write("a(yv)", [(code, V(t, v)) for code, t, v in fields if v is not None])
    # The array's length is at offset 12, where write() put it.
    w.pad(8)
    return bytes(w.buf) + body


# --- reading -----------------------------------------------------------------

class Reply:
    def __init__(self, data, fds):
        self.type = data[1]
        self.fds = fds
        body_len, self.serial, fields_len = struct.unpack("<III", data[4:16])
        self.fields = {}
        p, end = 16, 16 + fields_len
        while p < end:
            p += -p % 8
            code = data[p]
            slen = data[p + 1]
            sig = data[p + 2:p + 2 + slen].decode()
            p += 3 + slen
            if sig in ("s", "o"):
                p += -p % 4
                n = struct.unpack("<I", data[p:p + 4])[0]
                self.fields[code] = data[p + 4:p + 4 + n].decode(errors="replace")
                p += 5 + n
            elif sig == "g":
                n = data[p]
                self.fields[code] = data[p + 1:p + 1 + n].decode()
                p += 2 + n
            elif sig == "u":
                p += -p % 4
                self.fields[code] = struct.unpack("<I", data[p:p + 4])[0]
                p += 4
            else:
                break
        body = data[end + (-end % 8):]
        self.body = body
        self.reply_serial = self.fields.get(5)
        self.error = self.fields.get(4) if self.type == 3 else None
        self.text = ""
        if self.fields.get(8, "").startswith("s") and len(body) >= 4:
            n = struct.unpack("<I", body[:4])[0]
            self.text = body[4:4 + n].decode(errors="replace")

    def first_string(self):
        return self.text


class Disconnected(Exception):
    pass


class Conn:
    """One authenticated connection (Hello said) to the bus or a --listen
    socket, with unix fd passing negotiated."""

    def __init__(self, address="system", fds=True):
        path = SYSTEM_BUS if address == "system" else address.split("unix:path=", 1)[1].split(",")[0]
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.sendall(b"\0AUTH EXTERNAL " + str(os.geteuid()).encode().hex().encode() + b"\r\n")
        self.readline(b"OK")
        if fds:
            self.sock.sendall(b"NEGOTIATE_UNIX_FD\r\n")
            self.readline(b"AGREE_UNIX_FD")
        self.sock.sendall(b"BEGIN\r\n")
        self.buf = b""
        self.serial = 0
        self.replies = {}
        r = self.call(message(self.next_serial(), "Hello", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                              "org.freedesktop.DBus"), timeout=30)
        if r is None or r.type != 2:
            raise Disconnected("Hello was not answered")

    def readline(self, want):
        line = b""
        while not line.endswith(b"\r\n"):
            chunk = self.sock.recv(1)
            if not chunk:
                raise Disconnected("closed during authentication")
            line += chunk
        if not line.startswith(want):
            raise Disconnected("authentication: " + line.decode(errors="replace").strip())

    def next_serial(self):
        self.serial += 1
        return self.serial

    def send(self, data, fds=()):
        if fds:
            self.sock.sendmsg([data[:4096]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))])
            data = data[4096:]
        self.sock.sendall(data)

    def recv_one(self, timeout):
        """The next message, or None when the timeout passed."""
        deadline = time.monotonic() + timeout
        fds = []
        while True:
            if len(self.buf) >= 16:
                body_len, _, fields_len = struct.unpack("<III", self.buf[4:16])
                total = 16 + fields_len + (-(16 + fields_len) % 8) + body_len
                if len(self.buf) >= total:
                    data, self.buf = self.buf[:total], self.buf[total:]
                    return Reply(data, fds)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk, anc, _, _ = self.sock.recvmsg(1 << 20, socket.CMSG_SPACE(253 * 4))
            except socket.timeout:
                return None
            except (ConnectionResetError, BrokenPipeError):
                raise Disconnected("reset")
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = struct.unpack("%di" % (len(payload) // 4), payload[:len(payload) - len(payload) % 4])
                    for fd in got:
                        os.close(fd)
                    fds.extend(got)
            if not chunk:
                raise Disconnected("closed")
            self.buf += chunk

    def wait_reply(self, serial, timeout):
        deadline = time.monotonic() + timeout
        while serial not in self.replies:
            m = self.recv_one(max(0.0, deadline - time.monotonic()))
            if m is None:
                return None
            if m.reply_serial is not None:
                self.replies[m.reply_serial] = m
        return self.replies.pop(serial)

    def call(self, data, fds=(), timeout=30):
        serial = struct.unpack("<I", data[8:12])[0]
        self.send(data, fds)
        return self.wait_reply(serial, timeout)

    def close(self):
        self.sock.close()


def call_method(conn, member, sig="", values=(), path=MANAGER_PATH, iface=MANAGER_IFACE, timeout=30,
                dest=DEST):
    """A call by name; (reply or None, seconds it took)."""
    t = time.monotonic()
    r = conn.call(message(conn.next_serial(), member, path, iface, dest, sig, body_of(sig, values)),
                  timeout=timeout)
    return r, time.monotonic() - t


def describe(r):
    if r is None:
        return {"answer": "none"}
    if r.type == 3:
        return {"answer": "error", "name": r.error, "message": r.text[:300]}
    return {"answer": "reply"}


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def cpu_ns(pid):
    """The CPU time process PID has spent, all its threads, in nanoseconds
    (schedstat's first field: the scheduler's own count, not 10 ms ticks)."""
    total = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def cpu_settled(pid, since):
    """PID's CPU time since SINCE once it stopped spending any (what it does
    after a reply counts too): unchanged over 2 ms, 200 ms at the most."""
    last, end = cpu_ns(pid), time.monotonic() + 0.2
    while time.monotonic() < end:
        time.sleep(0.002)
        now = cpu_ns(pid)
        if now == last:
            break
        last = now
    return last - since


# --- bob's pings -------------------------------------------------------------

def ping(address, pid=None):
    """Peer.Ping to bgrund every 10 ms until SIGTERM, one at a time; the
    worst latency counts a Ping still unanswered at the end. On the system
    bus each is followed by a GetId, which the bus daemon answers itself, for
    comparison (bus_worst_ms): what the bus made bob wait, not bgrund. With
    PID (bgrund's), the CPU time bgrund spent while each Ping waited: the
    work queued ahead of it, whatever else the machine was doing."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    conn = Conn(address, fds=False)
    print("pinging", flush=True)
    times, bus_times, errors, outstanding = [], [], [], 0.0
    cpu = {"worst": 0, "at": None}

    def one(dest, path, iface="org.freedesktop.DBus.Peer", member="Ping"):
        data = message(conn.next_serial(), member, path, iface, dest)
        serial = conn.serial
        c = cpu_ns(pid) if pid and dest == DEST else None
        t = time.monotonic()
        conn.send(data)
        r = None
        while r is None and not stop:
            try:
                r = conn.wait_reply(serial, 0.05)
            except Disconnected as e:
                errors.append("disconnected: %s" % e)
                stop.append(1)
        if r is not None and r.type == 3:
            errors.append(r.error)
        took = time.monotonic() - t
        if c is not None:
            spent = cpu_ns(pid) - c
            if spent > cpu["worst"]:
                cpu["worst"], cpu["at"] = spent, round(took * 1000, 1)
        return r, took

    while not stop:
        r, took = one(DEST, MANAGER_PATH)
        if r is None:
            outstanding = took
            break
        times.append(took)
        if address == "system" and not stop:
            r, took = one("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId")
            if r is not None:
                bus_times.append(took)
        time.sleep(0.01)
    times.sort()
    worst = max(times[-1] if times else 0.0, outstanding)
    print(json.dumps({"pings": len(times), "worst_ms": round(worst * 1000, 1),
                      "median_ms": round(times[len(times) // 2] * 1000, 2) if times else None,
                      "outstanding_ms": round(outstanding * 1000, 1), "errors": errors[:5],
                      "bus_worst_ms": round(max(bus_times) * 1000, 1) if bus_times else None,
                      "worst_cpu_ms": round(cpu["worst"] / 1e6, 2) if pid else None,
                      "worst_cpu_ping_ms": cpu["at"]}), flush=True)


# --- the table of inputs -----------------------------------------------------
#
# Every method bgrund's objects list, by the kind of object it is on, with
# the arguments of a call that is well formed but fails (or asks nothing
# that changes state): each hostile input replaces or adds to these. A method
# introspected that has no entry here fails the test, and so does a Launch
# option of src/core/launch-options.h without one in OPTIONS.
NO_JOB = "zzzzzzzzzz"        # a well-formed id nobody has
NO_DIR = "/nonexistent-cost"  # absolute, checked only after the options

METHODS = {
    "manager": {
        "org.bgrun.Runtime1.Manager.Launch": lambda c: ["true", "cost", NO_DIR, []],
        "org.bgrun.Runtime1.Manager.Get": lambda c: [NO_JOB],
        "org.bgrun.Runtime1.Manager.ListJobs": lambda c: [""],
        "org.bgrun.Runtime1.Manager.ListJobsPaged": lambda c: ["", "", 10],
        "org.bgrun.Runtime1.Manager.ListJobsPagedEx": lambda c: ["", "", 10],
        "org.bgrun.Runtime1.Manager.Kill": lambda c: [NO_JOB],
        # alice's own running job, with an option that is refused: nothing stops it
        "org.bgrun.Runtime1.Manager.Stop": lambda c: [c["job"], [("NoSuchOption", V("b", 0))]],
        "org.bgrun.Runtime1.Manager.KillSession": lambda c: ["cost-no-such-session"],
        "org.bgrun.Runtime1.Manager.ReadOutput": lambda c: [c["job"], 0, 4096],
        # a timeout of 0: answered at once, as ReadOutput
        "org.bgrun.Runtime1.Manager.WaitOutput": lambda c: [c["job"], 0, 4096, 0],
        "org.bgrun.Runtime1.Manager.OpenOutput": lambda c: [c["job"]],
        "org.bgrun.Runtime1.Manager.Wait": lambda c: [c["job"], 0],
        "org.bgrun.Runtime1.Manager.Forget": lambda c: [NO_JOB],
        "org.bgrun.Runtime1.Manager.Reap": lambda c: [],
        "org.bgrun.Runtime1.Manager.WriteInput": lambda c: [c["job"], b"x", 0],
        "org.bgrun.Runtime1.Manager.ResizeTty": lambda c: [c["job"], 24, 80],
        "org.bgrun.Runtime1.Manager.Subscribe": lambda c: [],
        "org.bgrun.Runtime1.Manager.Unsubscribe": lambda c: [],
        "org.freedesktop.DBus.Properties.Get": lambda c: [MANAGER_IFACE, "Version"],
        "org.freedesktop.DBus.Properties.GetAll": lambda c: [MANAGER_IFACE],
        "org.freedesktop.DBus.Properties.Set": lambda c: [MANAGER_IFACE, "Version", V("s", "x")],
        "org.freedesktop.DBus.Introspectable.Introspect": lambda c: [],
        "org.freedesktop.DBus.Peer.Ping": lambda c: [],
        "org.freedesktop.DBus.Peer.GetMachineId": lambda c: [],
    },
    "job": {
        "org.freedesktop.DBus.Properties.Get": lambda c: [JOB_IFACE, "id"],
        "org.freedesktop.DBus.Properties.GetAll": lambda c: [JOB_IFACE],
        "org.freedesktop.DBus.Properties.Set": lambda c: [JOB_IFACE, "id", V("s", "x")],
        "org.freedesktop.DBus.Introspectable.Introspect": lambda c: [],
        "org.freedesktop.DBus.Peer.Ping": lambda c: [],
        "org.freedesktop.DBus.Peer.GetMachineId": lambda c: [],
    },
    # A --listen socket's own bus-daemon object.
    "bus": {
        "org.freedesktop.DBus.Hello": lambda c: [],
        "org.freedesktop.DBus.AddMatch": lambda c: ["type='signal',sender='org.bgrun.Runtime1'"],
        "org.freedesktop.DBus.RemoveMatch": lambda c: ["type='signal',sender='org.bgrun.Runtime1'"],
        "org.freedesktop.DBus.GetNameOwner": lambda c: [DEST],
        "org.freedesktop.DBus.NameHasOwner": lambda c: [DEST],
        "org.freedesktop.DBus.GetId": lambda c: [],
        "org.freedesktop.DBus.Properties.Get": lambda c: ["org.freedesktop.DBus", "Features"],
        "org.freedesktop.DBus.Properties.GetAll": lambda c: ["org.freedesktop.DBus"],
        "org.freedesktop.DBus.Properties.Set": lambda c: ["org.freedesktop.DBus", "Features", V("s", "x")],
        "org.freedesktop.DBus.Introspectable.Introspect": lambda c: [],
        "org.freedesktop.DBus.Peer.Ping": lambda c: [],
        "org.freedesktop.DBus.Peer.GetMachineId": lambda c: [],
    },
}
# The methods sd-bus answers itself, reading its arguments and ignoring any
# that follow them.
SD_BUS_READS_ITS_OWN = {"org.freedesktop.DBus.Peer.Ping", "org.freedesktop.DBus.Peer.GetMachineId",
                        "org.freedesktop.DBus.Properties.Get", "org.freedesktop.DBus.Properties.GetAll"}
# The bus-daemon methods a --listen socket answers that its introspection
# need not list (the contract's): sent whether listed or not.
LISTEN_UNLISTED = {"org.freedesktop.DBus.GetNameOwner": "s", "org.freedesktop.DBus.NameHasOwner": "s",
                   "org.freedesktop.DBus.GetId": ""}

# Every Launch option: a value bgrund takes, which the inputs wrap, repeat
# and replace.
OPTIONS = {
    "MaxRuntimeUSec": 60 * 1000000,
    "Environment": ["A=1"],
    "MemoryMax": 64 * MIB,
    "TasksMax": 16,
    "CPUQuotaPerSecUSec": 500000,
    "User": "alice",
    "StopSignal": 15,
    "StopGraceUSec": 1000000,
    "Stdin": "pipe",
    "Tty": 1,
    "TtyRows": 24,
    "TtyColumns": 80,
    "BindToCaller": 1,
    "EnforceLimits": 1,
    "LaunchDeadlineUSec": 4102444800 * 1000000,  # 2100-01-01: a Launch that may run
    "RequestId": "cost-request",
    "Argv": ["true"],  # with the command "true": refused (Argv takes "")
    "PrivateNetwork": 1,
    "PrivateTmp": 1,
    "ProtectSystem": "strict",
    "ProtectHome": "read-only",
    "ReadWritePaths": ["/tmp"],
    "ReadOnlyPaths": ["/usr"],
    "InaccessiblePaths": ["-/nonexistent"],
    "ProtectGit": 0,
    "RestrictAddressFamilies": ["AF_UNIX"],
    "AllowedDomains": ["example.com"],  # without PrivateNetwork: refused (it needs it)
    "Queue": 1,
    "MaxParallel": 4,  # in the session "": refused (it needs one)
}

# The D-Bus limits a caller's message must stay within (the bus daemon
# disconnects past them): 32 nested arrays, 32 nested structs, 64 levels of
# containers in all with variants counted, 16 descriptors a message.
MAX_ARRAYS, MAX_STRUCTS, MAX_DEPTH, MAX_FDS = 32, 32, 64, 16


def launch_options(header):
    """(key, signature) of the option table's rows (its first two columns), in order."""
    text = open(header).read()
    body = text.split("#define LAUNCH_OPTION_TABLE", 1)[1]
    body = body.split("\n\n", 1)[0]
    return re.findall(r'X\(\s*\w+\s*,\s*"(\w+)"\s*,\s*"([^"]+)"\s*,', body)


def introspect(address, path):
    """{"iface.method": in-signature} of the object, as busctl lists it."""
    cmd = ["busctl", "--xml-interface", "introspect", DEST, path]
    if address != "system":
        cmd.insert(1, "--address=" + address)
    xml = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30).stdout
    methods = {}
    for iface in ET.fromstring(xml).iter("interface"):
        for m in iface.iter("method"):
            sig = "".join(a.get("type") for a in m.iter("arg") if a.get("direction", "in") == "in")
            methods[iface.get("name") + "." + m.get("name")] = sig
    return methods


def wrong(t):
    """A value of another type than t, and its type."""
    if t in ("s", "o", "g"):
        return "u", 7
    if t[0] in "a(v{":
        return "s", "x"
    return "s", "1"


def sample(t):
    """A small value of type t."""
    if t in FIXED:
        return 0
    if t in "so":
        return "" if t == "s" else "/"
    if t == "g":
        return ""
    if t == "v":
        return V("b", 0)
    if t[0] == "a":
        return b"" if t == "ay" else []
    if t[0] == "(":
        return tuple(sample(x) for x in split_types(t[1:-1]))
    raise ValueError(t)


def room(sig, values):
    """Bytes left in a message whose other arguments are these."""
    return BODY_MAX - len(body_of(sig, values)) - 64


def longest(elem, value, space):
    """A Repeat of value that fills about space bytes as an array of elem."""
    one = len(body_of("a" + elem, [Repeat(value, 1)])) - 8
    two = len(body_of("a" + elem, [Repeat(value, 2)])) - 8
    step = max(1, two - one)
    return Repeat(value, max(1, space // step - 1))


def container_depth(t):
    """How deep the containers of one complete type nest."""
    if t[0] == "a":
        return 1 + container_depth(t[1:])
    if t[0] in "({":
        return 1 + max((container_depth(x) for x in split_types(t[1:-1])), default=0)
    return 0


def nest_variants(inner_sig, inner, depth):
    """depth variants, the innermost holding inner."""
    v = V(inner_sig, inner)
    for _ in range(depth - 1):
        v = V("v", v)
    return v


def deep_containers():
    """32 arrays and 32 structs, alternating: 64 levels."""
    sig = "a(" * MAX_ARRAYS + "s" + ")" * MAX_STRUCTS
    v = "x"
    for _ in range(MAX_ARRAYS):
        v = [(v,)]
    return sig, v


class Input:
    def __init__(self, label, path, iface, member, sig, values, must_error, fds=0):
        self.label, self.path, self.iface, self.member = label, path, iface, member
        self.sig, self.values, self.must_error, self.fds = sig, values, must_error, fds
        self._body = None

    def body(self):
        if self._body is None:
            self._body = body_of(self.sig, self.values)
        return self._body


def method_inputs(kind, path, name, sig, ctx, options):
    """Every hostile input for one method, from its signature and its entry
    in METHODS."""
    iface, member = name.rsplit(".", 1)
    base = METHODS[kind][name](ctx)
    types = split_types(sig)
    out = []

    def add(label, s, v, must_error, fds=0):
        out.append(Input("%s %s %s" % (path, name, label), path, iface, member, s, v, must_error, fds))

    def replaced(i, t, v):
        return "".join(types[:i] + [t] + types[i + 1:]), base[:i] + [v] + base[i + 1:]

    if types:
        add("without arguments", "", [], True)
    for i, t in enumerate(types):
        add("argument %d of the wrong type" % i, *replaced(i, *wrong(t)), True)
        add("argument %d as %d nested variants" % (i, MAX_DEPTH),
            *replaced(i, "v", nest_variants("s", "x", MAX_DEPTH)), True)
        if t == "s":
            s, v = replaced(i, "s", "")
            add("argument %d: the longest string" % i, *replaced(i, "s", "x" * room(s, v)), False)
        if t[0] == "a" and t != "a{sv}":
            s, v = replaced(i, t, sample(t))
            elem = t[1:]
            add("argument %d: the longest array" % i,
                *replaced(i, t, b"x" * room(s, v) if elem == "y" else longest(elem, sample(elem), room(s, v))), False)
            s, v = replaced(i, "as", [])
            add("argument %d: the longest array of strings in its place" % i,
                *replaced(i, "as", longest("s", "", room(s, v))), True)
        if t == "a{sv}":
            s, v = replaced(i, t, [])
            space = room(s, v)
            # {"NoSuchOption0000000": <false>}, ...: 32 bytes each.
            keys = RawArray(b"".join(b"\x13\0\0\0NoSuchOption%07d\0\x01b\0\0\0\0\0\0" % k
                                     for k in range(space // 32)))
            add("argument %d: the most unknown keys" % i, *replaced(i, t, keys), True)
            key = next(iter(options)) if options else "NoSuchOption"
            val = options.get(key, (None, None))
            if val[0] is not None:
                add("argument %d: %s as often as fits" % (i, key),
                    *replaced(i, t, longest("{sv}", (key, V(val[0], val[1])), space)), True)
            # a{sv}: an array and a dict entry around the variants.
            add("argument %d: a value of %d nested variants" % (i, MAX_DEPTH - 2),
                *replaced(i, t, [(key, nest_variants("s", "x", MAX_DEPTH - 2))]), True)
            if kind == "manager" and member in ("Launch", "Stop"):
                for okey, (osig, oval) in options.items():
                    out.extend(option_inputs(path, name, iface, member, i, okey, osig, oval, replaced, space))
    # Arguments after the method's own: sd-bus's built-in handlers read
    # what they take and answer (cheaply, measured); bgrund's refuse them.
    trailing_error = name not in SD_BUS_READS_ITS_OWN
    sig_c, deep = deep_containers()
    add("with %d arrays and %d structs nested after it" % (MAX_ARRAYS, MAX_STRUCTS), sig + sig_c, base + [deep],
        trailing_error)
    s, v = sig + "au", base + [[]]
    add("with the longest array of another type after it", s, base + [longest("u", 0, room(s, v))], trailing_error)
    add("with %d descriptors attached" % MAX_FDS, sig, base, False, fds=MAX_FDS)
    return out


def option_inputs(path, name, iface, member, i, key, osig, oval, replaced, space):
    out = []

    def add(label, v, must_error=True):
        s, vals = replaced(i, "a{sv}", v)
        out.append(Input("%s %s option %s %s" % (path, name, key, label), path, iface, member, s, vals, must_error))

    wsig, wval = wrong(osig)
    add("of the wrong type", [(key, V(wsig, wval))])
    arr = "au" if osig == "as" else "as"
    add("as the longest array of the wrong type (%s)" % arr,
        [(key, V(arr, longest(arr[1:], sample(arr[1:]), space - 64)))])
    if osig[0] == "a":
        add("as the longest array of its type", [(key, V(osig, longest(osig[1:], oval[0], space - 64)))])
    # An array and a dict entry around them, and what the option's own type nests.
    depth = MAX_DEPTH - 2 - container_depth(osig)
    add("in %d nested variants" % depth, [(key, nest_variants(osig, oval, depth))])
    add("given as often as fits", longest("{sv}", (key, V(osig, oval)), space))
    return out


def generate(address, job, header, listen):
    """Every input, and what the table lacks."""
    ctx = {"job": job}
    options = {k: (s, OPTIONS.get(k)) for k, s in launch_options(header)}
    uncovered = ["Launch option %s (%s) has no entry in cost.py's OPTIONS" % (k, s)
                 for k, (s, v) in options.items() if v is None]
    options = {k: sv for k, sv in options.items() if sv[1] is not None}
    objects = [("manager", MANAGER_PATH), ("job", JOB_PREFIX + job)]
    if listen:
        objects.append(("bus", "/org/freedesktop/DBus"))
    inputs, methods = [], 0
    for kind, path in objects:
        listed = introspect(address, path)
        if kind == "bus":
            listed.update({k: v for k, v in LISTEN_UNLISTED.items() if k not in listed})
        for name, sig in sorted(listed.items()):
            if name not in METHODS[kind]:
                uncovered.append("%s %s(%s) has no entry in cost.py's METHODS[%r]" % (path, name, sig, kind))
                continue
            methods += 1
            inputs += method_inputs(kind, path, name, sig, ctx, options)
    # Descriptors last: a connection they hang up (a --listen socket drops
    # them, and the call waits for them) is replaced only after a timeout.
    inputs.sort(key=lambda i: i.fds > 0)
    return inputs, methods, options, uncovered


# How long a hostile call may go unanswered before it counts as such.
CALL_TIMEOUT = 10.0


def send_one(conn, address, inp, cpu_pid):
    """Sends INP once (on CONN, or a new connection when None); returns the
    connection to go on with (None after one that holds up) and what came."""
    fds = [os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC) for _ in range(inp.fds)]
    try:
        if conn is None:
            conn = Conn(address)
        dest = "org.freedesktop.DBus" if inp.path == "/org/freedesktop/DBus" else DEST
        data = message(conn.next_serial(), inp.member, inp.path, inp.iface, dest, inp.sig, inp.body(),
                       n_fds=len(fds))
        c = cpu_ns(cpu_pid) if cpu_pid else 0
        t = time.monotonic()
        r = conn.call(data, fds, timeout=CALL_TIMEOUT)
        d = describe(r)
        d["ms"] = round((time.monotonic() - t) * 1000, 1)
        if cpu_pid:
            d["cpu_ns"] = cpu_settled(cpu_pid, c)
            d["bytes"] = len(data)
        if r is None:
            # Whatever holds this connection up holds the next call
            # too: a new one.
            conn.close()
            conn = None
    except (Disconnected, OSError) as e:
        d = {"answer": "disconnected: %s" % e}
        conn = None
    finally:
        for fd in fds:
            os.close(fd)
    return conn, d


def send_all(address, inputs, repeat, deadline, results, lock, cpu_pid=None, cpu_bound=None):
    """One connection's share: each input REPEAT times, one at a time. With
    CPU_PID (one connection only), the CPU time that process spent on each.
    With CPU_BOUND (base, per byte), an input refused over its bound is sent
    twice more and costs the least of the three: what bgrund spends on an
    input is what it needs; anything else it did meanwhile (a Ping, a job's
    end, a machine's other load) only adds, and a cost over the bound in
    every try is still over it."""
    conn = None
    for inp in inputs:
        for _ in range(repeat):
            if time.monotonic() > deadline:
                with lock:
                    results.append((inp, {"answer": "not sent: past the deadline"}))
                continue
            conn, d = send_one(conn, address, inp, cpu_pid)
            tries = 1
            while (cpu_bound and d.get("answer") == "error" and "cpu_ns" in d and tries < 3 and
                   d["cpu_ns"] > cpu_bound[0] + cpu_bound[1] * d["bytes"] and time.monotonic() < deadline):
                conn, again = send_one(conn, address, inp, cpu_pid)
                tries += 1
                if "cpu_ns" in again:
                    d["cpu_ns"] = min(d["cpu_ns"], again["cpu_ns"])
                d["cpu_tries"] = tries
            with lock:
                results.append((inp, d))
    if conn:
        conn.close()


def run(argv):
    import argparse, threading
    p = argparse.ArgumentParser(prog="cost.py run")
    p.add_argument("job")
    p.add_argument("--listen", metavar="ADDRESS")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--deadline", type=float, default=45.0)
    p.add_argument("--rss-pid", type=int)
    p.add_argument("--cpu-pid", type=int, help="PID's CPU time per input (one connection)")
    p.add_argument("--cpu-bound", metavar="BASE_NS,NS_PER_BYTE", help="the most CPU time an input may cost")
    p.add_argument("--only", metavar="REGEX", help="send only the inputs whose label matches")
    p.add_argument("--skip", metavar="REGEX", help="send none of the inputs whose label matches")
    p.add_argument("--list", action="store_true", help="print the inputs, send nothing")
    args = p.parse_args(argv)
    address = args.listen or "system"
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src", "core",
                          "launch-options.h")
    inputs, methods, options, uncovered = generate(address, args.job, header, bool(args.listen))
    if args.only:
        inputs = [i for i in inputs if re.search(args.only, i.label)]
    if args.skip:
        inputs = [i for i in inputs if not re.search(args.skip, i.label)]
    if args.list:
        for inp in inputs:
            print(inp.label, inp.sig, len(inp.body()), inp.fds)
        return 0
    rss = {"max": 0, "stop": False}

    def sample_rss():
        while not rss["stop"]:
            try:
                rss["max"] = max(rss["max"], rss_kb(args.rss_pid) or 0)
            except OSError:
                pass
            time.sleep(0.02)

    sampler = None
    if args.rss_pid:
        sampler = threading.Thread(target=sample_rss, daemon=True)
        sampler.start()
    start = time.monotonic()
    deadline = start + args.deadline
    results, lock = [], threading.Lock()
    cpu_pid = args.cpu_pid if args.connections == 1 else None
    cpu_bound = tuple(float(x) for x in args.cpu_bound.split(",")) if args.cpu_bound else None
    threads = [threading.Thread(target=send_all, args=(address, inputs, args.repeat, deadline, results, lock, cpu_pid,
                                                       cpu_bound))
               for _ in range(args.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rss["stop"] = True
    if sampler:
        sampler.join()
    bad, tally = 0, {}
    slowest = max(results, key=lambda r: r[1].get("ms", 0))
    for inp, d in results:
        ok = d["answer"] == "error" or (d["answer"] == "reply" and not inp.must_error)
        # A --listen socket takes no descriptor: the connection that sends
        # one is closed at once (bgrund logs why), never left waiting.
        if args.listen and inp.fds and d["answer"].startswith("disconnected"):
            ok = True
        if not ok:
            bad += 1
            kind = d["answer"].split(":")[0]
            tally[kind] = tally.get(kind, 0) + 1
            print(json.dumps({"input": inp.label, "signature": inp.sig[:80], "bytes": len(inp.body()),
                              "fds": inp.fds, **d}), flush=True)
    # Each input's CPU time against its bound: the most expensive, by how
    # much of its bound it took, and every one over it.
    cpu = None
    if cpu_pid:
        base, per_byte = (float(x) for x in (args.cpu_bound or "0,0").split(","))
        measured = [(inp, d) for inp, d in results if "cpu_ns" in d]
        worst = max(measured, key=lambda r: r[1]["cpu_ns"] / (base + per_byte * r[1]["bytes"]), default=None)
        over = [{"input": inp.label, "bytes": d["bytes"], "cpu_ms": round(d["cpu_ns"] / 1e6, 2),
                 "bound_ms": round((base + per_byte * d["bytes"]) / 1e6, 2), "tries": d.get("cpu_tries", 1)}
                for inp, d in measured if args.cpu_bound and d["cpu_ns"] > base + per_byte * d["bytes"]]
        most = max(measured, key=lambda r: r[1]["cpu_ns"], default=None)
        cpu = {"measured": len(measured), "over_bound": over[:20], "n_over_bound": len(over),
               "worst_ratio": None if not worst or not args.cpu_bound else
               {"input": worst[0].label, "bytes": worst[1]["bytes"], "cpu_ms": round(worst[1]["cpu_ns"] / 1e6, 2),
                "of_bound": round(worst[1]["cpu_ns"] / (base + per_byte * worst[1]["bytes"]), 3)},
               "most": None if not most else {"input": most[0].label, "bytes": most[1]["bytes"],
                                               "cpu_ms": round(most[1]["cpu_ns"] / 1e6, 2)}}
    summary = {"methods": methods, "options": len(options), "inputs": len(inputs), "calls": len(results), "cpu": cpu,
               "without_error_reply": bad, "what_they_got": tally, "uncovered": uncovered, "seconds": round(time.monotonic() - start, 1),
               "slowest": {"input": slowest[0].label, "ms": slowest[1].get("ms")},
               "rss_max_kb": rss["max"] if args.rss_pid else None}
    print(json.dumps(summary), flush=True)
    return 1 if bad or uncovered else 0



def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "ping":
        ping(sys.argv[2] if len(sys.argv) > 2 else "system", int(sys.argv[3]) if len(sys.argv) > 3 else None)
    elif sys.argv[1] == "run":
        return run(sys.argv[2:])

    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
