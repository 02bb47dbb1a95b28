#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Send Launch with a command of raw bytes (which busctl and sd-bus refuse to
send when they are not UTF-8, and which may be larger than one argv string
can be), marshalled by hand, on the system bus.
    raw-launch.py HEX | raw-launch.py --file PATH
Prints one line: 'reply', 'error NAME', or 'disconnected'."""
import os, socket, struct, sys

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
    if sys.argv[1] == "--file":
        with open(sys.argv[2], "rb") as f:
            command = f.read()
    else:
        command = bytes.fromhex(sys.argv[1])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("/run/dbus/system_bus_socket")
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not sock.recv(4096).startswith(b"OK"):
        print("auth-failed"); return
    sock.sendall(b"BEGIN\r\n")
    sock.sendall(message(1, b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello",
                         b"org.freedesktop.DBus", None, b""))
    recv_message(sock)
    body = string(b"", command)
    body = string(body, b"")
    body = string(body, b"/")
    body = pad(body, 4) + struct.pack("<I", 0)
    body = pad(body, 8)
    sock.sendall(message(2, b"/org/bgrun/Runtime1", b"org.bgrun.Runtime1.Manager", b"Launch",
                         b"org.bgrun.Runtime1", b"sssa{sv}", body))
    sock.settimeout(10)
    while True:
        try:
            msg = recv_message(sock)
        except (ConnectionResetError, socket.timeout):
            msg = None
        if msg is None:
            print("disconnected"); return
        if msg[1] == 2:
            print("reply"); return
        if msg[1] == 3:
            # the error name is header field 4
            i = msg.find(b"\x04\x01s\x00")
            name = b"?"
            if i >= 0:
                n = struct.unpack("<I", msg[i + 4:i + 8])[0]
                name = msg[i + 8:i + 8 + n]
            print("error " + name.decode(errors="replace")); return

main()
