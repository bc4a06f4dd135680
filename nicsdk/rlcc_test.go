package nicsdk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// Bit-identity of every rlcc.h / nicsdk.h function with its Go twin: on the host build
// (exhaustive where the domain allows, else at least 1M random plus edge inputs, all under
// the undefined-behaviour sanitizer) and on the RISC-V build in fwsim (fewer, to keep the
// test fast).

const (
	hostRandom = 1_000_000
	simRandom  = 100_000
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6e696363)) }

// any32 draws a uint32 from a mix of distributions that reach the edges.
func any32(r *rand.Rand) uint32 {
	switch r.IntN(6) {
	case 0:
		return r.Uint32()
	case 1:
		return uint32(r.IntN(1 << 17))
	case 2:
		return 1<<r.IntN(32) + uint32(r.IntN(3)) - 1
	case 3:
		return math.MaxUint32 - uint32(r.IntN(1000))
	case 4:
		return uint32(r.IntN(1 << 21))
	default:
		return r.Uint32() >> r.IntN(32)
	}
}

// randParams draws valid parameters, often at the edges of their ranges.
func randParams(r *rand.Rand) Params {
	pick := func(edges []uint32, lo, hi uint32) uint32 {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return lo + uint32(r.Int64N(int64(hi-lo)+1))
	}
	p := DefaultParams()
	if r.IntN(8) == 0 {
		return p
	}
	p.Target = pick([]uint32{0, 1, 1 << 20, p.Target}, 0, 1<<20)
	p.Beta = pick([]uint32{0, 1, 1 << 16, 1 << 24, p.Beta}, 0, 1<<24)
	p.Scale = pick([]uint32{1, 1 << 16, 1 << 24, p.Scale}, 1, 1<<24)
	p.InitRate = pick([]uint32{1, LineRate}, 1, LineRate)
	p.MinRate = pick([]uint32{1, p.InitRate}, 1, p.InitRate)
	p.BaseRTT = pick([]uint32{0, 1, 4020, MaxBaseRTT}, 0, MaxBaseRTT)
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return p
}

