"""A wider RL-CC MLP: 4 -> 32 -> 32 -> 1, tanh throughout, with biases (issue 31, target 7:
int8 lanes packed). Fit to the teacher's y (models/rlcc_teacher.json, y computed with numpy in
float64) on states.sample_states(200000, seed=3) and states.edge_states(): torch seed 0, one
thread, Adam at 0.003 (x0.3 every 1500 steps), 6000 steps of 4096 random rows, mean squared
error. Writes
  models/rlcc_tanh32.onnx   torch.onnx.export, opset 13; input "state"'s doc_string lists the
                            feature names
and prints the fit (max |dy| and RMSE against the teacher on the training rows).
Run from testdata/:  /usr/bin/python3 gen/tanh32.py
"""
import json
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402


def teacher_y(x):
    with open("models/rlcc_teacher.json") as f:
        layers = json.load(f)["layers"]
    h = x
    for k, layer in enumerate(layers):
        h = h @ np.array(layer["w"]).T
        h = np.maximum(h, 0) if k < len(layers) - 1 else np.tanh(h)
    return h


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x = np.concatenate([states.sample_states(200000, seed=3), states.edge_states()])
    X = torch.tensor(x, dtype=torch.float32)
    Y = torch.tensor(teacher_y(x), dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32), torch.nn.Tanh(),
                              torch.nn.Linear(32, 1), torch.nn.Tanh())
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1500, 0.3)
    for _ in range(6000):
        idx = torch.randint(0, len(X), (4096,))
        loss = ((net(X[idx]) - Y[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    net.eval()
    with torch.no_grad():
        err = (net(X) - Y).abs()
    print(f"fit vs teacher: max |dy| {err.max().item():.4f}, RMSE {err.pow(2).mean().sqrt().item():.4f}")
    path = "models/rlcc_tanh32.onnx"
    torch.onnx.export(net, torch.zeros(1, 4), path, opset_version=13, input_names=["state"], output_names=["y"],
                      dynamic_axes={"state": {0: "batch"}, "y": {0: "batch"}})
    m = onnx.load(path)
    m.graph.input[0].doc_string = ",".join(states.INPUTS)
    onnx.checker.check_model(m)
    onnx.save(m, path)


if __name__ == "__main__":
    main()
