package compiler

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"

	"github.com/nicc-dev/nicc/nicsdk"
)

// verifyIn is what the verify stage reads: the golden model, the three builds, and what the
// options ask of it.
type verifyIn struct {
	ctx     context.Context // nil: never cancelled
	m       *model.Model
	pol     quantize.Policy
	handler artifact.Handler
	params  nicsdk.Params
	layout  nicsdk.Layout
	rows    [][]float64 // the Ranges rows
	// elf is the firmware; hostBin and ubsan the host driver's strict and sanitized builds.
	elf, hostBin, ubsan string
	vectors             int // the least number of calls compared
	seed                uint64
	core, hostCC        string
	progress            func(done, total int)
}

// verified is the verify stage's artifact: its report, the calls Budget measures, and the
// fidelity it accumulated.
type verified struct {
	report artifact.VerifyReport
	// measure and measurePolicy are the calls that ran longest, and a sample of the rest,
	// for Budget.
	measure, measurePolicy []budget.Vector
	// states and decisions accumulate fidelity: the sampled float states (and rows) through
	// the model, and the RL-CC handler's decisions.
	states, decisions *fidAcc
}

// verifyBatch is the most calls one run of a host driver takes; verify holds one batch of
// vectors in memory at a time. A variable for the tests.
var verifyBatch = 1 << 16

// Compared implementations.
const (
	implHost  = "host C"
	implUBSan = "host C with UBSan"
	implFwsim = "fwsim (RISC-V ELF)"
)

// policyVec is one call of nicc_policy.
type policyVec struct {
	kind artifact.VecKind
	x    []int32
	// state is a stateful policy's words before the call (nil for a stateless one).
	state []uint32
	fl    []float64 // the float state x quantizes, or nil when x was drawn raw
	node  string    // VecThreshold: the split
}

// event is one call of nicc_on_event within a sequence.
type event struct {
	ev     nicsdk.Event
	before nicsdk.FlowCtx
	rate   uint32 // golden
	after  nicsdk.FlowCtx
}

type sequence struct {
	start  nicsdk.FlowCtx
	how    string
	events []event
}

// verifyStage runs the same vectors through the golden model, both host builds and fwsim,
// batch by batch, and fails when any differ or the UBSan build reports anything.
func (c *compilation) verifyStage() error {
	var err error
	c.verify, err = verify(verifyIn{ctx: c.ctx, m: c.Float, pol: c.Policy, handler: c.Handler, params: c.Params, layout: c.Layout(),
		rows: c.Rows, elf: c.elf, hostBin: c.hostBin, ubsan: c.ubsan, vectors: c.opt.Vectors, seed: c.opt.Seed,
		core: c.opt.Core, hostCC: c.opt.HostCC, progress: func(done, total int) { c.progress("verify", done, total) }})
	return err
}

// verify is the verify stage: in's vectors through the golden model, both host builds and
// fwsim. What it verified comes back with a failed check too, for the report.
func verify(c verifyIn) (*verified, error) {
	rng := rand.New(rand.NewPCG(c.seed, 0x6e696363))
	out := &verified{report: artifact.VerifyReport{Kinds: map[string]int{}}, states: newFidAcc(c.pol, c.m), decisions: newFidAcc(c.pol, c.m)}
	vr := &out.report
	ir, _ := c.pol.(*quantize.TreeIR) // nil for a network

	n := c.vectors
	nPolicy := n
	if c.handler == artifact.HandlerRLCC {
		nPolicy = n / 4
	}
	fixed, nFixed := c.newFixed(rng, ir), c.fixedCount(ir)
	// Sampled states however many split vectors there are: a quarter of nPolicy at least.
	totalPolicy := max(nPolicy, nFixed+nPolicy/4)
	totalEvents := 0
	if c.handler == artifact.HandlerRLCC {
		// At least three quarters of the vectors are events.
		totalEvents = max(n-totalPolicy, 3*n/4, 1)
	}
	v, err := c.newVerifier(out, totalPolicy+totalEvents)
	if err != nil {
		return out, err
	}
	fill := c.newFiller(rng, ir)
	states := c.newStates(rng)
	for start := 0; start < totalPolicy; start += verifyBatch {
		pvs := make([]policyVec, 0, min(verifyBatch, totalPolicy-start))
		for i := start; i < min(start+verifyBatch, totalPolicy); i++ {
			p, ok := fixed.next()
			if !ok {
				p = fill.next()
			}
			p.state = states.next(p.x)
			pvs = append(pvs, p)
		}
		if err := v.batch(pvs, nil); err != nil {
			return out, err
		}
	}
	if totalEvents > 0 {
		g := c.newSeqGen(out, rng, ir)
		for done := 0; done < totalEvents; {
			seqs := g.next(min(verifyBatch, totalEvents-done))
			for _, s := range seqs {
				done += len(s.events)
			}
			if err := v.batch(nil, seqs); err != nil {
				return out, err
			}
		}
	}
	c.progress(v.total, v.total)
	vr.UBSan = "clean"
	if vr.Mismatches > 0 {
		return out, &budget.CheckError{Err: &artifact.MismatchError{Differ: vr.Mismatches, Vectors: vr.Vectors, First: v.first}}
	}
	golden := "golden (Go: quantize." + c.pol.Golden()
	switch {
	case c.handler == artifact.HandlerRLCC && c.pol.StateWords() > 0:
		golden += " inside nicsdk.OnEventEx"
	case c.handler == artifact.HandlerRLCC:
		golden += " inside nicsdk.OnEvent"
	}
	vr.Compared = []string{golden + ")", implHost + " (" + c.hostCC + " -O2)", implUBSan, implFwsim}
	out.measurePolicy = pickMeasured(v.candPolicy)
	out.measure = out.measurePolicy
	if c.handler == artifact.HandlerRLCC {
		out.measure = pickMeasured(v.cand)
	} else {
		vr.MaxCycles = vr.MaxPolicyCycles
	}
	return out, nil
}

