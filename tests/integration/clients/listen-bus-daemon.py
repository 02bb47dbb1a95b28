#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What client libraries ask a bus daemon, over bgrund --listen (issue #25),
for tests/integration/test-listen.sh. Usage: listen-bus-daemon.py ADDRESS MODE ...

  client            dbus-next's high-level client as an application uses it:
                    introspects the manager, makes a proxy (GetNameOwner),
                    listens to JobNew through it (AddMatch), Subscribes, calls
                    Peer.Ping, Launch, Get, then drops the handler
                    (RemoveMatch). Prints "ping ok", "launched ID",
                    "get COMMAND", "signal JobNew ID" when the proxy got it,
                    "owner NAME" (GetNameOwner), "has BOOL" (NameHasOwner),
                    "id ID" (GetId), "hello NAME" (what Hello said).
                    Whatever dbus-next logs goes to stderr.
  matches N         on one connection N AddMatch calls of distinct rules, then
                    one more: prints "added K" and "then ERROR|ok"; then
                    RemoveMatch of a rule never added: "remove-unknown
                    ERROR|ok"; RemoveMatch of one added and AddMatch again:
                    "again ok|ERROR"
"""
import asyncio, logging, os, sys
from dbus_next.aio import MessageBus
from dbus_next import Message, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"


def daemon_msg(member, signature="", body=()):
    return Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                   interface="org.freedesktop.DBus", member=member, signature=signature, body=list(body))


def result(r):
    return r.error_name if r.message_type == MessageType.ERROR else "ok"


async def client(address):
    bus = await MessageBus(bus_address=address).connect()
    print("hello", bus.unique_name, flush=True)
    intro = await bus.introspect(DEST, PATH)
    manager = bus.get_proxy_object(DEST, PATH, intro).get_interface(IFACE)
    peer = bus.get_proxy_object(DEST, PATH, intro).get_interface("org.freedesktop.DBus.Peer")
    got = asyncio.get_running_loop().create_future()

    def on_job_new(job_id, path):
        if not got.done():
            got.set_result(job_id)

    manager.on_job_new(on_job_new)
    await manager.call_subscribe()
    await peer.call_ping()
    print("ping ok", flush=True)
    job_id, _ = await manager.call_launch("true", "listen-bus-daemon", "/", {})
    print("launched", job_id, flush=True)
    rec = await manager.call_get(job_id)
    print("get", rec["command"].value, flush=True)
    print("signal JobNew", await asyncio.wait_for(got, 10), flush=True)
    manager.off_job_new(on_job_new)
    r = await bus.call(daemon_msg("GetNameOwner", "s", [DEST]))
    print("owner", r.body[0] if r.message_type != MessageType.ERROR else r.error_name, flush=True)
    r = await bus.call(daemon_msg("NameHasOwner", "s", [DEST]))
    print("has", r.body[0] if r.message_type != MessageType.ERROR else r.error_name, flush=True)
    r = await bus.call(daemon_msg("GetId"))
    print("id", r.body[0] if r.message_type != MessageType.ERROR else r.error_name, flush=True)
    # A round trip, so that the RemoveMatch is answered before we go.
    await peer.call_ping()
    return 0


async def matches(address, n):
    bus = await MessageBus(bus_address=address).connect()
    added = 0
    for k in range(n):
        r = await bus.call(daemon_msg("AddMatch", "s", [f"type='signal',member='M{k}'"]))
        if r.message_type == MessageType.ERROR:
            print("error", r.error_name, r.body, flush=True)
            break
        added += 1
    print("added", added, flush=True)
    r = await bus.call(daemon_msg("AddMatch", "s", ["type='signal',member='OneMore'"]))
    print("then", result(r), flush=True)
    r = await bus.call(daemon_msg("RemoveMatch", "s", ["type='signal',member='NeverAdded'"]))
    print("remove-unknown", result(r), flush=True)
    r = await bus.call(daemon_msg("RemoveMatch", "s", ["type='signal',member='M0'"]))
    if r.message_type == MessageType.ERROR:
        print("again", "remove", r.error_name, flush=True)
        return 0
    r = await bus.call(daemon_msg("AddMatch", "s", ["type='signal',member='OneMore'"]))
    print("again", result(r), flush=True)
    return 0


def main():
    # dbus-next reports what fails in the background (a GetNameOwner, an
    # AddMatch) through logging only: make it show.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    address, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "client":
        return asyncio.run(client(address))
    if mode == "matches":
        return asyncio.run(matches(address, int(args[0])))
    print(__doc__, file=sys.stderr)
    return 2


rc = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(rc)
