package main

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/ccsim"
	"github.com/nicc-dev/nicc/plot"
)

// ccsimRun is one recorded CCsim run (testdata/ccsim/calibration.json, scripts/ccsim_collect.py).
type ccsimRun struct {
	Name      string    `json:"name"`
	Scenario  string    `json:"scenario"`
	Hosts     int       `json:"hosts_arg"`
	Policy    string    `json:"policy"`
	SU        float64   `json:"su_pct"`
	FR        float64   `json:"fr_min_max"`
	QL        float64   `json:"ql_mean_us"`
	DropGbps  float64   `json:"drop_gbps"`
	DroppedMB float64   `json:"dropped_mb"`
	HostGbps  []float64 `json:"host_gbps"`
}

const calibrationFile = "../../testdata/ccsim/calibration.json"

// trainCCsim is nicc train's default policy compiled for CCsim's base RTT.
var trainCCsim = []string{models + "rlcc_train.json", "--target", "trees", "--rlcc-base-rtt", "8.192"}

var updateCalibration = flag.Bool("update-calibration", false, "write docs/calibration.png and .svg from TestCalibrationAgainstCCsim's runs")

// TestCalibrationAgainstCCsim: nicc sim --preset ccsim against CCsim's recorded many-to-one
// runs, the same policy deciding: SU within 3 points, mean queue latency within 25% or 1 µs,
// fairness (min/max × 100) within 15 points, drops on both or neither.
func TestCalibrationAgainstCCsim(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(calibrationFile)
	if err != nil {
		t.Fatal(err)
	}
	var runs []ccsimRun
	if err := json.Unmarshal(raw, &runs); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(runs, func(a, b ccsimRun) int { return cmp.Or(a.Hosts-b.Hosts, strings.Compare(b.Policy, a.Policy)) })
	policies := map[string][]string{
		"teacher":  {"--policy", models + "rlcc_adpg.json", "--rlcc-base-rtt", "8.192"},
		"firmware": nil, // the shared compiles adpgCCsim and trainCCsim, below
		"train":    nil,
	}
	bars := plot.Bars{Title: "CCsim (left) against nicc sim --preset ccsim (right), many-to-one: rlcc_adpg (teacher, firmware) and nicc train's default (train)", Left: "CCsim", Right: "nicc sim"}
	panels := []plot.BarPanel{{Name: "SU %"}, {Name: "FR (min/max × 100)"}, {Name: "QL mean µs"}}
	compared := 0
	for _, r := range runs {
		pol, ok := policies[r.Policy]
		if r.Scenario != "many-to-one" || !ok {
			continue // docs/CALIBRATION.md: CCsim's all-to-all, long-short and line-rate runs have no nicc counterpart
		}
		if pol == nil {
			c := sharedCompile(t, map[string][]string{"firmware": adpgCCsim, "train": trainCCsim}[r.Policy]...)
			if c.code != 0 {
				t.Fatalf("compile: %s", c.stderr)
			}
			pol = []string{"--policy", c.dir}
		}
		args := append([]string{"sim", "many-to-one", "--flows", fmt.Sprint(r.Hosts), "--preset", "ccsim", "--json"}, pol...)
		code, out, stderr := nicc(t, args...)
		var got struct {
			SU   float64 `json:"su_percent"`
			FR   float64 `json:"fr"`
			QL   float64 `json:"ql_mean_us"`
			DR   float64 `json:"dr_gbps"`
			Lost float64 `json:"dropped_mb_whole_run"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
			t.Fatalf("%s: nicc %s: exit %d, %v: %s", r.Name, strings.Join(args, " "), code, err, stderr)
		}
		compared++
		t.Logf("%-16s SU %6.2f %6.2f  FR %6.2f %6.2f  QL %5.2f %5.2f  dropped MB %.1f %.1f  (CCsim, nicc sim)", r.Name, r.SU, got.SU, r.FR, got.FR, r.QL, got.QL, r.DroppedMB, got.Lost)
		check := func(figure string, ccsim, nicc, tol float64) {
			if math.Abs(nicc-ccsim) > tol {
				t.Errorf("%s %s: nicc sim %.2f, CCsim %.2f: over the tolerance %.2f", r.Name, figure, nicc, ccsim, tol)
			}
		}
		check("su", r.SU, got.SU, 3)
		check("ql", r.QL, got.QL, max(0.25*r.QL, 1))
		check("fr", r.FR, got.FR, 15)
		if (r.DroppedMB > 0) != (got.Lost > 0) {
			t.Errorf("%s: CCsim dropped %.3f MB, nicc sim %.3f MB: want drops on both or neither", r.Name, r.DroppedMB, got.Lost)
		}
		bars.Names = append(bars.Names, r.Name)
		for i, v := range [][2]float64{{r.SU, got.SU}, {r.FR, got.FR}, {r.QL, got.QL}} {
			panels[i].Teacher, panels[i].Compiled = append(panels[i].Teacher, v[0]), append(panels[i].Compiled, v[1])
		}
	}
	if compared < 7 {
		t.Fatalf("%d runs compared; want many-to-one 2, 4 and 16, each under the teacher and the firmware, and nicc train's policy at 16", compared)
	}
	if *updateCalibration {
		bars.Panels = panels
		fig, err := plot.ClosedLoop(bars)
		if err != nil {
			t.Fatal(err)
		}
		for ext, b := range map[string][]byte{".png": fig.PNG, ".svg": fig.SVG} {
			if err := os.WriteFile("../../docs/calibration"+ext, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// presetNs is --preset ccsim's value of the duration flag name, in ns.
func presetNs(t *testing.T, name string) float64 {
	for _, f := range simPresets["ccsim"].flags {
		if f[0] == name {
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return float64(d.Nanoseconds())
		}
	}
	t.Fatalf("--preset ccsim sets no --%s", name)
	return 0
}

// --preset ccsim's NIC timing is CCsim's as recorded (docs/CALIBRATION.md):
//   - --rtt-turnaround: a report comes an RTT, the turnaround and the wait for the next TX
//     event after the last, so the least interval − RTT is the turnaround (the 16→1 log's
//     0.1st percentile, over reports after a TX event);
//   - --tx-lead: every TX event of tx_spacing.csv's runs came the same time sooner than its
//     deltaT (4096 bytes over the rate) after the one before.
func TestPresetTimingAsCCsim(t *testing.T) {
	log, err := ccsim.ReadLogFile("../../testdata/ccsim/m2o16_adpg_firmware.csv.gz", 0)
	if err != nil {
		t.Fatal(err)
	}
	var gaps []float64
	for _, e := range log {
		if e.TXEvents > 0 && e.IntervalNs > 0 {
			gaps = append(gaps, float64(e.IntervalNs)-float64(e.RTTNs))
		}
	}
	slices.Sort(gaps)
	least, turn := gaps[len(gaps)/1000], presetNs(t, "rtt-turnaround")
	t.Logf("interval − RTT over %d reports: 0.1st percentile %.0f ns; --rtt-turnaround %.0f ns", len(gaps), least, turn)
	if len(gaps) < 100_000 || math.Abs(least-turn) > 10 {
		t.Errorf("16→1: interval − RTT's 0.1st percentile %.0f ns over %d reports; --preset ccsim's --rtt-turnaround %.0f ns", least, len(gaps), turn)
	}

	f, err := os.Open("../../testdata/ccsim/tx_spacing.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 50 || !slices.Equal(rows[0], []string{"run", "host", "deltaT_us", "tx_events", "short_ns", "at_short"}) {
		t.Fatalf("tx_spacing.csv: %d rows, %v", len(rows), err)
	}
	lead, events, lo, hi := presetNs(t, "tx-lead"), 0, math.Inf(1), math.Inf(-1)
	for _, r := range rows[1:] {
		n, err1 := strconv.Atoi(r[3])
		short, err2 := strconv.ParseFloat(r[4], 64)
		at, err3 := strconv.Atoi(r[5])
		if err := cmp.Or(err1, err2, err3); err != nil {
			t.Fatalf("tx_spacing.csv %v: %v", r, err)
		}
		if at != n || math.Abs(short-lead) > 1 {
			t.Errorf("%s host %s, deltaT %s µs: %d of %d TX events came %.1f ns early; --preset ccsim's --tx-lead %.0f ns", r[0], r[1], r[2], at, n, short, lead)
		}
		events, lo, hi = events+n, min(lo, short), max(hi, short)
	}
	t.Logf("%d TX events over %d (run, host, deltaT) bins, %.1f to %.1f ns early; --tx-lead %.0f ns", events, len(rows)-1, lo, hi, lead)
}
