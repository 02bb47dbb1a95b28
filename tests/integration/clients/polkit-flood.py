#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Send N Get calls for a job that is not the caller's, at once, on one
connection: each needs polkit's answer (is the caller an admin?). Prints how
many were answered within SECONDS, and the distinct error names.
    polkit-flood.py JOB N SECONDS [MARK]
MARK: a file made once bgrund has handled all N (a Peer.Ping sent after
them is answered: bgrund handles one connection's calls in order).
With FLOOD_METHOD=ListJobs in the environment, the calls are ListJobs of
the session JOB instead."""
import asyncio, json, os, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"


async def main(job, n, seconds, mark):
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    serials, answers = set(), []

    def on_message(msg):
        if msg.message_type in (MessageType.METHOD_RETURN, MessageType.ERROR) and msg.reply_serial in serials:
            answers.append(msg)

    bus.add_message_handler(on_message)
    for _ in range(n):
        m = Message(destination=DEST, path=PATH, interface=IFACE, member=os.environ.get("FLOOD_METHOD", "Get"),
                    signature="s", body=[job])
        bus.send(m)
        serials.add(m.serial)  # given by send
    if mark:
        await bus.call(Message(destination=DEST, path=PATH, interface="org.freedesktop.DBus.Peer", member="Ping"))
        open(mark, "w").close()
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while len(answers) < n and loop.time() < end:
        await asyncio.sleep(0.05)
    errors = sorted({a.error_name for a in answers if a.message_type == MessageType.ERROR})
    print(json.dumps({"answered": len(answers), "errors": errors}))
    bus.disconnect()


asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None))
