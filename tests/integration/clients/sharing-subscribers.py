#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Open N connections to the system bus, each calling the Manager's
Subscribe (all at once), and say how many bgrund accepted.
    sharing-subscribers.py N [--rounds R] [--hold]
--rounds  open, subscribe and close the N connections R times
--hold    keep the last round's connections open until stdin closes
Prints one JSON line per round: {"subscribed": count, "errors": {"NAME:
MESSAGE": count}}, then "holding" with --hold."""
import argparse, asyncio, json, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("n", type=int)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--hold", action="store_true")
    args = p.parse_args()
    for r in range(args.rounds):
        # All at once: the limit counts, whatever the order.
        buses = await asyncio.gather(*(MessageBus(bus_type=BusType.SYSTEM).connect() for _ in range(args.n)))
        replies = await asyncio.gather(*(bus.call(Message(
            destination="org.bgrun.Runtime1", path="/org/bgrun/Runtime1",
            interface="org.bgrun.Runtime1.Manager", member="Subscribe")) for bus in buses))
        subscribed, errors = 0, {}
        for reply in replies:
            if reply.message_type == MessageType.ERROR:
                key = "%s: %s" % (reply.error_name, reply.body[0] if reply.body else "")
                errors[key] = errors.get(key, 0) + 1
            else:
                subscribed += 1
        print(json.dumps({"subscribed": subscribed, "errors": errors}), flush=True)
        if not (r == args.rounds - 1 and args.hold):
            for bus in buses:
                bus.disconnect()
                await bus.wait_for_disconnect()
    if args.hold:
        print("holding", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    return 0

sys.exit(asyncio.run(main()))
