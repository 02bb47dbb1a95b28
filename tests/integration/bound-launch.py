#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Launch COMMAND with BindToCaller on the system bus, print the job's id,
then hold the connection until killed: a caller that outlives a restart of
bgrund (bgrun run --wait leaves when bgrund does). Marshalled by hand, as
raw-launch.py does, since the sandbox has no D-Bus module for Python.
    bound-launch.py COMMAND"""
import os, socket, struct, sys, time

def pad(buf, n):
    return buf + b"\0" * (-len(buf) % n)

def string(buf, s):
    buf = pad(buf, 4)
    return buf + struct.pack("<I", len(s)) + s + b"\0"

def message(serial, path, iface, member, dest, sig, body):
    fields = b""
    for code, typ, val in ((1, b"o", path), (2, b"s", iface), (3, b"s", member),
                           (6, b"s", dest), (8, b"g", sig)):
        if val is None:
            continue
        fields = pad(fields, 8) + bytes([code, 1]) + typ + b"\0"
        if typ == b"g":
            fields += bytes([len(val)]) + val + b"\0"
        else:
            fields = string(fields, val)
    head = b"l\x01\x00\x01" + struct.pack("<III", len(body), serial, len(fields))
    return pad(head + fields, 8) + body

def recv_message(sock):
    data = b""
    while len(data) < 16:
        chunk = sock.recv(4096)
        if not chunk:
            return None
        data += chunk
    body_len, _, fields_len = struct.unpack("<III", data[4:16])
    total = 16 + fields_len + (-(16 + fields_len) % 8) + body_len
    while len(data) < total:
        chunk = sock.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data[:total]

def main():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("/run/dbus/system_bus_socket")
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not sock.recv(4096).startswith(b"OK"):
        sys.exit("auth-failed")
    sock.sendall(b"BEGIN\r\n")
    sock.sendall(message(1, b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello",
                         b"org.freedesktop.DBus", None, b""))
    recv_message(sock)
    body = string(b"", sys.argv[1].encode())
    body = string(body, b"bound-holder")
    body = string(body, b"/")
    # a{sv} with one entry: BindToCaller = <true>
    entry = string(b"", b"BindToCaller") + b"\x01b\x00"
    entry = pad(entry, 4) + struct.pack("<I", 1)
    body = pad(body, 4)
    body += struct.pack("<I", len(entry))
    body = pad(body, 8) + entry
    sock.sendall(message(2, b"/org/bgrun/Runtime1", b"org.bgrun.Runtime1.Manager", b"Launch",
                         b"org.bgrun.Runtime1", b"sssa{sv}", body))
    while True:
        msg = recv_message(sock)
        if msg is None:
            sys.exit("disconnected")
        if msg[1] == 3:
            sys.exit("error")
        if msg[1] == 2:
            fields_len = struct.unpack("<I", msg[12:16])[0]
            start = 16 + fields_len + (-(16 + fields_len) % 8)
            n = struct.unpack("<I", msg[start:start + 4])[0]
            print(msg[start + 4:start + 4 + n].decode(), flush=True)
            break
    # Hold the connection (and read what comes, so nothing piles up).
    sock.settimeout(None)
    while sock.recv(65536):
        pass
    time.sleep(3600)

main()
