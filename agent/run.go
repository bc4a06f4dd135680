package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/nicc-dev/nicc/ccsim"
	"github.com/nicc-dev/nicc/termtext"
)

// Run is what a served or replayed agent did.
type Run struct {
	Report
	Listen string            `json:"listen,omitempty"`
	Serve  *ccsim.ServeStats `json:"serve,omitempty"`
	// Replayed is a replay's log and how many of its decisions the policy answered as the log
	// did; Differ the first that differ (at most MaxReplayDiffs).
	Replayed string        `json:"replayed,omitempty"`
	Same     int64         `json:"same,omitempty"`
	Differ   []ReplayDiff  `json:"differ,omitempty"`
	Log      string        `json:"log,omitempty"`
	Wall     time.Duration `json:"wall_ns"`
}

// ReplayDiff is a logged decision the policy answered otherwise.
type ReplayDiff struct {
	Seq    int64  `json:"seq"`
	Flow   string `json:"flow"`
	Logged uint32 `json:"logged_q16"`
	Now    uint32 `json:"now_q16"`
}

// MaxReplayDiffs bounds the differences a replay lists.
const MaxReplayDiffs = 10

// Serve answers CCsim on ln with a until ctx ends or opt's bounds stop it, logging each
// decision to log (if not nil).
func Serve(ctx context.Context, a *Agent, ln net.Listener, opt ccsim.ServeOptions, log io.Writer) (*Run, error) {
	start := time.Now()
	run := &Run{Listen: ln.Addr().String()}
	var lw *ccsim.LogWriter
	var logErr error
	if log != nil {
		var err error
		if lw, err = ccsim.NewLogWriter(log); err != nil {
			return nil, err
		}
	}
	opt.Decided = func(r ccsim.Request, d ccsim.Decision) {
		if lw != nil && logErr == nil {
			logErr = lw.Write(r, d)
		}
	}
	st, err := ccsim.Serve(ctx, ln, a.Decide, opt)
	if lw != nil {
		if ferr := lw.Flush(); logErr == nil {
			logErr = ferr
		}
	}
	run.Report, run.Serve, run.Wall = a.Finish(), &st, time.Since(start)
	if err != nil {
		return run, err
	}
	if logErr != nil {
		return run, fmt.Errorf("the decision log: %w", logErr)
	}
	return run, nil
}

// Replay answers a log's requests with a, in order, and compares each answer with the
// logged one.
func Replay(a *Agent, name string, log []ccsim.Entry) (*Run, error) {
	start := time.Now()
	run := &Run{Replayed: name}
	for _, e := range log {
		d, err := a.Decide(e.Request)
		if err != nil {
			return nil, fmt.Errorf("%s: decision %d (%s): %w", name, e.Seq, e.Flow(), err)
		}
		if d.MultiplierQ16 == e.MultiplierQ16 {
			run.Same++
		} else if len(run.Differ) < MaxReplayDiffs {
			run.Differ = append(run.Differ, ReplayDiff{Seq: e.Seq, Flow: e.Flow().String(), Logged: e.MultiplierQ16, Now: d.MultiplierQ16})
		}
	}
	run.Report, run.Wall = a.Finish(), time.Since(start)
	return run, nil
}

// SameAsLog reports whether a replay answered every logged decision as the log did.
func (r *Run) SameAsLog() bool { return r.Replayed != "" && r.Same == r.Decisions }

// WriteText prints the run for a terminal.
func (r *Run) WriteText(w io.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("decides: %s\n", termtext.Printable(r.Decides))
	if r.Params != nil {
		p("rlcc parameters: %s\n", r.Params.String())
	}
	if r.Listen != "" {
		p("served: CCsim's agent protocol on %s\n", r.Listen)
	}
	if r.Replayed != "" {
		p("replayed: %s\n", termtext.Printable(r.Replayed))
	}
	p("decisions: %d over %d flows on %d hosts in %.1f s (%.0f a second)\n", r.Decisions, r.Flows, r.Hosts, r.Wall.Seconds(), float64(r.Decisions)/max(r.Wall.Seconds(), 1e-9))
	if c := r.Cycles; c != nil {
		p("decision cycles: mean %.1f, max %d (%.0f ns, %.0f ns max)\n", c.Mean, c.Max, c.MeanNs, c.MaxNs)
	}
	if r.Serve != nil {
		p("connections: %d (%d empty); stopped: %s\n", r.Serve.Connections, r.Serve.Empty, r.Serve.Stopped)
		p("rate drift: %d requests whose rate is not what the flow's last answer asked for\n", r.RateDrift)
	}
	if r.Log != "" {
		p("log: %s\n", termtext.Printable(r.Log))
	}
	if r.Replayed != "" {
		p("same as logged: %d of %d\n", r.Same, r.Decisions)
		for _, d := range r.Differ {
			p("  decision %d (%s): logged %s (Q16 %d), now %s (Q16 %d)\n", d.Seq, d.Flow, fmtQ16(d.Logged), d.Logged, fmtQ16(d.Now), d.Now)
		}
	}
	return nil
}
