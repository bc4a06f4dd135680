"""The RL-CC teacher as a user's plain PyTorch export: one input tensor named "input", no
doc_string, so nicc reads its inputs as input[0]..input[3] and cannot tell it is an RL-CC
policy by name. Same network and weights as gen/teacher.py (torch seed 2). Writes
  models/rlcc_teacher_unnamed.onnx
Run from testdata/:  /usr/bin/python3 gen/unnamed.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import teacher  # noqa: E402


def main():
    net = teacher.build()
    torch.onnx.export(net, torch.zeros(1, 4), "models/rlcc_teacher_unnamed.onnx", opset_version=13,
                      input_names=["input"], output_names=["output"])


if __name__ == "__main__":
    main()
