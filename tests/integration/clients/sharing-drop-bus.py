#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make the system bus drop a process's connections, as a dbus-daemon that
kicks a client (or dies) would: take a duplicate of each of the process's
sockets whose peer is the system bus socket (pidfd_getfd, as root) and shut
it down, which ends the connection for every descriptor that shares it.
    sharing-drop-bus.py PID
Prints how many connections were shut down."""
import ctypes, os, socket, sys

SYS_pidfd_open, SYS_pidfd_getfd = 434, 438
BUS = "/run/dbus/system_bus_socket"

libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
pidfd = libc.syscall(SYS_pidfd_open, pid, 0)
if pidfd < 0:
    sys.exit("pidfd_open: " + os.strerror(ctypes.get_errno()))
n = 0
for name in os.listdir(f"/proc/{pid}/fd"):
    try:
        if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
            continue
    except OSError:
        continue
    fd = libc.syscall(SYS_pidfd_getfd, pidfd, int(name), 0)
    if fd < 0:
        sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
    s = socket.socket(fileno=fd)
    try:
        if s.family == socket.AF_UNIX and s.getpeername() == BUS:
            s.shutdown(socket.SHUT_RDWR)
            n += 1
    except OSError:
        pass
    finally:
        s.close()
print(n)