// check compares got (from C) with want (Go) record by record; in formats a record's input.
func check(t *testing.T, where string, got, want []uint32, nout int, in func(i int) string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d result words, want %d", where, len(got), len(want))
	}
	bad := 0
	for i := 0; i < len(want); i += nout {
		for j := 0; j < nout; j++ {
			if got[i+j] != want[i+j] {
				if bad < 5 {
					t.Errorf("%s: %s: word %d = %#x (%d), Go twin %#x (%d)", where, in(i/nout), j,
						got[i+j], int32(got[i+j]), want[i+j], int32(want[i+j]))
				}
				bad++
				break
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d records differ", where, bad, len(want)/nout)
	}
	t.Logf("%s: %d records identical", where, len(want)/nout)
}

// unary is a function of one 32-bit word compared on the host over ins, and in fwsim over
// the first simN of a shuffled copy.
func unary(t *testing.T, mode, entry string, ins []uint32, simN int, arg func(uint32) uint64, goFn func(uint32) uint32) {
	t.Helper()
	want := make([]uint32, len(ins))
	for i, v := range ins {
		want[i] = goFn(v)
	}
	check(t, "host "+mode, host(t, mode, ins), want, 1, func(i int) string { return fmt.Sprintf("input %#x", ins[i]) })

	sub := append([]uint32(nil), ins...)
	rng(7).Shuffle(len(sub), func(i, j int) { sub[i], sub[j] = sub[j], sub[i] })
	sub = append(sub[:min(simN, len(sub))], ins[:min(64, len(ins))]...)
	sm := newSim(t)
	got := make([]uint32, len(sub))
	want = want[:0]
	for i, v := range sub {
		got[i] = sm.call(entry, arg(v))
		want = append(want, goFn(v))
	}
	check(t, "fwsim "+entry, got, want, 1, func(i int) string { return fmt.Sprintf("input %#x", sub[i]) })
}

func TestSqrtRateExhaustive(t *testing.T) {
	t.Parallel()
	// Every rate the handler can pass (1..1<<20), 0 and values above line rate.
	var ins []uint32
	for r := uint32(0); r <= LineRate+16; r++ {
		ins = append(ins, r)
	}
	ins = append(ins, 1<<21, 1<<31, math.MaxUint32)
	// The Go twin is the specification: floor(sqrt(clamp(rate) << 12)) or one less, checked
	// here on its own against the exact floor.
	for _, r := range ins {
		s, x := uint64(SqrtRate(r)), uint64(min(max(r, 1), LineRate))<<12
		if f := floorSqrt(x); s > f || s+1 < f || s < 64 {
			t.Fatalf("SqrtRate(%d) = %d: want floor(sqrt(%d)) = %d or one less, at least 64", r, s, x, f)
		}
	}
	unary(t, "sqrt", "t_sqrt", ins, len(ins), w, SqrtRate)
}

func TestMultiplierExhaustive(t *testing.T) {
	t.Parallel()
	// Every y in [-1, 1] in Q16, beyond it on both sides, and the int32 extremes.
	var ins []uint32
	for y := int32(YMin - 4096); y <= YMax+4096; y++ {
		ins = append(ins, uint32(y))
	}
	for _, y := range []int32{math.MinInt32, math.MinInt32 + 1, math.MaxInt32, -1 << 20, 1 << 20} {
		ins = append(ins, uint32(y))
	}
	for _, v := range ins {
		m := Multiplier(int32(v))
		if m < AMin || m > AMax {
			t.Fatalf("Multiplier(%d) = %d is outside [AMin, AMax]", int32(v), m)
		}
	}
	if Multiplier(YMin) != AMin || Multiplier(YMax) != AMax || Multiplier(0) != Q16One {
		t.Fatalf("Multiplier(-1, 0, 1) = %d, %d, %d: want AMin, 1.0, AMax", Multiplier(YMin), Multiplier(0), Multiplier(YMax))
	}
	unary(t, "mult", "t_mult", ins, len(ins), func(v uint32) uint64 { return s(int32(v)) },
		func(v uint32) uint32 { return Multiplier(int32(v)) })
}

// binary is a function of two words, compared like unary.
func binaryFn(t *testing.T, mode, entry string, ins [][2]uint32, goFn func(a, b uint32) uint32) {
	t.Helper()
	flat := make([]uint32, 0, 2*len(ins))
	want := make([]uint32, len(ins))
	for i, in := range ins {
		flat = append(flat, in[0], in[1])
		want[i] = goFn(in[0], in[1])
	}
	show := func(i int) string { return fmt.Sprintf("inputs %#x, %#x", ins[i][0], ins[i][1]) }
	check(t, "host "+mode, host(t, mode, flat), want, 1, show)
	sm := newSim(t)
	n := min(simRandom, len(ins))
	got := make([]uint32, n)
	for i := range n {
		got[i] = sm.call(entry, w(ins[i][0]), w(ins[i][1]))
	}
	check(t, "fwsim "+entry, got, want[:n], 1, show)
}

// pairs is edge pairs first (so fwsim sees them too), then random ones up to n.
func pairs(r *rand.Rand, edges []uint32, n int, gen func() [2]uint32) [][2]uint32 {
	var ins [][2]uint32
	for _, a := range edges {
		for _, b := range edges {
			ins = append(ins, [2]uint32{a, b})
		}
	}
	for len(ins) < n {
		ins = append(ins, gen())
	}
	return ins
}

var edges32 = []uint32{0, 1, 2, 3, 0xffff, 1 << 16, 1<<16 + 1, LineRate - 1, LineRate, LineRate + 1,
	1<<31 - 1, 1 << 31, math.MaxUint32 - 1, math.MaxUint32}

func TestRTTInflation(t *testing.T) {
	t.Parallel()
	r := rng(1)
	ins := pairs(r, edges32, hostRandom, func() [2]uint32 {
		if r.IntN(2) == 0 { // an RTT near its base
			base := any32(r)
			return [2]uint32{uint32(min(uint64(base)*uint64(r.IntN(4000))/1000, math.MaxUint32)), base}
		}
		return [2]uint32{any32(r), any32(r)}
	})
	binaryFn(t, "infl", "t_infl", ins, RTTInflation)
	if RTTInflation(5000, 0) != Q16One || RTTInflation(0, 0) != Q16One || RTTInflation(1<<16, 1) != math.MaxUint32 {
		t.Error("RTTInflation: base 0 must give 1.0, 2^16/1 saturate")
	}
	for _, in := range ins { // the twin against the exact quotient: divBound's error at most
		if in[1] != 0 && in[0]>>16 < in[1] {
			if got, want := RTTInflation(in[0], in[1]), FxpDiv16(in[0], in[1]); !divBound(got, want) {
				t.Fatalf("RTTInflation(%d, %d) = %d: want at most %d, %d less at most", in[0], in[1], got, want, want-divLoss(want))
			}
		}
	}
}

// divLoss is the most DivQ16 may lose below the exact quotient q: q * 8322 / 2^30 + 2.
func divLoss(q uint32) uint32 { return uint32(uint64(q)*8322>>30) + 2 }

// divBound: got is within DivQ16's bound of the exact quotient want.
func divBound(got, want uint32) bool { return got <= want && want-got <= divLoss(want) }

// TestDivQ16 checks rlcc_div_q16, the division-free a * 2^16 / d behind the RTT inflation,
// against its bound around the exact floor (divBound) on its whole domain d != 0,
// a < d * 2^16: exhaustively in d over [1, 2^22] (16 dividends each, the largest among them,
// where the estimate's error is largest) and over the top 2^20 divisors, in the host driver;
// then C == the Go twin (DivQ16), and the twin within the bound, on 10M random inputs on the
// host and 100k in fwsim.
func TestDivQ16(t *testing.T) {
	t.Parallel()
	drv, err := hostDriver()
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range [][2]uint64{{1, 1 << 22}, {1<<32 - 1<<20, 1<<32 - 1}} {
		out, err := exec.Command(drv, "divsweep", fmt.Sprint(rg[0]), fmt.Sprint(rg[1])).CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), " bad 0\n") {
			t.Fatalf("driver divsweep %d %d: %v\n%s", rg[0], rg[1], err, out)
		}
		t.Logf("d in [%d, %d]: %s", rg[0], rg[1], strings.TrimSpace(string(out)))
	}

	r := rng(11)
	n := 10 * hostRandom
	if testing.Short() {
		n = hostRandom
	}
	ins := make([][2]uint32, 0, n)
	for len(ins) < n {
		var d uint32
		switch r.IntN(3) {
		case 0:
			d = any32(r)
		case 1:
			d = uint32(1 + r.IntN(1<<17)) // RTTs in ns: up to 131 µs
		default:
			d = r.Uint32()
		}
		if d == 0 {
			continue
		}
		amax := min(uint64(d)<<16-1, math.MaxUint32)
		var a uint64
		switch r.IntN(4) {
		case 0:
			a = amax - uint64(r.IntN(int(min(amax, 1000))+1))
		case 1:
			a = uint64(d) * uint64(r.IntN(4000)) / 1000 // an RTT near its base
		default:
			a = r.Uint64N(amax + 1)
		}
		ins = append(ins, [2]uint32{uint32(min(a, amax)), d})
	}
	for _, in := range ins {
		if got, want := DivQ16(in[0], in[1]), FxpDiv16(in[0], in[1]); !divBound(got, want) {
			t.Fatalf("DivQ16(%d, %d) = %d: want at most %d, %d less at most", in[0], in[1], got, want, divLoss(want))
		}
	}
	binaryFn(t, "div", "t_div", ins, DivQ16)
}

