#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# round-trips.py TRACE: the round trips of a D-Bus client, from
# `strace -xx -s 4096 -e trace=sendmsg,recvmsg` of it. One line per round
# trip: what the client sent before it next read anything, as the members of
# its method calls (AUTH for the authentication). A call that waits on an
# earlier one's answer is on a later line; calls that go out together share
# one.
import re
import sys

SEND = re.compile(r'^(?:\d+ +)?sendmsg\(\d+, \{.*?msg_iov=\[(.*?)\], msg_iovlen')
RECV = re.compile(r'^(?:\d+ +)?recvmsg\(.*\) = (\d+)$')
IOV = re.compile(r'iov_base="((?:\\x[0-9a-f]{2})*)"')


def members(data):
    """The members of the method calls in one sendmsg (little-endian D-Bus)."""
    if data.startswith(b'\0AUTH'):
        return ['AUTH']
    out = []
    while len(data) >= 16 and data[0:1] == b'l':
        kind = data[1]
        body_len = int.from_bytes(data[4:8], 'little')
        fields_len = int.from_bytes(data[12:16], 'little')
        fields = data[16:16 + fields_len]
        i = 0
        while i + 4 <= len(fields):
            code, sig = fields[i], fields[i + 2:i + 3]
            i += 4
            if sig in (b's', b'o'):
                n = int.from_bytes(fields[i:i + 4], 'little')
                value = fields[i + 4:i + 4 + n]
                i += 4 + n + 1
                if code == 3 and kind == 1:
                    out.append(value.decode())
            elif sig == b'u':
                i += 4
            elif sig == b'g':
                i += 1 + fields[i] + 1
            else:
                break
            i = (i + 7) & ~7
        end = 16 + fields_len
        end = (end + 7) & ~7
        data = data[end + body_len:]
    return out


trips, current = [], []
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    m = SEND.match(line)
    if m:
        data = b''.join(bytes.fromhex(s.replace('\\x', '')) for s in IOV.findall(m.group(1)))
        current += members(data)
        continue
    m = RECV.match(line)
    if m and int(m.group(1)) > 0 and current:
        trips.append(current)
        current = []
if current:
    trips.append(current)
for t in trips:
    print(' '.join(t))
