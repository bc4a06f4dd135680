package compiler

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/verify"
)

// The DOCA target's triad: the same commands (init, a flow context, DOCA events, parameter
// changes) through the golden runtime (nicsdk.DOCARuntime around the golden policy), the
// host driver's two builds and the DOCA ELF in fwsim, every output word compared.

// docaCmd is one driver command and what the golden runtime says it prints.
type docaCmd struct {
	tag      byte // 'I', 'C', 'E' or 'S'
	ctx      nicsdk.FlowCtx
	ev       nicsdk.DOCAEvent
	slot     uint32
	overload bool
	port     uint32
	base     uint32
	vals     []uint32
	want     []uint32 // nil for 'C'
}

func (d docaCmd) String() string {
	switch d.tag {
	case 'E':
		return fmt.Sprintf("event %+v slot %d on context %v", d.ev, d.slot, d.ctx)
	case 'S':
		return fmt.Sprintf("set_algo_params(port %d, slot %d, base %d, %v)", d.port, d.slot, d.base, d.vals)
	}
	return "init"
}

func (d docaCmd) input(b *bytes.Buffer) {
	switch d.tag {
	case 'I':
		b.WriteString("I\n")
	case 'C':
		b.WriteByte('C')
		verify.WriteWords(b, d.ctx[:])
		b.WriteByte('\n')
	case 'E':
		e := d.ev
		ov := 0
		if d.overload {
			ov = 1
		}
		fmt.Fprintf(b, "E %d %d %d %d %d %d %d %d %d %d %d %d\n", d.slot, ov, e.Type, e.Subtype, e.Port, e.Flags,
			e.FlowTag, e.SN, e.Timestamp, e.ReqSend, e.ReqRecv, e.RespSend)
	case 'S':
		fmt.Fprintf(b, "S %d %d %d %d", d.port, d.slot, d.base, len(d.vals))
		verify.WriteWords(b, d.vals)
		b.WriteByte('\n')
	}
}

// docaGen draws the DOCA commands and runs them through the golden runtime.
type docaGen struct {
	policy quantize.Policy
	params nicsdk.Params
	rng    *rand.Rand
	gen    rlcc.EventGen
	rt     nicsdk.DOCARuntime
	seq    int
	sn     uint32
}

func (g *docaGen) decide(x [4]int32, state []uint32) int32 { return g.policy.Call(x[:], state) }

// batch is an init, the parameter changes of ports beyond the device's, then sequences
// holding n events in all (each from a starting context, after a parameter change one time
// in four), with their golden outputs.
func (g *docaGen) batch(n int, r *artifact.DOCAReport) []docaCmd {
	out := quantize.Out(g.policy)
	words := g.policy.StateWords()
	cmds := []docaCmd{{tag: 'I', want: []uint32{g.rt.Init()}}}
	set := func(s docaCmd) {
		cmds = append(cmds, s)
		r.SetParams++
		if s.want[0] != nicsdk.DOCAStatusOK {
			r.Refused++
		}
	}
	for _, s := range g.beyondPorts() {
		set(s)
	}
	for events := 0; events < n; {
		if g.rng.IntN(4) == 0 {
			set(g.setParams())
		}
		start, _ := g.gen.StartCtx()
		ctx := start
		cmds = append(cmds, docaCmd{tag: 'C', ctx: start})
		for range min(1+g.rng.IntN(64), n-events) {
			ev, _ := g.gen.Event(ctx, g.seq)
			d := docaCmd{tag: 'E', ctx: ctx, ev: g.docaEvent(ev), slot: nicsdk.DOCASlot, overload: g.rng.IntN(8) == 0}
			if g.rng.IntN(32) == 0 {
				d.slot = 1 + g.rng.Uint32N(15)
			}
			rate, req := g.rt.Algo(d.ev, d.slot, &ctx, words, out, g.decide)
			cnt := g.rt.CountersOf(uint32(d.ev.Port), d.slot)
			d.want = append(append([]uint32{rate, req}, ctx[:]...), cnt[:]...)
			if d.slot == nicsdk.DOCASlot && d.ev.Type == nicsdk.DOCAEvRTT {
				r.Decisions++
			}
			cmds = append(cmds, d)
			events++
		}
		g.seq++
		r.Sequences++
	}
	return cmds
}

