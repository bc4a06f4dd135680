#!/bin/sh
# same_outputs.sh REV: build nicc at REV and at the work tree, run the same commands with both
# (every shipped model under every --target, and the diff, eval, budget and inspect reports),
# and compare what they write: every emitted file byte for byte, and every command's stdout
# (--json where there is one) with the wall-clock fields removed. Prints one line per command
# and exits 1 on any difference. A refactor that must keep outputs byte-identical (issue 12)
# runs it against the commit before it, e.g.
#   sh scripts/same_outputs.sh 132c616
# Needs what `go tool task setup` installs, and python3 (for the JSON comparison).
set -eu
rev=${1:?usage: same_outputs.sh REV}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old-src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

git -C "$root" worktree add --detach -q "$tmp/old-src" "$rev"
(cd "$tmp/old-src" && go build -o "$tmp/nicc-old" ./cmd/nicc)
(cd "$root" && go build -o "$tmp/nicc-new" ./cmd/nicc)

m=$root/testdata/models
lgb=$root/testdata/lightgbm
v="--vectors 20000 --seed 7"

# The commands, one per line: NAME then the arguments; OUT in them is the command's own
# output directory (a fresh one per binary).
cat > "$tmp/commands" <<EOF
xgb compile $m/rlcc_xgb.json --out OUT $v --json
xgb_ranges compile $m/rlcc_xgb.json --out OUT --ranges $m/rlcc_xgb.ref.csv --predictions $m/rlcc_xgb.ref.csv $v --json
xgb_none compile $m/rlcc_xgb.json --out OUT --handler none --ranges $m/rlcc_xgb.ref.csv $v --json
xgb_oblivious_core compile $m/xgb_logistic.json --out OUT --core dpa --budget 1.5us $v --json
xgb_small compile $m/xgb_small.json --out OUT --handler none $v --json
lightgbm compile $lgb/lg_dart_breast_cancer.model --out OUT --handler none --ranges $lgb/breast_cancer_test.tsv --predictions $lgb/lg_dart_breast_cancer_true_predictions.txt $v --json
teacher_int compile $m/rlcc_teacher.json --out OUT --target int $v --json
teacher_int16 compile $m/rlcc_teacher.onnx --out OUT --target int --weight-bits 16 $v --json
teacher_beta compile $m/rlcc_teacher_unnamed.onnx --out OUT --target int --inputs a_prev,o,a_prev2,o_prev --rlcc-beta 2 --rlcc-target 0.05 $v --json
lstm_int compile $m/rlcc_lstm.onnx --out OUT --target int $v --json
lstm_bf_int compile $m/rlcc_lstm_batch_first.onnx --out OUT --target int $v --json
teacher_trees compile $m/rlcc_teacher.onnx --out OUT --target trees --samples 20000 $v --json
teacher_oblivious compile $m/rlcc_teacher.onnx --out OUT --target trees --oblivious --trees 6 --depth 3 --samples 20000 $v --json
distill distill $m/rlcc_teacher.onnx --out OUT --samples 20000 --seed 3 --json
diff_int diff $m/rlcc_teacher.onnx --against int --samples 20000 --out OUT --json
diff_trees diff $m/rlcc_teacher.onnx --against trees --samples 20000 --out OUT --json
diff_lstm diff $m/rlcc_lstm.onnx --against int --samples 5000 --out OUT --json
inspect_onnx inspect $m/rlcc_teacher.onnx --json
inspect_lstm inspect $m/rlcc_lstm.onnx --json
inspect_xgb inspect $m/rlcc_xgb.json --json
inspect_lgb inspect $lgb/lg_dart_breast_cancer.model --json
eval_onnx eval $m/rlcc_teacher.onnx --input $m/rlcc_teacher.ref.csv
bad_lgb inspect $lgb/lg_kddcup99.model
bad_onnx compile $m/bad_softmax.onnx --out OUT --target int
EOF

# run BIN SIDE: every command with BIN; each command's stdout, stderr and exit status, and its
# output directory, under $tmp/SIDE/NAME.
run() {
  bin=$1 side=$2
  while read -r name args; do
    d=$tmp/$side/$name
    mkdir -p "$d"
    status=0
    # shellcheck disable=SC2086 # the arguments are split on purpose (no path has a space)
    # Both binaries write at the same path, moved aside after: a UBSan build embeds its path,
    # and the manifest hashes it.
    w=$tmp/run/$name
    rm -rf "$w" && mkdir -p "$w"
    "$bin" $(echo "$args" | sed "s#OUT#$w/out#g") > "$d/stdout" 2> "$d/stderr" < /dev/null || status=$?
    echo "$status" > "$d/status"
    if [ -e "$w/out" ]; then mv "$w/out" "$d/out"; fi
  done < "$tmp/commands"
}
run "$tmp/nicc-old" old
run "$tmp/nicc-new" new

# normalize FILE SIDE: JSON without wall-clock fields and with the side's own paths replaced;
# anything else as it is, paths replaced.
cat > "$tmp/normalize.py" <<'EOF'
import json, sys
path, side, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path, encoding="utf-8", errors="replace").read().replace(tmp + "/" + side + "/", "TMP/").replace(tmp + "/run/", "TMP/")
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("stage_times", "seconds", "elapsed", "wall", "duration") and not k.endswith("_seconds")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
try:
    print(json.dumps(strip(json.loads(text)), indent=1, sort_keys=True))
except ValueError:
    print("\n".join(l for l in text.splitlines() if not l.lstrip().startswith("times ")))
EOF

fail=0
while read -r name args; do
  a=$tmp/old/$name b=$tmp/new/$name
  same=yes
  for f in stdout stderr; do
    python3 "$tmp/normalize.py" "$a/$f" old "$tmp" > "$a/$f.norm"
    python3 "$tmp/normalize.py" "$b/$f" new "$tmp" > "$b/$f.norm"
    cmp -s "$a/$f.norm" "$b/$f.norm" || { same="no ($f differs)"; diff "$a/$f.norm" "$b/$f.norm" | head -5; }
  done
  cmp -s "$a/status" "$b/status" || same="no (exit $(cat "$a/status") vs $(cat "$b/status"))"
  if [ -d "$a/out" ]; then
    for f in $(cd "$a/out" && find . -type f ! -name driver ! -name driver-ubsan | sort); do
      case $f in
      *.json) python3 "$tmp/normalize.py" "$a/out/$f" old "$tmp" > "$tmp/x"; python3 "$tmp/normalize.py" "$b/out/$f" new "$tmp" > "$tmp/y" 2>/dev/null || true
              cmp -s "$tmp/x" "$tmp/y" || { same="no ($f differs)"; diff "$tmp/x" "$tmp/y" | head -5; } ;;
      *) cmp -s "$a/out/$f" "$b/out/$f" || same="no ($f differs)" ;;
      esac
    done
    [ "$(cd "$a/out" && find . -type f | sort)" = "$(cd "$b/out" && find . -type f | sort)" ] || same="no (different files)"
  fi
  printf '%-20s exit %s  same: %s\n' "$name" "$(cat "$b/status")" "$same"
  [ "$same" = yes ] || fail=1
done < "$tmp/commands"
exit $fail
