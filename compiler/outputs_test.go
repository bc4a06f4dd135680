package compiler

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/student"
)

// The shipped models' compiles are pinned: every emitted source, the ELF's .text and every
// figure of report.json (paths, stage times and the host builds' hashes aside) are compared with
// testdata/outputs/<case>/, which NICC_UPDATE_SNAPSHOTS=1 rewrites. A refactor that must keep
// outputs byte-identical (issue 12) runs this; a change that means to alter them rewrites the
// snapshots in the same commit.

var updateOutputs = os.Getenv("NICC_UPDATE_SNAPSHOTS") == "1"

type outputCase struct {
	name string
	run  func(t *testing.T, dir string) error // nil: the case is a shared compile (sharedOutputs)
}

// outputCases are the shipped models under every handler and --target, each a compile that
// the case's function runs into dir.
var outputCases = []outputCase{
	{"rlcc_xgb", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: rlccXGB, Out: dir})
	}},
	{"rlcc_xgb_none", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: rlccXGB, Out: dir, Handler: artifact.HandlerNone,
			Ranges: "../testdata/models/rlcc_xgb.ref.csv", Predictions: "../testdata/models/rlcc_xgb.ref.csv"})
	}},
	{"lightgbm_bc", nil}, // bcReport's compile, which TestCompileLightGBMBinary reads
	{"teacher_int", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/rlcc_teacher.json", Out: dir, Int8: &golden.Int8Options{}})
	}},
	{"lstm_int", nil}, // lstmRLCCReport's compile, which TestCompileLSTMRLCC reads
	{"teacher_onnx_int", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/rlcc_teacher.onnx", Out: dir, Int8: &golden.Int8Options{}})
	}},
	{"teacher_unnamed_int", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/rlcc_teacher_unnamed.onnx", Out: dir,
			Inputs: []string{"a_prev", "o", "a_prev2", "o_prev"}, Int8: &golden.Int8Options{}})
	}},
	{"lstm_batch_first_int", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/rlcc_lstm_batch_first.onnx", Out: dir, Int8: &golden.Int8Options{}})
	}},
	{"xgb_small", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/xgb_small.json", Out: dir, Handler: artifact.HandlerNone})
	}},
	{"xgb_logistic", func(t *testing.T, dir string) error {
		return compileForOutputs(CompileOptions{Model: "../testdata/models/xgb_logistic.json", Out: dir})
	}},
	{"teacher_trees", func(t *testing.T, dir string) error {
		studentFile := filepath.Join(t.TempDir(), "student.json")
		// nicc distill's defaults, on fewer states
		train := student.DefaultTrain
		train.Seed = 1
		if _, err := student.Distill(student.DistillOptions{Teacher: "../testdata/models/rlcc_teacher.onnx", Samples: 20_000, HeldOut: 0.1, Seed: 1,
			Train: train}, studentFile); err != nil {
			return err
		}
		return compileForOutputs(CompileOptions{Model: studentFile, Out: dir})
	}},
}

// outputVectors keeps the pinned compiles quick; the figures depend on it.
const outputVectors = 20_000

func compileForOutputs(opt CompileOptions) error {
	opt.Vectors, opt.Seed = outputVectors, 1
	_, err := Compile(opt)
	return err
}

// sharedOutputs are the cases whose compile other tests read too, made once for all.
var sharedOutputs = map[string]func(t *testing.T) (*artifact.CompileReport, string){
	"lstm_int":    lstmRLCCReport,
	"lightgbm_bc": bcReport,
}

// The cases compile in parallel: each into its own directory, or a shared compile's.
func TestShippedOutputsUnchanged(t *testing.T) {
	t.Parallel()
	for _, c := range outputCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var dir string
			if c.run == nil {
				_, dir = sharedOutputs[c.name](t)
			} else {
				dir = t.TempDir()
				if err := c.run(t, dir); err != nil {
					t.Fatal(err)
				}
			}
			got := pinnedOutputs(t, dir)
			snap := filepath.Join("..", "testdata", "outputs", c.name+".json")
			if updateOutputs {
				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(snap, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(snap)
			if err != nil {
				t.Fatalf("%v (NICC_UPDATE_SNAPSHOTS=1 writes it)", err)
			}
			var want map[string]any
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			// Compare as JSON values, as the snapshot holds them.
			gb, _ := json.Marshal(got)
			var gotJSON map[string]any
			if err := json.Unmarshal(gb, &gotJSON); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, gotJSON); d != "" {
				t.Errorf("%s: the outputs differ from %s (-want +got; NICC_UPDATE_SNAPSHOTS=1 rewrites it if the change is meant):\n%s", c.name, snap, d)
			}
		})
	}
}

// pinnedOutputs are what a compile into dir must keep: the SHA-256 of each emitted source and
// of the ELF's .text, and report.json with the output directory written $OUT and the model's
// own path and the stage times taken out.
func pinnedOutputs(t *testing.T, dir string) map[string]any {
	t.Helper()
	hashes := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if ext := filepath.Ext(p); ext == ".c" || ext == ".h" || ext == ".ld" || strings.HasPrefix(rel, "vectors") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			hashes[rel] = sha(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(filepath.Join(dir, artifact.FirmwareFile))
	if err != nil {
		t.Fatal(err)
	}
	text, err := f.Section(".text").Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	hashes["firmware.elf .text"] = sha(text)

	b, err := os.ReadFile(filepath.Join(dir, artifact.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	delete(rep, "out")
	delete(rep, "stage_times")
	if m, ok := rep["model"].(map[string]any); ok {
		delete(m, "file") // the student of --target trees lives in a temporary directory
	}
	if g, ok := rep["golden"].(map[string]any); ok {
		delete(g, "model_path")
	}
	// A host build's bytes depend on the host's gcc and libc, and under UBSan on the directory
	// it was built in: the manifest's entry keeps its name.
	if m, ok := rep["manifest"].(map[string]any); ok {
		for _, f := range m["files"].([]any) {
			if f := f.(map[string]any); strings.HasPrefix(f["path"].(string), artifact.HostDir+"/") && filepath.Ext(f["path"].(string)) != ".c" {
				delete(f, "sha256")
				delete(f, "bytes")
			}
		}
	}
	return map[string]any{"sha256": hashes, "report": withoutDir(rep, dir)}
}

// withoutDir is v with dir written $OUT in every string.
func withoutDir(v any, dir string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, dir, "$OUT")
	case []any:
		for i := range v {
			v[i] = withoutDir(v[i], dir)
		}
	case map[string]any:
		for k := range v {
			v[k] = withoutDir(v[k], dir)
		}
	}
	return v
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Every snapshot belongs to a case.
func TestOutputSnapshotsUsed(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "testdata", "outputs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		c := strings.TrimSuffix(filepath.Base(n), ".json")
		if !slices.ContainsFunc(outputCases, func(oc outputCase) bool { return oc.name == c }) {
			t.Errorf("%s: no case uses it (delete it)", n)
		}
	}
	if len(names) != len(outputCases) {
		t.Errorf("%d snapshots for %d cases", len(names), len(outputCases))
	}
}