// docaEvent is ev as a DOCA event: an RTT event's RTT as the difference of its timestamps
// (across the 32-bit wrap at times), the other types mapped to DOCA's, unknown ones to any
// byte; on port 0 mostly, the others and out-of-range ones at times.
func (g *docaGen) docaEvent(ev nicsdk.Event) nicsdk.DOCAEvent {
	r := g.rng
	g.sn++
	d := nicsdk.DOCAEvent{Subtype: uint8(r.Uint32()), Flags: uint8(r.Uint32()), FlowTag: ev.FlowID, SN: g.sn,
		Timestamp: r.Uint32(), ReqSend: r.Uint32(), ReqRecv: r.Uint32(), RespSend: r.Uint32()}
	if k := r.IntN(16); k >= 12 {
		d.Port = uint8(r.IntN(4))
		if k == 15 {
			d.Port = uint8(r.Uint32())
		}
	}
	t, ok := nicsdk.DOCAEventType(ev.Type)
	switch {
	case !ok:
		t = []uint8{nicsdk.DOCAEvNull, 1, nicsdk.DOCAEvACK, nicsdk.DOCAEvTXForAckNack, uint8(r.Uint32())}[r.IntN(5)]
	case ev.Type == nicsdk.EvRTT:
		d.ReqSend = d.Timestamp - ev.RTTNs
	}
	d.Type = t
	return d
}

// setParams draws a parameter change: mostly of the algorithm's slot on port 0 (at times of
// another port, or of one beyond the device's), of one to
// three parameters from any first one, each value the compiled one scaled by a factor, a
// bound, or any word. The golden runtime applies it or refuses it.
func (g *docaGen) setParams() docaCmd {
	r := g.rng
	d := docaCmd{tag: 'S', base: r.Uint32N(nicsdk.DOCAParams + 1)}
	switch k := r.IntN(16); {
	case k < 4:
		d.port = r.Uint32N(nicsdk.DOCAPorts)
	case k == 4:
		// ports the device does not have: refused, and no other port's terms change
		d.port = []uint32{nicsdk.DOCAPorts, nicsdk.DOCAPorts + 1, 0xffffffff}[r.IntN(3)]
	}
	if r.IntN(16) == 0 {
		d.slot = 1 + r.Uint32N(nicsdk.DOCASlots-1)
	}
	num := r.Uint32N(nicsdk.DOCAParams + 1)
	if r.IntN(8) != 0 {
		num = min(num, nicsdk.DOCAParams-d.base)
	}
	compiled := []uint32{g.params.Target, g.params.Beta, g.params.Scale}
	for i := range num {
		v := compiled[(d.base+i)%nicsdk.DOCAParams]
		switch k := r.IntN(8); {
		case k < 5:
			v = uint32(float64(v) * (0.25 + 1.5*r.Float64()))
		case k == 5:
			v = []uint32{0, 1, 1 << 20, 1<<20 + 1, 1 << 24, 1<<24 + 1}[r.IntN(6)]
		case k == 6:
			v = r.Uint32()
		}
		d.vals = append(d.vals, v)
	}
	return g.set(d)
}

// set is d, a parameter change, with what the golden runtime says of it.
func (g *docaGen) set(d docaCmd) docaCmd {
	status := g.rt.SetParams(d.port, d.slot, d.base, d.vals)
	p := g.rt.ParamsOf(d.port, d.slot)
	d.want = append([]uint32{status}, p[:]...)
	return d
}

// beyondPorts are parameter changes that would be accepted but for their port, which the
// device does not have: each batch starts with them, and each must be refused without
// changing the port its number folds onto.
func (g *docaGen) beyondPorts() []docaCmd {
	p := g.params
	var cmds []docaCmd
	for _, port := range []uint32{nicsdk.DOCAPorts, nicsdk.DOCAPorts + 1, 0xffffffff} {
		cmds = append(cmds, g.set(docaCmd{tag: 'S', port: port, slot: nicsdk.DOCASlot, vals: []uint32{p.Target / 2, p.Beta, p.Scale}}))
	}
	return cmds
}

