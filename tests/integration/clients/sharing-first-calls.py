#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Open N connections to the system bus one after another; on each, send
bgrund one call, a Get that carries a file descriptor beside its id (a
signature bgrund refuses), await its answer and close. bgrund holds the
first call of a connection it does not know yet while it asks the bus for
the caller's credentials: this is what a held call leaves behind, if any.
    sharing-first-calls.py N
Prints one JSON line: how many calls were answered, and their error names."""
import asyncio, json, os, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"


async def one():
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    fd = os.open("/dev/null", os.O_RDONLY)
    try:
        reply = await asyncio.wait_for(
            bus.call(Message(destination=DEST, path=PATH, interface=IFACE, member="Get", signature="sh",
                             body=["aaaaaaaaaa", 0], unix_fds=[fd])), 10)
    finally:
        os.close(fd)
        bus.disconnect()
    return reply


async def main(n):
    answered, errors = 0, set()
    for _ in range(n):
        reply = await one()
        if reply is not None:
            answered += 1
            if reply.message_type == MessageType.ERROR:
                errors.add(reply.error_name)
    print(json.dumps({"answered": answered, "errors": sorted(errors)}))


asyncio.run(main(int(sys.argv[1])))