func TestFxp16Helpers(t *testing.T) {
	t.Parallel()
	r := rng(2)
	gen := func() [2]uint32 { return [2]uint32{any32(r), any32(r)} }
	binaryFn(t, "fxpmul", "t_fxpmul", pairs(r, edges32, hostRandom, gen), FxpMul16)
	binaryFn(t, "fxpdiv", "t_fxpdiv", pairs(r, edges32, hostRandom, gen), FxpDiv16)
}

// pRecord is an input pair with its parameters.
type pRecord struct {
	a, b uint32
	p    Params
}

// withParams compares a function of (a, b, params) on the host over ins, and in fwsim over
// the first simRandom records.
func withParams(t *testing.T, mode, entry string, ins []pRecord, goFn func(a, b uint32, p Params) uint32) {
	t.Helper()
	flat := make([]uint32, 0, 7*len(ins))
	want := make([]uint32, len(ins))
	for i, in := range ins {
		flat = append(append(flat, in.a, in.b), paramsWords(in.p)...)
		want[i] = goFn(in.a, in.b, in.p)
	}
	show := func(i int) string { return fmt.Sprintf("inputs %#x, %#x, %+v", ins[i].a, ins[i].b, ins[i].p) }
	check(t, "host "+mode, host(t, mode, flat), want, 1, show)
	sm := newSim(t)
	n := min(simRandom, len(ins))
	got := make([]uint32, n)
	for i := range n {
		pa := sm.alloc(paramsBytes(ins[i].p), 4)
		got[i] = sm.call(entry, w(ins[i].a), w(ins[i].b), pa)
		sm.m.ResetAlloc()
	}
	check(t, "fwsim "+entry, got, want[:n], 1, show)
}

