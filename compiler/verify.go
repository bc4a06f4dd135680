package compiler

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// VecKind is where a verify vector came from.
type VecKind int

const (
	// VecThreshold: a split's integer threshold T, at T-1, T, T+1 and T+2, on a path that
	// reaches the split.
	VecThreshold VecKind = iota
	// VecExtreme: every input at its range's ends, and each input at one end.
	VecExtreme
	// VecRow: a sample row (--ranges), quantized.
	VecRow
	// VecSampled: a float state drawn uniformly from the input ranges, quantized.
	VecSampled
	// VecNearThreshold: each input near a random threshold of its own, or uniform.
	VecNearThreshold
	// VecEvent: one event of an RL-CC event sequence.
	VecEvent
	vecKindEnd
)

var vecKindNames = [...]string{
	VecThreshold: "threshold±1", VecExtreme: "extreme", VecRow: "row", VecSampled: "sampled",
	VecNearThreshold: "near-threshold", VecEvent: "event",
}

func (k VecKind) String() string {
	if k >= 0 && k < vecKindEnd {
		return vecKindNames[k]
	}
	return fmt.Sprintf("veckind(%d)", int(k))
}

// VerifyReport says what verify compared.
type VerifyReport struct {
	// Vectors is the number of calls compared: policy vectors plus events.
	Vectors int `json:"vectors"`
	// Kinds counts them by VecKind.
	Kinds map[string]int `json:"kinds"`
	// Sequences and Events: RL-CC event sequences, each from its own starting flow context,
	// the context persisting across the sequence's calls (RTTEvents of them RTT events).
	Sequences int `json:"sequences,omitempty"`
	Events    int `json:"events,omitempty"`
	RTTEvents int `json:"rtt_events,omitempty"`
	// Batches is the number of runs of each host build (at most 65536 calls each).
	Batches int `json:"batches"`
	// Compared names the implementations that agreed on every vector.
	Compared   []string `json:"compared"`
	Mismatches int      `json:"mismatches"`
	UBSan      string   `json:"ubsan"`
	// MaxCycles is the longest fwsim call of the entry; MaxPolicyCycles of the policy.
	MaxCycles       uint64 `json:"max_cycles"`
	MaxPolicyCycles uint64 `json:"max_policy_cycles"`

	// measure and measurePolicy are the calls that ran longest, and a sample of the rest,
	// for Budget.
	measure, measurePolicy []Vector

	// states and decisions accumulate fidelity: the sampled float states (and rows) through
	// the model, and the RL-CC handler's decisions.
	states, decisions *fidAcc
}

// verifyBatch is the most calls one run of a host driver takes; verify holds one batch of
// vectors in memory at a time. A variable for the tests.
var verifyBatch = 1 << 16

// Compared implementations.
const (
	implGolden = "golden (Go: quantize.TreeIR.Eval"
	implHost   = "host C"
	implUBSan  = "host C with UBSan"
	implFwsim  = "fwsim (RISC-V ELF)"
)

// policyVec is one call of nicc_policy.
type policyVec struct {
	kind VecKind
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
	rng := rand.New(rand.NewPCG(c.opt.Seed, 0x6e696363))
	vr := &VerifyReport{Kinds: map[string]int{}, states: newFidAcc(c), decisions: newFidAcc(c)}
	c.verify = vr
	splits := splitPaths(c.ir)

	n := c.opt.Vectors
	nPolicy := n
	if c.handler == HandlerRLCC {
		nPolicy = n / 4
	}
	fixed := c.fixedVectors(rng, splits)
	// Sampled states however many split vectors there are: a quarter of nPolicy at least.
	totalPolicy := max(nPolicy, len(fixed)+nPolicy/4)
	totalEvents := 0
	if c.handler == HandlerRLCC {
		// At least three quarters of the vectors are events.
		totalEvents = max(n-totalPolicy, 3*n/4, 1)
	}
	v, err := c.newVerifier(totalPolicy + totalEvents)
	if err != nil {
		return err
	}
	fill := c.newFiller(rng, splits)
	states := c.newStates(rng)
	for start := 0; start < totalPolicy; start += verifyBatch {
		pvs := make([]policyVec, 0, min(verifyBatch, totalPolicy-start))
		for i := start; i < min(start+verifyBatch, totalPolicy); i++ {
			var p policyVec
			if i < len(fixed) {
				p = fixed[i]
			} else {
				p = fill.next()
			}
			p.state = states.next(p.x)
			pvs = append(pvs, p)
		}
		if err := v.batch(pvs, nil); err != nil {
			return err
		}
	}
	if totalEvents > 0 {
		g := c.newSeqGen(rng, splits)
		for done := 0; done < totalEvents; {
			seqs := g.next(min(verifyBatch, totalEvents-done))
			for _, s := range seqs {
				done += len(s.events)
			}
			if err := v.batch(nil, seqs); err != nil {
				return err
			}
		}
	}
	c.progress("verify", v.total, v.total)
	vr.UBSan = "clean"
	if vr.Mismatches > 0 {
		return &CheckError{&MismatchError{Differ: vr.Mismatches, Vectors: vr.Vectors, First: v.first}}
	}
	vr.Compared = []string{implGolden + ")", implHost + " (" + c.opt.HostCC + " -O2)", implUBSan, implFwsim}
	if c.handler == HandlerRLCC {
		vr.Compared[0] = implGolden + " inside nicsdk.OnEvent)"
	}
	switch {
	case c.mlp != nil:
		vr.Compared[0] = strings.Replace(vr.Compared[0], "TreeIR.Eval", "MLPIR.Eval", 1)
	case c.lstm != nil:
		vr.Compared[0] = strings.Replace(vr.Compared[0], "TreeIR.Eval", "LSTMIR.Step", 1)
		vr.Compared[0] = strings.Replace(vr.Compared[0], "OnEvent", "OnEventEx", 1)
	}
	vr.measurePolicy = pickMeasured(v.candPolicy)
	vr.measure = vr.measurePolicy
	if c.handler == HandlerRLCC {
		vr.measure = pickMeasured(v.cand)
	} else {
		vr.MaxCycles = vr.MaxPolicyCycles
	}
	return nil
}

