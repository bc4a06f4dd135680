package netsim

import (
	"math"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// A workload's flows follow their table: the empirical CDF of their sizes is the table's at
// every point (within 1 point of percent over tens of thousands of flows), the offered load is
// the one asked for, and each host's starts are a Poisson process (exponential gaps: their
// coefficient of variation is 1).
func TestWorkloadSizesMatchTheirTable(t *testing.T) {
	for _, cdf := range SizeCDFs {
		const hosts, load, gbps = 64, 0.5, 100.0
		dur := int64(40_000 / (load * gbps / 8 / cdf.Mean()) / hosts) // about 40,000 flows
		s, err := Workload(hosts, cdf, load, gbps, dur, 1)
		if err != nil {
			t.Fatal(err)
		}
		sizes := make([]float64, len(s.Flows))
		var bytes float64
		for i, f := range s.Flows {
			sizes[i], bytes = float64(f.Bytes), bytes+float64(f.Bytes)
			if f.Src == f.Dst || f.Bytes < 1 || (i > 0 && f.StartNs < s.Flows[i-1].StartNs) {
				t.Fatalf("%s: flow %d %+v", cdf.Name, i, f)
			}
		}
		slices.Sort(sizes)
		for i, b := range cdf.Bytes {
			n, _ := slices.BinarySearch(sizes, b+1) // sizes ≤ b (sizes are whole bytes)
			if got := 100 * float64(n) / float64(len(sizes)); math.Abs(got-cdf.Percent[i]) > 1 {
				t.Errorf("%s: %.2f%% of %d flows are at most %v bytes; the table says %v%%", cdf.Name, got, len(sizes), b, cdf.Percent[i])
			}
		}
		if got := bytes * 8 / float64(dur) / float64(hosts) / gbps; math.Abs(got-load) > 0.05*load {
			t.Errorf("%s: offered load %.3f of the links, want %v", cdf.Name, got, load)
		}
		var gaps []float64
		last := -1.0
		for _, f := range s.Flows {
			if f.Src == 0 {
				if last >= 0 {
					gaps = append(gaps, float64(f.StartNs)-last)
				}
				last = float64(f.StartNs)
			}
		}
		var mean, sq float64
		for _, g := range gaps {
			mean += g
		}
		mean /= float64(len(gaps))
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		if cv := math.Sqrt(sq/float64(len(gaps))) / mean; len(gaps) < 300 || math.Abs(cv-1) > 0.15 {
			t.Errorf("%s: host 0's %d gaps between starts have a coefficient of variation %.3f; a Poisson process has 1", cdf.Name, len(gaps), cv)
		}
		t.Logf("%s: %d flows over %d µs, mean %.0f bytes (table %.0f)", cdf.Name, len(s.Flows), dur/1000, bytes/float64(len(s.Flows)), cdf.Mean())
	}
}

// A flow alone on the empty network at line rate takes exactly its ideal time: slowdown 1 for
// one burst; a longer one is slowed only by its RTT probes on the uplink. With the hosts'
// pipeline delay too.
func TestFCTOfAFlowAlone(t *testing.T) {
	for _, c := range []struct {
		bytes    int64
		min, max float64
		hostNs   int64
	}{{10_000, 1, 1, 0}, {1_000_000, 1, 1.01, 0}, {10_000, 1, 1, 1500}} {
		scen := Scenario{Name: "alone", Hosts: 2, Flows: []Flow{{Src: 0, Dst: 1, StartNs: 20_000, Bytes: c.bytes}}, Long: -1}
		r := run(t, scen, FixedRate{nicsdk.LineRate}, Config{DurationNs: 1_000_000, WarmupNs: 10_000, HostDelayNs: c.hostNs})
		f := r.FCT
		if f == nil || f.All.Flows != 1 || f.All.Unfinished != 0 || f.All.MeanSlowdown < c.min || f.All.MeanSlowdown > c.max || f.All.P99Slowdown != f.All.MeanSlowdown {
			t.Errorf("%d bytes, host delay %d ns: FCT %+v, want one flow at slowdown %v to %v", c.bytes, c.hostNs, f, c.min, c.max)
		}
	}
	// A flow that cannot finish is counted, not measured.
	scen := Scenario{Name: "slow", Hosts: 2, Flows: []Flow{{Src: 0, Dst: 1, StartNs: 20_000, Bytes: 100_000_000}}, Long: -1}
	if f := run(t, scen, FixedRate{nicsdk.LineRate}, Config{DurationNs: 1_000_000, WarmupNs: 10_000}).FCT; f == nil || f.All.Unfinished != 1 || f.All.Flows != 0 || f.Buckets[4].Unfinished != 1 {
		t.Errorf("an unfinished flow: %+v", f)
	}
}

func TestWorkloadBadInput(t *testing.T) {
	for _, c := range []struct {
		hosts int
		load  float64
		dur   int64
	}{{1, 0.5, 1e6}, {64, 0, 1e6}, {64, 0.99, 1e6}, {64, math.NaN(), 1e6}, {4096, 0.9, 1e12}} {
		if _, err := Workload(c.hosts, FBHadoop, c.load, 100, c.dur, 0); err == nil {
			t.Errorf("Workload(%d hosts, load %v, %d ns): no error", c.hosts, c.load, c.dur)
		}
	}
	if _, err := LookupSizeCDF("uniform"); err == nil {
		t.Error("LookupSizeCDF(uniform): no error")
	}
}

// Stagger starts each flow within its window, the same way for a seed and another way for
// another seed; a window that is not one is refused.
func TestStagger(t *testing.T) {
	starts := func(seed uint64) []int64 {
		s := manyToOne(t, 64)
		if err := s.Stagger(1_000_000, 2_000_000, seed); err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, f := range s.Flows {
			if f.StartNs < 1_000_000 || f.StartNs > 2_000_000 {
				t.Fatalf("a flow starts at %d ns, outside [1, 2] ms", f.StartNs)
			}
			out = append(out, f.StartNs)
		}
		return out
	}
	a := starts(1)
	if !slices.Equal(a, starts(1)) || slices.Equal(a, starts(2)) || len(slices.Compact(slices.Sorted(slices.Values(a)))) < 60 {
		t.Errorf("starts %v: want the same for a seed, others for another, and nearly all distinct", a)
	}
	s := manyToOne(t, 2)
	for _, w := range [][2]int64{{-1, 5}, {5, 4}, {0, 1 << 62}} {
		if err := s.Stagger(w[0], w[1], 0); err == nil {
			t.Errorf("Stagger(%v): no error", w)
		}
	}
}

// With a dynamic threshold α a port alone holds at most α/(1+α) of the buffer: 4 flows at
// half the line rate each into one port fill it to there (its queue latency that much of a
// full buffer's), and drop the excess as a full buffer would.
func TestDynamicThreshold(t *testing.T) {
	cfg := Defaults
	for _, alpha := range []float64{0.5, 1, 4} {
		r := run(t, manyToOne(t, 4), FixedRate{nicsdk.LineRate / 2}, Config{BufferAlpha: alpha})
		waitUs := alpha / (1 + alpha) * float64(cfg.BufferBytes) * 8 / (cfg.LinkGbps * 1e3)
		within(t, "queue latency (µs)", r.QueueMeanUs, waitUs, 0.01)
		within(t, "utilization (%)", r.Utilization, 100, 0.001)
		if r.DropGbps < 90 {
			t.Errorf("α %v: %v Gb/s dropped, want the excess (about 100)", alpha, r.DropGbps)
		}
	}
	if _, err := Run(manyToOne(t, 2), FixedRate{1}, Config{BufferAlpha: -1}); err == nil {
		t.Error("BufferAlpha -1: no error")
	}
}
