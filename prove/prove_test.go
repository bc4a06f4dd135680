package prove

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

var names = []string{"a_prev", "o", "a_prev2", "o_prev"}

// gridInputs are the default layout's inputs under the default parameters.
func gridInputs() []quantize.Input {
	return quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
}

func input(p quantize.Policy) Input {
	return Input{Policy: p, Params: nicsdk.DefaultParams(), Layout: nicsdk.DefaultLayout, Names: names, Budget: 5 * time.Second}
}

func mustProperty(t testing.TB, s string) Property {
	p, err := ParseProperty(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func leaf(v float64) quantize.Node {
	return quantize.Node{Kind: quantize.KindLeaf, Value: int64(math.Round(v * 65536))}
}

func split(f int, t int32, l, r int) quantize.Node {
	return quantize.Node{Kind: quantize.KindSplit, Feature: f, T: t, Left: l, Right: r}
}

// plantedTrees is a two-tree ensemble that cuts (y = −0.5) wherever o > 0 and raises
// (y = +0.5) below, but for one bad leaf: o > 2 with a_prev ≤ 1 raises (y = +0.25).
func plantedTrees() *quantize.TreeIR {
	q := func(v float64) int32 { return int32(math.Round(v * 65536)) }
	return &quantize.TreeIR{Name: "planted", Inputs: gridInputs(), AccFrac: 16, OutFrac: 16, Trees: []quantize.Tree{
		{Nodes: []quantize.Node{split(1, 0, 1, 2), leaf(0.5), leaf(-0.5)}},
		{Nodes: []quantize.Node{split(1, q(2), 1, 2), leaf(0), split(0, q(1), 3, 4), leaf(0.75), leaf(0)}},
	}}
}

// A hand-built ensemble with one bad leaf is refuted at exactly that cell, and the share it
// holds on is the rest of the region, exactly.
func TestTreesRefutedAtTheBadLeaf(t *testing.T) {
	ir := plantedTrees()
	r, err := Run(input(ir), []Property{mustProperty(t, "cuts-when-congested"), mustProperty(t, "raises-when-idle"), mustProperty(t, "bounded-step")})
	if err != nil {
		t.Fatal(err)
	}
	cuts := r.Results[0]
	if cuts.Verdict != Refuted || cuts.Counterexample == nil {
		t.Fatalf("cuts-when-congested: %+v, want refuted", cuts)
	}
	x := cuts.Counterexample.Raw[0]
	in := ir.Inputs
	if x[1] != int32(math.Round(2*65536))+1 || x[0] > int32(65536) || cuts.Counterexample.Golden[0] != nicsdk.Multiplier(int32(0.25*65536)) {
		t.Errorf("counterexample %v (m %d): want o just above 2 (the bad cell's first state) and a_prev ≤ 1", cuts.Counterexample.Rows[0], cuts.Counterexample.Golden[0])
	}
	// The bad cell: a_prev in [Min, 1], o in [2+, Max], every a_prev2 and o_prev.
	width := func(i int, lo, hi int32) float64 { return float64(hi) - float64(lo) + 1 }
	thr := int32(math.Ceil(math.Ldexp(float64(-nicsdk.ObsMin(nicsdk.DefaultParams())), 0)))
	region := width(0, in[0].Min, in[0].Max) * width(1, thr, in[1].Max) * width(2, in[2].Min, in[2].Max) * width(3, in[3].Min, in[3].Max)
	bad := width(0, in[0].Min, 65536) * width(1, 2*65536+1, in[1].Max) * width(2, in[2].Min, in[2].Max) * width(3, in[3].Min, in[3].Max)
	if want := 1 - bad/region; math.Abs(cuts.ProvenShare-want) > 1e-12 || cuts.Domain != region {
		t.Errorf("cuts-when-congested holds on %v of %v states, want %v of %v", cuts.ProvenShare, cuts.Domain, want, region)
	}
	if r.Results[1].Verdict != Proven || r.Results[2].Verdict != Proven {
		t.Errorf("raises-when-idle %s, bounded-step %s: want both proven", r.Results[1].Verdict, r.Results[2].Verdict)
	}
	csv := cuts.Counterexample.CSVs()[0]
	if !strings.HasPrefix(csv, "a_prev,o,a_prev2,o_prev\n") || strings.Count(csv, "\n") != 2 {
		t.Errorf("counterexample CSV %q", csv)
	}
}

// loadModel reads testdata/models/name.
func loadModel(tb testing.TB, name string) *model.Model {
	m, _, err := formats.Load("../testdata/models/"+name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// shippedTrees is rlcc_xgb (10 trees of depth 4) quantized over the handler's grid.
func shippedTrees(tb testing.TB) *quantize.TreeIR {
	ir, err := quantize.Trees(loadModel(tb, "rlcc_xgb.json"), gridInputs(), quantize.TreeOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return ir
}

// allProperties is every property with its default arguments.
func allProperties(tb testing.TB) []Property {
	var props []Property
	for _, k := range Kinds {
		props = append(props, mustProperty(tb, string(k)))
	}
	return props
}

// The shipped trees (rlcc_xgb, 10 trees of depth 4): every property decided exactly, and each
// proof checked against a million random states and every threshold's edges.
func TestShippedTreesDecidedAndSound(t *testing.T) {
	ir, props := shippedTrees(t), allProperties(t)
	r, err := Run(input(ir), props)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.Results {
		t.Logf("%s: %s in %.3f s (%s)", res.Property, res.Verdict, res.Seconds, res.Method)
		if res.Verdict == Unknown {
			t.Errorf("%s: unknown; trees are decided exactly", res.Property)
		}
	}
	checkSound(t, input(ir), props, r, edges(ir))
}

// edges are, per input, every threshold and the value after it, and the range's ends.
func edges(ir *quantize.TreeIR) [][]int32 {
	all := make([]int, len(ir.Trees))
	for i := range all {
		all[i] = i
	}
	var out [][]int32
	for f, in := range ir.Inputs {
		e := []int32{in.Min, in.Max}
		for _, t := range ir.FeatureThresholds(all, f) {
			e = append(e, t, t+1)
		}
		out = append(out, e)
	}
	return out
}

// checkSound evaluates every proven property of r on a million states, half random and half
// built from edges (nil: the ranges' ends), and every refuted one's counterexample: no
// violation where a proof was claimed, and each counterexample a real one.
func checkSound(t *testing.T, in Input, props []Property, r *Report, edge [][]int32) {
	d, err := newDomain(in)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for k, res := range r.Results {
		p := props[k]
		if p.Kind == RateInRange {
			continue
		}
		if res.Verdict == Refuted {
			ce := res.Counterexample
			ok := true
			if p.Kind == MonotoneInO {
				ok = d.golden(ce.Raw[1], nil) <= d.golden(ce.Raw[0], nil) || ce.Raw[1][d.oIdx] <= ce.Raw[0][d.oIdx]
			} else if c, _ := d.checkOf(p); inRegion(ce.Raw[0], c.region) {
				ok = c.ok(d.golden(ce.Raw[0], nil))
			}
			if ok {
				t.Errorf("%s: the counterexample %v does not break it", res.Property, ce.Rows)
			}
			continue
		}
		if res.Verdict != Proven {
			continue
		}
		c := check{region: d.whole()}
		if p.Kind != MonotoneInO {
			c, _ = d.checkOf(p)
		}
		for n := range 1 << 20 {
			x := d.random(rng, c.region)
			if n%2 == 0 && edge != nil {
				for i := range x {
					if v := edge[i][rng.IntN(len(edge[i]))]; v >= c.region.lo[i] && v <= c.region.hi[i] {
						x[i] = v
					}
				}
			}
			if p.Kind == MonotoneInO {
				if x[d.oIdx] < c.region.hi[d.oIdx] {
					up := append([]int32(nil), x...)
					up[d.oIdx]++
					if d.golden(up, nil) > d.golden(x, nil) {
						t.Fatalf("%s proven, yet at %v the multiplier rises one o step up", res.Property, x)
					}
				}
				continue
			}
			if m := d.golden(x, nil); !c.ok(m) {
				t.Fatalf("%s proven, yet at %v the multiplier is %d (Q16)", res.Property, x, m)
			}
		}
	}
}

// plantedMLP is y = tanh(−o + k·bump(a_prev)) as an integer MLP, bump a triangle of height
// 0.01 at a_prev = 1.0 (ReLUs at 0.99, 1.0 and 1.01): with k = 0 it cuts wherever o > 0; with
// k = 200 it raises the rate for o < 2 with a_prev within 0.01 of 1, a small box of the
// congested region.
func plantedMLP(t *testing.T, k float64) *quantize.MLPIR {
	m := &model.Model{Name: "planted", Inputs: names, Layers: []model.Layer{
		{Op: model.OpDense, In: 4, Out: 4, Act: model.ActReLU,
			W: [][]float64{{100, 0, 0, 0}, {100, 0, 0, 0}, {100, 0, 0, 0}, {0, 1, 0, 0}},
			B: []float64{-99, -100, -101, 1}},
		{Op: model.OpDense, In: 4, Out: 1, Act: model.ActTanh, W: [][]float64{{k / 100, -2 * k / 100, k / 100, -1}}, B: []float64{1}},
	}}
	inputs := gridInputs()
	rng := rand.New(rand.NewPCG(1, 1))
	var calib [][]float64
	for range 4096 {
		row := make([]float64, 4)
		for i, in := range inputs {
			row[i] = in.Value(in.Min) + rng.Float64()*(in.Value(in.Max)-in.Value(in.Min))
		}
		if rng.IntN(2) == 0 {
			row[0], row[1] = 0.98+0.04*rng.Float64(), 3*rng.Float64()
		}
		calib = append(calib, row)
	}
	ir, err := quantize.MLP(m, inputs, calib, quantize.MLPOptions{ChannelScales: true})
	if err != nil {
		t.Fatal(err)
	}
	ir.FoldRLCC()
	return ir
}

// A network with a violation planted in a small box is refuted there; without it, the same
// network is proven by branch and bound, and the proof holds on a million states.
func TestMLPPlantedViolation(t *testing.T) {
	cuts := []Property{mustProperty(t, "cuts-when-congested")}
	bad, err := Run(input(plantedMLP(t, 200)), cuts)
	if err != nil {
		t.Fatal(err)
	}
	res := bad.Results[0]
	if res.Verdict != Refuted {
		t.Fatalf("planted: %s (%s), want refuted", res.Verdict, res.Method)
	}
	x := res.Counterexample.Rows[0]
	if math.Abs(x[0]-1) > 0.01 || x[1] > 2 {
		t.Errorf("counterexample %v (m %d): want a_prev within 0.01 of 1 and o under 2, the planted box", x, res.Counterexample.Golden[0])
	}
	ir := plantedMLP(t, 0)
	good, err := Run(input(ir), cuts)
	if err != nil {
		t.Fatal(err)
	}
	if res := good.Results[0]; res.Verdict != Proven {
		t.Fatalf("without the bump: %s (%s), want proven", res.Verdict, res.Method)
	}
	checkSound(t, input(ir), cuts, good, nil)
}

func TestParseProperty(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"cuts-when-congested", "cuts-when-congested:1"}, {"cuts-when-congested:2.5", "cuts-when-congested:2.5"},
		{"raises-when-idle:0.5", "raises-when-idle:0.5"}, {"bounded-step", "bounded-step"},
		{"bounded-step:0.9..1.1", "bounded-step:0.9..1.1"}, {"monotone-in-o", "monotone-in-o"}, {"rate-in-range", "rate-in-range"},
	} {
		p, err := ParseProperty(c.in)
		if err != nil || p.String() != c.want {
			t.Errorf("%q: %v, %v; want %s", c.in, p, err, c.want)
		}
	}
	for _, bad := range []string{"", "cuts", "cuts-when-congested:0", "cuts-when-congested:NaN", "cuts-when-congested:1e9", "raises-when-idle:2",
		"bounded-step:1.2..0.8", "bounded-step:1", "bounded-step:-1..1", "monotone-in-o:1", "rate-in-range:x"} {
		if _, err := ParseProperty(bad); err == nil || !strings.Contains(err.Error(), "property") {
			t.Errorf("%q: %v, want an error naming the property", bad, err)
		}
	}
}

// ParseProperty never panics, and what it accepts prints as a property it parses back to.
func FuzzParseProperty(f *testing.F) {
	for _, s := range []string{"cuts-when-congested:2", "raises-when-idle:0.5", "bounded-step:0.9..1.1", "monotone-in-o", "rate-in-range", "bounded-step:..", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProperty(s)
		if err != nil {
			return
		}
		q, err := ParseProperty(p.String())
		if err != nil || q != p {
			t.Fatalf("%q parsed to %+v, printed %q, parsed back to %+v, %v", s, p, p.String(), q, err)
		}
	})
}

// calibRows are n rows over the handler's grid, each input drawn towards the bottom of its
// range (o's range is wide, and its low end is where policies change).
func calibRows(rng *rand.Rand, n int) [][]float64 {
	inputs := gridInputs()
	var rows [][]float64
	for range n {
		row := make([]float64, len(inputs))
		for i, in := range inputs {
			row[i] = in.Value(in.Min) + math.Pow(rng.Float64(), 4)*(in.Value(in.Max)-in.Value(in.Min))
		}
		rows = append(rows, row)
	}
	return rows
}

// shippedMLP is rlcc_adpg quantized over the handler's grid on 2,000 calibration rows drawn
// from rng, its multiplier folded in, as compile --target int does.
func shippedMLP(tb testing.TB, rng *rand.Rand) *quantize.MLPIR {
	ir, err := quantize.MLP(loadModel(tb, "rlcc_adpg.json"), gridInputs(), calibRows(rng, 2000), quantize.MLPOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	ir.FoldRLCC()
	return ir
}

// The interval bounds of the shipped network (rlcc_adpg, quantized over the handler's grid,
// its multiplier folded in, as compile --target int does) contain the exact result at every
// point of every box tried: boxes of every size, from single values to the whole domain.
func TestMLPBoundsContainShipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ir := shippedMLP(t, rng)
	bounds, err := newMLPBounds(ir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDomain(input(ir))
	if err != nil {
		t.Fatal(err)
	}
	whole := d.whole()
	for n := range 4000 {
		b := whole.clone()
		for i := range b.lo {
			span := int64(b.hi[i]) - int64(b.lo[i])
			w := span >> rng.IntN(32) // every scale, down to one value
			lo := int64(b.lo[i]) + rng.Int64N(span-w+1)
			b.lo[i], b.hi[i] = int32(lo), int32(lo+w)
		}
		lo, hi := bounds.of(b)
		for range 16 {
			x := d.random(rng, b)
			if v := ir.Call(x, nil); v < lo || v > hi {
				t.Fatalf("box %d %v–%v: Call(%v) = %d outside the bounds [%d, %d]", n, b.lo, b.hi, x, v, lo, hi)
			}
		}
	}
}

// BenchmarkProveShippedTrees decides every property of the shipped 10×4 ensemble (issue 30's
// target: all of them in at most 1 s).
func BenchmarkProveShippedTrees(b *testing.B) {
	ir, props := shippedTrees(b), allProperties(b)
	in := Input{Policy: ir, Params: nicsdk.DefaultParams(), Layout: nicsdk.DefaultLayout, Names: names}
	for b.Loop() {
		if _, err := Run(in, props); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/all-properties")
}

// BenchmarkProveMLPCuts runs cuts-when-congested on a network quantized from rlcc_adpg for 10
// s and reports the share of the region proven (issue 30: the int MLP within 60 s, its share
// reported; nicc prove's default budget is 60 s).
func BenchmarkProveMLPCuts(b *testing.B) {
	ir := shippedMLP(b, rand.New(rand.NewPCG(7, 7)))
	p, _ := ParseProperty("cuts-when-congested")
	in := Input{Policy: ir, Params: nicsdk.DefaultParams(), Layout: nicsdk.DefaultLayout, Names: names, Budget: 10 * time.Second}
	var share float64
	for b.Loop() {
		r, err := Run(in, []Property{p})
		if err != nil {
			b.Fatal(err)
		}
		share = r.Results[0].ProvenShare
	}
	b.ReportMetric(100*share, "proven-%")
}
