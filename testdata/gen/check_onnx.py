"""Checks ONNX files nicc wrote with onnx's own checker (full check, strict shape inference).

Run from testdata/: /usr/bin/python3 gen/check_onnx.py models/rlcc_adpg.onnx
"""
import sys

import onnx

for path in sys.argv[1:]:
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    ins = [(v.name, v.doc_string) for v in m.graph.input]
    print(f"{path}: onnx {onnx.__version__} checker and strict shape inference pass; ir {m.ir_version}, "
          f"opset {m.opset_import[0].version}, inputs {ins}, {len(m.graph.node)} nodes")
