package compiler

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/target/doca"
)

// A compile directory is one verified unit. report.json's manifest lists every file the
// compile wrote, with its size and SHA-256, and the verdicts the compile reached; every
// reader of a compile directory opens it through ReadReport (or OpenCompiled, which calls
// it), which checks the files against the manifest before anything is used and refuses the
// files a verdict does not vouch for. report.json itself is the root of trust: the manifest
// cannot list it.

// manifest lists every file in the compile's fresh directory (report.json is written after)
// and the verdicts of r.
func (c *compilation) manifest(r *artifact.CompileReport) (*artifact.Manifest, error) {
	m := &artifact.Manifest{Verdicts: artifact.Verdicts{Verify: c.verdict("verify"), Budget: artifact.VerdictNotRun}}
	if r.Budget != nil && c.passed("budget") {
		m.Verdicts.Budget = r.Budget.Verdict
	}
	if c.opt.SDK == doca.Target {
		m.Verdicts.DOCA = c.verdict("doca")
	}
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := artifact.FileHash(p)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, artifact.ManifestFile{Path: filepath.ToSlash(rel), Bytes: fi.Size(), SHA256: h})
		return nil
	})
	return m, err
}

// verdict is VerdictPass for a stage that passed, VerdictFail for the one that failed, and
// VerdictNotRun for one after it.
func (c *compilation) verdict(stage string) string {
	switch {
	case c.passed(stage):
		return artifact.VerdictPass
	case slices.ContainsFunc(c.times, func(t artifact.StageTime) bool { return t.Stage == stage }):
		return artifact.VerdictFail
	}
	return artifact.VerdictNotRun
}
