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
  [ "$m" = testdata/models/rlcc_lstm.onnx ] && echo "(an LSTM straight from torch's initialisation, untrained: the sanity probe warns that it moves the rate the wrong way)"
  $nicc inspect "$m" 2>&1
  echo
done

echo "== the RL-CC authors' network as a torch export (one unnamed input, their oldest-first window): --inputs authors names it"
$nicc compile testdata/models/rlcc_authors.onnx --target int --inputs authors --out "$tmp/authors" | grep -E '^(layout|verified|budget) '
echo "(fed in nicc's newest-first order instead, the probe flags it:)"
$nicc inspect testdata/models/rlcc_authors.onnx --inputs nicc 2>&1 >/dev/null || true
echo

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

echo
echo "== nicc budget: a 10-tree, depth-4 if/else ensemble (the shape of a distilled policy) on the dpa core"
wcet=fwsim/testdata/wcet
riscv64-unknown-elf-gcc -march=rv64imc_zbb -mabi=lp64 -O2 -ffreestanding -nostdlib -static \
  -Wl,--no-relax -T $wcet/link.ld -o "$tmp/trees.elf" $wcet/trees.c
# 40 feature vectors (int32 x[40], passed by address), from a fixed LCG so the demo is reproducible.
awk 'BEGIN { s = 12345; for (v = 0; v < 64; v++) { printf "hex:"; for (i = 0; i < 40; i++) {
  s = (s * 1103515245 + 12345) % 2147483648; x = s % 2000 - 1000; if (x < 0) x += 4294967296;
  for (b = 0; b < 4; b++) { printf "%02x", int(x / 256 ^ b) % 256 } } print "" } }' > "$tmp/vectors.txt"
$nicc budget "$tmp/trees.elf" --entry ensemble --vectors "$tmp/vectors.txt"

echo
echo "== nicc compile: the shipped XGBoost 10×4 ensemble inside the whole RL-CC event handler, on the dpa core, also as a DOCA PCC program (--sdk doca)"
$nicc compile testdata/models/rlcc_xgb.json --out "$tmp/rlcc" --sdk doca \
  --ranges testdata/models/rlcc_xgb.ref.csv --predictions testdata/models/rlcc_xgb.ref.csv
echo "(report.json, the C, firmware.elf and the DOCA source with its README-doca.md were written to a temporary directory: nicc compile ... --out DIR keeps them)"

echo
echo "== nicc eval DIR: that firmware in fwsim on XGBoost's reference rows, beside the golden and the float model"
$nicc eval "$tmp/rlcc" --input testdata/models/rlcc_xgb.ref.csv > "$tmp/eval.txt"
head -n 12 "$tmp/eval.txt"
echo "..."
tail -n 1 "$tmp/eval.txt"

echo
echo "== nicc budget DIR: the verify calls compile measured, run again (the report's measured max)"
$nicc budget "$tmp/rlcc" > "$tmp/budget.txt"
grep -E '^(firmware|WCET|measured|verdict) ' "$tmp/budget.txt"

echo
echo "== nicc compile --handler none: LightGBM's binary model alone, checked against LightGBM's own predictions"
$nicc compile $lgb/lg_dart_breast_cancer.model --out "$tmp/bc" --handler none \
  --ranges $lgb/breast_cancer_test.tsv --predictions $lgb/lg_dart_breast_cancer_true_predictions.txt

echo
echo "== nicc compile --target int: the RL-CC teacher MLP as an integer network inside the RL-CC handler"
$nicc compile testdata/models/rlcc_teacher.json --target int --out "$tmp/mlp"

echo
echo "== nicc compile --target int: the ADPG-trained LSTM policy (nicc train --arch lstm), h and c in the flow context, within 2 µs"
$nicc compile testdata/models/rlcc_adpg_lstm.onnx --target int --out "$tmp/lstm"

echo
echo "== nicc diff: the float LSTM against its integer network, per value along the sequences"
$nicc diff testdata/models/rlcc_adpg_lstm.onnx --samples 5000

echo
echo "== nicc sim: closed loop, 16 flows into one receiver; the ADPG-trained policy (nicc train's defaults), compiled to 10×4 trees, decides in fwsim, its measured cycles its latency, against Swift in the same network"
$nicc compile testdata/models/rlcc_adpg.json --target trees --out "$tmp/adpg-trees" --rlcc-base-rtt 4.02 > /dev/null
$nicc sim many-to-one --flows 16 --policy "$tmp/adpg-trees" --duration 100ms
echo
$nicc sim many-to-one --flows 16 --policy swift --duration 100ms

echo
echo "== nicc sim --sdk doca: the shipped ensemble's DOCA PCC program (compiled above) deciding in the loop, its RL-CC target halved at run time through doca_pcc_dev_user_set_algo_params"
$nicc sim many-to-one --flows 16 --policy "$tmp/rlcc" --sdk doca --rlcc-target 0.032 --duration 20ms

echo
echo "== nicc diff --closed-loop: the trained policy against those trees, each deciding in the same networks"
$nicc diff testdata/models/rlcc_adpg.json --closed-loop --against "$tmp/adpg-trees" \
  --runs many-to-one:16,many-to-one:128,all-to-all:8,long-short:2 ||
  echo "(exit $?: the scenarios named above are out of tolerance; CI gates on this exit code)"
