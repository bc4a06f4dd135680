package verify

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

// Input is what the verify stage reads: the golden model, the three builds, and what the
// options ask of it.
type Input struct {
	Ctx     context.Context // nil: never cancelled
	Model   *model.Model
	Policy  quantize.Policy
	Handler artifact.Handler
	Params  nicsdk.Params
	Layout  nicsdk.Layout
	Rows    [][]float64 // the Ranges rows
	// elf is the firmware; hostBin and ubsan the host driver's strict and sanitized builds.
	ELF, HostBin, UBSan string
	Vectors             int // the least number of calls compared
	Seed                uint64
	Core, HostCC        string
	Progress            func(done, total int)
}

// Result is the verify stage's artifact: its report, the calls Budget measures, and the
// fidelity it accumulated.
type Result struct {
	Report artifact.VerifyReport
	// measure and measurePolicy are the calls that ran longest, and a sample of the rest,
	// for Budget.
	Measure, MeasurePolicy []budget.Vector
	// states and decisions accumulate fidelity: the sampled float states (and rows) through
	// the model, and the RL-CC handler's decisions.
	States, Decisions *FidAcc
}

// Batch is the most calls one run of a host driver takes; verify holds one batch of
// vectors in memory at a time. A variable for the tests.
var Batch = 1 << 16

