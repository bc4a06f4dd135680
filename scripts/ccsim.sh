#!/bin/sh
# Live calibration runs: NVIDIA's CCsim (NVlabs/RLCC's nv_ccsim, fetched by you under its
# NVIDIA Source Code License-NC; nothing of it enters this repository) with nicc agent deciding.
#
#   sh scripts/ccsim.sh NV_CCSIM_DIR OUT_DIR [NAME CONFIG RUN -- AGENT_ARGS...]
#
# With a NAME, one run: CCsim's CONFIG (RL_Eval_ManyToOne, RL_Eval_AllToAll, RL_Eval_LongShort)
# run RUN, the agent listening on the run's port ($0 of `ccsim_release -x CONFIG -g`) with
# AGENT_ARGS (--policy DIR, --multiplier 1, ...). Without, the calibration set of
# testdata/ccsim/README.md, two runs at a time on ports 5555 and 5556. Each run leaves in
# OUT_DIR: NAME.csv.gz (the decision log), NAME.agent.json, NAME.sca (CCsim's scalars),
# NAME.figures.json (scripts/ccsim_figures.py) and NAME.time (CCsim's wall and CPU time).
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/ccsim.sh NV_CCSIM_DIR OUT_DIR [NAME CONFIG RUN -- AGENT_ARGS...]" >&2; exit 2; }
ccsim=$(cd "$1" && pwd); out=$(mkdir -p "$2" && cd "$2" && pwd); shift 2
[ -x "$ccsim/bin/ccsim_release" ] || { echo "ccsim.sh: $ccsim/bin/ccsim_release: not there (NVlabs/RLCC's nv_ccsim directory?)" >&2; exit 2; }
nicc=${NICC:-$(pwd)/nicc}
[ -x "$nicc" ] || { echo "ccsim.sh: $nicc: build it first (go tool task build), or set NICC" >&2; exit 2; }

ccsim_env() { env LD_LIBRARY_PATH=../lib NEDPATH=../ned/algo/:../ned/prog_cc:../ned/dctg/ "$@"; }

# one NAME CONFIG RUN AGENT_ARGS...: a whole run, CCsim and the agent.
one() {
	name=$1 config=$2 run=$3; shift 3
	port=$(cd "$ccsim/sim" && ccsim_env ../bin/ccsim_release omnetpp.ini -x "$config" -g 2>/dev/null |
		sed -n "s/^Run $run: \$0=\([0-9]*\),.*/\1/p")
	[ -n "$port" ] || { echo "ccsim.sh: $config has no run $run" >&2; return 2; }
	"$nicc" agent --ccsim --listen "127.0.0.1:$port" --log "$out/$name.csv.gz" --idle 10s --json "$@" >"$out/$name.agent.json" &
	agent=$!
	sleep 1
	# An agent that could not listen (the port taken) must stop the run: CCsim would answer
	# to whatever holds the port.
	kill -0 "$agent" 2>/dev/null || { echo "ccsim.sh: $name: the agent did not start (see $out/$name.agent.json)" >&2; return 1; }
	start=$(date +%s)
	(cd "$ccsim/sim" && ccsim_env /usr/bin/time -f '%e s wall, %U s user, %S s system' -o "$out/$name.time" \
		../bin/ccsim_release omnetpp.ini -c "$config" -r "$run" -u Cmdenv --result-dir="$out/results-$name" >"$out/$name.ccsim.txt" 2>&1) ||
		{ echo "ccsim.sh: $name: CCsim failed (see $out/$name.ccsim.txt)" >&2; kill "$agent"; return 1; }
	wait "$agent" || { echo "ccsim.sh: $name: the agent failed (see $out/$name.agent.json)" >&2; return 1; }
	cp "$out/results-$name/$config-$run.sca" "$out/$name.sca"
	python3 scripts/ccsim_figures.py "$out/$name.sca" >"$out/$name.figures.json"
	echo "$name: $(cat "$out/$name.time"), $(( $(date +%s) - start )) s"
}

if [ $# -gt 0 ]; then
	name=$1 config=$2 run=$3; shift 3
	[ "${1:-}" = "--" ] && shift
	one "$name" "$config" "$run" "$@"
	exit
fi

# The calibration set: the float teacher and the firmware of rlcc_adpg (CCsim's base RTT,
# 8.192 µs, compiled in), and every flow held at line rate (multiplier 1), on many-to-one
# 2, 4 and 16 (one QP a host); nicc train's default policy through its firmware on 16; and
# rlcc_adpg's firmware on the smallest all-to-all and long-short.
fw="$out/adpg_ccsim"
[ -f "$fw/report.json" ] || "$nicc" compile testdata/models/rlcc_adpg.json --target trees --rlcc-base-rtt 8.192 --out "$fw" >/dev/null
teacher="--policy testdata/models/rlcc_adpg.json --rlcc-base-rtt 8.192"
for n in 2:0 4:9 16:27; do
	flows=${n%%:*} run=${n##*:}
	one "m2o${flows}_teacher" RL_Eval_ManyToOne "$run" $teacher &
	a=$!
	one "m2o${flows}_firmware" RL_Eval_ManyToOne $((run + 48)) --policy "$fw" &
	b=$!
	wait $a $b
	one "m2o${flows}_line_rate" RL_Eval_ManyToOne "$run" --multiplier 1
done
# nicc train's default policy (testdata/models/rlcc_train.json), through its firmware.
train="$out/train_ccsim"
[ -f "$train/report.json" ] || "$nicc" compile testdata/models/rlcc_train.json --target trees --rlcc-base-rtt 8.192 --out "$train" >/dev/null
one m2o16_train RL_Eval_ManyToOne 27 --policy "$train"
one a2a2_firmware RL_Eval_AllToAll 0 --policy "$fw" &
a=$!
one longshort2_firmware RL_Eval_LongShort 36 --policy "$fw" &
b=$!
wait $a $b
