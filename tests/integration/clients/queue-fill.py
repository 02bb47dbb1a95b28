#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Launch N queued jobs at once in SESSION (Queue, MaxParallel=1, each
`true`) on the system bus, pipelined on one connection, and print one line:
how many Launches were answered with a job, then the distinct errors.
    queue-fill.py N SESSION"""
import asyncio, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType, Variant


async def main():
    n, session = int(sys.argv[1]), sys.argv[2]
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()

    async def launch():
        return await bus.call(Message(
            destination="org.bgrun.Runtime1", path="/org/bgrun/Runtime1",
            interface="org.bgrun.Runtime1.Manager", member="Launch", signature="sssa{sv}",
            body=["true", session, "/", {"Queue": Variant("b", True), "MaxParallel": Variant("u", 1)}]))

    ok, errors = 0, set()
    for start in range(0, n, 100):  # within what one connection may have waiting
        for reply in await asyncio.gather(*(launch() for _ in range(min(100, n - start)))):
            if reply.message_type == MessageType.ERROR:
                errors.add(f"{reply.error_name}: {reply.body[0] if reply.body else ''}")
            else:
                ok += 1
    print(ok, *sorted(errors), sep="\n")


asyncio.run(main())
