#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The cost test's generator (tests/integration/test-cost.sh, tools/cost),
and the small D-Bus client the hostile-*.py helpers share: messages
marshalled by hand (busctl and sd-bus refuse to send some of what a hostile
caller may), sent on the system bus or on a bgrund --listen socket, with
file descriptors attached.

    cost.py ping ADDRESS            Peer.Ping to bgrund every 10 ms until
                                    SIGTERM; prints {"pings", "worst_ms",
                                    "median_ms", "errors", "outstanding_ms"}
    cost.py run [--listen ADDRESS] [--repeat N] [--connections N]
                [--deadline SEC] JOB
                                    every hostile input of the table below,
                                    for every method bgrund's objects list
                                    (introspected: the manager, JOB's object,
                                    and with --listen the bus-daemon object of
                                    that socket) and every Launch option of
                                    include/bgrun/launch-options.h; prints
                                    one JSON line per input that did not get
                                    an error reply in time, then a summary
ADDRESS: "system" or unix:path=PATH. Introspection is read as root
(busctl); the inputs are sent as whoever runs `run` (the test: alice).
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
        elif isinstance(value, Repeat):
            self.write_repeat(elem, value)
        else:
            for v in value:
                self.write(elem, v)
        struct.pack_into("<I", self.buf, at, len(self.buf) - start)

    def write_repeat(self, elem, rep):
        if rep.n == 0:
            return
        first = len(self.buf)
        self.write(elem, rep.value)
        one = bytes(self.buf[first:])
        step = len(one) + (-len(one) % ALIGN[elem[0]])
        # Alike only when every copy starts at the same offset modulo 8.
        if step % 8 or first % 8:
            for _ in range(rep.n - 1):
                self.write(elem, rep.value)
            return
        padded = one + b"\0" * (step - len(one))
        self.buf[first:] = padded * (rep.n - 1) + one


def body_of(sig, values):
    w = Writer()
    for t, v in zip(split_types(sig), values):
        w.write(t, v)
    return bytes(w.buf)


def message(serial, member, path=MANAGER_PATH, iface=MANAGER_IFACE, dest=DEST, sig="", body=b"",
            n_fds=0, flags=0, type_=1):
    w = Writer()
    w.buf += b"l" + bytes([type_, flags, 1]) + struct.pack("<II", len(body), serial)
    fields = [(1, "o", path), (2, "s", iface), (3, "s", member), (6, "s", dest)]
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


# --- bob's pings -------------------------------------------------------------

def ping(address):
    """Peer.Ping to bgrund every 10 ms until SIGTERM, one at a time; the
    worst latency counts a Ping still unanswered at the end."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    conn = Conn(address, fds=False)
    print("pinging", flush=True)
    times, errors, outstanding = [], [], 0.0
    while not stop:
        data = message(conn.next_serial(), "Ping", MANAGER_PATH, "org.freedesktop.DBus.Peer", DEST)
        serial = conn.serial
        t = time.monotonic()
        conn.send(data)
        r = None
        while r is None and not stop:
            try:
                r = conn.wait_reply(serial, 0.05)
            except Disconnected as e:
                errors.append("disconnected: %s" % e)
                stop.append(1)
        if r is None:
            outstanding = time.monotonic() - t
            break
        times.append(time.monotonic() - t)
        if r.type == 3:
            errors.append(r.error)
        time.sleep(0.01)
    times.sort()
    worst = max(times[-1] if times else 0.0, outstanding)
    print(json.dumps({"pings": len(times), "worst_ms": round(worst * 1000, 1),
                      "median_ms": round(times[len(times) // 2] * 1000, 2) if times else None,
                      "outstanding_ms": round(outstanding * 1000, 1), "errors": errors[:5]}), flush=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "ping":
        ping(sys.argv[2] if len(sys.argv) > 2 else "system")
    elif sys.argv[1] == "run":
        return run(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
