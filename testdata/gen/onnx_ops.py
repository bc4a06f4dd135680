"""A feed-forward network that uses every ONNX op nicc's importer supports, so each is checked
against torch. Opset 11, where Clip takes its bounds as inputs and Squeeze/Unsqueeze take axes as
attributes. The weights are torch's default initialisation with torch seed 5; the network means
nothing as a policy. Writes
  models/ops_mix.onnx      x (1,4) -> Reshape (1,2,2) -> Flatten -> Linear(4,8)+LeakyReLU(0.1)
                           -> Linear(8,8)+Sigmoid -> x@W+b (MatMul, Add)+Hardtanh(-0.5,0.5) (Clip)
                           -> Linear(6,6)+clamp(max=0.3) (Clip, no min) -> Unsqueeze -> Linear on a
                           3-d tensor (MatMul, Add with the bias first)+ReLU -> Squeeze
                           -> Linear(6,6)+clamp(min=-0.2) (Clip, no max) -> Linear(6,2, no bias)+Tanh
  models/ops_mix.ref.csv   1024 rows: x(4) rounded to float32, then torch's float32 y0, y1
  models/bad_softmax.onnx  Linear(4,3)+Softmax, opset 13: a real file with an op nicc refuses
Run from testdata/:  /usr/bin/python3 gen/onnx_ops.py
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402


class Mix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l2 = torch.nn.Linear(4, 8)
        self.l3 = torch.nn.Linear(8, 8)
        self.w4 = torch.nn.Parameter(torch.randn(8, 6) * 0.5)
        self.b4 = torch.nn.Parameter(torch.randn(6) * 0.1)
        self.l5 = torch.nn.Linear(6, 6)
        self.l6 = torch.nn.Linear(6, 6)
        self.l7 = torch.nn.Linear(6, 6)
        self.l8 = torch.nn.Linear(6, 2, bias=False)

    def forward(self, x):
        h = torch.flatten(x.reshape(1, 2, 2), 1)
        h = F.leaky_relu(self.l2(h), 0.1)
        h = torch.sigmoid(self.l3(h))
        h = F.hardtanh(torch.matmul(h, self.w4) + self.b4, -0.5, 0.5)
        h = torch.clamp(self.l5(h), max=0.3)
        h = torch.relu(self.l6(h.unsqueeze(0))).squeeze(0)
        h = torch.clamp(self.l7(h), min=-0.2)
        return torch.tanh(self.l8(h))


def main():
    torch.manual_seed(5)
    net = Mix().eval()
    os.makedirs("models", exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, 4), "models/ops_mix.onnx", opset_version=11,
                      input_names=["x"], output_names=["y"])
    # Spread the inputs a little wider than RL-CC states so every clip bound is hit.
    x = np.concatenate([states.sample_states(1000, seed=13), states.edge_states()])
    x[:, 0] = (x[:, 0] - 1) * 10
    x = x.astype(np.float32).astype(np.float64)
    rows = []
    with torch.no_grad():
        for r in x:
            y = net(torch.tensor(r.reshape(1, 4), dtype=torch.float32)).double().numpy().ravel()
            rows.append(np.concatenate([r, y]))
    states.write_csv("models/ops_mix.ref.csv", ["x0", "x1", "x2", "x3", "y0", "y1"], rows)

    torch.manual_seed(6)
    bad = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Softmax(dim=1)).eval()
    torch.onnx.export(bad, torch.zeros(1, 4), "models/bad_softmax.onnx", opset_version=13,
                      input_names=["x"], output_names=["p"])


if __name__ == "__main__":
    main()