// verifier runs verify's batches on one emulator, whose memory persists across calls.
type verifier struct {
	c                      *compilation
	vr                     *VerifyReport
	m                      *fwsim.Machine
	xAddr, evAddr, ctxAddr uint64
	stAddr                 uint64 // a stateful policy's words
	done, total            int    // calls, for progress
	nPolicy, nSeqs         int    // policy vectors and sequences so far, for messages
	first                  *Mismatch
	// cand and candPolicy are the calls Budget may measure: the longest of each batch and a
	// sample of the rest.
	cand, candPolicy []measured
}

func (c *compilation) newVerifier(total int) (*verifier, error) {
	im, err := fwsim.ReadELF(c.elf)
	if err != nil {
		return nil, err
	}
	p, err := fwsim.LookupProfile(c.opt.Core)
	if err != nil {
		return nil, err
	}
	m, err := fwsim.NewMachine(im, p)
	if err != nil {
		return nil, err
	}
	v := &verifier{c: c, vr: c.verify, m: m, total: total}
	if v.xAddr, err = m.Alloc(uint64(4*max(1, len(c.inputs))), 16); err != nil {
		return nil, err
	}
	if w := c.stateWords(); w > 0 {
		if v.stAddr, err = m.Alloc(uint64(4*w), 16); err != nil {
			return nil, err
		}
	}
	if c.handler == HandlerRLCC {
		if v.evAddr, err = m.Alloc(nicsdk.EventBytes, 8); err != nil {
			return nil, err
		}
		if v.ctxAddr, err = m.Alloc(nicsdk.CtxBytes, 16); err != nil {
			return nil, err
		}
	}
	c.progress("verify", 0, total)
	return v, nil
}

// batch verifies policy vectors or event sequences: the golden results, one run of each
// host build over all of them, and fwsim.
func (v *verifier) batch(pvs []policyVec, seqs []sequence) error {
	c, vr := v.c, v.vr
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
		vr.Kinds[VecEvent.String()] += nEvents
		vr.Sequences += len(seqs)
		vr.Events += nEvents
	}
	golden := make([]int32, len(pvs))
	goldenSt := make([][]uint32, len(pvs))
	for i, p := range pvs {
		goldenSt[i] = slices.Clone(p.state)
		golden[i] = c.goldenStep(p.x, goldenSt[i])
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
		o.ys, o.sts, o.rates, o.ctxs, o.err = runDriver(bin, in.Bytes(), len(pvs), c.stateWords(), nEvents)
	}
	wg.Go(func() { run(c.hostBin, &host) })
	wg.Go(func() { run(c.ubsan, &ubsan) })
	wg.Go(func() { fw, fwErr = v.fwsim(pvs, seqs) })
	wg.Wait()
	if host.err != nil {
		return &CheckError{fmt.Errorf("verify: host build: %w", host.err)}
	}
	if ubsan.err != nil {
		vr.UBSan = "not clean"
		return &CheckError{&UBSanError{ubsan.err}}
	}
	if fwErr != nil {
		return &CheckError{fmt.Errorf("verify: fwsim: %w", fwErr)}
	}

	for i, p := range pvs {
		g, h, u, f := golden[i], host.ys[i], ubsan.ys[i], fw.ys[i]
		if g == h && g == u && g == f && slices.Equal(goldenSt[i], host.sts[i]) && slices.Equal(goldenSt[i], ubsan.sts[i]) && slices.Equal(goldenSt[i], fw.sts[i]) {
			continue
		}
		vr.Mismatches++
		if v.first == nil {
			v.first = &Mismatch{Entry: EntryPolicy, Vector: v.nPolicy + i + 1, Kind: p.kind.String(), Split: strings.TrimPrefix(p.node, ", "),
				X: p.x, StateBefore: p.state,
				Golden: CallOutput{int64(g), goldenSt[i]}, Host: CallOutput{int64(h), host.sts[i]},
				UBSan: CallOutput{int64(u), ubsan.sts[i]}, Fwsim: CallOutput{int64(f), fw.sts[i]}}
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
				v.first = &Mismatch{Entry: EntryHandler, Sequence: v.nSeqs + si + 1, Event: ei + 1, Kind: s.how + " start",
					In: eventInfo(e.ev), StateBefore: e.before[:],
					Golden: g.output(), Host: h.output(), UBSan: u.output(), Fwsim: f.output()}
			}
		}
	}

	// Fidelity over the float states, and the calls Budget may measure.
	for i, p := range pvs {
		if p.fl != nil && c.lstm == nil { // a recurrent model's error depends on its state: see quantize's fidelity
			vr.states.add(p.fl, p.x, golden[i])
		}
	}
	for _, i := range sampleIdx(len(pvs), fw.longestPolicy, measureKeep) {
		args := []Arg{{Bytes: int32Bytes(pvs[i].x)}}
		if pvs[i].state != nil {
			args = append(args, Arg{Bytes: wordBytes(pvs[i].state)})
		}
		v.candPolicy = append(v.candPolicy, measured{fw.policyCycles[i], Vector{Line: v.nPolicy + i + 1, Args: args}})
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
				Vector{Line: vr.Events - nEvents + i + 1, Args: []Arg{{Bytes: e.ev.Bytes()}, {Bytes: e.before.Bytes()}}}})
		}
	}
	v.candPolicy, v.cand = thinMeasured(v.candPolicy), thinMeasured(v.cand)
	v.nPolicy += len(pvs)
	v.nSeqs += len(seqs)
	return nil
}