func manyParams(r *rand.Rand, n int) []Params {
	ps := make([]Params, n)
	for i := range ps {
		ps[i] = randParams(r)
	}
	return ps
}

func TestObservation(t *testing.T) {
	t.Parallel()
	r := rng(3)
	ps := manyParams(r, 997)
	var ins []pRecord
	for _, p := range ps[:100] { // edges first, so fwsim sees them too
		for _, infl := range []uint32{0, p.Beta - 1, p.Beta, p.Beta + 1, Q16One, math.MaxUint32} {
			for _, sq := range []uint32{0, 1, 64, 2072, 46340, 65535, 65536, 65537, math.MaxUint32} {
				ins = append(ins, pRecord{infl, sq, p})
			}
		}
	}
	for len(ins) < hostRandom {
		var infl uint32
		if r.IntN(2) == 0 {
			infl = uint32(Q16One + r.IntN(64*Q16One)) // 1 to 65: the congested range
		} else {
			infl = any32(r)
		}
		ins = append(ins, pRecord{infl, uint32(r.IntN(Q16One + 2)), ps[r.IntN(len(ps))]})
	}
	obs := func(a, b uint32, p Params) uint32 { return uint32(Observation(a, b, p)) }
	withParams(t, "obs", "t_obs", ins, obs)
	// The same through the terms of a c_max above p's c, as the DOCA entry computes it.
	withParams(t, "obscmax", "t_obs_cmax", ins, obs)

	// Every result is in the declared range.
	for _, in := range ins {
		if o := Observation(in.a, in.b, in.p); o < ObsMin(in.p) || o > OMax {
			t.Fatalf("Observation(%d, %d, %+v) = %d, outside [%d, %d]", in.a, in.b, in.p, o, ObsMin(in.p), OMax)
		}
	}
}

func TestObsMin(t *testing.T) {
	t.Parallel()
	ps := append(manyParams(rng(4), 4000), Params{Target: 1 << 20, Beta: 0, Scale: 1 << 24, MinRate: 1, InitRate: 1},
		Params{Target: 0, Scale: 1, MinRate: 1, InitRate: 1})
	var flat, want []uint32
	for _, p := range ps {
		flat = append(flat, paramsWords(p)...)
		want = append(want, uint32(ObsMin(p)))
	}
	show := func(i int) string { return fmt.Sprintf("%+v", ps[i]) }
	check(t, "host obsmin", host(t, "obsmin", flat), want, 1, show)
	sm := newSim(t)
	got := make([]uint32, len(ps))
	for i, p := range ps {
		got[i] = sm.call("t_obsmin", sm.alloc(paramsBytes(p), 4))
		sm.m.ResetAlloc()
	}
	check(t, "fwsim t_obsmin", got, want, 1, show)
	if got := ObsMin(DefaultParams()); got != -50328 {
		t.Errorf("ObsMin(defaults) = %d, want -50328 (-0.064*12)", got)
	}
}

