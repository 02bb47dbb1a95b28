#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run one command through bgrund, the way an agent runtime would: launch it
at most once, bound to this process, stream its output as it comes, stop it
when cancelled, and read its record. Uses dbus-next (asyncio; Debian's
python3-dbus-next) and nothing of bgrun.

    agent.py [--user | --address ADDRESS] [-s SESSION] [-t SECONDS]
             [-E NAME=VALUE]... [--grace SECONDS] [--request-id ID]
             -- COMMAND | WORD...

One word after -- is a shell command line, as it is; several are a program
and its arguments, sent as Argv and run exactly, with no shell.

What an agent runtime should copy:
- RequestId: the launch happens at most once. A retry with the same id (after
  a timeout, or a restart of the runtime) answers the first launch's job and
  starts nothing. Without --request-id a new one is made and printed.
- LaunchDeadlineUSec: a launch bgrund could not start before the call's own
  deadline never starts later, behind the back of a caller that gave up.
- BindToCaller: the job is stopped when this process's connection goes, even
  when it is killed with SIGKILL.
- WaitOutput: the output is read as it comes, without polling.

The job's output goes to stdout as it comes; its record goes to stderr as
one JSON line at the end. SIGINT or SIGTERM cancels the run: the job is
stopped (Stop, or Kill where bgrund has no Stop) before agent.py exits. The
exit status is the job's, as bgrun run --wait has it: its exit code, 128+N
after signal N, 124 after its time limit, 130 / 143 when it was cancelled."""
import argparse
import asyncio
import json
import os
import signal
import sys
import time
import uuid

from dbus_next import BusType, Variant
from dbus_next.aio import MessageBus
from dbus_next.errors import DBusError

BUS_NAME = "org.bgrun.Runtime1"
MANAGER_PATH = "/org/bgrun/Runtime1"
MANAGER_INTERFACE = "org.bgrun.Runtime1.Manager"
USEC = 1_000_000
# How long a Launch may take before this caller gives up on it: the job
# must not start after that (LaunchDeadlineUSec).
CALL_TIMEOUT_SEC = 25


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
    that a follower that was cancelled can be picked up where it stopped.
    WaitOutput answers when output arrives or the job ends (or, with nothing,
    after its timeout); a bgrund without it is polled with ReadOutput."""
    wait = hasattr(mgr, "call_wait_output")
    while True:
        if wait:
            data, progress["offset"], complete = await mgr.call_wait_output(
                job_id, progress["offset"], 64 * 1024, 10 * USEC)
        else:
            data, progress["offset"], complete = await mgr.call_read_output(job_id, progress["offset"], 64 * 1024)
        if data:
            out.write(data)
            out.flush()
        if complete:
            return
        if not data and not wait:
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
    parser.add_argument("--request-id", help="launch at most once under this id (default: a new one)")
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
    request_id = args.request_id or f"agent-{uuid.uuid4().hex}"
    options["RequestId"] = Variant("s", request_id)
    options["LaunchDeadlineUSec"] = Variant("t", int((time.time() + CALL_TIMEOUT_SEC) * USEC))
    options["BindToCaller"] = Variant("b", True)
    command = args.command[0]
    if len(args.command) > 1:
        command = ""
        options["Argv"] = Variant("as", args.command)
    job_id, _ = await mgr.call_launch(command, args.session, os.getcwd(), options)
    print(f"agent.py: running as job {job_id} (request id {request_id})", file=sys.stderr, flush=True)

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
