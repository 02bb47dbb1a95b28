#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make COUNT ended job records in bgrund's store by copying the record of
one ended job, each under a fresh id: the cheap way to have thousands of
records (launching them takes minutes); bgrund loads them when it starts,
as it loads its own. Each copy is the template's record with the id, the
unit and the cgroups renamed, created at the template's created_at minus
COUNT + 1 - i microseconds (so they are older than the template, in the
order printed) and with a command of its own, "true # copy I".
    sharing-records.py TEMPLATE-ID COUNT
Run as root; prints the new ids, oldest first."""
import json, os, secrets, sys

JOBS = "/var/lib/bgrun/jobs"
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def rename(value, old, new):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: rename(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [rename(v, old, new) for v in value]
    return value


def main():
    template, count = sys.argv[1], int(sys.argv[2])
    src = os.path.join(JOBS, template)
    parts = {}
    for name in os.listdir(src):
        with open(os.path.join(src, name), "rb") as f:
            parts[name] = f.read()
    if b'"status"' not in parts.get("result.json", b""):
        sys.exit("template %s has not ended" % template)
    spec = json.loads(parts["spec.json"])
    taken = set(os.listdir(JOBS))
    ids = []
    while len(ids) < count:
        new = "".join(secrets.choice(ALPHABET) for _ in range(10))
        if new not in taken:
            taken.add(new)
            ids.append(new)
    for i, new in enumerate(ids):
        d = os.path.join(JOBS, new)
        os.mkdir(d, 0o700)
        for name, data in parts.items():
            if name.endswith(".json"):
                value = rename(json.loads(data), template, new)
                if name == "spec.json":
                    value["created_at"] = spec["created_at"] - (count + 1 - i)
                    value["command"] = "true # copy %d" % i
                data = json.dumps(value, separators=(",", ":")).encode()
            fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
    print("\n".join(ids))

main()
