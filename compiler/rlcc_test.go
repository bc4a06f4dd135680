package compiler

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/nicsdk"
)

// The sampler and verify's o maximum follow the parameters: T = target·scale, o up to 100·T
// within the handler's clamp; the defaults are the published sampler's.
func TestRLCCSamplerFollowsParams(t *testing.T) {
	if s := rlccSampler(nicsdk.DefaultParams()); s != distill.DefaultRLCC {
		t.Errorf("default parameters: sampler %+v, want distill.DefaultRLCC", s)
	}
	if got := rlccSampleOMax(nicsdk.DefaultParams()); math.Abs(got-76.8) > 1e-12 {
		t.Errorf("default o max %v, want 76.8", got)
	}
	p, err := nicsdk.NewParams(0.125, 1.5, 4, 0.001, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := rlccSampler(p); s.T() != 0.5 || s.AMin != 0.8 || s.AMax != 1.2 {
		t.Errorf("target 0.125 scale 4: sampler %+v (T %v), want T 0.5 on [0.8, 1.2]", s, s.T())
	}
	if got := rlccSampleOMax(p); got != 50 {
		t.Errorf("target 0.125 scale 4: o max %v, want 50", got)
	}
	p, _ = nicsdk.NewParams(0.5, 1.5, 4, 0.001, 1) // 100·T = 200, beyond the clamp
	if got, want := rlccSampleOMax(p), float64(nicsdk.OMax)/nicsdk.Q16One; got != want {
		t.Errorf("target 0.5 scale 4: o max %v, want the clamp %v", got, want)
	}
}