// eventResult is what one handler call produced.
type eventResult struct {
	rate uint32
	ctx  nicsdk.FlowCtx
}

func (r eventResult) output() CallOutput { return CallOutput{int64(r.rate), r.ctx[:]} }

func writeWords(b *bytes.Buffer, ws []uint32) {
	for _, w := range ws {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(uint64(w), 10))
	}
}

func wordBytes(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func int32Bytes(x []int32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// sampleIdx is the indices in longest, then every stride-th index, up to limit in all.
func sampleIdx(n int, longest []int, limit int) []int {
	seen := map[int]bool{}
	var out []int
	for _, i := range longest {
		if !seen[i] && len(out) < limit {
			seen[i] = true
			out = append(out, i)
		}
	}
	stride := max(1, n/max(1, limit-len(out)))
	for i := 0; i < n && len(out) < limit; i += stride {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// runDriver runs a host build once over a batch and parses its output: one y (and
// stateWords words of new state) per policy vector, then a rate and a context per event. Any
// output on stderr (a UBSan report) or a non-zero exit is an error.
func runDriver(bin string, in []byte, nPolicy, stateWords, nEvents int) ([]int32, [][]uint32, []uint32, []nicsdk.FlowCtx, error) {
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if msg := strings.TrimSpace(errOut.String()); err != nil || msg != "" {
		if msg == "" {
			msg = "no message"
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] + " ..."
		}
		return nil, nil, nil, nil, fmt.Errorf("%s: %v: %s", bin, err, msg)
	}
	ys := make([]int32, 0, nPolicy)
	var sts [][]uint32
	rates := make([]uint32, 0, nEvents)
	ctxs := make([]nicsdk.FlowCtx, 0, nEvents)
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if line <= nPolicy {
			if len(f) != 1+stateWords {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %q, want %d values", bin, line, sc.Text(), 1+stateWords)
			}
			v, err := strconv.ParseInt(f[0], 10, 32)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %v", bin, line, err)
			}
			ys = append(ys, int32(v))
			var st []uint32
			for _, w := range f[1:] {
				u, err := strconv.ParseUint(w, 10, 32)
				if err != nil {
					return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %v", bin, line, err)
				}
				st = append(st, uint32(u))
			}
			sts = append(sts, st)
			continue
		}
		if len(f) != 1+nicsdk.CtxWords {
			return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %q, want a rate and %d context words", bin, line, sc.Text(), nicsdk.CtxWords)
		}
		var w [1 + nicsdk.CtxWords]uint32
		for i, s := range f {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %v", bin, line, err)
			}
			w[i] = uint32(v)
		}
		rates = append(rates, w[0])
		ctxs = append(ctxs, nicsdk.FlowCtx(w[1:]))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, nil, err
	}
	if len(ys) != nPolicy || len(rates) != nEvents {
		return nil, nil, nil, nil, fmt.Errorf("%s: %d output lines, want %d", bin, line, nPolicy+nEvents)
	}
	return ys, sts, rates, ctxs, nil
}

type fwOut struct {
	ys                          []int32
	sts                         [][]uint32
	rates                       []uint32
	ctxs                        []nicsdk.FlowCtx
	policyCycles, eventCycles   []uint64
	longestPolicy, longestEvent []int // indices of the longest calls
}

