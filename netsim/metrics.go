package netsim

import (
	"math"
	"slices"
)

// Result is a run's figures, as the RL-CC papers report them, measured over the window
// [WarmupNs, DurationNs): the warm-up is left out so that start-up transients do not count.
type Result struct {
	Scenario   string `json:"scenario"`
	Controller string `json:"controller"`
	Hosts      int    `json:"hosts"`
	Flows      int    `json:"flows"`
	Seed       uint64 `json:"seed"`

	DurationUs    float64 `json:"duration_us"`
	WindowStartUs float64 `json:"window_start_us"`

	// Utilization (SU) is the bytes the receivers' switch ports sent (data and probes) over
	// what the ports could have sent, in percent.
	Utilization float64 `json:"su_percent"`
	// Goodput is the data bytes delivered over the receivers' capacity (0..1).
	Goodput float64 `json:"normalized_goodput"`
	// Fairness (FR) is min/max × 100 of the flows' delivered data; Jain is Jain's index.
	// Both over the flows that send for the whole window (unbounded, started before it).
	Fairness float64 `json:"fr"`
	Jain     float64 `json:"jain"`
	// Queue latency (QL): the time data packets waited in the switch's queues.
	QueueMeanUs float64 `json:"ql_mean_us"`
	QueueP99Us  float64 `json:"ql_p99_us"`
	// DropGbps (DR) is the data dropped at the switch, in Gbit/s.
	DropGbps float64 `json:"dr_gbps"`
	// FCT is a workload's flow completion times by size bucket (Workload), absent in other
	// scenarios.
	FCT *FCT `json:"fct,omitempty"`
	// Recovery is what go-back-N did (Config.GoBackN), absent without it.
	Recovery *Recovery `json:"recovery,omitempty"`
	// RecoveryUs is the long flow's recovery time in a long-short scenario: from the end of
	// the last short flow to the end of the first 10 µs in which the long flow delivers 95% of line
	// rate; -1 when it did not recover before the run ended, absent in other scenarios.
	RecoveryUs *float64 `json:"recovery_us,omitempty"`

	// RTTInflation is the mean RTT sample over the path's base RTT (BaseRTTUs: four link
	// delays and the probe's four serializations), the quantity of the NIC paper's Eq. 2,
	// E[RTT-inflation] = target·√N + β at the optimum. A probe follows its own burst, so even
	// an empty path adds the burst's last packet, stored and forwarded at the switch.
	RTTInflation    float64 `json:"rtt_inflation"`
	BaseRTTUs       float64 `json:"base_rtt_us"`
	Decisions       int64   `json:"cc_decisions"`
	PFCPauses       int64   `json:"pfc_pauses,omitempty"`
	EventsDropped   int64   `json:"cc_events_dropped"`
	SimEvents       int64   `json:"sim_events"`
	MaxFlowGbps     float64 `json:"max_flow_gbps"`
	MinFlowGbps     float64 `json:"min_flow_gbps"`
	ReceiverPorts   int     `json:"receiver_ports"`
	DroppedAllRunMB float64 `json:"dropped_mb_whole_run"`

	// Trace is the sampled time series when Config.TraceNs is set (not in the JSON).
	Trace *Trace `json:"-"`
}

// Recovery is go-back-N's work in the window: the data the senders sent again, what the
// receivers discarded (out of order after a drop, or already delivered), the NACKs and the
// retransmission timeouts that made the senders go back, and the timeout.
type Recovery struct {
	ResentGbps    float64 `json:"resent_gbps"`
	DiscardedGbps float64 `json:"discarded_gbps"`
	NACKs         int64   `json:"nacks"`
	Timeouts      int64   `json:"timeouts"`
	RTOUs         float64 `json:"rto_us"`
}

// queueBinPs is the queue-latency histogram's resolution; queueBins of them cover 5 ms, the
// longest wait a 5 MB buffer at 8 Gb/s could cause (longer waits fall in the last bin).
const (
	queueBinPs = 10_000
	queueBins  = 500_000
	longBinPs  = 10_000_000 // the long flow's throughput bins, 10 µs
)

type stats struct {
	hist          []int64 // waits by queueBinPs bin, up to the longest seen
	waits         int64
	waitSum       float64
	dropped       int64 // data bytes dropped in the window
	droppedAll    int64
	engineDropped int64
	decisions     int64
	pauses        int64
	longBins      []int64
	rttSum        float64 // ps, over the window's RTT samples
	rtts          int64
	resent        int64 // data bytes sent again after a go-back, in the window
	discarded     int64 // data bytes the receivers discarded (out of order or duplicate), in the window
	sentAll       int64 // data bytes the senders sent, sent again included, over the whole run
	discardedAll  int64
	nacks         int64 // NACKs the senders received, in the window
	timeouts      int64 // retransmission timeouts, in the window
}

// init allocates the long flow's throughput bins, for a scenario that has one.
func (st *stats) init(c Config, scen Scenario) {
	if scen.Long >= 0 {
		st.longBins = make([]int64, c.DurationNs*1000/longBinPs+1)
	}
}

