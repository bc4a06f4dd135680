"""Rows as NumPy writes them (testdata/rows/): the inputs of testdata/models/rlcc_xgb.ref.csv,
the first 200 rows, saved by np.save as float64 (rlcc_states.npy), by np.savez_compressed as
float32 (rlcc_states_f32.npz), and one input as a 1-D int16 array (o_int16.npy, o × 100
truncated), for model's .npy/.npz reader tests.

Run with Debian's python3-numpy:  /usr/bin/python3 testdata/gen/npy.py
"""
import csv
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
with open(os.path.join(root, "testdata/models/rlcc_xgb.ref.csv")) as f:
    rows = list(csv.reader(f))
inputs = np.array([[float(v) for v in r[:4]] for r in rows[1:201]], dtype=np.float64)
out = os.path.join(root, "testdata/rows")
os.makedirs(out, exist_ok=True)
np.save(os.path.join(out, "rlcc_states.npy"), inputs)
np.savez_compressed(os.path.join(out, "rlcc_states_f32.npz"), states=inputs.astype(np.float32))
np.save(os.path.join(out, "o_int16.npy"), (inputs[:, 1] * 100).astype(np.int16))
with open(os.path.join(out, "rlcc_states.csv"), "w") as f:
    f.write("a_prev,o,a_prev2,o_prev\n")
    for r in rows[1:201]:
        f.write(",".join(r[:4]) + "\n")
