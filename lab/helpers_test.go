package lab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/catboost"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/student"
	"github.com/nicc-dev/nicc/target/doca"
)

// The lab's tests compile with host gcc and riscv64-unknown-elf-gcc; a missing compiler fails
// them. They verify on testVectors calls, to keep the package's tests fast.
const testVectors = 20_000

const (
	rlccXGB      = "../testdata/models/rlcc_xgb.json"
	teacherNN    = "../testdata/models/rlcc_teacher.onnx"
	teacherJSON  = "../testdata/models/rlcc_teacher.json"
	docaLSTM     = "../testdata/models/rlcc_adpg_lstm.onnx"
	catboostData = "../testdata/catboost"
)

// compiled caches one compile per configuration for the tests that only read it; the first
// test to ask for a key compiles it while the others wait.
var compiled sync.Map // key → *compileResult

type compileResult struct {
	once sync.Once
	r    *artifact.CompileReport
	dir  string
	err  error
}

var (
	tempDirsMu sync.Mutex
	tempDirs   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func compileOnce(t *testing.T, key string, opt compiler.CompileOptions) (*artifact.CompileReport, string) {
	t.Helper()
	v, _ := compiled.LoadOrStore(key, &compileResult{})
	res := v.(*compileResult)
	res.once.Do(func() {
		res.dir, res.err = os.MkdirTemp("", "nicc-lab-test-")
		if res.err != nil {
			return
		}
		tempDirsMu.Lock()
		tempDirs = append(tempDirs, res.dir) // outlives the test, for the cache; TestMain removes it
		tempDirsMu.Unlock()
		opt.Out = res.dir
		if opt.Vectors == 0 {
			opt.Vectors = testVectors
		}
		res.r, res.err = compiler.Compile(opt)
	})
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.r, res.dir
}

// docaReport and docaLSTMReport are DOCA compiles of trees and of an LSTM, each built in
// one form: every form computes the same decisions, and only fit's choice builds them all.
func docaReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "doca-xgb", compiler.CompileOptions{Model: rlccXGB, SDK: doca.Target, Form: "walk", Vectors: 2000})
}

func docaLSTMReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "doca-lstm", compiler.CompileOptions{Model: docaLSTM, SDK: doca.Target, Form: "branch", Vectors: 4000,
		Int8: &golden.Int8Options{Samples: 2000}})
}

func smallDistill() student.DistillOptions {
	return student.DistillOptions{Teacher: teacherJSON, Samples: 4000, HeldOut: 0.25, Seed: 3,
		Train: distill.Options{Trees: 4, Depth: 3, LearningRate: 1, L2: 1}}
}

// flagParams are the parameters the CLI gives for these flags set (over the defaults).
func flagParams(set map[string]float64) (golden.Params, artifact.ParamSources, error) {
	var v []float64
	var names []string
	for _, f := range rlcc.ParamFields {
		val := f.Default
		if s, ok := set[f.Flag]; ok {
			val = s
			names = append(names, f.Flag)
		}
		v = append(v, val)
	}
	p, err := golden.NewParams(v)
	return p, golden.FlagSources(names), err
}

// catboostFiles writes a CatBoost fixture's model and its rows with CatBoost's outputs into a
// temporary directory.
func catboostFiles(t *testing.T, name string) (*testutil.CatBoostFixture, *model.Model, string, string) {
	t.Helper()
	fx := testutil.LoadCatBoost(t, catboostData, name)
	m, err := catboost.Parse(fx.Model)
	if err != nil {
		t.Fatal(err)
	}
	path, csv := fx.WriteFiles(t, t.TempDir(), m.Inputs, m.Ensemble.Transform == model.TransformSigmoid)
	return fx, m, path, csv
}

// reseal rewrites dir's report.json so that its manifest lists the files as they now are: a
// test's stand-in for a compile that wrote them so.
func reseal(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, artifact.ReportFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, f := range r["manifest"].(map[string]any)["files"].([]any) {
		f := f.(map[string]any)
		fp := filepath.Join(dir, filepath.FromSlash(f["path"].(string)))
		fi, err := os.Stat(fp)
		if err != nil {
			t.Fatal(err)
		}
		if f["sha256"], err = artifact.FileHash(fp); err != nil {
			t.Fatal(err)
		}
		f["bytes"] = fi.Size()
	}
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
