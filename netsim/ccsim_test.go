package netsim

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// ccsimLaw is the law that answered CCsim in testdata/ccsim (×0.95 of the rate at an RTT over
// 16 µs, ×1.02 under), and records, per RTT event from fromNs on, the flow's rate when it
// came, its RTT and the time since the flow's last one. Its flows start at their fair share,
// where CCsim's, started at line rate, spent most of their 200 ms.
type ccsimLaw struct {
	init    uint32
	fromNs  uint64
	last    map[uint32]uint64
	reports []ccsimReport
}

type ccsimReport struct {
	rate              float64 // fraction of line rate
	rttNs, intervalNs float64
}

func (c *ccsimLaw) Name() string   { return "ccsim law" }
func (c *ccsimLaw) TimerNs() int64 { return 0 }
func (c *ccsimLaw) Init(ctx *nicsdk.FlowCtx) uint32 {
	ctx[0] = c.init
	return ctx[0]
}

func (c *ccsimLaw) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	if ev.Type != nicsdk.EvRTT {
		return ctx[0], 0, nil
	}
	if t, ok := c.last[ev.FlowID]; ok && t >= c.fromNs {
		c.reports = append(c.reports, ccsimReport{float64(ctx[0]) / nicsdk.LineRate, float64(ev.RTTNs), float64(ev.TimestampNs - t)})
	}
	c.last[ev.FlowID] = ev.TimestampNs
	m := 1.02
	if ev.RTTNs > 16000 {
		m = 0.95
	}
	ctx[0] = uint32(min(max(math.Round(float64(ctx[0])*m), 1), nicsdk.LineRate))
	return ctx[0], 0, nil
}

// pacing is the RTT reports of one rate bucket (log2 of the fraction of line rate, rounded):
// how many, the mean of (interval − RTT), and of the interval × the rate over 4096 bytes.
type pacing struct{ reports, gapNs, ratio, txEvents float64 }

