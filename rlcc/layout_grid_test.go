package rlcc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

var allFour = nicsdk.Layout{History: 3, Features: nicsdk.AllFeatures}

func TestGridAndClampedPerLayout(t *testing.T) {
	p := nicsdk.DefaultParams()
	g, c := Grid(p, allFour), Clamped(allFour)
	if len(g) != 12 || len(c) != 12 {
		t.Fatalf("history 3, all four: %d grid inputs, %d clamp marks", len(g), len(c))
	}
	for i, s := range allFour.Slots() {
		lo, hi := nicsdk.FeatureRange(s.Feature, p)
		if g[i].Min != lo || g[i].Max != hi || g[i].Frac != 16 || g[i].Name != s.Name() {
			t.Errorf("input %d %+v: %+v, want [%d, %d]", i, s, g[i], lo, hi)
		}
		if want := s.Feature == nicsdk.FeatObs || s.Feature == nicsdk.FeatInfl; c[i] != want {
			t.Errorf("input %d %s: clamped %v", i, s.Name(), c[i])
		}
	}
	if d := Clamped(nicsdk.DefaultLayout); len(d) != 4 || d[0] || !d[1] || d[2] || !d[3] {
		t.Errorf("default clamp marks %v", d)
	}
}

func TestSamplerLayout(t *testing.T) {
	// The default layout's states are Stream's; another layout's rows are its width, each
	// feature in its sampled range, and the inflation gives back the state's o at its rate.
	def, _ := DefaultSampler.Stream(3)
	lay, err := DefaultSampler.StreamLayout(3, nicsdk.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]float64, 4), make([]float64, 4)
	for range 100 {
		def(a)
		lay(b)
		if a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || a[3] != b[3] {
			t.Fatalf("default layout %v, Stream %v", b, a)
		}
	}
	next, err := DefaultSampler.StreamLayout(4, allFour)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 12)
	target, scale := DefaultSampler.Target, DefaultSampler.Scale
	for range 10_000 {
		next(row)
		for lag := range 3 {
			a, o, infl, rate := row[4*lag], row[4*lag+1], row[4*lag+2], row[4*lag+3]
			if a < SampleAMin || a > SampleAMax || rate < SampleRateMin || rate > 1 || infl < 1 || infl > SampleInflMax {
				t.Fatalf("state %v out of range", row[4*lag:4*lag+4])
			}
			if back := (max(infl-SampleBeta, 0)*math.Sqrt(rate) - target) * scale; infl < SampleInflMax && math.Abs(back-o) > 1e-9*max(1, math.Abs(o)) {
				t.Fatalf("state %v: o from the inflation and rate %v", row[4*lag:4*lag+4], back)
			}
		}
	}
	if _, err := DefaultSampler.StreamLayout(1, nicsdk.Layout{History: 9, Features: 2}); err == nil {
		t.Error("history 9: no error")
	}
}

func TestEventGenLayout(t *testing.T) {
	// Valid starting contexts hold the layout's top words in range; "thresholds" ones land
	// the older states on their inputs' thresholds; the newest inflation's thresholds are
	// aimed at when the layout has no o.
	p := nicsdk.DefaultParams()
	l := nicsdk.Layout{History: 3, Features: 1<<nicsdk.FeatInfl | 1<<nicsdk.FeatRate | 1<<nicsdk.FeatAction}
	thr := make([][]int32, l.Inputs())
	for i := range thr {
		thr[i] = []int32{int32(1000 + 77*i)}
	}
	thr[1] = []int32{3 * nicsdk.Q16One} // the newest inflation: 3.0
	g := EventGen{Rng: rand.New(rand.NewPCG(5, 6)), Params: p, Layout: l, Thresholds: thr}
	landed, aimed := map[int]bool{}, 0
	for range 2000 {
		ctx, kind := g.StartCtx()
		for i, s := range l.Slots() {
			w := l.Word(s.Feature, s.Lag)
			if w < nicsdk.RLCCWords {
				continue
			}
			v := int64(int32(ctx[w]))
			lo, hi := nicsdk.FeatureRange(s.Feature, p)
			if kind == "valid" && (v < int64(lo) || v > int64(hi)) {
				t.Fatalf("valid context: %s = %d outside [%d, %d]", s.Name(), v, lo, hi)
			}
			if kind == "thresholds" && v >= int64(thr[i][0])-1 && v <= int64(thr[i][0])+2 {
				landed[i] = true
			}
		}
		if kind != "valid" {
			continue
		}
		for range 20 {
			ev, _ := g.Event(ctx, 0)
			if base := ctx[nicsdk.CtxBaseRTT]; ev.Type == nicsdk.EvRTT && ev.RTTNs != 0 && ev.RTTNs < base*4 {
				if infl := nicsdk.RTTInflation(ev.RTTNs, base); infl >= 3*nicsdk.Q16One-100 && infl <= 3*nicsdk.Q16One+100 {
					aimed++
				}
			}
		}
	}
	if len(landed) < l.ExtraWords() || aimed < 100 {
		t.Errorf("top words landed on thresholds %v (of %d), RTTs aimed at the inflation's threshold %d", landed, l.ExtraWords(), aimed)
	}
}

func TestHeatInputIn(t *testing.T) {
	// The default layout's cell is Input's; another layout puts a and o_t in its newest state,
	// the held state in the older ones, and an inflation that gives o at line rate.
	h := HeatStates(DefaultSampler)[2]
	x := h.InputIn(nicsdk.DefaultLayout, 0.9, 10)
	if y := h.Input(0.9, 10); len(x) != 4 || x[0] != y[0] || x[1] != y[1] || x[2] != y[2] || x[3] != y[3] {
		t.Fatalf("default layout %v, Input %v", x, y)
	}
	x = h.InputIn(allFour, 0.9, 10)
	o := 10 * DefaultSampler.T()
	target, scale := DefaultSampler.Target, DefaultSampler.Scale
	want := []float64{0.9, o, SampleBeta + o/scale + target, 1, 1, h.OPrev, SampleBeta + h.OPrev/scale + target, 1, 1, h.OPrev, SampleBeta + h.OPrev/scale + target, 1}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-12 {
			t.Fatalf("history 3, all four: %v, want %v", x, want)
		}
	}
	if back := (max(x[2]-SampleBeta, 0)*math.Sqrt(x[3]) - target) * scale; math.Abs(back-o) > 1e-9 {
		t.Errorf("the newest inflation %v gives o %v, want %v", x[2], back, o)
	}
}