// fwsim runs a batch on the firmware in the emulator: the policy vectors through
// nicc_policy, or each sequence through nicc_on_event with its flow context kept in
// emulator memory across the sequence's calls, as on the engine.
func (v *verifier) fwsim(pvs []policyVec, seqs []sequence) (fwOut, error) {
	var o fwOut
	m, vr := v.m, v.vr
	tick := func() {
		v.done++
		if v.done%4096 == 0 {
			v.c.progress("verify", v.done, v.total)
		}
	}
	for i, p := range pvs {
		if err := m.WriteBytes(v.xAddr, int32Bytes(p.x)); err != nil {
			return o, err
		}
		var r fwsim.Result
		var err error
		if p.state != nil {
			if err := m.WriteBytes(v.stAddr, wordBytes(p.state)); err != nil {
				return o, err
			}
			r, err = m.Call(EntryPolicy, v.xAddr, v.stAddr)
		} else {
			r, err = m.Call(EntryPolicy, v.xAddr)
		}
		if err != nil {
			return o, fmt.Errorf("%s faulted on vector %d (%s), x = %v, state %v: %w", EntryPolicy, v.nPolicy+i+1, p.kind, p.x, p.state, err)
		}
		var st []uint32
		if p.state != nil {
			b := make([]byte, 4*len(p.state))
			if err := m.ReadBytes(v.stAddr, b); err != nil {
				return o, err
			}
			for k := range p.state {
				st = append(st, binary.LittleEndian.Uint32(b[4*k:]))
			}
		}
		o.sts = append(o.sts, st)
		o.ys = append(o.ys, int32(uint32(r.A0)))
		o.policyCycles = append(o.policyCycles, r.Cycles)
		vr.MaxPolicyCycles = max(vr.MaxPolicyCycles, r.Cycles)
		tick()
	}
	o.longestPolicy = longest(o.policyCycles, 64)
	buf := make([]byte, nicsdk.CtxBytes)
	for si, s := range seqs {
		if err := m.WriteBytes(v.ctxAddr, s.start.Bytes()); err != nil {
			return o, err
		}
		for ei, e := range s.events {
			if err := m.WriteBytes(v.evAddr, e.ev.Bytes()); err != nil {
				return o, err
			}
			r, err := m.Call(EntryHandler, v.evAddr, v.ctxAddr)
			if err != nil {
				return o, fmt.Errorf("%s faulted on event %d of sequence %d (%+v, context before %v): %w",
					EntryHandler, ei+1, v.nSeqs+si+1, e.ev, e.before, err)
			}
			if err := m.ReadBytes(v.ctxAddr, buf); err != nil {
				return o, err
			}
			ctx, _ := nicsdk.ParseFlowCtx(buf)
			o.rates = append(o.rates, uint32(r.A0))
			o.ctxs = append(o.ctxs, ctx)
			o.eventCycles = append(o.eventCycles, r.Cycles)
			vr.MaxCycles = max(vr.MaxCycles, r.Cycles)
			tick()
		}
	}
	o.longestEvent = longest(o.eventCycles, 64)
	return o, nil
}

// longest is the indices of the k largest values.
func longest(v []uint64, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] > v[b]:
			return -1
		case v[a] < v[b]:
			return 1
		}
		return 0
	})
	return idx[:min(k, len(idx))]
}

// splitPath is one integer split with the input intervals of the path that reaches it.
type splitPath struct {
	tree, node int
	f          int
	t          int32
	lo, hi     []int32
}

// splitPaths lists every split of the IR with its path's intervals.
func splitPaths(ir *quantize.TreeIR) []splitPath {
	var out []splitPath
	if ir == nil {
		return nil // an MLP has no splits
	}
	n := len(ir.Inputs)
	type item struct {
		node   int
		lo, hi []int32
	}
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		lo, hi := make([]int32, n), make([]int32, n)
		for i, in := range ir.Inputs {
			lo[i], hi[i] = in.Min, in.Max
		}
		stack := []item{{0, lo, hi}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nd := &tr.Nodes[it.node]
			if nd.Kind != quantize.KindSplit {
				continue
			}
			out = append(out, splitPath{tree: tr.Src, node: nd.Src, f: nd.Feature, t: nd.T, lo: it.lo, hi: it.hi})
			llo, lhi := slices.Clone(it.lo), slices.Clone(it.hi)
			lhi[nd.Feature] = min(lhi[nd.Feature], nd.T)
			rlo, rhi := slices.Clone(it.lo), slices.Clone(it.hi)
			rlo[nd.Feature] = max(rlo[nd.Feature], nd.T+1)
			stack = append(stack, item{nd.Right, rlo, rhi}, item{nd.Left, llo, lhi})
		}
	}
	return out
}