func TestUpdateRate(t *testing.T) {
	t.Parallel()
	r := rng(5)
	ps := manyParams(r, 1009)
	var ins []pRecord
	for i, rate := range edges32 {
		for j, m := range []uint32{0, 1, AMin, Q16One - 1, Q16One, Q16One + 1, AMax, math.MaxUint32} {
			for _, p := range []Params{DefaultParams(), ps[i*8+j]} {
				ins = append(ins, pRecord{rate, m, p})
			}
		}
	}
	for len(ins) < hostRandom {
		p := ps[r.IntN(len(ps))]
		if r.IntN(2) == 0 {
			ins = append(ins, pRecord{uint32(1 + r.IntN(LineRate)), uint32(AMin + r.IntN(AMax-AMin+1)), p})
		} else {
			ins = append(ins, pRecord{any32(r), any32(r), p})
		}
	}
	withParams(t, "update", "t_update", ins, UpdateRate)
}

func TestHostDriverSanitizerIsOn(t *testing.T) {
	t.Parallel()
	// The driver's deliberate signed overflow must stop it: proof that the runs above were
	// under -fsanitize=undefined -fno-sanitize-recover=all.
	drv, err := hostDriver()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(drv, "ubsan").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "signed integer overflow") {
		t.Fatalf("driver ubsan: err %v, output %q: want the sanitizer to stop it", err, out)
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	drv, err := hostDriver()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(drv, "layout").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ctx %d 0\nevent %d type %d rtt_ns %d timestamp_ns %d flow_id %d tx_bytes %d\nparams 24\n",
		CtxBytes, EventBytes, OffEventType, OffEventRTTNs, OffEventTimestamp, OffEventFlowID, OffEventTxBytes)
	if string(out) != want {
		t.Errorf("host layout:\n%s\nwant\n%s", out, want)
	}
	sm := newSim(t)
	res, err := sm.m.Call("t_layout")
	if err != nil {
		t.Fatal(err)
	}
	got := binary.LittleEndian.AppendUint64(nil, res.A0)
	if wantB := []byte{CtxBytes, EventBytes, OffEventType, OffEventRTTNs, OffEventTimestamp, OffEventFlowID, OffEventTxBytes, 24}; string(got) != string(wantB) {
		t.Errorf("RISC-V layout %v, want %v (ctx, event, offsets, params)", got, wantB)
	}
	if n := len(FlowCtx{}.Bytes()); n != CtxBytes {
		t.Errorf("FlowCtx.Bytes: %d bytes", n)
	}
	if n := len(Event{}.Bytes()); n != EventBytes {
		t.Errorf("Event.Bytes: %d bytes", n)
	}
}

// linearPolicy is testdata/testpolicy.h's test_policy.
func linearPolicy(c [5]int32) func(x [4]int32) int32 {
	return func(x [4]int32) int32 {
		var s int64
		for i := range x {
			s += int64(c[i]) * int64(x[i])
		}
		return int32(min(max(int64(c[4])+s/65536, -1<<18), 1<<18))
	}
}

// flow is a random event sequence for one flow, with its parameters, policy and first
// context.
type flow struct {
	p      Params
	coef   [5]int32
	ctx0   FlowCtx
	events []Event
}

func randFlow(r *rand.Rand, n int) flow {
	f := flow{p: randParams(r)}
	for i := range f.coef {
		f.coef[i] = int32(r.IntN(1<<19)) - 1<<18
	}
	if r.IntN(4) == 0 { // the model's output hugs zero, like a trained policy
		for i := range f.coef {
			f.coef[i] >>= 6
		}
	}
	if r.IntN(5) == 0 { // a context left by something else: every clamp must hold
		for i := range f.ctx0 {
			f.ctx0[i] = any32(r)
		}
	}
	base := uint32(500 + r.IntN(200_000))
	ts := r.Uint64() >> 8
	for range n {
		ts += uint64(r.IntN(20_000))
		ev := Event{Type: EvRTT, TimestampNs: ts, FlowID: uint32(r.IntN(1 << 16))}
		switch k := r.IntN(20); {
		case k < 14:
			q := r.Float64()
			ev.RTTNs = uint32(min(float64(base)*(1+q*q*q*30)+float64(r.IntN(100)), math.MaxUint32))
		case k == 14:
			ev.RTTNs = any32(r)
		case k == 15:
			ev.Type = EvCNP
		case k == 16:
			ev.Type = EvNACK
		case k == 17:
			ev.Type, ev.TxBytes = EvTX, uint32(r.IntN(1<<16))
		case k == 18:
			ev.Type, ev.RTTNs = EventType(4+r.IntN(1000)), any32(r)
		default:
			ev.RTTNs = 0
		}
		f.events = append(f.events, ev)
	}
	return f
}

