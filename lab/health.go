package lab

import (
	"fmt"
	"math"
	"strings"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// HealthLimits are the absolute checks of a closed-loop run (nicc sim, and each side of nicc
// diff --closed-loop): does the policy that decided control congestion at all, whatever any
// other policy does?
type HealthLimits struct {
	// MaxDropGbps is the most data the switch may drop in the window, in Gb/s.
	MaxDropGbps float64 `json:"max_drop_gbps"`
	// MaxEq2Ratio bounds the mean RTT inflation over the NIC paper's Eq. 2 at the run's flows
	// per receiver port N, target·√N + β.
	MaxEq2Ratio float64 `json:"max_eq2_ratio"`
	// MinSU is the least switch utilization, in percent.
	MinSU float64 `json:"min_su_percent"`
}

// DefaultHealth are the defaults of --max-drop-gbps, --max-eq2-ratio and --min-su. Measured on
// many-to-one (16 and 128 flows, seeds 0-2, 30-100 ms): the shipped RL-CC models drop nothing,
// sit at 0.93-1.01 × Eq. 2 and 97.5-100% SU; Swift, not built around Eq. 2 (its flow scaling
// raises its target with the flows), at 1.48 × and 97% at 16 flows, 2.4 × and 98% at 128
// (seed 1, 30 ms). A full buffer is about 20 × Eq. 2, and rlcc_adpg with its inputs in the wrong
// order keeps the link 88-91% busy.
var DefaultHealth = HealthLimits{MaxDropGbps: 0, MaxEq2Ratio: 2, MinSU: 92}

// Health is the verdict of HealthLimits on one run.
type Health struct {
	Healthy  bool    `json:"healthy"`
	DropGbps float64 `json:"dr_gbps"`
	// FlowsPerPort is Eq. 2's N: the run's flows over its receiver ports.
	FlowsPerPort float64      `json:"flows_per_port"`
	RTTInflation float64      `json:"rtt_inflation"`
	Eq2          float64      `json:"eq2"`       // target·√N + β under the RL-CC parameters the run decided with
	Eq2Ratio     float64      `json:"eq2_ratio"` // RTTInflation ÷ Eq2
	SU           float64      `json:"su_percent"`
	Limits       HealthLimits `json:"limits"`
	// Why says what is out of its limit ("" when healthy); MinRateNote, when the flows at the
	// RL-CC min rate alone overfill a receiver port, says so.
	Why         string `json:"why,omitempty"`
	MinRateNote string `json:"min_rate_note,omitempty"`
	// Workload says the run was a workload's, judged on its drops alone.
	Workload bool `json:"workload,omitempty"`
}

// eq2 is the NIC paper's Eq. 2: at the optimum, E[RTT inflation] = target·√N + β.
func eq2(target, beta, n float64) float64 { return target*math.Sqrt(n) + beta }

// judgeHealth checks res against lim under the RL-CC parameters p (Eq. 2's target and β; rlcc
// says whether an RL-CC handler decided, whose min rate bounds how slow a flow can go).
func judgeHealth(res *netsim.Result, p nicsdk.Params, rlccHandler bool, lim HealthLimits) *Health {
	target, beta, _ := rlcc.Real(p)
	n := float64(res.Flows) / float64(max(res.ReceiverPorts, 1))
	h := &Health{DropGbps: res.DropGbps, FlowsPerPort: n, RTTInflation: res.RTTInflation, Eq2: eq2(target, beta, n),
		SU: res.Utilization, Limits: lim}
	h.Eq2Ratio = h.RTTInflation / h.Eq2
	var why []string
	if h.DropGbps > lim.MaxDropGbps {
		why = append(why, fmt.Sprintf("drops %s Gb/s > %s", termtext.Num3(h.DropGbps), termtext.Num3(lim.MaxDropGbps)))
	}
	if res.FCT != nil {
		// A workload's SU is its load, and Eq. 2 is for N flows that never end: drops alone.
		h.Workload, h.Healthy, h.Why = true, len(why) == 0, strings.Join(why, " / ")
		return h
	}
	if !(h.Eq2Ratio <= lim.MaxEq2Ratio) {
		why = append(why, fmt.Sprintf("queue: RTT inflation %s vs Eq. 2's %s, %s× > %s×", termtext.Num3(h.RTTInflation), termtext.Num3(h.Eq2), termtext.Num3(h.Eq2Ratio), termtext.Num3(lim.MaxEq2Ratio)))
	}
	if h.SU < lim.MinSU {
		why = append(why, fmt.Sprintf("SU %.2f%% < %s%%", h.SU, termtext.Num3(lim.MinSU)))
	}
	h.Healthy, h.Why = len(why) == 0, strings.Join(why, " / ")
	if minRate := float64(p.MinRate) / nicsdk.LineRate; rlccHandler && n*minRate > 1 {
		h.MinRateNote = fmt.Sprintf("%s flows at the min rate %s send %s × a port's line rate: no RL-CC policy avoids drops here (--rlcc-min-rate)",
			termtext.Num3(n), termtext.Num3(minRate), termtext.Num3(n*minRate))
	}
	return h
}

// text is the health line of a report: "ok: ..." or "FAIL: ...".
func (h *Health) text() string {
	if h.Workload && h.Healthy {
		return fmt.Sprintf("ok: drops %s Gb/s (limit %s); a workload is judged on its drops alone (its SU is its load; Eq. 2 is for flows that never end)",
			termtext.Num3(h.DropGbps), termtext.Num3(h.Limits.MaxDropGbps))
	}
	if h.Healthy {
		return fmt.Sprintf("ok: drops %s Gb/s (limit %s), RTT inflation %s = %s× Eq. 2's %s (limit %s×), SU %.2f%% (floor %s%%)",
			termtext.Num3(h.DropGbps), termtext.Num3(h.Limits.MaxDropGbps), termtext.Num3(h.RTTInflation), termtext.Num3(h.Eq2Ratio), termtext.Num3(h.Eq2), termtext.Num3(h.Limits.MaxEq2Ratio), h.SU, termtext.Num3(h.Limits.MinSU))
	}
	return "FAIL: " + h.failText()
}

// failText is what is wrong, with the min-rate note when there is one.
func (h *Health) failText() string {
	if h.MinRateNote == "" {
		return h.Why
	}
	return h.Why + "; " + h.MinRateNote
}

// checkHealthLimits refuses limits a run could never meet or never fail.
func checkHealthLimits(lim HealthLimits) error {
	switch {
	case !(lim.MaxDropGbps >= 0 && lim.MaxDropGbps < math.Inf(1)):
		return fmt.Errorf("--max-drop-gbps %v: want 0 or more Gb/s", lim.MaxDropGbps)
	case !(lim.MaxEq2Ratio > 0 && lim.MaxEq2Ratio < math.Inf(1)):
		return fmt.Errorf("--max-eq2-ratio %v: want a positive finite ratio", lim.MaxEq2Ratio)
	case !(lim.MinSU >= 0 && lim.MinSU <= 100):
		return fmt.Errorf("--min-su %v: want 0 to 100 (percent)", lim.MinSU)
	}
	return nil
}

// HealthErr is a *CheckError when the run was unhealthy (nicc sim --require-healthy).
func (r *SimReport) HealthErr() error {
	if r.Health.Healthy {
		return nil
	}
	return &budget.CheckError{Err: fmt.Errorf("unhealthy: %s does not control congestion here: %s", r.Scenario, r.Health.failText())}
}

// HealthErr is a *CheckError naming the unhealthy runs of the matrix (nicc sim --matrix
// --require-healthy).
func (r *SimMatrixReport) HealthErr() error {
	var bad []string
	for _, run := range r.Runs {
		if !run.Result.Health.Healthy {
			bad = append(bad, fmt.Sprintf("run %d (%s %d, seed %d, %s)", run.Index, run.Scenario, run.Flows, run.Seed, run.Policy))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &budget.CheckError{Err: fmt.Errorf("unhealthy: %d of %d runs do not control congestion: %s", len(bad), len(r.Runs), strings.Join(bad, ", "))}
}
