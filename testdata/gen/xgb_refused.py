"""Real XGBoost files that nicc refuses by name, for the CLI's format-detection tests.

Writes, with Debian's python3-xgboost 1.7.4 (numpy only, fixed seeds, nthread 1):
  models/xgb_small.ubj          reg:squarederror, 3 trees of depth 2 on 2 features, saved with
                                save_model("*.ubj"): XGBoost's UBJSON form
  models/xgb_small.json         the same booster saved as JSON, which nicc reads
  models/xgb_categorical.json   reg:squarederror, 2 trees of depth 2; feature 1 is categorical
                                (feature_types ["q", "c"], enable_categorical), so the root splits
                                are categorical: split_type 1, categories*, and split_condition NaN
Run from testdata/:  /usr/bin/python3 gen/xgb_refused.py
"""
import numpy as np
import xgboost as xgb

PARAMS = {"objective": "reg:squarederror", "tree_method": "hist", "max_depth": 2, "seed": 0,
          "nthread": 1}


def main():
    rng = np.random.default_rng(21)
    x = rng.random((500, 2))
    small = xgb.train(PARAMS, xgb.DMatrix(x, label=x[:, 0] + x[:, 1] ** 2), num_boost_round=3)
    small.save_model("models/xgb_small.ubj")
    small.save_model("models/xgb_small.json")

    x[:, 1] = rng.integers(0, 4, len(x))
    d = xgb.DMatrix(x, label=x[:, 0] + (x[:, 1] == 2), feature_types=["q", "c"],
                    enable_categorical=True)
    cat = xgb.train(dict(PARAMS, max_cat_to_onehot=1), d, num_boost_round=2)
    cat.save_model("models/xgb_categorical.json")


if __name__ == "__main__":
    main()
