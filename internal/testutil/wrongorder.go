package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// WrongOrderModel is the nicc JSON model adpg (rlcc_adpg.json) with its inputs swapped into the
// wrong order, written to a temporary file: the first dense layer's columns (a_prev, o,
// a_prev2, o_prev) read as (a_prev2, o_prev, a_prev, o), which is what a network trained on
// the authors' oldest-first window does when nicc's handler feeds it.
func WrongOrderModel(t testing.TB, adpg string) string {
	t.Helper()
	data, err := os.ReadFile(adpg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range m.Layers[0].W {
		row[0], row[1], row[2], row[3] = row[2], row[3], row[0], row[1]
	}
	m.Name = "rlcc_adpg_wrong_order"
	out, err := model.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wrong_order.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
