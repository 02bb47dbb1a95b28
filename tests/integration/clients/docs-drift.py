#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compare the interface reference (docs/org.bgrun.Runtime1.md) and the
configuration reference (docs/configuration.md) with what the code has, in
both directions, and print every difference, one a line. Exit 1 if any.

    docs-drift.py bus TOP MANAGER.xml JOB.xml   the IDL blocks vs introspection
    docs-drift.py tables TOP                   the tables vs include/bgrun/*.h
    docs-drift.py config TOP CHECK-CONFIG.txt  the config tables vs config.c
                                               and bgrund --check-config

TOP is the source tree; the XML is `busctl introspect --xml-interface` of the
manager and of a job object; CHECK-CONFIG.txt is `bgrund --check-config`."""
import re
import sys
import xml.etree.ElementTree as ET

problems = []


def problem(text):
    problems.append(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- the Markdown --------------------------------------------------------

def sections(md):
    """{heading title: [table, ...]}, each table a list of rows of cells,
    the header row first (the --- row dropped); and the fenced blocks."""
    tables, blocks = {}, []
    title, rows, block = None, None, None
    for line in md.splitlines() + [""]:
        if block is not None:
            if line.startswith("```"):
                blocks.append("\n".join(block))
                block = None
            else:
                block.append(line)
            continue
        if line.startswith("```"):
            block = []
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is None:
                rows = []
                tables.setdefault(title, []).append(rows)
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
            continue
        rows = None
        m = re.match(r"#+ (.*)", line)
        if m:
            title = m.group(1).strip()
    return tables, blocks


def names_in(cell):
    """The names a table's first cell gives: each `code` span, without a
    trailing "="."""
    return [n.rstrip("=") for n in re.findall(r"`([^`]+)`", cell)]


def table_of(tables, title, what):
    if title not in tables:
        problem(f"reference: no table under the heading '{title}' ({what})")
        return {}
    out = {}
    rows = tables[title][0]
    head = [h.lower() for h in rows[0]]
    for row in rows[1:]:
        sig = row[head.index("type")] if "type" in head else None
        for n in names_in(row[0]):
            out[n] = sig
    return out


# --- IDL blocks (systemd's style, as in org.freedesktop.systemd1(5)) ------

def parse_idl(text):
    """{interface: {"methods": {name: [(dir, type, name)]}, "signals":
    {name: [(type, name)]}, "properties": {name: (type, emits)}}}."""
    out = {}
    iface = kind = None
    annotation = None
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = re.fullmatch(r"interface (\S+) \{", line)
        if m:
            iface = out.setdefault(m.group(1), {"methods": {}, "signals": {}, "properties": {}})
            continue
        if line in ("methods:", "signals:", "properties:"):
            kind = line[:-1]
            continue
        if line.startswith("node ") or line == "};":
            continue
        if iface is None or kind is None:
            raise ValueError("unexpected line in an IDL block: " + line)
        m = re.fullmatch(r'@org\.freedesktop\.DBus\.Property\.EmitsChangedSignal\("(\w+)"\)', line)
        if m:
            annotation = m.group(1)
            continue
        if kind == "properties":
            m = re.fullmatch(r"readonly (\S+) (\w+) = .*;", line)
            if not m:
                raise ValueError("not a property: " + line)
            iface["properties"][m.group(2)] = (m.group(1), annotation or "true")
            annotation = None
            continue
        pending += " " + line
        if not pending.endswith(");"):
            continue
        m = re.fullmatch(r"(\w+)\((.*)\);", pending.strip())
        if not m:
            raise ValueError("not a method or signal: " + pending.strip())
        args = [a.split() for a in m.group(2).split(",") if a.strip()]
        if kind == "methods":
            iface["methods"][m.group(1)] = [tuple(a) for a in args]
        else:
            iface["signals"][m.group(1)] = [tuple(a) for a in args]
        pending = ""
    return out


def parse_xml(path):
    out = {}
    for i in ET.parse(path).getroot().findall("interface"):
        name = i.get("name")
        if name.startswith("org.freedesktop.DBus."):
            continue
        d = out[name] = {"methods": {}, "signals": {}, "properties": {}}
        for m in i.findall("method"):
            d["methods"][m.get("name")] = [(a.get("direction", "in"), a.get("type"), a.get("name"))
                                           for a in m.findall("arg")]
        for s in i.findall("signal"):
            d["signals"][s.get("name")] = [(a.get("type"), a.get("name")) for a in s.findall("arg")]
        for p in i.findall("property"):
            emits = "true"
            for a in p.findall("annotation"):
                if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                    emits = a.get("value")
            if p.get("access") != "read":
                problem(f"bus: property {name}.{p.get('name')} is {p.get('access')}, the reference has only read-only ones")
            d["properties"][p.get("name")] = (p.get("type"), emits)
    return out


def fmt_args(args):
    return "(" + ", ".join(" ".join(a) for a in args) + ")"


def compare_interfaces(doc, bus):
    for iface in sorted(set(doc) | set(bus)):
        if iface not in bus:
            problem(f"bus: interface {iface} is in the reference, not on the bus")
            continue
        if iface not in doc:
            problem(f"reference: interface {iface} is on the bus, not in the reference")
            continue
        for kind in ("methods", "signals", "properties"):
            d, b = doc[iface][kind], bus[iface][kind]
            noun = {"methods": "method", "signals": "signal", "properties": "property"}[kind]
            for n in sorted(set(d) - set(b)):
                problem(f"bus: {noun} {iface}.{n} is in the reference, not on the bus")
            for n in sorted(set(b) - set(d)):
                problem(f"reference: {noun} {iface}.{n} is on the bus, not in the reference")
            for n in sorted(set(d) & set(b)):
                if d[n] != b[n]:
                    if kind == "properties":
                        problem(f"differs: property {iface}.{n}: reference {d[n]}, bus {b[n]}")
                    else:
                        problem(f"differs: {noun} {iface}.{n}: reference {fmt_args(d[n])}, bus {fmt_args(b[n])}")


def check_bus(top, manager_xml, job_xml):
    md = read(f"{top}/docs/org.bgrun.Runtime1.md")
    tables, blocks = sections(md)
    doc = {}
    for b in blocks:
        if b.lstrip().startswith("node /org/bgrun/Runtime1"):
            doc.update(parse_idl(b))
    bus = parse_xml(manager_xml)
    bus.update(parse_xml(job_xml))
    compare_interfaces(doc, bus)

    # Each method and signal has its own section, each property a row.
    headings = set(re.findall(r"^#### (\w+)\(\)$", md, re.M))
    mgr = bus.get("org.bgrun.Runtime1.Manager", {"methods": {}, "signals": {}, "properties": {}})
    for n in sorted(set(mgr["methods"]) | set(mgr["signals"])):
        if n not in headings:
            problem(f"reference: {n} has no section of its own (#### {n}())")
    props = table_of(tables, "Properties", "the Manager's properties")
    for n, (t, _) in sorted(mgr["properties"].items()):
        if n not in props:
            problem(f"reference: Manager property {n} is not in the Properties table")
        elif props[n] != t:
            problem(f"differs: Manager property {n}: table '{props[n]}', bus '{t}'")
    for n in sorted(set(props) - set(mgr["properties"])):
        problem(f"bus: Manager property {n} is in the Properties table, not on the bus")

    # The job object's properties are the record's keys.
    record = table_of(tables, "The job record", "the record's keys")
    job = bus.get("org.bgrun.Runtime1.Job", {"properties": {}})["properties"]
    for n in sorted(set(record) - set(job)):
        problem(f"bus: record key {n} is in the record table, not a property of the job object")
    for n in sorted(set(job) - set(record)):
        problem(f"reference: job property {n} is not in the record table")
    for n in sorted(set(job) & set(record)):
        if job[n][0] != record[n]:
            problem(f"differs: record key {n}: table '{record[n]}', job property '{job[n][0]}'")


# --- the tables in the code -------------------------------------------------

def xmacro(text, macro):
    """The X(ENUM, "name", "signature") entries of #define MACRO(X)."""
    m = re.search(r"#define " + macro + r"\(X\)((?:.*\\\n)*.*)", text)
    if not m:
        problem(f"code: no #define {macro}(X) found")
        return {}
    # The first two columns are the name and the signature (a table may have more).
    return dict(re.findall(r'X\(\s*\w+\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"\s*[,)]', m.group(1)))


def compare_table(what, doc, code, where):
    for n in sorted(set(doc) - set(code)):
        problem(f"code: {what} {n} is in the reference, not in {where}")
    for n in sorted(set(code) - set(doc)):
        problem(f"reference: {what} {n} is in {where}, not in the reference")
    for n in sorted(set(doc) & set(code)):
        if doc[n] != code[n]:
            problem(f"differs: {what} {n}: reference '{doc[n]}', {where} '{code[n]}'")


def check_tables(top):
    tables, _ = sections(read(f"{top}/docs/org.bgrun.Runtime1.md"))
    keys = read(f"{top}/include/bgrun/record-keys.h")
    opts = read(f"{top}/src/core/launch-options.h")
    api = read(f"{top}/include/bgrun/bus-api.h")
    h = "include/bgrun/record-keys.h"
    compare_table("record key", table_of(tables, "The job record", "the record's keys"),
                  xmacro(keys, "BGRUN_RECORD_KEYS"), h + " BGRUN_RECORD_KEYS")
    compare_table("containment key", table_of(tables, "containment", "the containment keys"),
                  xmacro(keys, "BGRUN_CONTAINMENT_KEYS"), h + " BGRUN_CONTAINMENT_KEYS")
    compare_table("teardown key", table_of(tables, "teardown", "the teardown keys"),
                  xmacro(keys, "BGRUN_TEARDOWN_KEYS"), h + " BGRUN_TEARDOWN_KEYS")
    compare_table("Kill answer key", table_of(tables, "Kill and Stop answers", "Kill's answer"),
                  xmacro(keys, "BGRUN_KILL_KEYS"), h + " BGRUN_KILL_KEYS")
    compare_table("Reap answer key", table_of(tables, "Reap counts", "Reap's answer"),
                  xmacro(keys, "BGRUN_REAP_KEYS"), h + " BGRUN_REAP_KEYS")
    compare_table("Launch option", table_of(tables, "Launch options", "Launch's options"),
                  xmacro(opts, "LAUNCH_OPTION_TABLE"), "src/core/launch-options.h LAUNCH_OPTION_TABLE")
    errors = {n: None for n in table_of(tables, "Errors", "the errors")}
    code_errors = {n: None for n in re.findall(r'#define BGRUN_ERROR_\w+ "([^"]+)"', api)}
    compare_table("error", errors, code_errors, "include/bgrun/bus-api.h")


def check_config(top, check_config_txt):
    tables, _ = sections(read(f"{top}/docs/configuration.md"))
    src = read(f"{top}/src/core/config.c")
    # What bgrund prints: every key, by section.
    printed, section = {}, None
    for line in read(check_config_txt).splitlines():
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            section = printed.setdefault(m.group(1), {})
        elif "=" in line and not line.startswith("#") and section is not None:
            section[line.split("=", 1)[0]] = None
    # What config.c parses: [Runtime]'s keys by name, [Limits]' from its table.
    parsed = {
        "Runtime": {k: None for k in re.findall(r'streq\(key, "(\w+)"\)', src)},
        "Limits": {k: None for k in re.findall(r'\{ "(\w+)", LIMIT_\w+,', src)},
    }
    for sec in sorted(set(printed) | set(parsed) | {"Runtime", "Limits"}):
        doc = {n: None for n in table_of(tables, f"[{sec}]", f"the [{sec}] keys")}
        compare_table(f"[{sec}] key", doc, printed.get(sec, {}), "bgrund --check-config")
        compare_table(f"[{sec}] key", doc, parsed.get(sec, {}), "src/core/config.c")


def main():
    try:
        if len(sys.argv) == 5 and sys.argv[1] == "bus":
            check_bus(sys.argv[2], sys.argv[3], sys.argv[4])
        elif len(sys.argv) == 3 and sys.argv[1] == "tables":
            check_tables(sys.argv[2])
        elif len(sys.argv) == 4 and sys.argv[1] == "config":
            check_config(sys.argv[2], sys.argv[3])
        else:
            sys.exit(__doc__)
    except ValueError as e:
        problem(f"reference: {e}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
