package distill

import (
	"reflect"
	"testing"

	"github.com/nicc-dev/nicc/rlcc"
)

func TestRLCCSampler(t *testing.T) {
	const n = 20000
	d, err := DefaultRLCC.Sample(n, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Names, rlcc.Names) || len(d.X) != 4 || stateRows(d) != n || d.Y != nil {
		t.Fatalf("names %v, %d columns of %d rows, Y %v", d.Names, len(d.X), stateRows(d), d.Y != nil)
	}
	T := DefaultRLCC.T()
	if T != 0.064*12 {
		t.Errorf("T = %v", T)
	}
	for _, a := range []int{0, 2} {
		for _, v := range d.X[a] {
			if v < 0.8 || v >= 1.2 {
				t.Fatalf("multiplier %v outside [0.8, 1.2)", v)
			}
		}
	}
	for _, o := range []int{1, 3} {
		low := 0
		for _, v := range d.X[o] {
			if v < -T || v >= 100*T {
				t.Fatalf("observation %v outside [-T, 100T)", v)
			}
			if v < T {
				low++
			}
		}
		// Half the draws on [-T, T]: 10000 ± 5σ (σ = 71).
		if low < n/2-355 || low > n/2+355 {
			t.Errorf("column %d: %d of %d draws on [-T, T), want about half", o, low, n)
		}
	}
	again, _ := DefaultRLCC.Sample(n, 7)
	if !reflect.DeepEqual(d, again) {
		t.Error("same seed, different states")
	}
	other, _ := DefaultRLCC.Sample(n, 8)
	if reflect.DeepEqual(d.X, other.X) {
		t.Error("different seeds, same states")
	}
	if _, err := DefaultRLCC.Sample(0, 1); err == nil {
		t.Error("0 samples accepted")
	}
	if (RLCCSampler{}).Inputs() != 4 {
		t.Error("RL-CC window is not 4 values")
	}
	zero, err := RLCCSampler{}.Sample(10, 7)
	if err != nil {
		t.Fatal(err)
	}
	if small, _ := DefaultRLCC.Sample(10, 7); !reflect.DeepEqual(zero, small) {
		t.Error("the zero RLCCSampler is not DefaultRLCC")
	}
}

// The stream is Sample's states in Sample's order, and both are the states the sampler has
// always drawn for a seed (diff's and distill's results depend on them).
func TestRLCCStream(t *testing.T) {
	want := [][]float64{
		{0.8836908726192579, 11.617482749143203, 1.1474931678526483, -0.5042474196202915},
		{0.8217631005618339, 8.857463196228059, 1.0216989326499681, 0.6499192380703711},
		{1.0348580860446415, 44.10411308523145, 0.9857218929493647, 70.52264153714326},
	}
	d, err := DefaultRLCC.Sample(1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.RowMajor()[:3]; !reflect.DeepEqual(got, want) {
		t.Errorf("seed 7 draws %v, want %v", got, want)
	}
	next, err := DefaultRLCC.Stream(7)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 4)
	for r, s := range d.RowMajor() {
		next(row)
		if !reflect.DeepEqual(row, s) {
			t.Fatalf("state %d: stream %v, Sample %v", r, row, s)
		}
	}
	if _, err := (rlcc.Sampler{AMin: 1, AMax: 1}).Stream(1); err == nil {
		t.Error("an empty multiplier range streams")
	}
}
