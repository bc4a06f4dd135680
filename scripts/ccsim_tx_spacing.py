#!/usr/bin/env python3
"""CCsim's TX event spacing against its rate (testdata/ccsim/tx_spacing.csv).

Usage: ccsim_tx_spacing.py NAME RUN.vec [NAME RUN.vec ...] > tx_spacing.csv

RUN.vec is an RL_Eval_ManyToOne_Vectors run of CCsim (scripts/ccsim.sh NAME
RL_Eval_ManyToOne_Vectors RUN -- AGENT_ARGS). Each sending host's `deltaT` vector (its NIC
scheduler's) holds one entry a 4096-byte TX event: 4096 bytes over the rate in force, in µs.
Over the collection window (50-170 ms), for each run, host and 0.1 µs bin of deltaT, this
counts the TX events that followed one at the same deltaT, and the most common difference
deltaT − (the time since that event), in ns, with how many events had it.
"""
import collections
import re
import sys

START, END = 0.050, 0.170


def spacing(path):
    ids = {}  # vector id -> host
    rows = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    prev = {}
    with open(path) as f:
        for line in f:
            if line.startswith("vector "):
                m = re.match(r"vector (\d+)\s+CCSim\.host\[(\d+)\]\.nic\.sched\s+deltaT:vector", line)
                if m and m.group(2) != "0":
                    ids[m.group(1)] = int(m.group(2))
                continue
            fields = line.split()
            if len(fields) != 4 or fields[0] not in ids:
                continue
            host, t, dt = ids[fields[0]], float(fields[2]), float(fields[3])
            last = prev.get(host)
            prev[host] = (t, dt)
            if last is None or last[1] != dt or not START <= t < END:
                continue
            short_ns = round((dt - (t - last[0]) * 1e6) * 1000, 1)
            rows[host][round(dt, 1)][short_ns] += 1
    return rows


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit("usage: ccsim_tx_spacing.py NAME RUN.vec [NAME RUN.vec ...]")
    print("run,host,deltaT_us,tx_events,short_ns,at_short")
    for name, path in zip(args[::2], args[1::2]):
        rows = spacing(path)
        for host in sorted(rows):
            for dt in sorted(rows[host]):
                c = rows[host][dt]
                short, n = c.most_common(1)[0]
                print(f"{name},{host},{dt:.1f},{sum(c.values())},{short:.1f},{n}")


if __name__ == "__main__":
    main()
