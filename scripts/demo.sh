#!/bin/sh
# The demo: inspect each shipped model, then evaluate it on the rows its producing tool
# predicted and print the largest difference from that tool's own outputs.
set -eu
nicc=./nicc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check MODEL INPUTS EXPECTED: eval MODEL on INPUTS (CSV), compare line by line with EXPECTED.
check() {
  $nicc eval "$1" --input "$2" > "$tmp/got"
  paste -d, "$tmp/got" "$3" | awk -F, -v m="$1" '
    { n = NF / 2; for (i = 1; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > max) max = d } }
    END { printf "  %-48s %5d rows  max |nicc - tool| = %.3g\n", m, NR, max }'
}
# split REF NIN: the first NIN columns of a reference CSV are inputs, the rest the tool's outputs.
split() {
  tail -n +2 "$1" | cut -d, -f1-"$2" > "$tmp/in"
  tail -n +2 "$1" | cut -d, -f$(($2 + 1))- > "$tmp/want"
}

for m in testdata/models/rlcc_teacher.onnx testdata/models/rlcc_lstm.onnx testdata/models/rlcc_xgb.json; do
  echo "== nicc inspect $m"
  $nicc inspect "$m"
  echo
done

echo "== nicc eval, against the producing tool's own outputs"
split testdata/models/rlcc_teacher.ref.csv 4
check testdata/models/rlcc_teacher.onnx "$tmp/in" "$tmp/want"
check testdata/models/rlcc_teacher.json "$tmp/in" "$tmp/want"
split testdata/models/rlcc_lstm.ref.csv 28
check testdata/models/rlcc_lstm.onnx "$tmp/in" "$tmp/want"
for m in rlcc_xgb xgb_logistic xgb_dart; do
  split testdata/models/$m.ref.csv 4
  check testdata/models/$m.json "$tmp/in" "$tmp/want"
done
lgb=testdata/lightgbm
check $lgb/lg_dart_breast_cancer.model $lgb/breast_cancer_test.tsv $lgb/lg_dart_breast_cancer_true_predictions.txt

echo
echo "== a model nicc refuses, with the reason"
$nicc inspect $lgb/lg_kddcup99.model 2>&1 || true
