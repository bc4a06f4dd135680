"""Distillation benchmark: nicc's tree trainer against XGBoost, same teachers, same states.

Run by `go tool task bench` (Debian's python3-xgboost; tests never need it):
    /usr/bin/python3 scripts/bench_distill.py [NICC_BINARY] [--teacher FILE ...] [--nicc-flag=F ...]
It samples 2M training and 200k held-out RL-CC states (testdata/gen/states.py) and writes them
as CSV. For each teacher (by default the shipped trained teacher as ONNX, its unnamed export
taken by position, and a network `nicc train --seed 7` trains on the spot: one nicc never saw
when its defaults were chosen) it labels the states with `nicc eval` (the teacher's float64
output, the labels nicc distill computes too), and for 10 and 20 trees of depth 4 trains XGBoost
(hist, learning rate 1.0, lambda 1, 2 threads) and `nicc distill` with its default flags (plus
any --nicc-flag) on the same rows, each --repeat times (3). It prints held-out RMSE against the
teacher and the training wall time of both (the fastest run: the machine may be shared) side
by side, and their ratios.
"""
import argparse
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

MODELS = os.path.join(ROOT, "testdata", "models")
TEACHERS = [os.path.join(MODELS, "rlcc_teacher.onnx"), os.path.join(MODELS, "rlcc_teacher_unnamed.onnx")]
TRAINED_SEED = 7
N_TRAIN, N_TEST = 2_000_000, 200_000
SHAPES = ((10, 4), (20, 4))


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {res.stderr.strip()}")
    return res.stdout


def write_csv(path, x):
    np.savetxt(path, x, delimiter=",", header=",".join(states.INPUTS), comments="", fmt="%.17g")


def label(nicc, teacher, csv):
    """The teacher's float64 output on each row, as nicc evaluates it (columns by position
    when the teacher's inputs are not named as the header's)."""
    return np.array(run([nicc, "eval", teacher, "--input", csv]).split(), dtype=np.float64)


def xgb_end_to_end(path, y, params, trees):
    """XGBoost end to end: the states read from path (.npy by np.load, CSV by np.loadtxt),
    the DMatrix built and the trees trained, labels given."""
    start = time.perf_counter()
    x = np.load(path) if path.endswith(".npy") else np.loadtxt(path, delimiter=",", skiprows=1)
    xgb.train(params, xgb.DMatrix(x, label=y, nthread=2), num_boost_round=trees)
    return time.perf_counter() - start