// thresholdsByFeature is each input's distinct integer thresholds, sorted.
func thresholdsByFeature(n int, splits []splitPath) [][]int32 {
	out := make([][]int32, n)
	for _, s := range splits {
		out[s.f] = append(out[s.f], s.t)
	}
	for i := range out {
		slices.Sort(out[i])
		out[i] = slices.Compact(out[i])
	}
	return out
}

func randIn(rng *rand.Rand, lo, hi int32) int32 {
	if hi <= lo {
		return lo
	}
	return int32(int64(lo) + rng.Int64N(int64(hi)-int64(lo)+1))
}

func clamp32(v int64, lo, hi int32) int32 { return int32(min(max(v, int64(lo)), int64(hi))) }

// sampleState draws a float state uniformly from the input ranges (RL-CC: o up to
// rlcc.SampleOMax, the distiller's sampler under the parameters, rather than the handler's clamp).
func (c *compilation) sampleState(rng *rand.Rand) []float64 {
	xf := make([]float64, len(c.inputs))
	for i, in := range c.inputs {
		lo, hi := in.Value(in.Min), in.Value(in.Max)
		if c.handler == HandlerRLCC && rlccClamped[i] {
			hi = rlcc.SampleOMax(c.params)
		}
		xf[i] = lo + rng.Float64()*(hi-lo)
	}
	return xf
}

func (c *compilation) quantizeState(xf []float64) []int32 {
	x := make([]int32, len(xf))
	for i, v := range xf {
		x[i] = c.inputs[i].Quantize(v)
	}
	return x
}

