package netsim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// SizeCDF is a published datacenter flow-size distribution: a piecewise-linear CDF over flow
// sizes in bytes, as the papers that measured it publish it, with its source.
type SizeCDF struct {
	Name, Source string
	Bytes        []float64 // sizes, ascending, from 0
	Percent      []float64 // the CDF at each size, ascending, 0 … 100
}

// The published distributions nicc sim's workload scenario draws from. The tables are the
// ones the HPCC paper (Li et al., SIGCOMM 2019) evaluates with, as its repository publishes
// them (alibaba-edu/High-Precision-Congestion-Control, traffic_gen/, commit 9cf8b9e8):
// WebSearch_distribution.txt and FbHdp_distribution.txt.
var (
	WebSearch = SizeCDF{Name: "websearch",
		Source:  "web search (Alizadeh et al., DCTCP, SIGCOMM 2010), as the HPCC paper (SIGCOMM 2019) tabulates it",
		Bytes:   []float64{0, 10e3, 20e3, 30e3, 50e3, 80e3, 200e3, 1e6, 2e6, 5e6, 10e6, 30e6},
		Percent: []float64{0, 15, 20, 30, 40, 53, 60, 70, 80, 90, 97, 100}}
	FBHadoop = SizeCDF{Name: "fbhadoop",
		Source:  "Facebook Hadoop (Roy et al., Inside the Social Network's (Datacenter) Network, SIGCOMM 2015), as the HPCC paper (SIGCOMM 2019) tabulates it",
		Bytes:   []float64{0, 100, 200, 300, 350, 400, 500, 600, 700, 1000, 2000, 7000, 30e3, 50e3, 80e3, 120e3, 300e3, 1e6, 2e6, 10e6},
		Percent: []float64{0, 1, 2, 5, 15, 20, 30, 40, 50, 60, 67, 70, 72, 82, 87, 90, 95, 97.5, 99, 100}}
)

// SizeCDFs are the distributions by name.
var SizeCDFs = []SizeCDF{WebSearch, FBHadoop}

// LookupSizeCDF is the distribution named name.
func LookupSizeCDF(name string) (SizeCDF, error) {
	for _, c := range SizeCDFs {
		if c.Name == name {
			return c, nil
		}
	}
	var names []string
	for _, c := range SizeCDFs {
		names = append(names, c.Name)
	}
	return SizeCDF{}, fmt.Errorf("flow sizes %q: want one of %s", name, strings.Join(names, ", "))
}

// Mean is the distribution's mean flow size in bytes.
func (c SizeCDF) Mean() float64 {
	var m float64
	for i := 1; i < len(c.Bytes); i++ {
		m += (c.Percent[i] - c.Percent[i-1]) / 100 * (c.Bytes[i-1] + c.Bytes[i]) / 2
	}
	return m
}

// Quantile is the size at CDF percent p (0 ≤ p ≤ 100), linear between the table's points.
func (c SizeCDF) Quantile(p float64) float64 {
	i, _ := slices.BinarySearch(c.Percent, p)
	switch {
	case i == 0:
		return c.Bytes[0]
	case i == len(c.Percent):
		return c.Bytes[len(c.Bytes)-1]
	}
	lo, hi := c.Percent[i-1], c.Percent[i]
	return c.Bytes[i-1] + (p-lo)/(hi-lo)*(c.Bytes[i]-c.Bytes[i-1])
}

// WorkloadLoads bound Workload's load: a fraction of each host's link.
const (
	MinWorkloadLoad = 0.01
	MaxWorkloadLoad = 0.95
)