func (st *stats) queued(s *sim, waitPs int64) {
	if !s.inWindow() {
		return
	}
	b := int(min(waitPs/queueBinPs, queueBins-1))
	if b >= len(st.hist) { // grown to the longest wait seen, not allocated whole for every run
		st.hist = append(st.hist, make([]int64, b+1-len(st.hist))...)
	}
	st.hist[b]++
	st.waits++
	st.waitSum += float64(waitPs)
}

func (st *stats) drop(s *sim, bytes int) {
	st.droppedAll += int64(bytes)
	if s.inWindow() {
		st.dropped += int64(bytes)
	}
}

func (s *sim) result() *Result {
	c := &s.cfg
	windowPs := (c.DurationNs - c.WarmupNs) * 1000
	capBytes := float64(windowPs) * c.LinkGbps / 8000 // one link's bytes over the window
	r := &Result{Scenario: s.scen.Name, Controller: s.ctrl.Name(), Hosts: s.scen.Hosts, Flows: len(s.flows), Seed: c.Seed,
		DurationUs: float64(c.DurationNs) / 1000, WindowStartUs: float64(c.WarmupNs) / 1000,
		Decisions: s.stats.decisions, PFCPauses: s.stats.pauses, EventsDropped: s.stats.engineDropped, SimEvents: s.events,
		DroppedAllRunMB: float64(s.stats.droppedAll) / 1e6}
	recv := map[int]bool{}
	var data float64
	var rates []float64
	for i := range s.flows {
		f := &s.flows[i]
		recv[f.Dst] = true
		data += float64(f.inWindow)
		if f.Bytes == 0 && f.StartNs < c.WarmupNs {
			rates = append(rates, float64(f.inWindow))
		}
	}
	var tx float64
	for p := range recv {
		tx += float64(s.ports[p].txBytes)
	}
	r.ReceiverPorts = len(recv)
	r.Utilization = 100 * tx / (capBytes * float64(len(recv)))
	r.Goodput = data / (capBytes * float64(len(recv)))
	if len(rates) > 0 {
		lo, hi := slices.Min(rates), slices.Max(rates)
		toGbps := 8 / (float64(windowPs) / 1e12) / 1e9
		r.MinFlowGbps, r.MaxFlowGbps = lo*toGbps, hi*toGbps
		if hi > 0 {
			r.Fairness = 100 * lo / hi
		}
		r.Jain = jain(rates)
	}
	base := c.baseRTTPs()
	r.BaseRTTUs = float64(base) / 1e6
	if s.stats.rtts > 0 {
		r.RTTInflation = s.stats.rttSum / float64(s.stats.rtts) / float64(base)
	}
	if s.stats.waits > 0 {
		r.QueueMeanUs = s.stats.waitSum / float64(s.stats.waits) / 1e6
		r.QueueP99Us = float64(percentileBin(s.stats.hist, s.stats.waits, 0.99)) * queueBinPs / 1e6
	}
	gbps := func(bytes int64) float64 { return float64(bytes) * 8 / (float64(windowPs) / 1e12) / 1e9 }
	r.DropGbps = gbps(s.stats.dropped)
	if c.GoBackN {
		r.Recovery = &Recovery{ResentGbps: gbps(s.stats.resent), DiscardedGbps: gbps(s.stats.discarded),
			NACKs: s.stats.nacks, Timeouts: s.stats.timeouts, RTOUs: float64(c.RTONs) / 1000}
	}
	if s.scen.Long >= 0 {
		rec := s.recovery()
		r.RecoveryUs = &rec
	}
	r.FCT = s.fct()
	r.Trace = s.trace
	return r
}

// jain is Jain's fairness index (Σx)² / (n Σx²); 1 when every x is equal (or all are 0).
func jain(x []float64) float64 {
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(x)) * sq)
}

// percentileBin is the bin holding the p-quantile of n counts in hist (the upper end of the
// bin, so the figure is never optimistic).
func percentileBin(hist []int64, n int64, p float64) int {
	want := int64(math.Ceil(p * float64(n)))
	var seen int64
	for i, c := range hist {
		seen += c
		if seen >= want {
			return i + 1
		}
	}
	return len(hist)
}

// recovery is the long-short recovery time in µs (see Result.RecoveryUs).
func (s *sim) recovery() float64 {
	var lastShort int64 = -1
	for i := range s.flows {
		if i == s.scen.Long {
			continue
		}
		f := &s.flows[i]
		if f.finished < 0 {
			return -1 // a short flow never finished
		}
		lastShort = max(lastShort, f.finished)
	}
	full := float64(longBinPs) * s.cfg.LinkGbps / 8000 * 0.95
	for b := lastShort/longBinPs + 1; b < int64(len(s.stats.longBins)); b++ {
		if float64(s.stats.longBins[b]) >= full {
			return float64((b+1)*longBinPs-lastShort) / 1e6
		}
	}
	return -1
}
