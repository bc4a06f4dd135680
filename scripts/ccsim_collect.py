#!/usr/bin/env python3
"""Collect the runs scripts/ccsim.sh left in OUT_DIR into one JSON list (testdata/ccsim/calibration.json).

Usage: ccsim_collect.py OUT_DIR

Each run NAME is m2o<N>_<policy>, a2a<N>_<policy> or longshort<N>_<policy>; its figures come
from NAME.figures.json, its decisions from NAME.agent.json, its time from NAME.time.
ql_mean_us is CCsim's packet latency less its smallest (the empty path's one-way latency).
"""
import glob
import json
import os
import re
import sys

SCENARIOS = {"m2o": "many-to-one", "a2a": "all-to-all", "longshort": "long-short"}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ccsim_collect.py OUT_DIR")
    out = sys.argv[1]
    runs = []
    for fig_path in sorted(glob.glob(os.path.join(out, "*.figures.json"))):
        name = os.path.basename(fig_path)[: -len(".figures.json")]
        m = re.fullmatch(r"(m2o|a2a|longshort)(\d+)_(\w+)", name)
        if not m:
            sys.exit(f"ccsim_collect: {name}: not SCENARIO<N>_POLICY")
        with open(fig_path) as f:
            fig = json.load(f)
        with open(os.path.join(out, name + ".agent.json")) as f:
            agent = json.load(f)
        with open(os.path.join(out, name + ".time")) as f:
            t = re.findall(r"([\d.]+) s", f.read())
        flows = agent["flows"]
        lat, lat_min = fig.get("latency_mean_us"), fig.get("latency_min_us")
        runs.append({
            "name": name,
            "scenario": SCENARIOS[m.group(1)],
            "hosts_arg": int(m.group(2)),
            "policy": m.group(3),
            "decides": agent["decides"],
            "config": fig["config"],
            "run": fig["run"],
            "iterationvars": fig["iterationvars"],
            "su_pct": fig["su_pct"],
            "fr_min_max": fig["fr_min_max"],
            "jain": fig["jain"],
            "host_gbps": fig["host_gbps"],
            "ql_mean_us": round(lat - lat_min, 3) if lat is not None and lat_min is not None else None,
            "latency_mean_us": lat,
            "latency_min_us": lat_min,
            "latency_max_us": fig.get("latency_max_us"),
            "drop_gbps": fig["drop_gbps"],
            "dropped_mb": fig["dropped_mb"],
            "flows": flows,
            "decisions": agent["decisions"],
            "decisions_per_flow": round(agent["decisions"] / max(flows, 1)),
            "rate_drift": agent["rate_drift"],
            "ccsim_wall_s": float(t[0]),
            "ccsim_cpu_s": round(float(t[1]) + float(t[2]), 2),
        })
    json.dump(runs, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
