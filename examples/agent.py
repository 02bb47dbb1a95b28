#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run one command through bgrund, the way an agent runtime would: launch it,
stream its output as it comes, stop it when cancelled, and read its record.
Uses dbus-next (asyncio; Debian's python3-dbus-next) and nothing of bgrun.

    agent.py [--user | --address ADDRESS] [-s SESSION] [-t SECONDS]
             [-E NAME=VALUE]... [--grace SECONDS] -- COMMAND | WORD...

One word after -- is a shell command line, as it is; several are an argv,
each quoted for /bin/sh (shlex.join), as bgrun run has them.

The job's output goes to stdout as it comes; its record goes to stderr as
one JSON line at the end. SIGINT or SIGTERM cancels the run: the job is
stopped (Stop, or Kill where bgrund has no Stop) before agent.py exits. The
exit status is the job's, as bgrun run --wait has it: its exit code, 128+N
after signal N, 124 after its time limit, 130 / 143 when it was cancelled."""
import argparse
import asyncio
import json
import os
import shlex
import signal
import sys

from dbus_next import BusType, Variant
from dbus_next.aio import MessageBus
from dbus_next.errors import DBusError

BUS_NAME = "org.bgrun.Runtime1"
MANAGER_PATH = "/org/bgrun/Runtime1"
MANAGER_INTERFACE = "org.bgrun.Runtime1.Manager"
USEC = 1_000_000


def plain(value):
    """A D-Bus answer as plain Python: dbus-next hands every a{sv} value as a
    Variant, nested ones too."""
    if isinstance(value, Variant):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


async def connect(args):
    if args.address:
        return await MessageBus(bus_address=args.address).connect()
    return await MessageBus(bus_type=BusType.SESSION if args.user else BusType.SYSTEM).connect()


async def manager(bus):
    introspection = await bus.introspect(BUS_NAME, MANAGER_PATH)
    proxy = bus.get_proxy_object(BUS_NAME, MANAGER_PATH, introspection)
    return proxy.get_interface(MANAGER_INTERFACE)


async def follow_output(mgr, job_id, out, progress):
    """Copy the job's output to out as it comes, until the job has ended and
    all of it was read. progress["offset"] is where the next read starts, so
    that a follower that was cancelled can be picked up where it stopped."""
    while True:
        data, progress["offset"], complete = await mgr.call_read_output(job_id, progress["offset"], 64 * 1024)
        if data:
            out.write(data)
            out.flush()
        if complete:
            return
        if not data:
            await asyncio.sleep(0.1)  # nothing new yet: ask again shortly


async def stop_job(mgr, job_id, grace_usec):
    """End the job gracefully: its stop signal, then cgroup.kill after the
    grace. Answers once nothing of the job is left alive."""
    if hasattr(mgr, "call_stop"):
        try:
            return plain(await mgr.call_stop(job_id, {"GraceUSec": Variant("t", grace_usec)}))
        except DBusError as e:
            if e.type != "org.freedesktop.DBus.Error.UnknownMethod":
                raise
    return plain(await mgr.call_kill(job_id))


def exit_status(record):
    if record["status"] == "timed_out":
        return 124
    if record.get("signal"):
        return 128 + record["signal"]
    return record["exit_code"] if record["exit_code"] >= 0 else 1


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="the per-user bgrund on the session bus")
    # dbus-next says Hello on connecting, and bgrund --listen answers it as a
    # bus would: a bus's address or bgrund --listen's socket.
    where.add_argument("--address", help="a D-Bus bus bgrund is on, or bgrund --listen's socket "
                       "(unix:path=/run/bgrun/bus)")
    parser.add_argument("-s", "--session", default="", help="tag the job with a session")
    parser.add_argument("-t", "--timeout", type=float, help="wall-clock limit in seconds")
    parser.add_argument("-E", "--setenv", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds a stop waits before killing")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    bus = await connect(args)
    mgr = await manager(bus)

    # Every number and list goes in a Variant of its own D-Bus type.
    options = {}
    if args.timeout:
        options["MaxRuntimeUSec"] = Variant("t", int(args.timeout * USEC))
    if args.setenv:
        options["Environment"] = Variant("as", args.setenv)
    command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    job_id, _ = await mgr.call_launch(command, args.session, os.getcwd(), options)
    print(f"agent.py: running as job {job_id}", file=sys.stderr, flush=True)

    # Cancelling the task that follows the output is how a runtime stops a
    # tool call; here SIGINT and SIGTERM do it.
    progress = {"offset": 0}
    follower = asyncio.create_task(follow_output(mgr, job_id, sys.stdout.buffer, progress))
    cancelled_by = None

    def cancel(signo):
        nonlocal cancelled_by
        cancelled_by = signo
        follower.cancel()

    loop = asyncio.get_running_loop()
    for signo in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signo, cancel, signo)

    try:
        await follower
    except asyncio.CancelledError:
        print(f"agent.py: cancelled, stopping job {job_id}", file=sys.stderr, flush=True)
        answer = await stop_job(mgr, job_id, int(args.grace * USEC))
        if not answer["teardown"]["dead"]:
            print(f"agent.py: job {job_id} could not be confirmed dead", file=sys.stderr)
        # What the job wrote while it was stopping (its own handler's words).
        await follow_output(mgr, job_id, sys.stdout.buffer, progress)

    record = plain(await mgr.call_get(job_id))
    print(json.dumps(record), file=sys.stderr, flush=True)
    bus.disconnect()
    if cancelled_by is not None:
        return 128 + cancelled_by
    return exit_status(record)


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except DBusError as e:
        sys.exit(f"agent.py: {e.type}: {e.text}")
