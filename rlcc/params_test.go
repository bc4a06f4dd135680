package rlcc

import (
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

func TestParams(t *testing.T) {
	p, err := Defaults().Fixed()
	if err != nil || p != nicsdk.DefaultParams() {
		t.Fatalf("Defaults().Fixed() = %+v, %v; want nicsdk.DefaultParams() %+v", p, err, nicsdk.DefaultParams())
	}
	for i, f := range ParamFields {
		if f.Get(Defaults()) != f.Default {
			t.Errorf("%s: default %v, Defaults() has %v", f.Flag, f.Default, f.Get(Defaults()))
		}
		q := Defaults()
		f.Set(&q, -1)
		if _, err := q.Fixed(); err == nil || !strings.HasPrefix(err.Error(), "--"+f.Flag+" -1: ") {
			t.Errorf("field %d at -1: %v; want an error naming --%s", i, err, f.Flag)
		}
	}
	q := Defaults()
	q.MinRate, q.InitRate = 0.5, 0.25
	if _, err := q.Fixed(); err == nil || !strings.HasPrefix(err.Error(), "--rlcc-min-rate 0.5 --rlcc-init-rate 0.25: ") {
		t.Errorf("clashing rates: %v", err)
	}
}