// fixedVectors are the policy vectors every verify runs: every split at T-1..T+2 on a path
// that reaches it, the range extremes, and the sample rows.
func (c *compilation) fixedVectors(rng *rand.Rand, splits []splitPath) []policyVec {
	ins := c.inputs
	nIn := len(ins)
	var out []policyVec
	for _, s := range splits {
		for d := int64(-1); d <= 2; d++ {
			x := make([]int32, nIn)
			for g := range x {
				x[g] = randIn(rng, s.lo[g], s.hi[g])
			}
			x[s.f] = clamp32(int64(s.t)+d, s.lo[s.f], s.hi[s.f])
			out = append(out, policyVec{kind: VecThreshold, x: x,
				node: fmt.Sprintf(", tree %d node %d: %s <= %d", s.tree, s.node, ins[s.f].Name, s.t)})
		}
	}
	ends := func(i int, hi bool) int32 {
		if hi {
			return ins[i].Max
		}
		return ins[i].Min
	}
	if nIn <= 8 {
		for mask := 0; mask < 1<<nIn; mask++ {
			x := make([]int32, nIn)
			for i := range x {
				x[i] = ends(i, mask>>i&1 == 1)
			}
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	} else {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for i := range x {
				x[i] = ends(i, hi)
			}
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	}
	for i := range nIn {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for g := range x {
				x[g] = randIn(rng, ins[g].Min, ins[g].Max)
			}
			x[i] = ends(i, hi)
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	}
	for _, row := range c.rows {
		if slices.ContainsFunc(row, math.IsNaN) {
			continue
		}
		out = append(out, policyVec{kind: VecRow, x: c.quantizeState(row), fl: row})
	}
	return out
}

// filler draws the rest of the policy vectors, alternately a sampled float state and a
// near-threshold one (each input near a random threshold of its own, or uniform).
type filler struct {
	c   *compilation
	rng *rand.Rand
	thr [][]int32
	k   int
}

func (c *compilation) newFiller(rng *rand.Rand, splits []splitPath) *filler {
	return &filler{c: c, rng: rng, thr: thresholdsByFeature(len(c.inputs), splits)}
}

func (f *filler) next() policyVec {
	f.k++
	if f.k%2 == 1 {
		xf := f.c.sampleState(f.rng)
		return policyVec{kind: VecSampled, x: f.c.quantizeState(xf), fl: xf}
	}
	ins := f.c.inputs
	x := make([]int32, len(ins))
	for i, in := range ins {
		if ts := f.thr[i]; len(ts) > 0 && f.rng.IntN(4) != 0 {
			x[i] = clamp32(int64(ts[f.rng.IntN(len(ts))])+f.rng.Int64N(9)-4, in.Min, in.Max)
		} else {
			x[i] = randIn(f.rng, in.Min, in.Max)
		}
	}
	return policyVec{kind: VecNearThreshold, x: x}
}

// seqGen draws RL-CC event sequences and runs them through the golden handler.
type seqGen struct {
	c      *compilation
	rng    *rand.Rand
	p      nicsdk.Params
	thr    [][]int32
	ts     uint64
	seq    int
	policy func(x [4]int32, state []uint32) int32

	// the golden policy's last call; yRaw is an LSTM's y before the multiplier fold
	called bool
	x      [nicsdk.RLCCInputs]int32
	y      int32
	yRaw   int32
}

func (c *compilation) newSeqGen(rng *rand.Rand, splits []splitPath) *seqGen {
	g := &seqGen{c: c, rng: rng, p: c.params, thr: thresholdsByFeature(nicsdk.RLCCInputs, splits)}
	g.policy = func(x [4]int32, state []uint32) int32 {
		g.called, g.x = true, x
		if c.lstm != nil {
			g.yRaw = c.lstm.Step(x[:], state)
			g.y = c.foldY(g.yRaw)
			return g.y
		}
		g.y = c.goldenStep(x[:], state)
		return g.y
	}
	return g
}

// next draws event sequences holding n events in all: each starts from a flow context
// (new, valid, at thresholds, garbage or extreme words) and runs up to 64 events (mostly
// RTT, aimed at observations across the range and near o's thresholds; CNP, NACK, TX and
// unknown types; RTTs of zero, below the base, and saturating). The golden handler,
// nicsdk.OnEvent around TreeIR.Eval, gives each event's rate and context. The handler's
// decisions on naturally drawn RTT events of new and valid flows go into the fidelity; for an
// LSTM, every decision of a new flow's sequence, against the float LSTM run along the same
// sequence with its own state on the same inputs.
func (g *seqGen) next(n int) []sequence {
	c, rng := g.c, g.rng
	var seqs []sequence
	total := 0
	for total < n {
		start, how := g.startCtx()
		s := sequence{start: start, how: how}
		ctx := start
		prevO, havePrev := 0.0, false
		var floatSt *model.State // an LSTM's float twin along a new flow's sequence
		if c.lstm != nil && how == "new flow" {
			floatSt = c.m.NewState()
		}
		for range min(1+rng.IntN(64), n-total) {
			ev, natural := g.event(ctx, g.seq)
			oF := g.floatObs(ev, ctx)
			before := ctx
			g.called = false
			out := nicsdk.OutY
			if c.fold != nil {
				out = nicsdk.OutM
			}
			rate := nicsdk.OnEventEx(ev, &ctx, g.p, c.stateWords(), out, g.policy)
			s.events = append(s.events, event{ev: ev, before: before, rate: rate, after: ctx})
			if !g.called {
				continue
			}
			c.verify.RTTEvents++
			if floatSt != nil {
				xq := make([]float64, len(g.x))
				for i, v := range g.x {
					xq[i] = c.inputs[i].Value(v)
				}
				c.verify.decisions.addOutputs(c.lstm.OutValue(g.yRaw), c.m.Eval(floatSt, xq)[0])
			}
			if natural && (how == "new flow" || how == "valid") && c.lstm == nil {
				oPrev := float64(g.x[3]) / nicsdk.Q16One
				if havePrev {
					oPrev = prevO
				}
				xf := []float64{float64(g.x[0]) / nicsdk.Q16One, oF, float64(g.x[2]) / nicsdk.Q16One, oPrev}
				c.verify.decisions.add(xf, g.x[:], g.y)
			}
			// o_{t-1} in float is this o_t when it was drawn naturally; else the context's.
			prevO, havePrev = oF, natural
		}
		total += len(s.events)
		seqs = append(seqs, s)
		g.seq++
	}
	return seqs
}

// pickThr is a threshold of input f ±2 LSB, or false when f has none.
func (g *seqGen) pickThr(f int) (int64, bool) {
	ts := g.thr[f]
	if len(ts) == 0 {
		return 0, false
	}
	return int64(ts[g.rng.IntN(len(ts))]) + g.rng.Int64N(4) - 1, true
}

func (g *seqGen) startCtx() (nicsdk.FlowCtx, string) {
	r, p := g.rng, g.p
	var ctx nicsdk.FlowCtx
	for i := nicsdk.RLCCWords; i < nicsdk.CtxWords; i++ {
		ctx[i] = r.Uint32() // words RL-CC must leave alone
	}
	valid := func() {
		ctx[nicsdk.CtxRate] = g.logRate()
		ctx[nicsdk.CtxBaseRTT] = 1000 + r.Uint32N(100_000)
		ctx[nicsdk.CtxA1] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxA2] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxO1] = uint32(randIn(r, nicsdk.ObsMin(p), int32(math.Round(rlcc.SampleOMax(p)*float64(nicsdk.Q16One)))))
		ctx[nicsdk.CtxFlags] = nicsdk.FlagInit
		if r.IntN(4) == 0 {
			ctx[nicsdk.CtxFlags] |= r.Uint32() &^ 1
		}
	}
	switch k := r.IntN(20); {
	case k < 5:
		for i := range nicsdk.RLCCWords {
			ctx[i] = 0
		}
		return ctx, "new flow"
	case k < 12:
		valid()
		return ctx, "valid"
	case k < 16:
		valid()
		for _, w := range []struct{ word, f int }{{nicsdk.CtxA1, 0}, {nicsdk.CtxA2, 2}, {nicsdk.CtxO1, 3}} {
			if v, ok := g.pickThr(w.f); ok && r.IntN(4) != 0 {
				ctx[w.word] = uint32(int32(v))
			}
		}
		return ctx, "thresholds"
	case k < 18:
		for i := range nicsdk.RLCCWords {
			ctx[i] = r.Uint32()
		}
		return ctx, "garbage"
	default:
		om := nicsdk.ObsMin(p)
		words := []uint32{0, 1, nicsdk.AMin - 1, nicsdk.AMin, nicsdk.AMax, nicsdk.AMax + 1, math.MaxInt32, 1 << 31,
			math.MaxUint32, uint32(om), uint32(om - 1), nicsdk.OMax, nicsdk.OMax + 1, nicsdk.LineRate,
			nicsdk.LineRate + 1, p.MinRate, p.MinRate - 1}
		for i := range nicsdk.RLCCWords {
			ctx[i] = words[r.IntN(len(words))]
		}
		ctx[nicsdk.CtxFlags] = []uint32{0, 1, math.MaxUint32}[r.IntN(3)]
		return ctx, "extreme"
	}
}

