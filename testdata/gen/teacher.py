"""The RL-CC teacher: 4 -> 12 -> 12 -> 1, ReLU, no biases, tanh output.

The weights are a trained policy: models/rlcc_adpg.json, which `nicc train --out DIR` writes
with its defaults (ADPG in nicc's network simulator; README.md here). Writes
  models/rlcc_teacher.onnx   torch.onnx.export, opset 13; input "state"'s doc_string lists the
                             feature names, the model's doc_string says what it is
  models/rlcc_teacher.json   nicc.model/v1, the same float32 weights as float64
  models/rlcc_teacher.ref.csv  2024 input rows (rounded to float32, what torch computes on) and
                             torch's float32 output y
Run from testdata/:  /usr/bin/python3 gen/teacher.py
"""
import json
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402

DOC = ("RL-CC teacher (4->12->12->1, ReLU, no biases, tanh), trained by nicc train with its "
       "defaults (ADPG in netsim, seed 1): the weights of testdata/models/rlcc_adpg.json. "
       "Written by testdata/gen/teacher.py with torch " + torch.__version__ + ".")


def build(trained="models/rlcc_adpg.json"):
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 12, bias=False), torch.nn.ReLU(),
        torch.nn.Linear(12, 12, bias=False), torch.nn.ReLU(),
        torch.nn.Linear(12, 1, bias=False), torch.nn.Tanh(),
    )
    with open(trained) as f:
        layers = json.load(f)["layers"]
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for lin, layer in zip(linears, layers):
            lin.weight.copy_(torch.tensor(layer["w"], dtype=torch.float64))
    return net.eval()


def native_json(net):
    acts = ["relu", "relu", "tanh"]
    layers = []
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    for lin, act in zip(linears, acts):
        w = lin.weight.detach().double().numpy()
        layers.append({"op": "dense", "in": w.shape[1], "out": w.shape[0],
                       "w": w.tolist(), "act": act})
    return {"format": "nicc.model/v1", "name": "rlcc_teacher", "doc": DOC,
            "inputs": states.INPUTS, "layers": layers}


def main():
    net = build()
    os.makedirs("models", exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, 4), "models/rlcc_teacher.onnx", opset_version=13,
                      input_names=["state"], output_names=["y"],
                      dynamic_axes={"state": {0: "batch"}, "y": {0: "batch"}})
    m = onnx.load("models/rlcc_teacher.onnx")
    m.graph.input[0].doc_string = ",".join(states.INPUTS)
    m.doc_string = DOC
    onnx.checker.check_model(m)
    onnx.save(m, "models/rlcc_teacher.onnx")
    with open("models/rlcc_teacher.json", "w") as f:
        json.dump(native_json(net), f, indent=1)
        f.write("\n")
    x = np.concatenate([states.sample_states(2000, seed=7), states.edge_states()])
    x = x.astype(np.float32).astype(np.float64)  # the values torch computes on
    with torch.no_grad():
        y = net(torch.tensor(x, dtype=torch.float32)).double().numpy()
    states.write_csv("models/rlcc_teacher.ref.csv", states.INPUTS + ["y"], np.concatenate([x, y], axis=1))


if __name__ == "__main__":
    main()
