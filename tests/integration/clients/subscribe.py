#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Subscribe to bgrund's signals and print each one that arrives, one JSON
line per signal: {"path", "interface", "member", "body"}. Prints "ready"
first, once subscribed and matching, then runs for SECONDS.
    subscribe.py SECONDS [--no-subscribe]
With --no-subscribe it only adds the match rule: a bystander whose match
rule catches every signal bgrund sends, as another user would try."""
import asyncio, json, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType


def plain(v):
    """dbus-next values (Variants, lists, dicts) as JSON-able values."""
    if hasattr(v, "value") and hasattr(v, "signature"):
        return plain(v.value)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


async def main():
    seconds = float(sys.argv[1])
    subscribe = "--no-subscribe" not in sys.argv
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()

    def on_message(msg):
        if msg.message_type == MessageType.SIGNAL and msg.sender != "org.freedesktop.DBus":
            print(json.dumps({"path": msg.path, "interface": msg.interface, "member": msg.member,
                              "body": plain(msg.body)}), flush=True)

    bus.add_message_handler(on_message)
    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                           interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                           body=["type='signal',sender='org.bgrun.Runtime1'"]))
    if subscribe:
        reply = await bus.call(Message(destination="org.bgrun.Runtime1", path="/org/bgrun/Runtime1",
                                       interface="org.bgrun.Runtime1.Manager", member="Subscribe"))
        if reply.message_type == MessageType.ERROR:
            print("error " + reply.error_name, flush=True)
            return 1
    print("ready", flush=True)
    await asyncio.sleep(seconds)
    return 0

sys.exit(asyncio.run(main()))