// logRate is a rate drawn log-uniformly from [MinRate, LineRate].
func (g *seqGen) logRate() uint32 {
	lo, hi := math.Log(float64(g.p.MinRate)), math.Log(nicsdk.LineRate)
	return uint32(min(max(math.Exp(lo+g.rng.Float64()*(hi-lo)), float64(g.p.MinRate)), nicsdk.LineRate))
}

// state is the rate and base RTT the handler will use for ev on ctx.
func (g *seqGen) state(ev nicsdk.Event, ctx nicsdk.FlowCtx) (rate, base uint32) {
	if ctx[nicsdk.CtxFlags]&nicsdk.FlagInit == 0 {
		nicsdk.Init(&ctx, g.p)
	}
	rate = min(max(ctx[nicsdk.CtxRate], g.p.MinRate), nicsdk.LineRate)
	base = ctx[nicsdk.CtxBaseRTT]
	if rtt := ev.RTTNs; rtt != 0 && (base == 0 || rtt < base) {
		base = rtt
	}
	return rate, base
}

// floatObs is the observation o_t in float64 for ev on ctx: what a float handler computes
// from the same RTT, base RTT and rate.
func (g *seqGen) floatObs(ev nicsdk.Event, ctx nicsdk.FlowCtx) float64 {
	rate, base := g.state(ev, ctx)
	return rlcc.Observation(ev.RTTNs, base, rate, g.p)
}

// event draws the next event of sequence seq on ctx. natural says it is an RTT event drawn
// the way a fidelity measurement wants: o_t uniform over the sampler's range (or a new flow's
// first RTT), not aimed at a threshold or an edge.
func (g *seqGen) event(ctx nicsdk.FlowCtx, seq int) (_ nicsdk.Event, natural bool) {
	r := g.rng
	g.ts += 1000 + r.Uint64N(50_000)
	ev := nicsdk.Event{Type: nicsdk.EvRTT, TimestampNs: g.ts, FlowID: uint32(seq)}
	switch k := r.IntN(20); {
	case k == 0:
		ev.Type = nicsdk.EvCNP
		return ev, false
	case k == 1:
		ev.Type = nicsdk.EvNACK
		return ev, false
	case k == 2:
		ev.Type, ev.TxBytes = nicsdk.EvTX, r.Uint32N(1<<16)
		return ev, false
	case k == 3:
		ev.Type = []nicsdk.EventType{4, 7, math.MaxUint32}[r.IntN(3)]
		ev.RTTNs = r.Uint32()
		return ev, false
	}
	rate, base := g.state(ev, ctx) // ev.RTTNs is 0 here: the base before this event
	if base == 0 {
		ev.RTTNs = 1000 + r.Uint32N(100_000)
		return ev, true
	}
	toRTT := func(o float64) uint32 { return rlcc.RTTFor(o, rate, base, g.p) }
	switch k := r.IntN(20); {
	case k < 8:
		ev.RTTNs = toRTT(float64(nicsdk.ObsMin(g.p))/nicsdk.Q16One + r.Float64()*(rlcc.SampleOMax(g.p)+1))
		natural = true
	case k < 13:
		if v, ok := g.pickThr(1); ok {
			ev.RTTNs = toRTT(float64(v) / nicsdk.Q16One)
		} else {
			ev.RTTNs = toRTT(r.Float64() * rlcc.SampleOMax(g.p))
		}
	case k < 15:
		ev.RTTNs = uint32(float64(base) * (0.5 + r.Float64()/2))
	case k < 17:
		ev.RTTNs = []uint32{0, 1, base, math.MaxUint32}[r.IntN(4)]
	default:
		ev.RTTNs = uint32(min(float64(base)*(1+19*r.Float64()), math.MaxUint32))
	}
	return ev, natural
}

