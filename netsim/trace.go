package netsim

import "github.com/nicc-dev/nicc/nicsdk"

// TraceFlows is how many flows a trace follows: the first ones of the scenario.
const TraceFlows = 16

// MaxTraceSamples bounds a trace's length.
const MaxTraceSamples = 1 << 20

// Trace is a run sampled every Config.TraceNs: the rate each of the first TraceFlows flows is
// set to, and the deepest receiver queue.
type Trace struct {
	TimesUs  []float64
	FlowGbps [][]float64 // [flow][sample]: the rate the flow's CC set, in Gb/s
	QueueKB  []float64   // the deepest queue among the receivers' switch ports, in KB
	Flows    []int       // which flows FlowGbps follows
}

func newTrace(s *sim) *Trace {
	t := &Trace{}
	for i := range min(len(s.flows), TraceFlows) {
		t.Flows = append(t.Flows, i)
	}
	t.FlowGbps = make([][]float64, len(t.Flows))
	return t
}

// sample records one sample and schedules the next.
func (s *sim) sample() {
	t := s.trace
	t.TimesUs = append(t.TimesUs, float64(s.now)/1e6)
	for k, i := range t.Flows {
		gbps := 0.0
		if f := &s.flows[i]; f.started && (f.Bytes == 0 || f.finished < 0) {
			gbps = float64(f.rate) / nicsdk.LineRate * s.cfg.LinkGbps
		}
		t.FlowGbps[k] = append(t.FlowGbps[k], gbps)
	}
	deepest := 0
	for i := range s.flows {
		deepest = max(deepest, s.ports[s.flows[i].Dst].bytes)
	}
	t.QueueKB = append(t.QueueKB, float64(deepest)/1000)
	s.q.push(event{at: s.now + s.cfg.TraceNs*1000, kind: evSample})
}
