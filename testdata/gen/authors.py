"""The trained RL-CC network as its authors' code would export it: NVlabs/RLCC's MLP
(models/mlp.py: Linear(bias=False) + ReLU for each hidden layer, 12-12, then a Linear output)
with agents/adpg.py's tanh on its output, fed FeatureHistory's window OLDEST state first:
x = (a_{t-2}, o_{t-1}, a_{t-1}, o_t), i.e. (action_prev, adpg_reward_prev, action, adpg_reward)
with history_length 2 and agent_features [action, adpg_reward] (config/rlcc.yaml).

The weights are models/rlcc_adpg.json's (nicc train's, whose inputs are nicc's newest-first
a_prev, o, a_prev2, o_prev): the first layer's columns are permuted to the authors' order, so the
network computes the same y on the same state. torch.onnx.export with one unnamed input
("input"), as a user's export of the authors' network is. Writes
  models/rlcc_authors.onnx
and checks, with torch and onnx, that its y on rows in the authors' order equals
rlcc_adpg.json's network (float64 in numpy) on the same states in nicc's order.
Run from testdata/:  /usr/bin/python3 gen/authors.py
"""
import json
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402

# nicc's order a_prev, o, a_prev2, o_prev; the authors' is a_prev2, o_prev, a_prev, o.
AUTHORS_FROM_NICC = [2, 3, 0, 1]  # authors' column j is nicc's column AUTHORS_FROM_NICC[j]


class MLP(torch.nn.Module):
    """NVlabs/RLCC models/mlp.py with architecture [12, 12], bias False."""

    def __init__(self, inputs, hidden, bias=False):
        super().__init__()
        layers, prev = [], inputs
        for h in hidden:
            layers += [torch.nn.Linear(prev, h, bias=bias), torch.nn.ReLU()]
            prev = h
        layers.append(torch.nn.Linear(prev, 1, bias=bias))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class Policy(torch.nn.Module):
    """agents/adpg.py's action: y = tanh(net(x))."""

    def __init__(self, mlp):
        super().__init__()
        self.mlp = mlp

    def forward(self, x):
        return torch.tanh(self.mlp(x))


def load_nicc(path="models/rlcc_adpg.json"):
    with open(path) as f:
        m = json.load(f)
    assert m["inputs"] == ["a_prev", "o", "a_prev2", "o_prev"], m["inputs"]
    acts = [l.get("act") for l in m["layers"]]
    assert acts == ["relu", "relu", "tanh"], acts
    assert all("b" not in l for l in m["layers"])
    return [np.array(l["w"], dtype=np.float64) for l in m["layers"]]


def nicc_y(ws, x):
    h = x
    for w in ws[:-1]:
        h = np.maximum(h @ w.T, 0)
    return np.tanh(h @ ws[-1].T)[:, 0]


def build(ws):
    policy = Policy(MLP(4, [12, 12]))
    linears = [m for m in policy.mlp.net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        linears[0].weight.copy_(torch.tensor(ws[0][:, AUTHORS_FROM_NICC]))
        for lin, w in zip(linears[1:], ws[1:]):
            lin.weight.copy_(torch.tensor(w))
    return policy.eval()


def main():
    ws = load_nicc()
    policy = build(ws)
    out = "models/rlcc_authors.onnx"
    torch.onnx.export(policy, torch.zeros(1, 4), out, opset_version=13,
                      input_names=["input"], output_names=["output"])
    onnx.checker.check_model(onnx.load(out), full_check=True)

    x_nicc = np.concatenate([states.sample_states(2000, seed=11), states.edge_states()]).astype(np.float32).astype(np.float64)
    x_authors = x_nicc[:, AUTHORS_FROM_NICC]
    with torch.no_grad():
        y_torch = policy(torch.tensor(x_authors, dtype=torch.float32)).numpy()[:, 0].astype(np.float64)
    y_nicc = nicc_y(ws, x_nicc)
    err = np.abs(y_torch - y_nicc).max()
    # The wrong order must give another answer, or the check shows nothing.
    wrong = np.abs(nicc_y(ws, x_authors) - y_nicc).max()
    print(f"{out}: {len(x_nicc)} states, max |y_authors(x oldest first) - y_rlcc_adpg(x newest first)| = {err:.3g} "
          f"(float32 torch vs float64 numpy); fed newest first instead: max |dy| = {wrong:.3g}")
    assert err < 1e-5, err
    assert wrong > 0.1, wrong


if __name__ == "__main__":
    main()
