package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
