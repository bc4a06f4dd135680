// Package testutil holds what the tests of codegen, internal/softfloat, compiler and cmd/nicc
// share: snapshots of generated files, RL-CC sample rows, the strict C flags, a machine on the
// dpa profile, a model with a bad weight, and the CatBoost models with CatBoost's own
// predictions (catboost.go, which model/catboost's tests read too), and the state of a
// directory's files (dirstate.go, for the compile-directory tests).
// Only tests import it.
package testutil

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/rlcc"
)

// StrictFlags are the warnings generated C must compile clean under.
var StrictFlags = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}

// Update says NICC_UPDATE_SNAPSHOTS=1: snapshots are rewritten rather than compared.
var Update = os.Getenv("NICC_UPDATE_SNAPSHOTS") == "1"

// Snapshots are the pinned files under Dir.
type Snapshots struct {
	Dir  string
	used sync.Map // slash path under Dir -> true
}

// Check compares got with the snapshot rel, or rewrites it (Update).
func (s *Snapshots) Check(t *testing.T, rel string, got []byte) {
	t.Helper()
	s.used.Store(rel, true)
	path := filepath.Join(s.Dir, filepath.FromSlash(rel))
	if Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with NICC_UPDATE_SNAPSHOTS=1 go test)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from its snapshot (-want +got; NICC_UPDATE_SNAPSHOTS=1 rewrites it):\n%s", rel, diff)
	}
}

// Unused fails on snapshots no Check used (with Update, it deletes them). Call it after a
// full run, when every test has checked its snapshots.
func (s *Snapshots) Unused() error {
	var unused []string
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.Dir, path)
		if _, ok := s.used.Load(filepath.ToSlash(rel)); !ok {
			if Update {
				return os.Remove(path)
			}
			unused = append(unused, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(unused) > 0 {
		return fmt.Errorf("FAIL: snapshots no test uses (delete them, or rerun with NICC_UPDATE_SNAPSHOTS=1): %v", unused)
	}
	return nil
}

// RLCCRows are n states of the default RL-CC sampler, row by row (the states distill draws
// with the same seed).
func RLCCRows(n int, seed uint64) ([][]float64, error) {
	next, err := rlcc.DefaultSampler.Stream(seed)
	if err != nil {
		return nil, err
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, len(rlcc.Names))
		next(rows[i])
	}
	return rows, nil
}

// DPAMachine loads the ELF at path into fwsim on the dpa profile.
func DPAMachine(t testing.TB, path string) (*fwsim.Image, *fwsim.Profile, *fwsim.Machine) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := fwsim.LoadELF(data)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := fwsim.LookupProfile("dpa")
	if err != nil {
		t.Fatal(err)
	}
	m, err := fwsim.NewMachine(im, prof)
	if err != nil {
		t.Fatal(err)
	}
	return im, prof, m
}

// firstWeight is the first number of the first "w" matrix in a nicc JSON model.
var firstWeight = regexp.MustCompile(`("w": \[\s*\[\s*)(-?[0-9][0-9.eE+-]*)`)

// WithFirstWeight is a nicc JSON model's text with its first weight's text replaced by v (such
// as NaN or 1e400, to test refusals), whatever the weights are.
func WithFirstWeight(t testing.TB, model, v string) string {
	t.Helper()
	loc := firstWeight.FindStringSubmatchIndex(model)
	if loc == nil {
		t.Fatal("no weight matrix in the model")
	}
	return model[:loc[4]] + v + model[loc[5]:]
}
