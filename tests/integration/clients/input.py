#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""WriteInput on the system bus, for the job-control tests.
    input.py write ID TEXT [--close]    TEXT as UTF-8 bytes; prints 'ok' or the error name
    input.py size ID N                  writes N bytes at once; prints 'ok' or the error name
    input.py flood ID TOTAL CHUNK       writes CHUNK bytes at a time until TOTAL were sent
                                        or InputFull; meanwhile times Get and ListJobs on a
                                        second connection. Prints 'written N full B
                                        get_ms_max G list_ms_max L write_ms_max W'."""
import asyncio, sys, time
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"

async def call(bus, member, sig, body):
    t = time.monotonic()
    reply = await bus.call(Message(destination=DEST, path=PATH, interface=IFACE, member=member,
                                   signature=sig, body=body))
    ms = (time.monotonic() - t) * 1000
    if reply.message_type == MessageType.ERROR:
        return reply.error_name, ms
    return "ok", ms

async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    verb, job = sys.argv[1], sys.argv[2]
    if verb == "write":
        close = "--close" in sys.argv[4:]
        name, _ = await call(bus, "WriteInput", "sayb", [job, sys.argv[3].encode(), close])
        print(name)
    elif verb == "size":
        name, _ = await call(bus, "WriteInput", "sayb", [job, b"y" * int(sys.argv[3]), False])
        print(name)
    elif verb == "flood":
        total, chunk = int(sys.argv[3]), int(sys.argv[4])
        other = await MessageBus(bus_type=BusType.SYSTEM).connect()
        data = b"x" * chunk
        written, full, get_max, list_max, write_max = 0, False, 0.0, 0.0, 0.0
        while written < total:
            name, ms = await call(bus, "WriteInput", "sayb", [job, data, False])
            write_max = max(write_max, ms)
            if name.endswith("InputFull"):
                full = True
                break
            if name != "ok":
                print("error", name); return
            written += chunk
            _, g = await call(other, "Get", "s", [job])
            _, l = await call(other, "ListJobs", "s", [""])
            get_max, list_max = max(get_max, g), max(list_max, l)
        # Once full, the others still answer at once.
        for _ in range(5):
            _, g = await call(other, "Get", "s", [job])
            _, l = await call(other, "ListJobs", "s", [""])
            get_max, list_max = max(get_max, g), max(list_max, l)
        print(f"written {written} full {int(full)} get_ms_max {get_max:.0f} list_ms_max {list_max:.0f} write_ms_max {write_max:.0f}")

asyncio.run(main())