// Workload is hosts sending flows to each other: each host starts flows by a Poisson process
// whose rate makes its mean offered load load × linkGbps, each to a host drawn uniformly among
// the others, with sizes drawn from cdf (at least one byte), until durationNs. The draws come
// from seed alone.
func Workload(hosts int, cdf SizeCDF, load, linkGbps float64, durationNs int64, seed uint64) (Scenario, error) {
	if hosts < 2 || hosts > 4096 || !(load >= MinWorkloadLoad && load <= MaxWorkloadLoad) || !(linkGbps > 0) || durationNs <= 0 {
		return Scenario{}, fmt.Errorf("netsim: workload of %d hosts at load %v: want 2 to 4096 hosts and a load of %v to %v", hosts, load, MinWorkloadLoad, MaxWorkloadLoad)
	}
	perNs := load * linkGbps / 8 / cdf.Mean() // flows a host starts per ns
	if want := perNs * float64(durationNs) * float64(hosts); want > MaxFlows {
		return Scenario{}, fmt.Errorf("netsim: a workload of %d hosts at load %v over %d ns starts about %.0f flows, over %d: fewer hosts or a shorter run", hosts, load, durationNs, want, MaxFlows)
	}
	rng := rand.New(rand.NewPCG(seed, 0x776f726b6c6f6164))
	s := Scenario{Name: fmt.Sprintf("workload %s %d hosts, load %v", cdf.Name, hosts, load), Hosts: hosts, Long: -1}
	for h := range hosts {
		for t := rng.ExpFloat64() / perNs; t < float64(durationNs); t += rng.ExpFloat64() / perNs {
			dst := rng.IntN(hosts - 1)
			if dst >= h {
				dst++
			}
			size := int64(math.Ceil(cdf.Quantile(100 * rng.Float64())))
			s.Flows = append(s.Flows, Flow{Src: h, Dst: dst, StartNs: int64(t), Bytes: max(size, 1)})
		}
	}
	if len(s.Flows) == 0 {
		return Scenario{}, fmt.Errorf("netsim: a workload of %d hosts at load %v over %d ns starts no flow: a longer run", hosts, load, durationNs)
	}
	// In start order, so flow ids are the order they arrive in.
	slices.SortStableFunc(s.Flows, func(a, b Flow) int { return cmp.Compare(a.StartNs, b.StartNs) })
	return s, nil
}

// FCT is a workload's flow completion times: of the flows that started in the window, by
// size bucket and in all, the slowdown (the flow's completion time over its ideal one, alone
// on the empty network at line rate: idealFCTPs).
type FCT struct {
	Buckets []FCTBucket `json:"buckets"`
	All     FCTBucket   `json:"all"`
}

// FCTBucket is the slowdown of the flows of up to MaxBytes (0: no bound) and more than the
// bucket before's: the finished ones' mean and p99, and how many did not finish by the end
// of the run (left out of the figures, which they would only raise).
type FCTBucket struct {
	Label        string  `json:"label"`
	MaxBytes     int64   `json:"max_bytes,omitempty"`
	Flows        int     `json:"flows"`
	Unfinished   int     `json:"unfinished"`
	MeanSlowdown float64 `json:"mean_slowdown"`
	P99Slowdown  float64 `json:"p99_slowdown"`
}

// fctBuckets are the size buckets FCT reports.
var fctBuckets = []FCTBucket{{Label: "≤10KB", MaxBytes: 10e3}, {Label: "10KB-100KB", MaxBytes: 100e3},
	{Label: "100KB-1MB", MaxBytes: 1e6}, {Label: "1MB-10MB", MaxBytes: 10e6}, {Label: ">10MB"}}

// idealFCTPs is a flow of bytes alone on the empty network at line rate: its bytes on the
// uplink, two link delays and two hosts' pipelines, and its first packet stored at the switch
// before the port sends it (the port is busy from then to the last byte).
func (c *Config) idealFCTPs(bytes int64) int64 {
	return int64(float64(bytes)*8000/c.LinkGbps) + 2*(c.PropNs+c.HostDelayNs)*1000 + c.serPs(int(min(bytes, int64(c.MTU))))
}

// fct is the run's FCT, for a scenario of finite flows and no long flow (a workload); nil
// otherwise.
func (s *sim) fct() *FCT {
	if s.scen.Long >= 0 || !slices.ContainsFunc(s.scen.Flows, func(f Flow) bool { return f.Bytes > 0 }) {
		return nil
	}
	slow := make([][]float64, len(fctBuckets)+1) // the last: all
	r := &FCT{Buckets: slices.Clone(fctBuckets), All: FCTBucket{Label: "all"}}
	for i := range s.flows {
		f := &s.flows[i]
		if f.Bytes == 0 || f.StartNs < s.cfg.WarmupNs {
			continue
		}
		b := slices.IndexFunc(fctBuckets, func(k FCTBucket) bool { return k.MaxBytes == 0 || f.Bytes <= k.MaxBytes })
		if f.finished < 0 {
			r.Buckets[b].Unfinished++
			r.All.Unfinished++
			continue
		}
		x := float64(f.finished-f.StartNs*1000) / float64(s.cfg.idealFCTPs(f.Bytes))
		slow[b] = append(slow[b], x)
		slow[len(fctBuckets)] = append(slow[len(fctBuckets)], x)
	}
	fill := func(k *FCTBucket, x []float64) {
		k.Flows = len(x)
		if len(x) == 0 {
			return
		}
		slices.Sort(x)
		var sum float64
		for _, v := range x {
			sum += v
		}
		k.MeanSlowdown = sum / float64(len(x))
		k.P99Slowdown = x[int(math.Ceil(0.99*float64(len(x))))-1]
	}
	for b := range r.Buckets {
		fill(&r.Buckets[b], slow[b])
	}
	fill(&r.All, slow[len(fctBuckets)])
	return r
}
