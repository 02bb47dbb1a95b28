#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Launch COMMAND with BindToCaller on the system bus, print the job's id,
then hold the connection until killed: a caller that outlives a restart of
bgrund (bgrun run --wait leaves when bgrund does).
    bound-launch.py COMMAND"""
import asyncio, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType, Variant


async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    reply = await bus.call(Message(
        destination="org.bgrun.Runtime1", path="/org/bgrun/Runtime1",
        interface="org.bgrun.Runtime1.Manager", member="Launch", signature="sssa{sv}",
        body=[sys.argv[1], "bound-holder", "/", {"BindToCaller": Variant("b", True)}]))
    if reply.message_type == MessageType.ERROR:
        sys.exit(f"{reply.error_name}: {reply.body}")
    print(reply.body[0], flush=True)
    await asyncio.sleep(3600)  # the connection held, bgrund's restarts or not


asyncio.run(main())