// recordAt is where a host record came from, for its failure message (formatted only on
// failure): its flow's and event's indexes, and where the context before the event starts
// in the input words.
type recordAt struct{ flow, event, ctxAt int }

// ctx is the context before the record's event, read back from the input words.
func (a recordAt) ctx(in []uint32) FlowCtx {
	var c FlowCtx
	copy(c[:], in[a.ctxAt:])
	return c
}

func eventWords(ev Event) []uint32 {
	b := ev.Bytes()
	ws := make([]uint32, EventBytes/4)
	for i := range ws {
		ws[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return ws
}

func TestOnEventHost(t *testing.T) {
	t.Parallel()
	// Each record is one step from the Go twin's context before it, so a batch covers whole
	// sequences: the C and Go steps agree from every state Go reaches.
	r := rng(6)
	const recWords = 6 + 5 + CtxWords + EventBytes/4 // params, coef, ctx, event
	in := make([]uint32, 0, (hostRandom+400)*recWords)
	want := make([]uint32, 0, (hostRandom+400)*(1+CtxWords))
	var flows []flow
	var at []recordAt
	events := 0
	for events < hostRandom {
		f := randFlow(r, 1+r.IntN(400))
		flows = append(flows, f)
		ctx := f.ctx0
		pol := linearPolicy(f.coef)
		for k, ev := range f.events {
			in = append(in, paramsWords(f.p)...)
			for _, c := range f.coef {
				in = append(in, uint32(c))
			}
			at = append(at, recordAt{len(flows) - 1, k, len(in)})
			in = append(append(in, ctx[:]...), eventWords(ev)...)
			rate := OnEvent(ev, &ctx, f.p, pol)
			want = append(append(want, rate), ctx[:]...)
			events++
		}
	}
	check(t, "host event", host(t, "event", in), want, 1+CtxWords, func(i int) string {
		f, k, ctx := flows[at[i].flow], at[i].event, at[i].ctx(in)
		return fmt.Sprintf("flow %+v coef %v event %d %+v ctx %v", f.p, f.coef, k, f.events[k], ctx)
	})
}

func TestOnEventFwsim(t *testing.T) {
	t.Parallel()
	// Whole sequences: the context lives in emulator memory from event to event.
	r := rng(8)
	sm := newSim(t)
	events := 0
	for events < simRandom {
		f := randFlow(r, 1+r.IntN(400))
		sm.m.ResetAlloc()
		pa := sm.alloc(paramsBytes(f.p), 4)
		cb := make([]byte, 0, 20)
		for _, c := range f.coef {
			cb = binary.LittleEndian.AppendUint32(cb, uint32(c))
		}
		ca := sm.alloc(cb, 4)
		ctx := f.ctx0
		cx := sm.alloc(ctx.Bytes(), 4)
		ea := sm.alloc(make([]byte, EventBytes), EventAlign)
		pol := linearPolicy(f.coef)
		for k, ev := range f.events {
			if err := sm.m.WriteBytes(ea, ev.Bytes()); err != nil {
				t.Fatal(err)
			}
			got := sm.call("t_event", ea, cx, pa, ca)
			before := ctx
			want := OnEvent(ev, &ctx, f.p, pol)
			gotCtx, _ := ParseFlowCtx(sm.read(cx, CtxBytes))
			if got != want || gotCtx != ctx {
				t.Fatalf("flow %+v coef %v event %d %+v from ctx %v:\nfwsim rate %d ctx %v\nGo    rate %d ctx %v",
					f.p, f.coef, k, ev, before, got, gotCtx, want, ctx)
			}
			events++
		}
	}
	t.Logf("fwsim: %d events identical", events)
}

func TestOnEventInputsInDeclaredRanges(t *testing.T) {
	t.Parallel()
	r := rng(9)
	seen := [RLCCInputs][2]int32{}
	for i := range seen {
		seen[i] = [2]int32{math.MaxInt32, math.MinInt32}
	}
	for range 3000 {
		f := randFlow(r, 200)
		ranges := RLCCInputRanges(f.p, DefaultLayout)
		ctx := f.ctx0
		pol := linearPolicy(f.coef)
		for _, ev := range f.events {
			OnEvent(ev, &ctx, f.p, func(x [4]int32) int32 {
				for i, v := range x {
					if v < ranges[i].Min || v > ranges[i].Max {
						t.Fatalf("input %s = %d outside its declared [%d, %d] (%+v)", ranges[i].Name, v, ranges[i].Min, ranges[i].Max, f.p)
					}
					seen[i] = [2]int32{min(seen[i][0], v), max(seen[i][1], v)}
				}
				return pol(x)
			})
			if rate := ctx[CtxRate]; rate < f.p.MinRate || rate > LineRate {
				t.Fatalf("rate %d outside [%d, %d]", rate, f.p.MinRate, LineRate)
			}
		}
	}
	for i, rg := range RLCCInputRanges(DefaultParams(), DefaultLayout) {
		t.Logf("%-8s declared [%d, %d] = [%.6g, %.6g]; seen under random params [%d, %d]",
			rg.Name, rg.Min, rg.Max, rg.Lo, rg.Hi, seen[i][0], seen[i][1])
	}
}

func TestInputRanges(t *testing.T) {
	t.Parallel()
	rg := RLCCInputRanges(DefaultParams(), DefaultLayout)
	want := [RLCCInputs][2]int32{{AMin, AMax}, {-50328, OMax}, {AMin, AMax}, {-50328, OMax}}
	for i := range rg {
		if [2]int32{rg[i].Min, rg[i].Max} != want[i] || rg[i].Lo != float64(want[i][0])/Q16One ||
			rg[i].Hi != float64(want[i][1])/Q16One || rg[i].FracBits != 16 || rg[i].Name == "" {
			t.Errorf("input %d: %+v, want raw %v", i, rg[i], want[i])
		}
	}
	if math.Abs(rg[0].Lo-1/1.2) > 1e-4 || math.Abs(rg[0].Hi-1.2) > 1e-4 || math.Abs(rg[1].Lo+0.768) > 1e-4 {
		t.Errorf("ranges %+v: want a in [1/1.2, 1.2], o from -0.768", rg)
	}
}

func TestDefaultParams(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	if p != (Params{Target: 4194, Beta: 98304, Scale: 786432, MinRate: 1049, InitRate: LineRate}) {
		t.Errorf("DefaultParams() = %+v", p)
	}
	for _, bad := range []Params{
		{Target: 1<<20 + 1, Scale: 1, MinRate: 1, InitRate: 1},
		{Beta: 1<<24 + 1, Scale: 1, MinRate: 1, InitRate: 1},
		{Scale: 0, MinRate: 1, InitRate: 1},
		{Scale: 1<<24 + 1, MinRate: 1, InitRate: 1},
		{Scale: 1, MinRate: 0, InitRate: 1},
		{Scale: 1, MinRate: 2, InitRate: 1},
		{Scale: 1, MinRate: 1, InitRate: LineRate + 1},
		{Scale: 1, MinRate: 1, InitRate: 1, BaseRTT: MaxBaseRTT + 1},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v: Validate accepted it", bad)
		}
	}
	if _, err := NewParams(math.NaN(), 1.5, 12, 0.001, 1); err == nil {
		t.Error("NewParams(NaN) accepted")
	}
	if _, err := NewParams(0.064, 1.5, -1, 0.001, 1); err == nil {
		t.Error("NewParams(scale -1) accepted")
	}
	if c := p.C("nicc_params"); !strings.Contains(c, "static const struct rlcc_params nicc_params = {") ||
		!strings.Contains(c, ".target = 4194u") || !strings.Contains(c, ".init_rate = 1048576u") {
		t.Errorf("C():\n%s", c)
	}
}
