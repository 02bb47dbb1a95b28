#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Listen on the system bus for anything bgrund sends, as a user trying
every way to overhear it: match rules for every signal from bgrund and for
every signal at all, and two that ask to eavesdrop (eavesdrop='true', which
catches messages addressed to other connections where the bus policy lets
it). Then it obeys commands, one per line on stdin:
    subscribe | unsubscribe   call the Manager's Subscribe / Unsubscribe
    ping                      call Peer.Ping on bgrund: once answered, every
                              message bgrund sent this connection before
                              has arrived (one sender's messages keep their
                              order)
Prints "match RULE: added|ERROR" per rule, "ready" when listening, "ok
COMMAND" (or "error COMMAND NAME") after each command, and one JSON line
per message from bgrund that is no answer to its own calls, and per
message addressed to another connection (overheard), whoever sent it:
{"type", "sender", "bgrund", "path", "interface", "member", "destination", "body"}."""
import asyncio, json, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"


def plain(v):
    if hasattr(v, "value") and hasattr(v, "signature"):
        return plain(v.value)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    return v


async def call(bus, **kw):
    reply = await bus.call(Message(**kw))
    return reply.error_name if reply.message_type == MessageType.ERROR else None


async def add_match(bus, rule):
    return await call(bus, destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                      interface="org.freedesktop.DBus", member="AddMatch", signature="s", body=[rule])


async def main():
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    owner = (await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                    interface="org.freedesktop.DBus", member="GetNameOwner", signature="s",
                                    body=[DEST]))).body[0]
    mine = set()

    def on_message(msg):
        # bgrund's messages, and anything addressed to someone else.
        overheard = msg.destination not in (None, bus.unique_name)
        if msg.sender != owner and not overheard:
            return
        if msg.message_type in (MessageType.METHOD_RETURN, MessageType.ERROR) and msg.reply_serial in mine \
                and msg.destination == bus.unique_name:
            return
        print(json.dumps({"type": msg.message_type.name, "sender": msg.sender, "bgrund": msg.sender == owner,
                          "path": msg.path, "interface": msg.interface,
                          "member": msg.member, "destination": msg.destination,
                          "body": plain(msg.body)}), flush=True)

    bus.add_message_handler(on_message)
    for rule in ("type='signal',sender='%s'" % DEST, "type='signal'", "eavesdrop='true',sender='%s'" % DEST,
                 "eavesdrop='true'"):
        err = await add_match(bus, rule)
        print("match %s: %s" % (rule, err or "added"), flush=True)
    print("ready", flush=True)

    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return 0
        cmd = line.strip()
        if cmd in ("subscribe", "unsubscribe"):
            m = Message(destination=DEST, path=PATH, interface=IFACE, member=cmd.capitalize())
        elif cmd == "ping":
            m = Message(destination=DEST, path=PATH, interface="org.freedesktop.DBus.Peer", member="Ping")
        else:
            print("error %s unknown-command" % cmd, flush=True)
            continue
        m.serial = bus.next_serial()
        mine.add(m.serial)
        reply = await bus.call(m)
        if reply.message_type == MessageType.ERROR:
            print("error %s %s" % (cmd, reply.error_name), flush=True)
        else:
            print("ok " + cmd, flush=True)

sys.exit(asyncio.run(main()))
