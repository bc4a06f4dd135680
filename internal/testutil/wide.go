package testutil

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// TeacherWide writes the RL-CC teacher (its native JSON at teacherJSON) widened to a window of three states of (action, o): its
// first layer reads a_{t-3} and o_{t-2} too (0.3 of its weights on a_{t-1} and o_t).
func TeacherWide(t testing.TB, teacherJSON string) string {
	t.Helper()
	b, err := os.ReadFile(teacherJSON)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "teacher_h3"
	m["inputs"] = []string{"a_prev", "o", "a_prev2", "o_prev", "a_prev3", "o_prev2"}
	first := m["layers"].([]any)[0].(map[string]any)
	first["in"] = 6
	var rows []any
	for _, row := range first["w"].([]any) {
		r := row.([]any)
		rows = append(rows, append(r, 0.3*r[0].(float64), 0.3*r[1].(float64)))
	}
	first["w"] = rows
	out := filepath.Join(t.TempDir(), "teacher_h3.json")
	b, _ = json.Marshal(m)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TanhMLP is an RL-CC network, 4 → hidden... → 1, tanh throughout, with biases, its weights
// and biases normal with a standard deviation of 1/√in, drawn from r.
func TanhMLP(r *rand.Rand, hidden ...int) *model.Model {
	in := 4
	m := &model.Model{Version: model.NativeVersion, Name: "tanh", Inputs: []string{"a_prev", "o", "a_prev2", "o_prev"}}
	for _, out := range append(hidden, 1) {
		l := model.Layer{Op: model.OpDense, In: in, Out: out, Act: model.ActTanh, W: make([][]float64, out), B: make([]float64, out)}
		for j := range out {
			l.W[j] = make([]float64, in)
			for i := range in {
				l.W[j][i] = r.NormFloat64() / math.Sqrt(float64(in))
			}
			l.B[j] = r.NormFloat64() / math.Sqrt(float64(in))
		}
		m.Layers = append(m.Layers, l)
		in = out
	}
	return m
}
