"""RL-CC state sampler shared by the generator scripts.

A state window is (a_{t-1}, o_t, a_{t-2}, o_{t-1}), drawn like RL-CC's distillation data:
actions uniform on [0.8, 1.2]; each o uniform on [-T, T] for half the draws and on [T, 100*T]
for the other half, T = target * scale = 0.064 * 12 = 0.768. o is the paper's delta with the
sign flipped and scaled: o = (max(RTT/baseRTT - beta, 0) * sqrt(rate) - target) * scale.
"""
import numpy as np

INPUTS = ["a_prev", "o", "a_prev2", "o_prev"]
T = 0.064 * 12


def sample_o(rng, n):
    low = rng.uniform(-T, T, n)
    high = rng.uniform(T, 100 * T, n)
    return np.where(rng.random(n) < 0.5, low, high)


def sample_states(n, seed):
    rng = np.random.default_rng(seed)
    a1 = rng.uniform(0.8, 1.2, n)
    o1 = sample_o(rng, n)
    a2 = rng.uniform(0.8, 1.2, n)
    o2 = sample_o(rng, n)
    return np.stack([a1, o1, a2, o2], axis=1)


def edge_states():
    """The corners of the sampled box, and the idle/congested boundary."""
    rows = []
    for a in (0.8, 1.0, 1.2):
        for o in (-T, 0.0, T, 100 * T):
            rows.append([a, o, a, o])
            rows.append([a, o, 2.0 - a, -T])
    return np.array(rows, dtype=np.float64)


def write_csv(path, header, rows):
    """Rows of floats, printed with repr so float64 bits survive."""
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
