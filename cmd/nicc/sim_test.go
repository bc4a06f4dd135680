package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSimCommand(t *testing.T) {
	code, out, errOut := nicc(t, "sim", "many-to-one", "--flows", "16", "--policy", "swift", "--duration", "4ms")
	if code != exitOK || !strings.Contains(out, "SU ") || !strings.Contains(out, "Jain") || errOut != "" {
		t.Fatalf("sim swift: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = nicc(t, "sim", "many-to-one", "--policy", "dcqcn", "--duration", "4ms", "--seed", "3", "--json")
	var r struct {
		Scenario    string  `json:"scenario"`
		Utilization float64 `json:"su_percent"`
		Seed        uint64  `json:"seed"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.Scenario != "many-to-one 16" || r.Seed != 3 || r.Utilization <= 0 {
		t.Fatalf("sim --json: exit %d, %+v\n%s", code, r, out)
	}
	// The same seed gives the same bytes.
	if _, again, _ := nicc(t, "sim", "many-to-one", "--policy", "dcqcn", "--duration", "4ms", "--seed", "3", "--json"); again != out {
		t.Error("two runs with one seed printed different JSON")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "ring", "--policy", "swift"}, `unknown scenario "ring"`},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--duration", "0s"}, "--duration"},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--flows", "100"}, "100 flows"},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--buffer", "-1"}, "--buffer"},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--link-gbps", "0"}, "--link-gbps"},
		{[]string{"sim", "many-to-one", "--policy", models + "xgb_small.json"}, "not the RL-CC observation window"},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--pfc", "maybe"}, `--pfc "maybe": want auto, on, port or off`},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--clock-ppm", "-1"}, "--clock-ppm -1: want 0 to 10000"},
		{[]string{"diff", models + "rlcc_adpg.json", "--closed-loop", "--against", models, "--clock-ppm", "2e4"}, "--clock-ppm 20000: want 0 to 10000"},
	} {
		code, _, errOut := nicc(t, c.args...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line containing %q", c.args, code, errOut, c.want)
		}
	}
}

func TestSimPlot(t *testing.T) {
	dir := t.TempDir() + "/plots"
	code, out, errOut := nicc(t, "sim", "long-short", "--policy", "swift", "--duration", "4ms", "--out", dir)
	if code != exitOK || !strings.Contains(out, "recovery") || !strings.Contains(out, "plots ") {
		t.Fatalf("sim --out: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, ext := range []string{".png", ".svg"} {
		b, err := os.ReadFile(filepath.Join(dir, "sim_rates_queue"+ext))
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v", ext, len(b), err)
		}
		if ext == ".png" {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("png: %v", err)
			}
		}
	}
}

// The union of a matrix's shards, merged, is byte for byte the unsharded run's output.
func TestSimMatrixShardsMerge(t *testing.T) {
	dir := t.TempDir()
	matrix := filepath.Join(dir, "m.json")
	if err := os.WriteFile(matrix, []byte(`{"scenarios": ["many-to-one"], "flows": [2, 4], "seeds": [1, 2], "policies": ["swift", "dcqcn"], "duration": "2ms"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, whole, errOut := nicc(t, "sim", "--matrix", matrix, "--json")
	if code != exitOK || !strings.Contains(whole, `"shard": "0/1"`) || strings.Count(whole, `"index"`) != 8 {
		t.Fatalf("unsharded: exit %d\n%s\n%s", code, whole, errOut)
	}
	var shards []string
	for i := range 3 {
		code, out, errOut := nicc(t, "sim", "--matrix", matrix, "--shard", fmt.Sprintf("%d/3", i), "--json")
		if code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, errOut)
		}
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, f)
	}
	code, merged, errOut := nicc(t, append([]string{"sim", "merge"}, shards[2], shards[0], shards[1], "--json")...)
	if code != exitOK || merged != whole {
		t.Fatalf("merge: exit %d, %s; the merged output differs from the unsharded one", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "merge", shards[0], shards[1]}, "missing"},
		{[]string{"sim", "merge", shards[0], shards[0], shards[1], shards[2]}, "is also in"},
		{[]string{"sim", "--matrix", matrix, "--shard", "3/3"}, "--shard"},
		{[]string{"sim", "--matrix", matrix, "many-to-one"}, "takes no SCENARIO"},
		{[]string{"sim", "many-to-one", "--policy", "swift", "--shard", "0/2"}, "--shard takes --matrix"},
		{[]string{"sim", "merge", matrix}, "not a nicc sim --matrix --json output"},
	} {
		code, _, errOut := nicc(t, c.args...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
}

func TestSimNetworkFlags(t *testing.T) {
	code, out, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--mtu", "1500", "--link-delay", "2us", "--link-gbps", "25", "--buffer-alpha", "2", "--duration", "4ms", "--probe", "at-once", "--tx-events", "--host-delay", "1us", "--json")
	var r struct {
		LinkGbps float64 `json:"link_gbps"`
		Alpha    float64 `json:"buffer_alpha"`
		SU       float64 `json:"su_percent"`
		Probe    string  `json:"probe"`
		HostUs   float64 `json:"host_delay_us"`
		BaseUs   float64 `json:"base_rtt_us"`
		TXEvents bool    `json:"tx_events"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.LinkGbps != 25 || r.Alpha != 2 || r.SU <= 0 || r.Probe != "at-once" || !r.TXEvents || r.HostUs != 1 || r.BaseUs < 12 {
		t.Fatalf("exit %d, %+v, %s", code, r, errOut)
	}
	for _, args := range [][]string{{"--mtu", "10"}, {"--link-delay", "0s"}, {"--host-delay", "-1us"}, {"--host-delay", "2h"}, {"--threads", "0"}, {"--buffer-alpha", "-1"}, {"--buffer-alpha", "NaN"}, {"--probe", "data"}, {"--tx-burst", "100"}, {"--tx-burst", "99999999"}, {"--tx-events", "--policy", "dcqcn"}} {
		code, _, errOut := nicc(t, append([]string{"sim", "many-to-one", "--policy", "swift"}, args...)...)
		if code != exitBadInput || !strings.Contains(errOut, args[0]) {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// --go-back-n reaches the network: with a buffer too small for the start at line rate, data
// is dropped and sent again, and the report says so (recovery in --json, a recovery line in
// the text); without it there is no recovery to report. --rto takes --go-back-n.
func TestSimGoBackN(t *testing.T) {
	args := []string{"sim", "many-to-one", "--policy", "swift", "--duration", "4ms", "--warmup", "100us", "--buffer", "262144"}
	code, out, errOut := nicc(t, append(args, "--go-back-n", "--rto", "200us", "--json")...)
	var r struct {
		Drops    float64 `json:"dr_gbps"`
		Goodput  float64 `json:"normalized_goodput"`
		Recovery *struct {
			Resent float64 `json:"resent_gbps"`
			NACKs  int64   `json:"nacks"`
			RTOUs  float64 `json:"rto_us"`
		} `json:"recovery"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.Recovery == nil || r.Drops == 0 || r.Recovery.Resent == 0 || r.Recovery.NACKs == 0 || r.Recovery.RTOUs != 200 {
		t.Fatalf("--go-back-n: exit %d, %+v %+v\n%s", code, r, r.Recovery, errOut)
	}
	lossy := r.Goodput
	r.Recovery = nil
	if code, out, _ := nicc(t, append(args, "--json")...); code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.Recovery != nil || !(r.Goodput > lossy) {
		t.Errorf("without --go-back-n: exit %d, recovery %+v, goodput %v (with it %v: the lost data counted)", code, r.Recovery, r.Goodput, lossy)
	}
	if _, out, _ := nicc(t, append(args, "--go-back-n")...); !strings.Contains(out, "go-back-N:") {
		t.Errorf("the text report has no recovery line:\n%s", out)
	}
	if code, _, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--rto", "1ms"); code != exitBadInput || !strings.Contains(errOut, "--rto") {
		t.Errorf("--rto without --go-back-n: exit %d, %q", code, errOut)
	}
}

// nicc sim workload: flows arriving at a load with published sizes; the report has their
// completion-time slowdown by size bucket, and the utilization is about the load. Bad
// workload flags are bad input.
func TestSimWorkload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	code, out, errOut := nicc(t, "sim", "workload", "--policy", "swift", "--flows", "8", "--sizes", "fbhadoop", "--load", "0.3", "--duration", "4ms", "--out", dir, "--json")
	var r struct {
		Plots []string `json:"plots"`
		SU    float64  `json:"su_percent"`
		FCT   *struct {
			Buckets []struct {
				Label string  `json:"label"`
				Flows int     `json:"flows"`
				Mean  float64 `json:"mean_slowdown"`
				P99   float64 `json:"p99_slowdown"`
			} `json:"buckets"`
		} `json:"fct"`
		Health struct {
			Workload bool `json:"workload"`
		} `json:"health"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.FCT == nil || len(r.FCT.Buckets) != 5 || !r.Health.Workload || r.SU < 20 || r.SU > 40 {
		t.Fatalf("sim workload: exit %d, %+v\n%s", code, r, errOut)
	}
	if b := r.FCT.Buckets[0]; b.Flows < 100 || !(b.Mean >= 1 && b.P99 >= b.Mean) {
		t.Errorf("the smallest flows' bucket: %+v", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sim_fct.png")); err != nil || fi.Size() < 1000 || !slices.Contains(r.Plots, filepath.Join(dir, "sim_fct.svg")) {
		t.Errorf("the slowdown figure: %v; plots %v", err, r.Plots)
	}
	if _, out, _ := nicc(t, "sim", "workload", "--policy", "swift", "--flows", "8", "--load", "0.3", "--duration", "4ms"); !strings.Contains(out, "FCT") || !strings.Contains(out, "≤10KB") {
		t.Errorf("the text report has no FCT table:\n%s", out)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"workload", "--load", "2"}}, {[]string{"workload", "--sizes", "uniform"}}, {[]string{"many-to-one", "--sizes", "websearch"}}, {[]string{"many-to-one", "--load", "0.5"}},
	} {
		code, _, errOut := nicc(t, append([]string{"sim", "--policy", "swift"}, c.args...)...)
		if code != exitBadInput || strings.Count(errOut, "\n") > 1 || !(strings.Contains(errOut, "load") || strings.Contains(errOut, "sizes")) {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
}

// --ecn sets the switch's marking for any policy and is reported; auto marks for DCQCN
// alone; DCQCN without marks, and a malformed profile, are bad input.
func TestSimECN(t *testing.T) {
	type ecn struct {
		Kmin int     `json:"kmin_bytes"`
		Kmax int     `json:"kmax_bytes"`
		Pmax float64 `json:"pmax"`
	}
	for _, c := range []struct {
		args []string
		want *ecn
	}{
		{[]string{"--policy", "swift"}, nil},
		{[]string{"--policy", "swift", "--ecn", "50KB,200KB,0.1"}, &ecn{50 << 10, 200 << 10, 0.1}},
		{[]string{"--policy", "dcqcn"}, &ecn{100 << 10, 400 << 10, 0.2}},
		{[]string{"--policy", "dcqcn", "--ecn", "20000,80000,1"}, &ecn{20000, 80000, 1}},
	} {
		code, out, errOut := nicc(t, append([]string{"sim", "many-to-one", "--flows", "4", "--duration", "2ms", "--json"}, c.args...)...)
		var r struct {
			ECN *ecn `json:"ecn"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || !reflect.DeepEqual(r.ECN, c.want) {
			t.Errorf("%v: exit %d, ecn %+v, want %+v\n%s", c.args, code, r.ECN, c.want, errOut)
		}
	}
	for _, v := range []string{"off", "400KB,100KB,0.2", "1,2", "1,2,0", "1,2,1.5", "-1,2,0.5"} {
		code, _, errOut := nicc(t, "sim", "many-to-one", "--policy", "dcqcn", "--ecn", v)
		if code != exitBadInput || !strings.Contains(errOut, "--ecn") {
			t.Errorf("--ecn %s: exit %d, %q", v, code, errOut)
		}
	}
}

// --start-window staggers the flows' starts and is reported; a malformed window is bad input.
func TestSimStartWindow(t *testing.T) {
	code, out, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--flows", "4", "--duration", "4ms", "--start-window", "1ms,2ms", "--json")
	var r struct {
		Window *[2]float64 `json:"start_window_us"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.Window == nil || *r.Window != [2]float64{1000, 2000} {
		t.Fatalf("exit %d, %+v\n%s", code, r, errOut)
	}
	for _, v := range []string{"2ms", "2ms,1ms", "-1ms,1ms", "a,b"} {
		if code, _, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--start-window", v); code != exitBadInput || !strings.Contains(errOut, "--start-window") {
			t.Errorf("--start-window %s: exit %d, %q", v, code, errOut)
		}
	}
}

// --fat-tree runs many-to-one and all-to-all across the spines of a two-level fat tree and
// reports it; a scenario that needs one switch, and a tree that is not one, are bad input.
func TestSimFatTree(t *testing.T) {
	code, out, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--fat-tree", "2,4,2,1", "--duration", "2ms", "--json")
	var r struct {
		Hosts   int `json:"hosts"`
		Flows   int `json:"flows"`
		FatTree *struct {
			ToRs   int `json:"tors"`
			Spines int `json:"spines"`
		} `json:"fat_tree"`
		BaseRTT float64 `json:"base_rtt_us"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || r.FatTree == nil || r.FatTree.ToRs != 2 || r.FatTree.Spines != 2 || r.Hosts != 8 || r.Flows != 4 || r.BaseRTT < 8 {
		t.Fatalf("sim --fat-tree: exit %d, %+v\n%s", code, r, errOut)
	}
	if code, out, errOut := nicc(t, "sim", "all-to-all", "--policy", "swift", "--fat-tree", "2,4,2,1", "--duration", "2ms"); code != exitOK || !strings.Contains(out, "fat-tree all-to-all 8: 32 flows") || !strings.Contains(out, "ECMP") {
		t.Errorf("all-to-all on a fat tree: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"long-short", "--fat-tree", "nic-paper"}, {"many-to-one", "--fat-tree", "1,4,2,1"}, {"many-to-one", "--fat-tree", "4,16"}, {"all-to-all", "--fat-tree", "nic-paper", "--flows", "3"}} {
		code, _, errOut := nicc(t, append([]string{"sim", "--policy", "swift"}, args...)...)
		if code != exitBadInput || strings.Count(errOut, "\n") > 1 {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// --clock-ppm reaches the network: its default is IEEE 802.3's ±100 ppm, 0 is one ideal clock
// for every NIC, and the two runs differ (Swift's pacing follows each NIC's clock).
func TestSimClockPPM(t *testing.T) {
	run := func(args ...string) (ppm float64, res map[string]any) {
		code, out, errOut := nicc(t, append([]string{"sim", "many-to-one", "--policy", "swift", "--duration", "4ms", "--json"}, args...)...)
		if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
		ppm, _ = res["clock_ppm"].(float64)
		delete(res, "clock_ppm")
		return ppm, res
	}
	std, stdRes := run()
	ideal, idealRes := run("--clock-ppm", "0")
	if std != 100 || ideal != 0 || reflect.DeepEqual(stdRes, idealRes) {
		t.Errorf("clock_ppm %v by default, %v with --clock-ppm 0 (want 100 and 0, and runs that differ in more than that)", std, ideal)
	}
	if _, out, _ := nicc(t, "sim", "many-to-one", "--policy", "swift", "--duration", "4ms", "--clock-ppm", "0"); !strings.Contains(out, "one ideal clock") {
		t.Errorf("the text report does not name the ideal clock:\n%s", out)
	}
}

func TestSimTheory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "theory")
	code, out, errOut := nicc(t, "sim", "--theory", "2,16", "--policy", "swift", "--duration", "4ms", "--plot", dir, "--json")
	var r struct {
		Target, Beta float64 // the parameters in force, as the handler holds them (Q16)
		Points       []struct {
			Flows     int     `json:"flows"`
			Inflation float64 `json:"rtt_inflation"`
			Theory    float64 `json:"theory"`
		} `json:"points"`
		Plots []string `json:"plots"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || len(r.Points) != 2 || len(r.Plots) != 2 {
		t.Fatalf("sim --theory: exit %d, %+v\n%s", code, r, errOut)
	}
	for _, p := range r.Points {
		want := r.Target*math.Sqrt(float64(p.Flows)) + r.Beta
		if math.Abs(p.Theory-want) > 1e-12 || p.Inflation < 1 {
			t.Errorf("N=%d: theory %v (want %v), measured %v", p.Flows, p.Theory, want, p.Inflation)
		}
	}
	if code, _, errOut := nicc(t, "sim", "many-to-one", "--theory", "2", "--policy", "swift"); code != exitBadInput || !strings.Contains(errOut, "--theory takes no SCENARIO") {
		t.Errorf("--theory with a scenario: exit %d, %q", code, errOut)
	}
}

// --pfc: DCQCN runs lossless by default (PFC pauses counted); --pfc off puts it on the lossy
// network the other policies run on, and --pfc on gives any policy PFC.
func TestSimPFC(t *testing.T) {
	var r struct {
		Decides string  `json:"decides"`
		Pauses  int64   `json:"pfc_pauses"`
		PerPort bool    `json:"pfc_per_port"`
		Drops   float64 `json:"dr_gbps"`
	}
	args := []string{"sim", "many-to-one", "--flows", "64", "--duration", "2ms", "--json"}
	jsonOf(t, &r, append(args, "--policy", "dcqcn", "--pfc", "port")...)
	if r.Pauses == 0 || !r.PerPort || r.Drops != 0 {
		t.Errorf("dcqcn --pfc port: %+v; want pauses per port and no drop", r)
	}
	if code, _, errOut := nicc(t, append(args, "--policy", "dcqcn", "--pfc", "ingress")...); code != exitBadInput || !strings.Contains(errOut, "--pfc") {
		t.Errorf("--pfc ingress: exit %d, %q", code, errOut)
	}
	r.PerPort = false
	jsonOf(t, &r, append(args, "--policy", "dcqcn")...)
	if r.Pauses == 0 || !strings.Contains(r.Decides, "PFC (lossless)") {
		t.Errorf("dcqcn: %+v; want PFC pauses", r)
	}
	r.Pauses = 0
	jsonOf(t, &r, append(args, "--policy", "dcqcn", "--pfc", "off")...)
	if r.Pauses != 0 || !strings.Contains(r.Decides, "no PFC") {
		t.Errorf("dcqcn --pfc off: %+v; want no pauses", r)
	}
	jsonOf(t, &r, append(args, "--policy", "swift", "--pfc", "on", "--warmup", "1us")...)
	if r.Pauses == 0 {
		t.Errorf("swift --pfc on: %+v; want PFC pauses at 64 flows starting at line rate (the window from 1 µs)", r)
	}
}

// nicc sim --sdk doca runs a compile's DOCA program: its counters in the report (text and
// JSON), --rlcc-target set at run time, and the refusals, each one line with exit 2.
func TestSimSDKDOCA(t *testing.T) {
	t.Parallel()
	dir := compileDir(t, models+"rlcc_xgb.json", "--sdk", "doca", "--form", "walk")
	args := []string{"sim", "many-to-one", "--flows", "4", "--policy", dir, "--sdk", "doca", "--duration", "2ms", "--buffer", "524288"}
	var r struct {
		Decides string `json:"decides"`
		DOCA    struct {
			NICs      int   `json:"nics"`
			Decisions int64 `json:"counter_decisions"`
			RTTEvents int64 `json:"rtt_events"`
			SetAtNs   int64 `json:"set_at_ns"`
		} `json:"doca"`
	}
	jsonOf(t, &r, append(args, "--rlcc-target", "0.032", "--json")...)
	if d := r.DOCA; d.NICs != 5 || d.Decisions == 0 || d.Decisions != d.RTTEvents || !strings.Contains(r.Decides, "target 0.032 (Q16 2097)") {
		t.Errorf("--sdk doca --rlcc-target 0.032: %+v", r)
	}
	if code, out, errOut := nicc(t, args...); code != exitOK || !strings.Contains(out, "DOCA counters ") || !strings.Contains(out, "the compiled parameters") {
		t.Errorf("--sdk doca: exit %d\n%s%s", code, out, errOut)
	}
	r.DOCA.SetAtNs = 0
	jsonOf(t, &r, append(args, "--rlcc-target", "0.032", "--set-at", "1500us", "--json")...)
	if r.DOCA.SetAtNs != 1_500_000 || !strings.Contains(r.Decides, "the compiled parameters until 1500 µs, then set on every NIC") {
		t.Errorf("--set-at 1500us: %+v", r)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--golden"}, "--golden its golden model"},
		{[]string{"--rlcc-target", "1"}, "--rlcc-target 1: the DOCA program refused it"},
		{[]string{"--rlcc-init-rate", "0.5"}, "--rlcc-init-rate 0.5: compiled into the DOCA program"},
		{[]string{"--sdk", "dpdk"}, `sdk "dpdk": want one of nicc, doca`},
		{[]string{"--sdk", "nicc", "--rlcc-target", "0.032", "--set-at", "1ms"}, "--set-at sets a DOCA program's run-time parameters on the live NICs: it takes --sdk doca"},
		{[]string{"--set-at", "1ms"}, "--set-at has nothing to set: give --rlcc-target, --rlcc-beta or --rlcc-scale"},
		{[]string{"--rlcc-target", "0.032", "--set-at", "2ms"}, "--set-at 2000 µs: want a time inside the run, (0, the duration 2000 µs)"},
		{[]string{"--rlcc-target", "0.032", "--set-at", "0s"}, `--set-at "0s": want a positive time`},
		{[]string{"--rlcc-target", "1", "--set-at", "1ms"}, "--rlcc-target 1: the DOCA program refused it"},
		{[]string{"--rlcc-target", "0.032", "--set-at", "1ms", "--theory", "4"}, "--set-at takes one SCENARIO's run, not --matrix or --theory"},
	} {
		code, _, errOut := nicc(t, append(args, c.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line containing %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := nicc(t, "sim", "many-to-one", "--policy", "swift", "--sdk", "doca"); code != exitBadInput || !strings.Contains(errOut, "takes a compile output directory") {
		t.Errorf("swift --sdk doca: exit %d, %q", code, errOut)
	}
	if code, out, errOut := nicc(t, "diff", models+"rlcc_xgb.json", "--closed-loop", "--against", dir, "--sdk", "doca", "--runs", "many-to-one:4",
		"--duration", "1ms"); code == exitBadInput || !strings.Contains(out, "the DOCA program") {
		t.Errorf("diff --closed-loop --sdk doca: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := nicc(t, "diff", models+"rlcc_xgb.json", "--sdk", "doca"); code != exitBadInput || errOut != "nicc: --sdk takes --closed-loop\n" {
		t.Errorf("diff --sdk without --closed-loop: exit %d, %q", code, errOut)
	}
	if help := helpOf(t, "sim"); !strings.Contains(help, "nicc sim many-to-one --policy build/doca --sdk doca --rlcc-target 0.032") ||
		!strings.Contains(help, "doca_pcc_dev_user_set_algo_params") || !strings.Contains(help, "--set-at 10ms --warmup 12ms") {
		t.Error("nicc sim --help does not teach --sdk doca")
	}
}

// Merge refuses shards that disagree on anything that shapes a result (a flag, a policy
// file's contents), a run that is not the matrix's run of its index, a result of another run
// and a run without a result, in one line naming the shard (text and --json alike).
func TestSimMergeRefusesMismatches(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	copyFile(t, models+"rlcc_teacher.json", policy)
	matrix := filepath.Join(dir, "m.json")
	body := `{"scenarios": ["many-to-one"], "flows": [2], "seeds": [1, 2], "policies": ["` + policy + `"], "duration": "1ms"}`
	if err := os.WriteFile(matrix, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	shard := func(name string, args ...string) string {
		t.Helper()
		code, out, errOut := nicc(t, append([]string{"sim", "--matrix", matrix, "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	s0, s1 := shard("s0.json", "--shard", "0/2"), shard("s1.json", "--shard", "1/2")
	if code, _, errOut := nicc(t, "sim", "merge", s0, s1); code != exitOK {
		t.Fatalf("merge of agreeing shards: exit %d: %s", code, errOut)
	}
	// edited is s1 with one change to its first run, as JSON.
	edited := func(name string, edit func(run map[string]any)) string {
		t.Helper()
		var r map[string]any
		b, _ := os.ReadFile(s1)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		edit(r["runs"].([]any)[0].(map[string]any))
		b, _ = json.Marshal(r)
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		shard string
		want  string
	}{
		{shard("gbps.json", "--shard", "1/2", "--link-gbps", "25"), "s1gbps: setup link_gbps 25, s0's is 100: shards run with different flags"},
		{shard("ppm.json", "--shard", "1/2", "--clock-ppm", "0"), "setup clock_ppm 0, s0's is 100"},
		{shard("buffer.json", "--shard", "1/2", "--buffer", "1048576"), "setup buffer_bytes 1048576, s0's is 5242880"},
		{shard("target.json", "--shard", "1/2", "--rlcc-target", "0.032"), "setup rlcc_params.target"},
		{edited("seed.json", func(run map[string]any) { run["seed"] = 7 }), "run 1 is many-to-one, 2 flows, seed 7, policy " + policy + "; the matrix's run 1 is many-to-one, 2 flows, seed 2, policy " + policy},
		{edited("other.json", func(run map[string]any) { run["result"].(map[string]any)["seed"] = 1 }), "run 1 (many-to-one, seed 2, policy " + policy + ") holds the result of many-to-one 2, seed 1"},
		{edited("null.json", func(run map[string]any) { run["result"] = nil }), "run 1 has no result"},
		{edited("extra.json", func(run map[string]any) { run["rate"] = 3 }), "unknown field"},
	}
	copyFile(t, models+"rlcc_adpg.json", policy) // another policy under the same name
	cases = append(cases, struct{ shard, want string }{shard("renamed.json", "--shard", "1/2"), "run 1's policy " + policy + " has sha256"})
	for _, c := range cases {
		for _, mode := range [][]string{nil, {"--json"}} {
			code, out, errOut := nicc(t, append([]string{"sim", "merge", s0, c.shard}, mode...)...)
			want := strings.Replace(c.want, "s1gbps", c.shard, 1)
			want = strings.Replace(want, "s0's", s0+"'s", 1)
			if code != exitBadInput || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("merge %s %v: exit %d, %q; want exit 2 and one line containing %q", c.shard, mode, code, errOut, want)
			}
		}
	}
	// Text after the JSON is refused, in a matrix and in a shard.
	if err := os.WriteFile(matrix, []byte(body+"\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s1)
	tail := filepath.Join(dir, "tail.json")
	if err := os.WriteFile(tail, append(b, "]"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sim", "--matrix", matrix}, {"sim", "merge", s0, tail}} {
		if code, _, errOut := nicc(t, args...); code != exitBadInput || !strings.Contains(errOut, "trailing data after the JSON value") {
			t.Errorf("%v: exit %d, %q; want the trailing text refused", args, code, errOut)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// --swift and --dcqcn set the references' parameters: the run uses them (a smaller additive
// increase changes the run) and reports every parameter; a bad name, value or policy is a
// one-line error naming the flag.
func TestSimReferenceParams(t *testing.T) {
	run := func(args ...string) (string, map[string]float64) {
		t.Helper()
		code, out, errOut := nicc(t, append([]string{"sim", "many-to-one", "--duration", "4ms", "--json"}, args...)...)
		var r struct {
			Decides string             `json:"decides"`
			Params  map[string]float64 `json:"reference_params"`
			QL      float64            `json:"ql_mean_us"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
		return fmt.Sprint(r.QL), r.Params
	}
	qlDefault, p := run("--policy", "swift")
	if p["ai"] != 0.1 || p["beta"] != 0.8 || len(p) != 9 {
		t.Errorf("swift's parameters: %v", p)
	}
	qlSet, p := run("--policy", "swift", "--swift", "ai=2,base-target-ns=20000")
	if p["ai"] != 2 || p["base-target-ns"] != 20000 || p["beta"] != 0.8 || qlSet == qlDefault {
		t.Errorf("--swift ai=2,base-target-ns=20000: %v, QL %s (default %s)", p, qlSet, qlDefault)
	}
	if _, p = run("--policy", "dcqcn", "--dcqcn", "g=0.5,f=3"); p["g"] != 0.5 || p["f"] != 3 || p["timer-us"] != 55 {
		t.Errorf("--dcqcn g=0.5,f=3: %v", p)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--policy", "swift", "--swift", "ai"}},
		{[]string{"--policy", "swift", "--swift", "nope=1"}},
		{[]string{"--policy", "swift", "--swift", "beta=2"}},
		{[]string{"--policy", "swift", "--swift", "ai=1,ai=2"}},
		{[]string{"--policy", "swift", "--swift", "fs-max-cwnd=0.01"}},
		{[]string{"--policy", "dcqcn", "--dcqcn", "f=1.5"}},
		{[]string{"--policy", "dcqcn", "--dcqcn", "g=NaN"}},
		{[]string{"--policy", "dcqcn", "--swift", "ai=1"}},
	} {
		code, _, errOut := nicc(t, append([]string{"sim", "many-to-one"}, c.args...)...)
		flag := c.args[2]
		if code != exitBadInput || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, flag) && !strings.Contains(errOut, "fs_max_cwnd") {
			t.Errorf("%v: exit %d, %q; want one line naming %s", c.args, code, errOut, flag)
		}
	}
}
