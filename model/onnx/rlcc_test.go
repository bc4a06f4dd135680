package onnx

import (
	"maps"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// rlccNet is a 4 → 2 → 1 network carrying RL-CC parameters.
func rlccNet() *model.Model {
	return &model.Model{Version: model.NativeVersion, Name: "p", Inputs: []string{"a_prev", "o", "a_prev2", "o_prev"},
		RLCC: map[string]float64{"target": 0.064, "beta": 1.5, "scale": 12.5, "base_rtt_us": 4.02},
		Layers: []model.Layer{
			{Op: model.OpDense, In: 4, Out: 2, Act: model.ActReLU, W: [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}}},
			{Op: model.OpDense, In: 2, Out: 1, Act: model.ActTanh, W: [][]float64{{0.5, -0.5}}},
		}}
}

// The parameters go out as metadata_props and come back; a property of another tool is
// ignored, and one of nicc's that is not a number, given twice, unknown or not finite is
// refused.
func TestRLCCMetadataRoundTrip(t *testing.T) {
	m := rlccNet()
	pb, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(pb)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back.RLCC, m.RLCC) {
		t.Errorf("parameters %v, wrote %v", back.RLCC, m.RLCC)
	}
	prop := func(k, v string) []byte { return msg(nil, 14, str(str(nil, 1, k), 2, v)) }
	other := append(append([]byte{}, pb...), prop("torch.version", "2.3")...)
	if back, err := Parse(other); err != nil || !maps.Equal(back.RLCC, m.RLCC) {
		t.Errorf("another tool's property: %v, %v", back, err)
	}
	for _, c := range []struct{ k, v, want string }{
		{"nicc.rlcc.min_rate", "fast", `"nicc.rlcc.min_rate" is "fast", want a number`},
		{"nicc.rlcc.scale", "12", `"nicc.rlcc.scale" is given twice`},
		{"nicc.rlcc.hidden", "12", `rlcc parameter "hidden" is not one of`},
		{"nicc.rlcc.init_rate", "NaN", `rlcc parameter "init_rate" is NaN`},
	} {
		_, err := Parse(append(append([]byte{}, pb...), prop(c.k, c.v)...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.k, c.v, err, c.want)
		}
	}
}