// verifier runs verify's batches on one emulator, whose memory persists across calls.
type verifier struct {
	in             *verifyIn
	out            *verified
	vr             *artifact.VerifyReport
	fw             *abi.Firmware
	done, total    int // calls, for progress
	nPolicy, nSeqs int // policy vectors and sequences so far, for messages
	first          *artifact.Mismatch
	// cand and candPolicy are the calls Budget may measure: the longest of each batch and a
	// sample of the rest.
	cand, candPolicy []measured
}

func (c *verifyIn) newVerifier(out *verified, total int) (*verifier, error) {
	fw, err := abi.Load(c.elf, c.core, abi.Shape{Inputs: max(1, len(c.pol.InputFormats())), StateWords: c.pol.StateWords(),
		Handler: c.handler == artifact.HandlerRLCC})
	if err != nil {
		return nil, err
	}
	v := &verifier{in: c, out: out, vr: &out.report, fw: fw, total: total}
	c.progress(0, total)
	return v, nil
}

// batch verifies policy vectors or event sequences: the golden results, one run of each
// host build over all of them, and fwsim.
func (v *verifier) batch(pvs []policyVec, seqs []sequence) error {
	c, vr := v.in, v.vr
	if c.ctx != nil && c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	nEvents := 0
	for _, s := range seqs {
		nEvents += len(s.events)
	}
	vr.Batches++
	vr.Vectors += len(pvs) + nEvents
	for _, p := range pvs {
		vr.Kinds[p.kind.String()]++
	}
	if nEvents > 0 {
		vr.Kinds[artifact.VecEvent.String()] += nEvents
		vr.Sequences += len(seqs)
		vr.Events += nEvents
	}
	golden := make([]int32, len(pvs))
	goldenSt := make([][]uint32, len(pvs))
	for i, p := range pvs {
		goldenSt[i] = slices.Clone(p.state)
		golden[i] = c.pol.Call(p.x, goldenSt[i])
	}

	// The driver's input: the policy vectors, or the sequences.
	var in bytes.Buffer
	for _, p := range pvs {
		in.WriteByte('P')
		for _, x := range p.x {
			in.WriteByte(' ')
			in.WriteString(strconv.FormatInt(int64(x), 10))
		}
		writeWords(&in, p.state)
		in.WriteByte('\n')
	}
	for _, s := range seqs {
		in.WriteByte('C')
		writeWords(&in, s.start[:])
		in.WriteByte('\n')
		for _, e := range s.events {
			fmt.Fprintf(&in, "E %d %d %d %d %d\n", e.ev.Type, e.ev.RTTNs, e.ev.TimestampNs, e.ev.FlowID, e.ev.TxBytes)
		}
	}
	type hostOut struct {
		ys    []int32
		sts   [][]uint32
		rates []uint32
		ctxs  []nicsdk.FlowCtx
		err   error
	}
	var host, ubsan hostOut
	var fw fwOut
	var fwErr error
	var wg sync.WaitGroup
	run := func(bin string, o *hostOut) {
		o.ys, o.sts, o.rates, o.ctxs, o.err = runDriver(bin, in.Bytes(), len(pvs), c.pol.StateWords(), nEvents)
	}
	wg.Go(func() { run(c.hostBin, &host) })
	wg.Go(func() { run(c.ubsan, &ubsan) })
	wg.Go(func() { fw, fwErr = v.fwsim(pvs, seqs) })
	wg.Wait()
	if host.err != nil {
		return &budget.CheckError{Err: fmt.Errorf("verify: host build: %w", host.err)}
	}
	if ubsan.err != nil {
		vr.UBSan = "not clean"
		return &budget.CheckError{Err: &artifact.UBSanError{Err: ubsan.err}}
	}
	if fwErr != nil {
		return &budget.CheckError{Err: fmt.Errorf("verify: fwsim: %w", fwErr)}
	}

	for i, p := range pvs {
		g, h, u, f := golden[i], host.ys[i], ubsan.ys[i], fw.ys[i]
		if g == h && g == u && g == f && slices.Equal(goldenSt[i], host.sts[i]) && slices.Equal(goldenSt[i], ubsan.sts[i]) && slices.Equal(goldenSt[i], fw.sts[i]) {
			continue
		}
		vr.Mismatches++
		if v.first == nil {
			v.first = &artifact.Mismatch{Entry: artifact.EntryPolicy, Vector: v.nPolicy + i + 1, Kind: p.kind.String(), Split: strings.TrimPrefix(p.node, ", "),
				X: p.x, StateBefore: p.state,
				Golden: artifact.CallOutput{Return: int64(g), StateAfter: goldenSt[i]}, Host: artifact.CallOutput{Return: int64(h), StateAfter: host.sts[i]},
				UBSan: artifact.CallOutput{Return: int64(u), StateAfter: ubsan.sts[i]}, Fwsim: artifact.CallOutput{Return: int64(f), StateAfter: fw.sts[i]}}
		}
	}
	k := 0
	for si, s := range seqs {
		for ei, e := range s.events {
			h := eventResult{host.rates[k], host.ctxs[k]}
			u := eventResult{ubsan.rates[k], ubsan.ctxs[k]}
			f := eventResult{fw.rates[k], fw.ctxs[k]}
			g := eventResult{e.rate, e.after}
			k++
			if g == h && g == u && g == f {
				continue
			}
			vr.Mismatches++
			if v.first == nil {
				v.first = &artifact.Mismatch{Entry: artifact.EntryHandler, Sequence: v.nSeqs + si + 1, Event: ei + 1, Kind: s.how + " start",
					In: artifact.NewEventArg(e.ev), StateBefore: e.before[:],
					Golden: g.output(), Host: h.output(), UBSan: u.output(), Fwsim: f.output()}
			}
		}
	}

	// Fidelity over the float states, and the calls Budget may measure.
	for i, p := range pvs {
		if p.fl != nil && c.pol.StateWords() == 0 { // a recurrent model's error depends on its state: see quantize's fidelity
			v.out.states.add(p.fl, p.x, quantize.Y(c.pol, p.x, golden[i]))
		}
	}
	for _, i := range sampleIdx(len(pvs), fw.longestPolicy, measureKeep) {
		args := []budget.Arg{{Bytes: target.Int32Bytes(pvs[i].x)}}
		if pvs[i].state != nil {
			args = append(args, budget.Arg{Bytes: target.WordBytes(pvs[i].state)})
		}
		v.candPolicy = append(v.candPolicy, measured{fw.policyCycles[i], budget.Vector{Line: v.nPolicy + i + 1, Args: args}})
	}
	if nEvents > 0 {
		flat := make([]*event, 0, nEvents)
		for si := range seqs {
			for ei := range seqs[si].events {
				flat = append(flat, &seqs[si].events[ei])
			}
		}
		for _, i := range sampleIdx(len(flat), fw.longestEvent, measureKeep) {
			e := flat[i]
			v.cand = append(v.cand, measured{fw.eventCycles[i],
				budget.Vector{Line: vr.Events - nEvents + i + 1, Args: []budget.Arg{{Bytes: e.ev.Bytes()}, {Bytes: e.before.Bytes()}}}})
		}
	}
	v.candPolicy, v.cand = thinMeasured(v.candPolicy), thinMeasured(v.cand)
	v.nPolicy += len(pvs)
	v.nSeqs += len(seqs)
	return nil
}