def bench_teacher(nicc, teacher, train_csv, test_csv, x_train, x_test, extra, repeat, tmp):
    y_train, y_test = label(nicc, teacher, train_csv), label(nicc, teacher, test_csv)
    train_npy, test_npy = train_csv[:-4] + ".npy", test_csv[:-4] + ".npy"
    dtrain = xgb.DMatrix(x_train, label=y_train, nthread=2)
    dtest = xgb.DMatrix(x_test, nthread=2)
    print(f"\nteacher {os.path.relpath(teacher, ROOT)}")
    print(f"{'trees':>5} {'depth':>5} {'xgb RMSE':>10} {'nicc RMSE':>10} {'RMSE ratio':>10} "
          f"{'xgb s':>7} {'nicc s':>7} {'time ratio':>10} {'nicc wall s':>11}  nicc refit")
    e2e = []
    ratios = []
    for trees, depth in SHAPES:
        params = {"tree_method": "hist", "max_depth": depth, "eta": 1.0, "lambda": 1.0,
                  "nthread": 2, "objective": "reg:squarederror"}
        xgb_s = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            booster = xgb.train(params, dtrain, num_boost_round=trees)
            xgb_s = min(xgb_s, time.perf_counter() - start)
        xgb_rmse = float(np.sqrt(np.mean((booster.predict(dtest) - y_test) ** 2)))

        out = os.path.join(tmp, f"nicc_{trees}x{depth}.json")
        cmd = [nicc, "distill", teacher, "--trees", str(trees), "--depth", str(depth),
               "--states", train_csv, "--held-out-states", test_csv, "--out", out, "--json"] + extra
        nicc_s = nicc_wall = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            rep = json.loads(run(cmd))
            nicc_wall = min(nicc_wall, time.perf_counter() - start)
            nicc_s = min(nicc_s, rep["train_seconds"])
        nicc_rmse = rep["held_out"]["rmse"]
        refit = rep.get("refit", "-")
        print(f"{trees:>5} {depth:>5} {xgb_rmse:>10.6f} {nicc_rmse:>10.6f} {nicc_rmse / xgb_rmse:>10.3f} "
              f"{xgb_s:>7.2f} {nicc_s:>7.2f} {nicc_s / xgb_s:>10.3f} {nicc_wall:>11.2f}  {refit}")
        ratios.append(nicc_rmse / xgb_rmse)

        # End to end, reading the states included: nicc distill's wall time (labelling too)
        # on the CSV and on the .npy, against XGBoost's on each (labels given).
        walls = {}
        for fmt, tr, te in (("csv", train_csv, test_csv), ("npy", train_npy, test_npy)):
            c = [nicc, "distill", teacher, "--trees", str(trees), "--depth", str(depth),
                 "--states", tr, "--held-out-states", te, "--out", out, "--json"] + extra
            n = x = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                run(c)
                n = min(n, time.perf_counter() - start)
                x = min(x, xgb_end_to_end(tr, y_train, params, trees))
            walls[fmt] = (n, x)
        e2e.append((trees, depth, walls))
    print(f"{'trees':>5} {'depth':>5} {'nicc csv s':>10} {'xgb csv s':>10} {'ratio':>6} {'nicc npy s':>10} {'xgb npy s':>10} {'ratio':>6}   (end to end)")
    for trees, depth, w in e2e:
        (nc, xc), (nn, xn) = w["csv"], w["npy"]
        print(f"{trees:>5} {depth:>5} {nc:>10.2f} {xc:>10.2f} {nc / xc:>6.2f} {nn:>10.2f} {xn:>10.2f} {nn / xn:>6.2f}")
    return ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nicc", nargs="?", default=os.path.join(ROOT, "nicc"))
    ap.add_argument("--teacher", action="append", help="a teacher file (repeatable); default: the shipped ones and a seed-7 network")
    ap.add_argument("--nicc-flag", action="append", default=[], help="an extra nicc distill flag, e.g. --nicc-flag=--refit=false")
    ap.add_argument("--repeat", type=int, default=3, help="train each model this many times; the times are the fastest run's")
    args = ap.parse_args()
    nicc = os.path.abspath(args.nicc)
    tmp = tempfile.mkdtemp(prefix="nicc-bench-")
    teachers = args.teacher
    if not teachers:
        trained = os.path.join(tmp, f"train_seed{TRAINED_SEED}")
        start = time.perf_counter()
        run([nicc, "train", "--seed", str(TRAINED_SEED), "--out", trained])
        print(f"nicc train --seed {TRAINED_SEED}: {time.perf_counter() - start:.0f} s")
        teachers = TEACHERS + [os.path.join(trained, "policy.onnx")]
    x_train = states.sample_states(N_TRAIN, seed=101)
    x_test = states.sample_states(N_TEST, seed=202)
    train_csv, test_csv = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
    write_csv(train_csv, x_train)
    write_csv(test_csv, x_test)
    np.save(train_csv[:-4] + ".npy", x_train)
    np.save(test_csv[:-4] + ".npy", x_test)
    print(f"{N_TRAIN} training and {N_TEST} held-out states; nicc distill flags: defaults {' '.join(args.nicc_flag)}")
    worst = max(r for t in teachers for r in bench_teacher(nicc, t, train_csv, test_csv, x_train, x_test, args.nicc_flag, args.repeat, tmp))
    print(f"\nworst RMSE ratio nicc/xgb: {worst:.3f}")
    print(f"xgb s, nicc s: training only, the fastest of {args.repeat} runs. xgb s: xgb.train on a DMatrix built "
          "before the timer (its quantile sketch and binning happen inside xgb.train, so are timed); "
          "no prediction. nicc s: train_seconds, distill.Train's wall time: checking the rows are finite, "
          "thresholds and binning, boosting, predicting the held-out set and the refit (CSV reading and "
          "labelling are outside it). nicc wall s: the whole nicc distill run, reading 2.2M CSV rows and labelling included. "
          "nicc refit: whether its leaf refit was kept. End to end: nicc distill's whole run (reading the "
          "states, labelling them with the teacher, training, the held-out check) against XGBoost reading the "
          "same file (np.loadtxt for the CSV, np.load for the .npy), building its DMatrix and training, with "
          "the labels given.")


if __name__ == "__main__":
    main()