// ccsimPacing reads a CCsim record of testdata/ccsim.
func ccsimPacing(t *testing.T, name string) map[int]pacing {
	f, err := os.Open("../testdata/ccsim/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[0]) != 7 {
		t.Fatalf("%s: %d rows, %v", name, len(rows), err)
	}
	out := map[int]pacing{}
	for _, r := range rows[1:] {
		var v [7]float64
		for i := range r {
			if v[i], err = strconv.ParseFloat(r[i], 64); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		out[int(v[0])] = pacing{reports: v[1], gapNs: v[3] - v[2], ratio: v[6], txEvents: v[4]}
	}
	return out
}

// netsimPacing runs many-to-one flows under ccsimLaw, each flow starting at its fair share, and
// buckets its reports after the first 5 ms.
func netsimPacing(t *testing.T, flows int) map[int]pacing {
	law := &ccsimLaw{init: nicsdk.LineRate / uint32(flows), fromNs: 5_000_000, last: map[uint32]uint64{}}
	run(t, manyToOne(t, flows), law, Config{DurationNs: 40_000_000})
	out := map[int]pacing{}
	for _, r := range law.reports {
		k := int(math.Round(math.Log2(r.rate)))
		b := out[k]
		b.reports++
		b.gapNs += r.intervalNs - r.rttNs
		b.ratio += r.intervalNs * r.rate * Defaults.LinkGbps / 8 / float64(Defaults.MTU)
		out[k] = b
	}
	for k, b := range out {
		b.gapNs /= b.reports
		b.ratio /= b.reports
		out[k] = b
	}
	return out
}

// The RTT probes pace as CCsim's (testdata/ccsim/README.md), under the law that answered it:
//   - at 128→1, a flow under 1/64 of line rate reports an RTT once a 4096-byte burst, 4096
//     bytes over its rate apart, as CCsim's slow flows do once a 4096-byte TX event (within
//     10%, in the buckets where CCsim's report held one TX event);
//   - at 2→1, a flow at 1/4 to 1/2 of line rate reports an RTT and a few µs apart, after its
//     next burst, as CCsim's after its next TX event (within a factor of 3: netsim's bursts
//     are 4 µs of the rate, CCsim's are its own).
func TestProbePacingAsCCsim(t *testing.T) {
	compared := 0
	cc, ours := ccsimPacing(t, "probe_pacing_m2o128.csv"), netsimPacing(t, 128)
	for k, c := range cc {
		o, ok := ours[k]
		if k > -7 || c.reports < 1000 || math.Abs(c.txEvents-1) > 0.01 || !ok || o.reports < 200 {
			continue
		}
		t.Logf("128→1, rate 2^%d: %.0f reports, interval × rate / 4096 B %.3f (CCsim %.3f)", k, o.reports, o.ratio, c.ratio)
		if math.Abs(o.ratio-c.ratio) > 0.1*c.ratio {
			t.Errorf("128→1, rate 2^%d: a report every %.3f × 4096 B at the rate; CCsim %.3f", k, o.ratio, c.ratio)
		}
		compared++
	}
	cc, ours = ccsimPacing(t, "probe_pacing_m2o2.csv"), netsimPacing(t, 2)
	for _, k := range []int{-2, -1} {
		c, o := cc[k], ours[k]
		if o.reports < 200 {
			continue
		}
		t.Logf("2→1, rate 2^%d: %.0f reports, interval − RTT %.0f ns (CCsim %.0f)", k, o.reports, o.gapNs, c.gapNs)
		if o.gapNs < c.gapNs/3 || o.gapNs > 3*c.gapNs {
			t.Errorf("2→1, rate 2^%d: a report %.0f ns after the RTT; CCsim %.0f", k, o.gapNs, c.gapNs)
		}
		compared++
	}
	if compared < 3 {
		t.Errorf("only %d rate buckets held enough reports in both to compare", compared)
	}
}

// rttTimes is a fixed rate that keeps when its NIC handed it each RTT, and the RTT.
type rttTimes struct {
	FixedRate
	at, rtt []float64 // ns
}

func (c *rttTimes) Decide(ev nicsdk.Event, _ *nicsdk.FlowCtx) (uint32, int64, error) {
	if ev.Type == nicsdk.EvRTT {
		c.at, c.rtt = append(c.at, float64(ev.TimestampNs)), append(c.rtt, float64(ev.RTTNs))
	}
	return c.Rate, 0, nil
}

// CCsim's reports come an RTT and at least 2.735 µs apart at every rate (docs/CALIBRATION.md):
// with Config.TurnaroundNs, a lone flow's RTT event reaches its engine that long after the
// reply, and its next probe leaves no sooner, so its reports are an RTT, the turnaround and
// at most one burst apart; the RTT is the same as without.
func TestTurnaroundAsCCsim(t *testing.T) {
	const turnNs = 2735
	gaps := func(turn int64) (lo, hi, rtt float64) {
		c := &rttTimes{FixedRate: FixedRate{nicsdk.LineRate / 2}}
		run(t, manyToOne(t, 1), c, Config{Probe: ProbeBeforeTX, TurnaroundNs: turn, DurationNs: 2_000_000})
		lo, hi = math.Inf(1), 0
		for i := 10; i < len(c.at); i++ {
			g := c.at[i] - c.at[i-1] - c.rtt[i]
			lo, hi, rtt = min(lo, g), max(hi, g), rtt+c.rtt[i]/float64(len(c.at)-10)
		}
		if len(c.at) < 100 {
			t.Fatalf("turnaround %d ns: %d RTT events", turn, len(c.at))
		}
		return lo, hi, rtt
	}
	lo0, hi0, rtt0 := gaps(0)
	lo, hi, rtt := gaps(turnNs)
	burstNs := float64(Defaults.BurstBytes) * 8 / Defaults.LinkGbps * 2 // a burst at half line rate
	t.Logf("interval − RTT: %.0f to %.0f ns without a turnaround, %.0f to %.0f with %d ns; RTT %.1f and %.1f ns", lo0, hi0, lo, hi, turnNs, rtt0, rtt)
	if lo < turnNs-1 || hi > turnNs+burstNs+1 || hi0 > burstNs+1 || math.Abs(rtt-rtt0) > 1 {
		t.Errorf("interval − RTT %.0f to %.0f ns with a %d ns turnaround (want %d to %.0f), %.0f to %.0f without (want under %.0f); RTT %.1f against %.1f ns",
			lo, hi, turnNs, turnNs, turnNs+burstNs, lo0, hi0, burstNs, rtt, rtt0)
	}
}

// CCsim's NIC sends each 4 KB TX event 147.4 ns sooner than its rate allows (the spacing of
// its TX events, docs/CALIBRATION.md): with Config.TXLeadNs a flow held at 43.8 Gb/s in 4 KB
// bursts sends 4 KB every 748 − 147 ns, 54.5 Gb/s; at line rate the lead changes nothing.
func TestTXLeadAsCCsim(t *testing.T) {
	cfg := Config{MTU: 1024, BurstBytes: 4096, BurstNs: 1_000_000_000, TXLeadNs: 147, DurationNs: 4_000_000}
	const held = 459276 // 43.8 Gb/s in fxp20
	for _, c := range []struct {
		rate uint32
		want float64 // Gb/s
	}{
		{held, 4096 * 8 / (4096*8/(100*float64(held)/nicsdk.LineRate) - 147)},
		{nicsdk.LineRate, 100},
	} {
		r := run(t, manyToOne(t, 1), FixedRate{c.rate}, cfg)
		t.Logf("rate %.1f Gb/s, TX lead 147 ns: the flow sent %.2f Gb/s (want %.2f)", 100*float64(c.rate)/nicsdk.LineRate, r.MaxFlowGbps, c.want)
		if math.Abs(r.MaxFlowGbps-c.want) > 0.005*c.want {
			t.Errorf("rate %.1f Gb/s, TX lead 147 ns: the flow sent %.2f Gb/s, want %.2f", 100*float64(c.rate)/nicsdk.LineRate, r.MaxFlowGbps, c.want)
		}
	}
}
