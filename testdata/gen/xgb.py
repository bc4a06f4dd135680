"""XGBoost models distilled from the RL-CC teacher, for model/xgboost's conformance tests.

The teacher's label is computed with numpy from models/rlcc_teacher.json (y = tanh(W3 relu(W2
relu(W1 x)))), so torch is not needed. Writes, with Debian's python3-xgboost:
  models/rlcc_xgb.json          reg:squarederror, 10 trees of depth 4, hist, trained on 200k
                                states (seed 11) labelled with the teacher's y; feature names set
  models/rlcc_xgb.ref.csv       2024 sampled/edge rows (seed 12) + 64 rows with NaN features,
                                and booster.predict (float32, printed with repr)
  models/rlcc_xgb_seed2.json    the same training on another sample of 200k states (seed 21),
                                untuned: a second ensemble for the code-form choice
  models/rlcc_xgb_seed2.ref.csv the same reference rows and its predictions
  models/xgb_logistic.json      binary:logistic, 10 trees of depth 4, label teacher y > 0,
                                base_score 0.3, 10% of each training feature set to NaN so
                                splits learn default directions both ways; no feature names
  models/xgb_logistic.ref.csv   the same kind of rows and XGBoost's probabilities
  models/xgb_dart.json          booster dart (rate_drop 0.3, so tree weights are not 1),
                                binary:logitraw, 8 trees of depth 3, base_score 0.25, NaN rows
  models/xgb_dart.ref.csv       the same kind of rows and XGBoost's raw scores
Run from testdata/:  /usr/bin/python3 gen/xgb.py
"""
import json
import os
import sys

import numpy as np
import xgboost as xgb

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402

TRAIN_SEED = 11
TRAIN_SEED2 = 21
REF_SEED = 12
NAN_SEED = 13
ACTS = {"relu": lambda v: np.maximum(v, 0.0), "tanh": np.tanh, "identity": lambda v: v}


def teacher(path="models/rlcc_teacher.json"):
    """The native-JSON dense network as a numpy function of a batch of states."""
    with open(path) as f:
        m = json.load(f)
    layers = [(np.array(l["w"], dtype=np.float64), ACTS[l.get("act", "identity")])
              for l in m["layers"]]
    assert all(l["op"] == "dense" and "b" not in l for l in m["layers"])

    def f(x):
        v = x.T
        for w, act in layers:
            v = act(w @ v)
        return v[0]
    return f


def with_nans(x, frac, seed):
    """A copy of x with about frac of each column replaced by NaN."""
    rng = np.random.default_rng(seed)
    x = x.copy()
    x[rng.random(x.shape) < frac] = np.nan
    return x


def nan_rows(seed):
    """64 rows: sampled states with one, two or all features missing."""
    x = states.sample_states(64, seed=seed)
    rng = np.random.default_rng(seed)
    for i in range(len(x)):
        k = [1, 2, 4][i % 3]
        x[i, rng.choice(4, size=k, replace=False)] = np.nan
    return x


def ref_rows():
    return np.concatenate([states.sample_states(2000, seed=REF_SEED), states.edge_states(),
                           nan_rows(NAN_SEED)])


def write(booster, name):
    booster.save_model("models/%s.json" % name)
    x = ref_rows()
    y = booster.predict(xgb.DMatrix(x, missing=np.nan, feature_names=booster.feature_names))
    assert y.dtype == np.float32
    states.write_csv("models/%s.ref.csv" % name, states.INPUTS + ["y"],
                     np.concatenate([x, y.astype(np.float64)[:, None]], axis=1))


def rlcc_xgb(f, seed, name):
    """10 trees of depth 4 distilled from the teacher on 200k states sampled with seed."""
    x = states.sample_states(200_000, seed=seed)
    y = f(x)
    reg = xgb.train({"objective": "reg:squarederror", "tree_method": "hist", "max_depth": 4,
                     "eta": 0.3, "seed": 0, "nthread": 1},
                    xgb.DMatrix(x, label=y, feature_names=states.INPUTS), num_boost_round=10)
    write(reg, name)
    xr = states.sample_states(20_000, seed=REF_SEED)
    err = reg.predict(xgb.DMatrix(xr, feature_names=states.INPUTS)) - f(xr)
    print("%s: RMSE vs teacher %.4f, max |error| %.4f" % (name, np.sqrt(np.mean(err ** 2)), np.abs(err).max()))
    return x, y


def main():
    f = teacher()
    x, y = rlcc_xgb(f, TRAIN_SEED, "rlcc_xgb")
    rlcc_xgb(f, TRAIN_SEED2, "rlcc_xgb_seed2")
    xr = states.sample_states(20_000, seed=REF_SEED)

    xn = with_nans(x, 0.1, TRAIN_SEED)
    lab = (y > 0).astype(np.float64)
    logi = xgb.train({"objective": "binary:logistic", "tree_method": "hist", "max_depth": 4,
                      "eta": 0.3, "base_score": 0.3, "seed": 0, "nthread": 1},
                     xgb.DMatrix(xn, label=lab), num_boost_round=10)
    write(logi, "xgb_logistic")
    acc = np.mean((logi.predict(xgb.DMatrix(xr)) > 0.5) == (f(xr) > 0))
    print("xgb_logistic: accuracy on teacher y > 0: %.4f" % acc)

    dart = xgb.train({"booster": "dart", "rate_drop": 0.3, "skip_drop": 0.0,
                      "objective": "binary:logitraw", "tree_method": "hist", "max_depth": 3,
                      "eta": 0.3, "base_score": 0.25, "seed": 0, "nthread": 1},
                     xgb.DMatrix(xn[:20_000], label=lab[:20_000]), num_boost_round=8)
    write(dart, "xgb_dart")


if __name__ == "__main__":
    main()
