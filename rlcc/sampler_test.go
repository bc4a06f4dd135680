package rlcc

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The sampler and its o maximum follow the parameters: T = target·scale, o up to 100·T within
// the handler's clamp; the defaults are the published sampler's.
func TestSamplerFollowsParams(t *testing.T) {
	if s := SamplerFor(nicsdk.DefaultParams()); s != DefaultSampler {
		t.Errorf("default parameters: sampler %+v, want DefaultSampler", s)
	}
	if DefaultSampler.T() != 0.064*12 || (Sampler{}).T() != DefaultSampler.T() {
		t.Errorf("default T %v, zero sampler's %v, want %v", DefaultSampler.T(), Sampler{}.T(), 0.064*12)
	}
	if got := SampleOMax(nicsdk.DefaultParams()); math.Abs(got-76.8) > 1e-12 {
		t.Errorf("default o max %v, want 76.8", got)
	}
	p, err := nicsdk.NewParams(0.125, 1.5, 4, 0.001, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := SamplerFor(p); s.T() != 0.5 || s.AMin != 0.8 || s.AMax != 1.2 {
		t.Errorf("target 0.125 scale 4: sampler %+v (T %v), want T 0.5 on [0.8, 1.2]", s, s.T())
	}
	if got := SampleOMax(p); got != 50 {
		t.Errorf("target 0.125 scale 4: o max %v, want 50", got)
	}
	p, _ = nicsdk.NewParams(0.5, 1.5, 4, 0.001, 1) // 100·T = 200, beyond the clamp
	if got, want := SampleOMax(p), float64(nicsdk.OMax)/nicsdk.Q16One; got != want {
		t.Errorf("target 0.5 scale 4: o max %v, want the clamp %v", got, want)
	}
	if _, err := (Sampler{AMin: 1, AMax: 1}).Stream(1); err == nil {
		t.Error("an empty multiplier range streams")
	}
}
