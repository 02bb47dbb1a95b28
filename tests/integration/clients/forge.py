#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a hostile local user sends bgrund in place of the bus daemon or of
systemd (tests/integration/test-forged.sh). Usage: forge.py MODE ...

  names PID                 the unique names of process PID's connections to
                            the system bus, one a line
  name-gone NAME DEST...    a unicast NameOwnerChanged(NAME, NAME, "") to each
                            DEST, as if the bus daemon said NAME left
  job-removed UNIT DEST...  a unicast systemd JobRemoved(…, UNIT, "failed")
                            to each DEST, as if systemd said UNIT failed
  reply DEST                an unrequested method return to DEST, for each
                            serial 1..512 (the bus daemon refuses them):
                            prints "refused K of 512"
  p2p ADDRESS JOB NAME...   on a direct connection to bgrund --listen: a
                            forged Disconnected and NameOwnerChanged for each
                            NAME, then a Get of JOB that names NAME[0] (its
                            owner's bus name) as its sender, then the same
                            with no sender; prints one line per call: "named
                            ERROR-NAME" or "named ok", "plain ok" or "plain
                            ERROR-NAME"
  rules PID                 (as root) the match rules of process PID's
                            connections to the system bus, as the bus daemon
                            has them: one JSON list
  signals RULES NAME UNIT   every signal RULES (the JSON of `rules`) lets
                            in, forged: sent to the connection that asked for
                            it and to bgrund's name, about connection NAME
                            (NameOwnerChanged without an arg0 of its own) and
                            unit UNIT (JobRemoved); a rule the table SIGNALS
                            lacks is "uncovered"; prints {"rules", "sent",
                            "uncovered"}
Each send is sent and flushed before the next; a DEST the bus does not know
is skipped."""
import asyncio, json, os, re, sys
from dbus_next.aio import MessageBus
from dbus_next import BusType, Message, MessageType

DBUS = dict(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus")


async def system_bus():
    return await MessageBus(bus_type=BusType.SYSTEM).connect()


async def names_of(bus, pid):
    """The unique names of process PID's connections, as the daemon has them."""
    r = await bus.call(Message(**DBUS, member="ListNames"))
    out = []
    for name in r.body[0]:
        if name.startswith(":"):
            p = await bus.call(Message(**DBUS, member="GetConnectionUnixProcessID", signature="s", body=[name]))
            if p.message_type != MessageType.ERROR and p.body[0] == pid:
                out.append(name)
    return out


async def names(pid):
    for name in await names_of(await system_bus(), pid):
        print(name)


async def signal_each(bus, dests, path, interface, member, signature, body):
    for dest in dests:
        await bus.send(Message(message_type=MessageType.SIGNAL, destination=dest, path=path,
                               interface=interface, member=member, signature=signature, body=body))
    # A round trip to the daemon: everything before it has left.
    await bus.call(Message(**DBUS, member="GetId"))


async def name_gone(name, dests):
    bus = await system_bus()
    await signal_each(bus, dests, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                      "sss", [name, name, ""])


async def job_removed(unit, dests):
    bus = await system_bus()
    await signal_each(bus, dests, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "JobRemoved",
                      "uoss", [4242, "/org/freedesktop/systemd1/job/4242", unit, "failed"])


async def reply(dest):
    bus = await system_bus()
    errors = []
    bus.add_message_handler(lambda m: errors.append(m.error_name) if m.message_type == MessageType.ERROR else None)
    for serial in range(1, 513):
        await bus.send(Message(message_type=MessageType.METHOD_RETURN, destination=dest, reply_serial=serial))
    # The daemon answers each refused reply with an error of its own.
    for _ in range(40):
        if len(errors) >= 512:
            break
        await asyncio.sleep(0.05)
    print(f"refused {errors.count('org.freedesktop.DBus.Error.AccessDenied')} of 512")


def p2p(address, job, names_):
    """By hand (dbus-next writes no SENDER field): cost.py's client."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cost
    conn = cost.Conn(address, fds=False)
    conn.send(cost.message(conn.next_serial(), "Disconnected", "/org/freedesktop/DBus/Local",
                           "org.freedesktop.DBus.Local", None, type_=4, sender="org.freedesktop.DBus.Local"))
    for name in names_:
        conn.send(cost.message(conn.next_serial(), "NameOwnerChanged", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               None, "sss", cost.body_of("sss", [name, name, ""]), type_=4,
                               sender="org.freedesktop.DBus"))
    for label, sender in (("named", names_[0]), ("plain", None)):
        r = conn.call(cost.message(conn.next_serial(), "Get", sig="s", body=cost.body_of("s", [job]),
                                   sender=sender), timeout=10)
        print(label, "none" if r is None else r.error if r.type == 3 else "ok", flush=True)


# Every signal bgrund listens to, by interface and member, with the body a
# hostile user sends in place of its real sender: about a connection that
# has not left, a unit whose start job has not failed. A match rule of
# bgrund's that no row covers is "uncovered", and fails the cost test: a
# new handler gets its forged signal here before it lands.
SIGNALS = {
    ("org.freedesktop.DBus", "NameOwnerChanged"):
        lambda rule, ctx: ("sss", [rule.get("arg0", ctx["name"]), rule.get("arg0", ctx["name"]), ""]),
    ("org.freedesktop.systemd1.Manager", "JobRemoved"):
        lambda rule, ctx: ("uoss", [4242, "/org/freedesktop/systemd1/job/4242", ctx["unit"], "failed"]),
}


def parse_rule(text):
    """A match rule's keys and values (values in single quotes)."""
    return dict(re.findall(r"(\w+)='([^']*)'", text))


async def rules(pid):
    bus = await system_bus()
    mine = set(await names_of(bus, pid))
    r = await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                               interface="org.freedesktop.DBus.Debug.Stats", member="GetAllMatchRules"))
    if r.message_type == MessageType.ERROR:
        sys.exit(f"GetAllMatchRules: {r.error_name}: {r.body}")
    print(json.dumps([{"connection": name, "rule": t} for name, texts in r.body[0].items() if name in mine
                      for t in texts]))


async def signals(rules_json, victim, unit):
    bus = await system_bus()
    entries, sent, uncovered = json.loads(rules_json), 0, []
    for entry in entries:
        rule = parse_rule(entry["rule"])
        if rule.get("type") != "signal":
            continue
        make = SIGNALS.get((rule.get("interface"), rule.get("member")))
        if not make:
            uncovered.append(entry["rule"])
            continue
        sig, body = make(rule, {"name": victim, "unit": unit})
        await signal_each(bus, [entry["connection"], "org.bgrun.Runtime1"], rule.get("path", "/"),
                          rule["interface"], rule["member"], sig, body)
        sent += 2
    print(json.dumps({"rules": len(entries), "sent": sent, "uncovered": uncovered}))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "names":
        asyncio.run(names(int(args[0])))
    elif mode == "name-gone":
        asyncio.run(name_gone(args[0], args[1:]))
    elif mode == "job-removed":
        asyncio.run(job_removed(args[0], args[1:]))
    elif mode == "rules":
        asyncio.run(rules(int(args[0])))
    elif mode == "signals":
        asyncio.run(signals(args[0], args[1], args[2]))
    elif mode == "reply":
        asyncio.run(reply(args[0]))
    elif mode == "p2p":
        p2p(args[0], args[1], args[2:])
    else:
        sys.exit(f"forge.py: unknown mode {mode}")


main()
