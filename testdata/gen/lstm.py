"""A small recurrent RL-CC policy: Linear(4,12)+ReLU, LSTM(12,12), Linear(12,1)+Tanh.

The shape is the NIC paper's "small LSTM (input->12, LSTM 12, ->1)". The weights are torch's
default initialisation with torch seed 3, NOT a trained policy. Written twice: with torch's
default LSTM layout (seq, batch, feature), and with nn.LSTM(batch_first=True), as most users
write it, which torch exports with Transposes around the LSTM. Both modules get the same
weights. Writes
  models/rlcc_lstm.onnx     torch.onnx.export, opset 14, batch 1, seq_len 1. Inputs x (1,4),
                            h0 (1,1,12), c0 (1,1,12); outputs y (1,1), hn (1,1,12), cn (1,1,12).
                            The doc_string of input x lists the feature names, comma-separated
                            (nicc's ONNX importer uses it to name the model's inputs).
  models/rlcc_lstm.ref.csv  1024 rows: x(4), h0(12), c0(12), then torch's float32 y, hn(12), cn(12).
                            Most rows have h0 uniform on [-1,1] and c0 on [-2,2]; every 8th row and
                            the edge states start from the zero state. Inputs are rounded to
                            float32 first, so the CSV holds exactly what torch computed on. Each
                            row is one step; both modules give the same bits (checked here).
  models/rlcc_lstm_batch_first.onnx
                            the batch_first=True module, exported the same way; it reads
                            out[:, -1] where the first one reads out[0].
  models/rlcc_lstm.steps.csv
                            torch's outputs over 8 sequences of 32 steps from the zero state, the
                            whole sequence in one call to the LSTM, for each module in its own
                            layout: seq, step, x(4), then y and h (the LSTM's output, its state h)
                            at every step. The two modules' outputs are bit-identical (checked
                            here), so one file serves both models.
Run from testdata/:  /usr/bin/python3 gen/lstm.py
"""
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(__file__))
import states  # noqa: E402

H = 12
SEQS, STEPS = 8, 32


class Policy(torch.nn.Module):
    """One decision step: x (1,4), h0 and c0 (1,1,H) -> y (1,1), hn and cn (1,1,H).
    h0 and c0 are (layers, batch, H) in both layouts."""

    def __init__(self, batch_first=False):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, H)
        self.lstm = torch.nn.LSTM(H, H, num_layers=1, batch_first=batch_first)
        self.fc2 = torch.nn.Linear(H, 1)

    def forward(self, x, h0, c0):
        z = torch.relu(self.fc1(x))
        if self.lstm.batch_first:
            # (batch, seq, feature): a batch of one sequence of one step; its last output.
            out, (hn, cn) = self.lstm(z.unsqueeze(1), (h0, c0))
            return torch.tanh(self.fc2(out[:, -1])), hn, cn
        # torch's default LSTM layout is (seq, batch, feature): a sequence of one step.
        out, (hn, cn) = self.lstm(z.unsqueeze(0), (h0, c0))
        return torch.tanh(self.fc2(out[0])), hn, cn

    def sequences(self, x):
        """x (SEQS, STEPS, 4) -> y (SEQS, STEPS), h (SEQS, STEPS, H): each sequence from the zero
        state, all steps in one call to the LSTM in its own layout."""
        z = torch.relu(self.fc1(x))
        if self.lstm.batch_first:
            out, _ = self.lstm(z)
        else:
            out, _ = self.lstm(z.transpose(0, 1))
            out = out.transpose(0, 1)
        return torch.tanh(self.fc2(out))[..., 0], out


def export(net, path):
    args = (torch.zeros(1, 4), torch.zeros(1, 1, H), torch.zeros(1, 1, H))
    torch.onnx.export(net, args, path, opset_version=14,
                      input_names=["x", "h0", "c0"], output_names=["y", "hn", "cn"])
    m = onnx.load(path)
    m.graph.input[0].doc_string = ",".join(states.INPUTS)
    layout = " nn.LSTM(batch_first=True)." if net.lstm.batch_first else ""
    m.doc_string = ("RL-CC small LSTM policy shape (4->12 ReLU, LSTM 12, 12->1 tanh). NOT TRAINED: "
                    "torch default initialisation, seed 3. Written by testdata/gen/lstm.py with torch "
                    + torch.__version__ + "." + layout)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def write_steps(path, nets, x):
    with torch.no_grad():
        outs = [net.sequences(torch.tensor(x, dtype=torch.float32)) for net in nets]
    y, h = outs[0]
    for y2, h2 in outs[1:]:
        assert torch.equal(y, y2) and torch.equal(h, h2), "the layouts' outputs differ"
    y, h = y.double().numpy(), h.double().numpy()
    rows = []
    for s in range(SEQS):
        for t in range(STEPS):
            rows.append(np.concatenate([[s, t], x[s, t], [y[s, t]], h[s, t]]))
    header = ["seq", "step"] + states.INPUTS + ["y"] + ["h_%d" % j for j in range(H)]
    states.write_csv(path, header, rows)


def main():
    torch.manual_seed(3)
    net = Policy().eval()
    torch.manual_seed(3)
    net_bf = Policy(batch_first=True).eval()
    for (name, a), b in zip(net.state_dict().items(), net_bf.state_dict().values()):
        assert torch.equal(a, b), name
    os.makedirs("models", exist_ok=True)
    export(net, "models/rlcc_lstm.onnx")
    export(net_bf, "models/rlcc_lstm_batch_first.onnx")

    seqs = states.sample_states(SEQS * STEPS, seed=21).reshape(SEQS, STEPS, 4)
    seqs = seqs.astype(np.float32).astype(np.float64)
    write_steps("models/rlcc_lstm.steps.csv", [net, net_bf], seqs)

    x = np.concatenate([states.sample_states(1000, seed=11), states.edge_states()])
    n = len(x)
    rng = np.random.default_rng(12)
    h0 = rng.uniform(-1, 1, (n, H))
    c0 = rng.uniform(-2, 2, (n, H))
    zero = np.zeros(n, dtype=bool)
    zero[::8] = True
    zero[1000:] = True
    h0[zero] = 0
    c0[zero] = 0
    # The reference inputs are the float32 values torch sees.
    x, h0, c0 = (a.astype(np.float32).astype(np.float64) for a in (x, h0, c0))
    rows = []
    with torch.no_grad():
        for i in range(n):
            args = (torch.tensor(x[i:i + 1], dtype=torch.float32),
                    torch.tensor(h0[i].reshape(1, 1, H), dtype=torch.float32),
                    torch.tensor(c0[i].reshape(1, 1, H), dtype=torch.float32))
            y, hn, cn = net(*args)
            # The rows hold for the batch_first model too.
            for a, b in zip((y, hn, cn), net_bf(*args)):
                assert torch.equal(a, b), "the layouts' one-step outputs differ at row %d" % i
            rows.append(np.concatenate([x[i], h0[i], c0[i], y.double().numpy().ravel(),
                                        hn.double().numpy().ravel(), cn.double().numpy().ravel()]))
    header = (states.INPUTS + ["h0_%d" % j for j in range(H)] + ["c0_%d" % j for j in range(H)]
              + ["y"] + ["hn_%d" % j for j in range(H)] + ["cn_%d" % j for j in range(H)])
    states.write_csv("models/rlcc_lstm.ref.csv", header, rows)


if __name__ == "__main__":
    main()
