#!/usr/bin/env python3
"""Print the figures of one CCsim run (an OMNeT++ .sca file of NVlabs/RLCC's nv_ccsim) as JSON.

Usage: ccsim_figures.py RESULT.sca

The figures are the ones the RLCC repository's evaluation reads (env/utils/metrics.json),
over CCsim's own collection window (**.startColl .. **.endColl in omnetpp.ini):
  su_pct            the bottleneck's egress bandwidth (netq[0] egress-BW-Gbps, mean) over 100 Gb/s;
                    all-to-all: the mean over every host's queue
  host_gbps         each sending host's bandwidth (host[i].nic.sched out-bw-Gbps, mean); host 0
                    receives but in all-to-all
  fr_min_max        min/max of host_gbps x 100 (the authors' fairness)
  jain              Jain's index of host_gbps
  latency_mean_us   the receiver's packet latency (host[0].nic.rxb pktLatencyVec:mean), µs
  latency_min_us    its minimum (the empty path's one-way latency)
  latency_max_us    its maximum
  drop_gbps         netq[0] dropped-BW-Gbps, mean
  dropped_mb        netq[0] MB-dropped (the whole run)
Nothing of CCsim is read but this file.
"""
import json
import math
import re
import sys

LINK_GBPS = 100.0


def parse(path):
    """stats[(module, name)] = {field: value}; scalars[(module, name)] = value; attrs."""
    stats, scalars, attrs = {}, {}, {}
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 3)
            if not parts:
                continue
            kind = parts[0]
            if kind == "attr" and len(parts) >= 3:
                attrs[parts[1]] = line.split(None, 2)[2].strip().strip('"')
            elif kind == "statistic" and len(parts) >= 3:
                cur = stats.setdefault((parts[1], parts[2].strip()), {})
            elif kind == "field" and cur is not None and len(parts) >= 3:
                cur[parts[1]] = number(parts[2])
            elif kind == "scalar" and len(parts) >= 4:
                scalars[(parts[1], parts[2].strip())] = number(parts[3])
                cur = None
            elif kind not in ("bin", "field"):
                cur = None
    return stats, scalars, attrs


def number(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return None if math.isnan(v) else v


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ccsim_figures.py RESULT.sca")
    path = sys.argv[1]
    try:
        stats, scalars, attrs = parse(path)
    except OSError as e:
        sys.exit(f"ccsim_figures: {e}")
    if "configname" not in attrs:
        sys.exit(f"ccsim_figures: {path}: not an OMNeT++ scalar file (no attr configname)")

    def need(table, key, what):
        v = table.get(key)
        if v is None:
            sys.exit(f"ccsim_figures: {path}: no {what} ({key[0]} {key[1]})")
        return v

    # All-to-all: every host sends and receives, and SU is over every host's downlink;
    # otherwise host 0 receives, through netq[0].
    a2a = "AllToAll" in attrs["configname"]
    queues = [f["mean"] for (mod, name), f in stats.items()
              if re.fullmatch(r"CCSim\.netq\[\d+\]", mod) and name == "egress-BW-Gbps" and (a2a or mod == "CCSim.netq[0]")]
    if not queues:
        sys.exit(f"ccsim_figures: {path}: no egress-BW-Gbps of a switch queue")
    egress = sum(queues) / len(queues)
    hosts = {}
    for (mod, name), fields in stats.items():
        m = re.fullmatch(r"CCSim\.host\[(\d+)\]\.nic\.sched", mod)
        if m and name == "out-bw-Gbps" and (a2a or int(m.group(1)) != 0):
            hosts[int(m.group(1))] = fields.get("mean") or 0.0
    if not hosts:
        sys.exit(f"ccsim_figures: {path}: no sending host's out-bw-Gbps")
    bw = [hosts[h] for h in sorted(hosts)]
    jain = sum(bw) ** 2 / (len(bw) * sum(b * b for b in bw)) if any(bw) else 0.0
    out = {
        "config": attrs.get("configname"),
        "run": int(attrs.get("runnumber", -1)),
        "iterationvars": attrs.get("iterationvars", ""),
        "su_pct": round(100 * egress / LINK_GBPS, 3),
        "host_gbps": [round(b, 4) for b in bw],
        "fr_min_max": round(100 * min(bw) / max(bw), 2) if max(bw) > 0 else 0.0,
        "jain": round(jain, 5),
        "latency_mean_us": scalars.get(("CCSim.host[0].nic.rxb", "pktLatencyVec:mean")),
        "latency_min_us": scalars.get(("CCSim.host[0].nic.rxb", "pktLatencyVec:min")),
        "latency_max_us": scalars.get(("CCSim.host[0].nic.rxb", "pktLatencyVec:max")),
        "drop_gbps": need(stats, ("CCSim.netq[0]", "dropped-BW-Gbps"), "drop bandwidth")["mean"],
        "dropped_mb": scalars.get(("CCSim.netq[0]", "MB-dropped")),
        "max_out_buffer_bytes": scalars.get(("CCSim.netq[0]", "maxOutBufferUsed")),
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