// verify runs at least in.vectors DOCA events, in batches, through golden, both host builds
// and fwsim, and fails on any difference or a UBSan report.
func (out *docaOutput) verify(in docaInput) error {
	rng := rand.New(rand.NewPCG(in.seed, 0x646f6361))
	r := &artifact.DOCAReport{Source: artifact.DOCASourceFile, Firmware: artifact.DOCAFirmwareFile, Entry: nicsdk.DOCAEntryAlgo}
	out.report = r
	ir, _ := in.policy.(*quantize.TreeIR) // the tree thresholds the events aim observations at
	g := &docaGen{policy: in.policy, params: in.params, rng: rng, rt: nicsdk.DOCARuntime{Compiled: in.params},
		gen: rlcc.EventGen{Rng: rng, Params: in.params, Thresholds: verify.ThresholdsByFeature(nicsdk.RLCCInputs, ir)}}
	fw, err := doca.Load(out.elf, in.core)
	if err != nil {
		return err
	}
	var cand []verify.Measured
	var first string
	for done := 0; done < in.vectors; {
		if err := in.ctx.Err(); err != nil {
			return err
		}
		n := min(verify.Batch, in.vectors-done)
		cmds := g.batch(n, r)
		done += n
		r.Batches++
		got, cycles, err := out.run(fw, cmds)
		if err != nil {
			return err
		}
		k := 0
		for i, d := range cmds {
			if d.want == nil {
				continue
			}
			if d.tag != 'I' {
				r.Vectors++
			}
			if d.tag == 'E' {
				r.Events++
			}
			h, u, f := got[0][k], got[1][k], got[2][k]
			k++
			if slices.Equal(d.want, h) && slices.Equal(d.want, u) && slices.Equal(d.want, f) {
				continue
			}
			r.Mismatches++
			if first == "" {
				first = fmt.Sprintf("command %d of batch %d, %s: golden %v, %s %v, %s %v, %s %v",
					i+1, r.Batches, d, d.want, verify.ImplHost, h, verify.ImplUBSan, u, verify.ImplFwsim, f)
			}
		}
		for _, i := range verify.SampleIdx(len(cycles), verify.Longest(cyclesOf(cycles), 64), verify.MeasureKeep) {
			e := cycles[i]
			cand = append(cand, verify.Measured{Cycles: e.cycles, Vector: budget.Vector{Args: []budget.Arg{
				{Bytes: e.d.ctx.Bytes()}, {Bytes: e.d.ev.Bytes()}, {Bytes: nicsdk.DOCAAttrBytes(e.d.slot, e.d.overload)},
				{Bytes: make([]byte, nicsdk.DOCAResultsBytes)}}}})
			r.MaxCycles = max(r.MaxCycles, e.cycles)
		}
		cand = verify.ThinMeasured(cand)
	}
	r.UBSan = "clean"
	if r.Mismatches > 0 {
		return &budget.CheckError{Err: fmt.Errorf("verify (DOCA): %d of %d calls differ; first: %s", r.Mismatches, r.Vectors, first)}
	}
	r.Compared = []string{"golden (Go: nicsdk.DOCARuntime around quantize." + in.policy.Golden() + ")",
		verify.ImplHost + " (" + in.hostCC + ", nicc's DOCA stand-in)", verify.ImplUBSan, verify.ImplFwsim}
	out.measure = verify.PickMeasured(cand)
	for i := range out.measure {
		out.measure[i].Line = i + 1
	}
	return nil
}

type docaCycles struct {
	cycles uint64
	d      docaCmd
}

func cyclesOf(v []docaCycles) []uint64 {
	out := make([]uint64, len(v))
	for i, e := range v {
		out[i] = e.cycles
	}
	return out
}