// driverC is the host driver: it reads calls from stdin and prints their results.
func driverC(nInputs int, policyHeader string, rlcc bool, stateWords int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `/* driver.c: generated by nicc compile to verify the generated C on the host; not firmware.
 * Reads calls from stdin, one a line, and prints one line per call:
 *   P x0 .. x%d             nicc_policy(x): prints y`, nInputs-1)
	if stateWords > 0 {
		fmt.Fprintf(&b, `
 *   P x0 .. x%d s0 .. s%d   (a policy with state) nicc_policy(x, s): prints y and the new s`, nInputs-1, stateWords-1)
	}
	if rlcc {
		b.WriteString(`
 *   C w0 .. w11           sets the flow context (a new sequence); prints nothing
 *   E type rtt ts flow tx nicc_on_event(&ev, &ctx) on the kept context: prints the rate and
 *                         the 12 context words`)
	}
	fmt.Fprintf(&b, `
 * Exits 2 on malformed input. */
#include <stdint.h>
#include <stdio.h>
#include "%s"
`, policyHeader)
	if rlcc {
		fmt.Fprintf(&b, `#include "%s"

uint32_t %s(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);
`, nicsdk.HeaderName, EntryHandler)
	}
	fmt.Fprintf(&b, `
#define NINPUTS %d
#define NSTATE %d

static int read_i32(int32_t *v)
{
	long long t;
	if (scanf("%%lld", &t) != 1 || t < INT32_MIN || t > INT32_MAX)
		return 0;
	*v = (int32_t)t;
	return 1;
}
`, nInputs, stateWords)
	if rlcc || stateWords > 0 {
		b.WriteString(`
static int read_u64(uint64_t *v)
{
	unsigned long long t;
	if (scanf("%llu", &t) != 1)
		return 0;
	*v = (uint64_t)t;
	return 1;
}

static int read_u32(uint32_t *v)
{
	uint64_t t;
	if (!read_u64(&t) || t > UINT32_MAX)
		return 0;
	*v = (uint32_t)t;
	return 1;
}
`)
	}
	b.WriteString(`
int main(void)
{
	static char out[1 << 16];
	int32_t x[NINPUTS];
	char tag;
	int i;
`)
	if stateWords > 0 {
		b.WriteString(`	uint32_t s[NSTATE];
	int32_t y;
`)
	}
	if rlcc {
		b.WriteString(`	struct nicc_flow_ctx ctx = {{0}};
	struct nicc_event ev;
	uint32_t rate;
`)
	}
	b.WriteString(`
	setvbuf(stdout, out, _IOFBF, sizeof out);
	while (scanf(" %c", &tag) == 1) {
		switch (tag) {
		case 'P':
			for (i = 0; i < NINPUTS; i++)
				if (!read_i32(&x[i]))
					return 2;
`)
	if stateWords > 0 {
		b.WriteString(`			for (i = 0; i < NSTATE; i++)
				if (!read_u32(&s[i]))
					return 2;
			y = ` + EntryPolicy + `(x, s);
			printf("%ld", (long)y);
			for (i = 0; i < NSTATE; i++)
				printf(" %lu", (unsigned long)s[i]);
			putchar('\n');
			break;
`)
	} else {
		b.WriteString(`			printf("%ld\n", (long)` + EntryPolicy + `(x));
			break;
`)
	}
	if rlcc {
		b.WriteString(`		case 'C':
			for (i = 0; i < NICC_CTX_WORDS; i++)
				if (!read_u32(&ctx.data[i]))
					return 2;
			break;
		case 'E':
			if (!read_u32(&ev.type) || !read_u32(&ev.rtt_ns) || !read_u64(&ev.timestamp_ns) ||
			    !read_u32(&ev.flow_id) || !read_u32(&ev.tx_bytes))
				return 2;
			rate = ` + EntryHandler + `(&ev, &ctx);
			printf("%lu", (unsigned long)rate);
			for (i = 0; i < NICC_CTX_WORDS; i++)
				printf(" %lu", (unsigned long)ctx.data[i]);
			putchar('\n');
			break;
`)
	}
	b.WriteString(`		default:
			return 2;
		}
	}
	return fflush(stdout) == 0 ? 0 : 3;
}
`)
	return b.String()
}

// stateGen draws the state words of a stateful policy's vectors: runs of 32 calls, each run
// starting from zeroed words (a new flow) or random ones (any bytes are a valid state), the
// other calls from the state the golden model left after the previous one.
type stateGen struct {
	c     *compilation
	rng   *rand.Rand
	carry []uint32
	k     int
}

func (c *compilation) newStates(rng *rand.Rand) *stateGen { return &stateGen{c: c, rng: rng} }

// next is the state for a call on x (nil for a stateless policy).
func (g *stateGen) next(x []int32) []uint32 {
	w := g.c.stateWords()
	if w == 0 {
		return nil
	}
	st := slices.Clone(g.carry)
	if g.k%32 == 0 {
		st = make([]uint32, w)
		if g.k%64 == 32 {
			for i := range st {
				st[i] = g.rng.Uint32()
			}
		}
	}
	g.k++
	g.carry = slices.Clone(st)
	g.c.goldenStep(x, g.carry)
	return st
}
