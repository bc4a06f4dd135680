package compiler

import (
	"context"
	"os"
	"path/filepath"

	"github.com/nicc-dev/nicc/artifact"
)

// While fit builds the candidate forms, a CPU left idle (every candidate of the round started,
// one finished) builds the host drivers of the best candidate built so far, the one the build
// stage would build if no other beat it, into the process's build cache. When that candidate
// is chosen, the build stage finds its host builds made, or under way (buildcache.Process waits for
// them), instead of starting them after fit; a speculation that another candidate overtakes is
// cancelled. The builds are the build stage's own (hostBuild over emitSources, in the
// candidate's directory, on paths relative to it), so they are the same bytes. Not ahead of an
// LSTM's first two forms, which its planned table form mostly beats (chooseForm).

// speculator schedules fit's builds: the candidates, one per slot, and the speculation.
type speculator struct {
	ctx   context.Context
	f     *fitter
	slots chan struct{} // one per CPU; a candidate's build or the speculation holds one
	fits  func(*formBuild) artifact.FormCandidate
	built []*formBuild // every candidate built so far
	spec  *speculation // nil until one starts
}

// speculation is the host builds of one candidate, under way or done.
type speculation struct {
	fb     *formBuild
	cancel context.CancelFunc
	done   chan struct{}
}

// stop cancels the speculation and waits for its builds to end.
func (s *speculation) stop() {
	if s != nil {
		s.cancel()
		<-s.done
	}
}

// finished records fb, built; when idle (no candidate waits for a slot) it starts the host
// builds of the best candidate built so far that fits, cancelling those of another. The caller
// serialises the calls.
func (s *speculator) finished(fb *formBuild, idle bool) {
	s.built = append(s.built, fb)
	if !idle {
		return
	}
	var lead *formBuild
	for _, b := range s.built {
		if fc := s.fits(b); fc.Fits && (lead == nil || better(fc, s.fits(lead))) {
			lead = b
		}
	}
	if lead == nil || s.spec != nil && s.spec.fb == lead {
		return
	}
	s.spec.stop()
	ctx, cancel := context.WithCancel(s.ctx)
	s.spec = &speculation{fb: lead, cancel: cancel, done: make(chan struct{})}
	go s.hostBuilds(ctx, s.spec)
}

// hostBuilds builds sp's host drivers, the UBSan one first (the longer), in one slot.
// Whatever fails here the build stage builds again and reports.
func (s *speculator) hostBuilds(ctx context.Context, sp *speculation) {
	defer close(sp.done)
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return
	}
	m := s.f.in.model
	files := emitSources(m, sp.fb.rendered)
	tmp := filepath.Join(sp.fb.dir, "host-tmp")
	for _, d := range []string{tmp, filepath.Join(sp.fb.dir, artifact.HostDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return
		}
	}
	if err := os.WriteFile(filepath.Join(sp.fb.dir, hostDriverFile), files[hostDriverFile], 0o644); err != nil {
		return
	}
	_, file := entryOf(m.Handler)
	hb := hostBuild{ctx: ctx, cc: s.f.in.hostCC, dir: sp.fb.dir, tmp: tmp, source: "./" + file, opt: s.f.plan.Opt, sources: files}
	noCheck := func(string, ...string) error { return nil } // the build stage checks the objects it takes
	for _, ubsan := range []bool{true, false} {
		if ctx.Err() != nil {
			return
		}
		bin := filepath.Join(sp.fb.dir, artifact.HostDir, "driver")
		if ubsan {
			bin += "-ubsan"
		}
		if _, err := hb.build(bin, ubsan, noCheck); err != nil {
			return
		}
	}
}
