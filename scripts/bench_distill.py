"""Distillation benchmark: nicc's tree trainer against XGBoost, same teacher, same states.

Run by `go tool task bench` (Debian's python3-xgboost; tests never need it):
    /usr/bin/python3 scripts/bench_distill.py [NICC_BINARY]
It samples 2M training and 200k held-out RL-CC states (testdata/gen/states.py), writes them as
CSV, labels them with the shipped teacher (numpy, float64), and for 10 and 20 trees of depth 4
trains XGBoost (hist, learning rate 1.0, lambda 1, 2 threads) and `nicc distill` (learning
rate 1, lambda 1, thresholds on the Q16 grid; plain boosting, then with --refit, its joint
leaf refit) on the same rows. It prints held-out RMSE against the teacher and wall time for both, and their ratios.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import xgboost as xgb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata", "gen"))
import states  # noqa: E402

TEACHER = os.path.join(ROOT, "testdata", "models", "rlcc_teacher.json")
N_TRAIN, N_TEST = 2_000_000, 200_000


def teacher(x):
    with open(TEACHER) as f:
        m = json.load(f)
    acts = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh, "identity": lambda v: v}
    v = x
    for layer in m["layers"]:
        v = acts[layer.get("act", "identity")](v @ np.array(layer["w"]).T)
    return v[:, 0]


def write_csv(path, x):
    np.savetxt(path, x, delimiter=",", header=",".join(states.INPUTS), comments="", fmt="%.17g")


def main():
    nicc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "nicc")
    tmp = tempfile.mkdtemp(prefix="nicc-bench-")
    x_train = states.sample_states(N_TRAIN, seed=101)
    x_test = states.sample_states(N_TEST, seed=202)
    y_train, y_test = teacher(x_train), teacher(x_test)
    train_csv, test_csv = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
    write_csv(train_csv, x_train)
    write_csv(test_csv, x_test)
    print(f"{N_TRAIN} training and {N_TEST} held-out states, teacher {TEACHER}")
    print(f"{'trees':>11} {'depth':>5} {'xgb RMSE':>11} {'nicc RMSE':>11} {'RMSE ratio':>10} "
          f"{'xgb s':>7} {'nicc s':>7} {'time ratio':>10} {'nicc wall s':>11}")
    for trees, depth, refit in ((10, 4, False), (20, 4, False), (10, 4, True), (20, 4, True)):
        label = f"{trees}" + (" refit" if refit else "")
        dtrain = xgb.DMatrix(x_train, label=y_train, nthread=2)
        dtest = xgb.DMatrix(x_test, nthread=2)
        params = {"tree_method": "hist", "max_depth": depth, "eta": 1.0, "lambda": 1.0,
                  "nthread": 2, "objective": "reg:squarederror"}
        start = time.perf_counter()
        booster = xgb.train(params, dtrain, num_boost_round=trees)
        xgb_s = time.perf_counter() - start
        xgb_rmse = float(np.sqrt(np.mean((booster.predict(dtest) - y_test) ** 2)))

        out = os.path.join(tmp, f"nicc_{trees}x{depth}.json")
        cmd = [nicc, "distill", TEACHER, "--trees", str(trees), "--depth", str(depth),
               "--learning-rate", "1", "--l2", "1", "--states", train_csv,
               "--held-out-states", test_csv, "--out", out, "--json"] + (["--refit"] if refit else [])
        start = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True)
        nicc_wall = time.perf_counter() - start
        if res.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: {res.stderr.strip()}")
        rep = json.loads(res.stdout)
        nicc_rmse = rep["held_out"]["rmse"]
        nicc_s = rep["train_seconds"]
        print(f"{label:>11} {depth:>5} {xgb_rmse:>11.6f} {nicc_rmse:>11.6f} {nicc_rmse / xgb_rmse:>10.3f} "
              f"{xgb_s:>7.2f} {nicc_s:>7.2f} {nicc_s / xgb_s:>10.3f} {nicc_wall:>11.2f}")
    print("xgb s, nicc s: training only (xgb.train on a built DMatrix; nicc's train_seconds). "
          "nicc wall s: the whole nicc distill run, reading 2.2M CSV rows and labelling included. "
          "nicc trains with thresholds on the NIC's Q16 grid (--grid rlcc, its default here).")


if __name__ == "__main__":
    main()
