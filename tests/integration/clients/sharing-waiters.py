#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pile Wait calls on a job onto bgrund, as a hostile client would, and say
what bgrund answered. dbus-daemon itself lets a connection have at most
max_replies_per_connection (128 on the system bus) calls awaiting a reply,
so to reach bgrund's own limits each connection first sends NOREPLY Waits
with NO_REPLY_EXPECTED (dbus-daemon tracks no reply for them; bgrund still
has to hold them), then NORMAL ordinary Waits, then a Get as a barrier:
bgrund handles one connection's calls in order, so once the Get is answered
every Wait before it was handled, and a refused one was answered (refusals
come at once; an accepted Wait is answered only when the job ends).
    sharing-waiters.py JOB [--connections N] [--noreply K] [--normal M]
                           [--extra] [--rounds R] [--rss-pid PID] [--hold]
                           [--close-at-once] [--wait-output]
--extra   after the barrier, one more ordinary Wait (bgrund's Wait number
          K+M+1 on that connection), awaited for 10 s
--rounds  open, fill and close the connections R times
--rss-pid print that process's VmRSS (kB) after each round
--hold    keep the last round's connections open until stdin closes
--close-at-once  send the Waits and close the connection at once, without
          the barrier: bgrund meets them from a connection already gone
--wait-output  the calls are WaitOutput (from offset 0, for an hour), on a
          job that writes nothing, instead of Wait
Prints one JSON line per round: for each connection (in the order they were
filled, one after another) the number of ordinary Waits answered before the
barrier, the distinct error names and messages of those answers, and what
the extra Wait got ("reply", "error NAME: MESSAGE" or "pending")."""
import argparse, asyncio, json, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageFlag, MessageType

DEST, PATH, IFACE = "org.bgrun.Runtime1", "/org/bgrun/Runtime1", "org.bgrun.Runtime1.Manager"
HOUR_USEC = 3600 * 1000000


WAIT_OUTPUT = False


def wait_call(job, flags=MessageFlag.NONE):
    if WAIT_OUTPUT:
        return Message(destination=DEST, path=PATH, interface=IFACE, member="WaitOutput", signature="stut",
                       body=[job, 0, 16, HOUR_USEC], flags=flags)
    return Message(destination=DEST, path=PATH, interface=IFACE, member="Wait", signature="st",
                   body=[job, HOUR_USEC], flags=flags)


def describe(reply):
    if reply is None:
        return "pending"
    if reply.message_type == MessageType.ERROR:
        return "error %s: %s" % (reply.error_name, reply.body[0] if reply.body else "")
    return "reply"


async def fill(job, args):
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    serials, answers = set(), []

    def on_message(msg):
        if msg.message_type in (MessageType.METHOD_RETURN, MessageType.ERROR) and msg.reply_serial in serials:
            answers.append(msg)

    bus.add_message_handler(on_message)
    for _ in range(args.noreply):
        bus.send(wait_call(job, MessageFlag.NO_REPLY_EXPECTED))
    for _ in range(args.normal):
        m = wait_call(job)
        bus.send(m)
        serials.add(m.serial)
    if args.close_at_once:
        # Flushed (the writer runs once per loop turn), then gone.
        await bus.send(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                               interface="org.freedesktop.DBus", member="GetId",
                               flags=MessageFlag.NO_REPLY_EXPECTED))
        bus.disconnect()
        await bus.wait_for_disconnect()
        return None, {"closed": True}
    # The barrier: answered after every call sent before it was handled.
    reply = await bus.call(Message(destination=DEST, path=PATH, interface=IFACE, member="Get",
                                   signature="s", body=[job]))
    if reply.message_type == MessageType.ERROR:
        raise SystemExit("barrier Get failed: %s %s" % (reply.error_name, reply.body))
    result = {
        "answered": len(answers),
        "names": sorted({a.error_name or "reply" for a in answers}),
        "messages": sorted({a.body[0] if a.error_name and a.body else "" for a in answers}),
    }
    if args.extra:
        try:
            result["extra"] = describe(await asyncio.wait_for(bus.call(wait_call(job)), 10))
        except asyncio.TimeoutError:
            result["extra"] = "pending"
    return bus, result


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("job")
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--noreply", type=int, default=0)
    p.add_argument("--normal", type=int, default=0)
    p.add_argument("--extra", action="store_true")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--rss-pid", type=int)
    p.add_argument("--hold", action="store_true")
    p.add_argument("--close-at-once", action="store_true")
    p.add_argument("--wait-output", action="store_true")
    args = p.parse_args()
    global WAIT_OUTPUT
    WAIT_OUTPUT = args.wait_output

    for r in range(args.rounds):
        buses, results = [], []
        for _ in range(args.connections):
            bus, result = await fill(args.job, args)
            buses.append(bus)
            results.append(result)
        last = r == args.rounds - 1
        if not (last and args.hold):
            for bus in filter(None, buses):
                bus.disconnect()
                await bus.wait_for_disconnect()
        line = {"round": r, "connections": results}
        if args.rss_pid:
            line["rss_kb"] = rss(args.rss_pid)
        print(json.dumps(line), flush=True)
    if args.hold:
        print("holding", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    return 0

sys.exit(asyncio.run(main()))