// run runs cmds through the host build, the UBSan build and fwsim at once: each one's output
// lines as words, and the algorithm-slot events' cycles in fwsim.
func (out *docaOutput) run(fw *doca.Firmware, cmds []docaCmd) ([3][][]uint32, []docaCycles, error) {
	var in bytes.Buffer
	for _, d := range cmds {
		d.input(&in)
	}
	var got [3][][]uint32
	var errs [3]error
	var cycles []docaCycles
	var wg sync.WaitGroup
	for i, bin := range []string{out.hostBin, out.ubsan} {
		wg.Go(func() { got[i], errs[i] = runDOCADriver(bin, in.Bytes()) })
	}
	wg.Go(func() { got[2], cycles, errs[2] = docaFwsim(fw, cmds) })
	wg.Wait()
	if errs[0] != nil {
		return got, nil, &budget.CheckError{Err: fmt.Errorf("verify (DOCA): host build: %w", errs[0])}
	}
	if errs[1] != nil {
		out.report.UBSan = "not clean"
		return got, nil, &budget.CheckError{Err: &artifact.UBSanError{Err: errs[1]}}
	}
	if errs[2] != nil {
		return got, nil, &budget.CheckError{Err: fmt.Errorf("verify (DOCA): fwsim: %w", errs[2])}
	}
	want := 0
	for _, d := range cmds {
		if d.want != nil {
			want++
		}
	}
	for i, g := range got {
		if len(g) != want {
			return got, nil, &budget.CheckError{Err: fmt.Errorf("verify (DOCA): %s gave %d results, want %d", []string{verify.ImplHost, verify.ImplUBSan, verify.ImplFwsim}[i], len(g), want)}
		}
	}
	return got, cycles, nil
}

// runDOCADriver runs a host build of the DOCA driver over in: its output lines as words. Any
// output on stderr (a UBSan report) or a non-zero exit is an error.
func runDOCADriver(bin string, in []byte) ([][]uint32, error) {
	out, err := verify.RunHost(bin, in)
	if err != nil {
		return nil, err
	}
	var lines [][]uint32
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ws []uint32
		for _, f := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s: output line %d: %v", bin, len(lines)+1, err)
			}
			ws = append(ws, uint32(v))
		}
		lines = append(lines, ws)
	}
	return lines, sc.Err()
}

// docaFwsim runs cmds through the DOCA program in fwsim, its memory kept across them as on
// the engine: each command's output words, and the algorithm-slot events' cycles.
func docaFwsim(f *doca.Firmware, cmds []docaCmd) ([][]uint32, []docaCycles, error) {
	var out [][]uint32
	var cycles []docaCycles
	for i, d := range cmds {
		fail := func(err error) ([][]uint32, []docaCycles, error) {
			return nil, nil, fmt.Errorf("command %d (%s): %w", i+1, d, err)
		}
		switch d.tag {
		case 'I':
			mask, err := f.Init()
			if err != nil {
				return fail(err)
			}
			out = append(out, []uint32{mask})
		case 'C':
			if err := f.SetContext(d.ctx); err != nil {
				return fail(err)
			}
		case 'E':
			r, err := f.Algo(d.ev, d.slot, d.overload)
			if err != nil {
				return fail(err)
			}
			if d.slot == nicsdk.DOCASlot {
				cycles = append(cycles, docaCycles{r.Cycles, d})
			}
			res, err := f.Results()
			if err != nil {
				return fail(err)
			}
			ctx, err := f.Context()
			if err != nil {
				return fail(err)
			}
			cnt, err := f.Counters(uint32(d.ev.Port), d.slot)
			if err != nil {
				return fail(err)
			}
			out = append(out, slices.Concat(res, ctx[:], cnt))
		case 'S':
			status, p, err := f.SetParams(d.port, d.slot, d.base, d.vals)
			if err != nil {
				return fail(err)
			}
			out = append(out, append([]uint32{status}, p...))
		}
	}
	return out, cycles, nil
}

// bound bounds doca_pcc_dev_user_algo in the DOCA ELF and measures it on the verify calls
// that ran longest, beside nicc_on_event's bound.
func (out *docaOutput) bound(in docaInput) error {
	vf, err := writeVectors(in.dir, artifact.DOCAVectorsFile, artifact.DOCAFirmwareFile, nicsdk.DOCAEntryAlgo, out.measure)
	if err != nil {
		return err
	}
	out.vectors = &vf
	b, err := budget.Analyze(budget.Options{ELF: out.elf, Entry: nicsdk.DOCAEntryAlgo, Core: in.core, Budget: in.budget,
		ThreadsSharing: in.threads, Vectors: out.measure, VectorsFile: "DOCA verify vectors"})
	if err != nil {
		return err
	}
	b.ELF = filepath.Join(in.out, artifact.DOCAFirmwareFile) // where it ends up
	r := out.report
	r.Budget = b
	r.HandlerWCETCycles = in.handlerWCET
	r.WCETRatio = float64(b.WCETCycles) / float64(in.handlerWCET)
	return nil
}