// Compared implementations.
const (
	ImplHost  = "host C"
	ImplUBSan = "host C with UBSan"
	ImplFwsim = "fwsim (RISC-V ELF)"
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

// Run is the verify stage: in's vectors through the golden model, both host builds and
// fwsim. What it verified comes back with a failed check too, for the report.
func Run(c Input) (*Result, error) {
	rng := rand.New(rand.NewPCG(c.Seed, 0x6e696363))
	out := &Result{Report: artifact.VerifyReport{Kinds: map[string]int{}}, States: NewFidAcc(c.Policy, c.Model), Decisions: NewFidAcc(c.Policy, c.Model)}
	vr := &out.Report
	ir, _ := c.Policy.(*quantize.TreeIR) // nil for a network

	n := c.Vectors
	nPolicy := n
	if c.Handler == artifact.HandlerRLCC {
		nPolicy = n / 4
	}
	fixed, nFixed := c.newFixed(rng, ir), c.fixedCount(ir)
	// Sampled states however many split vectors there are: a quarter of nPolicy at least.
	totalPolicy := max(nPolicy, nFixed+nPolicy/4)
	totalEvents := 0
	if c.Handler == artifact.HandlerRLCC {
		// At least three quarters of the vectors are events.
		totalEvents = max(n-totalPolicy, 3*n/4, 1)
	}
	v, err := c.newVerifier(out, totalPolicy+totalEvents)
	if err != nil {
		return out, err
	}
	fill := c.newFiller(rng, ir)
	states := c.newStates(rng)
	for start := 0; start < totalPolicy; start += Batch {
		pvs := make([]policyVec, 0, min(Batch, totalPolicy-start))
		for i := start; i < min(start+Batch, totalPolicy); i++ {
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
			seqs := g.next(min(Batch, totalEvents-done))
			for _, s := range seqs {
				done += len(s.events)
			}
			if err := v.batch(nil, seqs); err != nil {
				return out, err
			}
		}
	}
	c.Progress(v.total, v.total)
	vr.UBSan = "clean"
	if vr.Mismatches > 0 {
		return out, &budget.CheckError{Err: &artifact.MismatchError{Differ: vr.Mismatches, Vectors: vr.Vectors, First: v.first}}
	}
	golden := "golden (Go: quantize." + c.Policy.Golden()
	switch {
	case c.Handler == artifact.HandlerRLCC && c.Policy.StateWords() > 0:
		golden += " inside nicsdk.OnEventEx"
	case c.Handler == artifact.HandlerRLCC:
		golden += " inside nicsdk.OnEvent"
	}
	vr.Compared = []string{golden + ")", ImplHost + " (" + c.HostCC + " -O2)", ImplUBSan, ImplFwsim}
	out.MeasurePolicy = PickMeasured(v.candPolicy)
	out.Measure = out.MeasurePolicy
	if c.Handler == artifact.HandlerRLCC {
		out.Measure = PickMeasured(v.cand)
	} else {
		vr.MaxCycles = vr.MaxPolicyCycles
	}
	return out, nil
}

// verifier runs verify's batches on one emulator, whose memory persists across calls.
type verifier struct {
	in             *Input
	out            *Result
	vr             *artifact.VerifyReport
	fw             *abi.Firmware
	done, total    int // calls, for progress
	nPolicy, nSeqs int // policy vectors and sequences so far, for messages
	first          *artifact.Mismatch
	// cand and candPolicy are the calls Budget may measure: the longest of each batch and a
	// sample of the rest.
	cand, candPolicy []Measured
}

func (c *Input) newVerifier(out *Result, total int) (*verifier, error) {
	fw, err := abi.Load(c.ELF, c.Core, abi.Shape{Inputs: max(1, len(c.Policy.InputFormats())), StateWords: c.Policy.StateWords(),
		Handler: c.Handler == artifact.HandlerRLCC})
	if err != nil {
		return nil, err
	}
	v := &verifier{in: c, out: out, vr: &out.Report, fw: fw, total: total}
	c.Progress(0, total)
	return v, nil
}

// batch verifies policy vectors or event sequences: the golden results, one run of each
// host build over all of them, and fwsim.
func (v *verifier) batch(pvs []policyVec, seqs []sequence) error {
	c, vr := v.in, v.vr
	if c.Ctx != nil && c.Ctx.Err() != nil {
		return c.Ctx.Err()
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
		golden[i] = c.Policy.Call(p.x, goldenSt[i])
	}

	// The driver's input: the policy vectors, or the sequences.
	var in bytes.Buffer
	for _, p := range pvs {
		in.WriteByte('P')
		for _, x := range p.x {
			in.WriteByte(' ')
			in.WriteString(strconv.FormatInt(int64(x), 10))
		}
		WriteWords(&in, p.state)
		in.WriteByte('\n')
	}
	for _, s := range seqs {
		in.WriteByte('C')
		WriteWords(&in, s.start[:])
		in.WriteByte('\n')
		for _, e := range s.events {
			b := append(in.AvailableBuffer(), 'E')
			for _, v := range []uint64{uint64(e.ev.Type), uint64(e.ev.RTTNs), e.ev.TimestampNs, uint64(e.ev.FlowID), uint64(e.ev.TxBytes)} {
				b = strconv.AppendUint(append(b, ' '), v, 10)
			}
			in.Write(append(b, '\n'))
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
		o.ys, o.sts, o.rates, o.ctxs, o.err = runDriver(bin, in.Bytes(), len(pvs), c.Policy.StateWords(), nEvents)
	}
	wg.Go(func() { run(c.HostBin, &host) })
	wg.Go(func() { run(c.UBSan, &ubsan) })
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
		if p.fl != nil && c.Policy.StateWords() == 0 { // a recurrent model's error depends on its state: see quantize's fidelity
			v.out.States.Add(p.fl, p.x, quantize.Y(c.Policy, p.x, golden[i]))
		}
	}
	for _, i := range SampleIdx(len(pvs), fw.longestPolicy, MeasureKeep) {
		args := []budget.Arg{{Bytes: target.Int32Bytes(pvs[i].x)}}
		if pvs[i].state != nil {
			args = append(args, budget.Arg{Bytes: target.WordBytes(pvs[i].state)})
		}
		v.candPolicy = append(v.candPolicy, Measured{fw.policyCycles[i], budget.Vector{Line: v.nPolicy + i + 1, Args: args}})
	}
	if nEvents > 0 {
		flat := make([]*event, 0, nEvents)
		for si := range seqs {
			for ei := range seqs[si].events {
				flat = append(flat, &seqs[si].events[ei])
			}
		}
		for _, i := range SampleIdx(len(flat), fw.longestEvent, MeasureKeep) {
			e := flat[i]
			v.cand = append(v.cand, Measured{fw.eventCycles[i],
				budget.Vector{Line: vr.Events - nEvents + i + 1, Args: []budget.Arg{{Bytes: e.ev.Bytes()}, {Bytes: e.before.Bytes()}}}})
		}
	}
	v.candPolicy, v.cand = ThinMeasured(v.candPolicy), ThinMeasured(v.cand)
	v.nPolicy += len(pvs)
	v.nSeqs += len(seqs)
	return nil
}
