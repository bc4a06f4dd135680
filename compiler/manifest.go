package compiler

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// A compile directory is one verified unit. report.json's manifest lists every file the
// compile wrote, with its size and SHA-256, and the verdicts the compile reached; every
// reader of a compile directory opens it through ReadReport (or OpenCompiled, which calls
// it), which checks the files against the manifest before anything is used and refuses the
// files a verdict does not vouch for. report.json itself is the root of trust: the manifest
// cannot list it.

// Manifest is what a compile wrote and what it found.
type Manifest struct {
	Files    []ManifestFile `json:"files"`
	Verdicts Verdicts       `json:"verdicts"`
}

// ManifestFile is one file a compile wrote, by its slash-separated path in the directory.
type ManifestFile struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Verdicts are what a compile's checks found.
type Verdicts struct {
	// Verify is VerdictPass when golden, the host builds and firmware.elf in fwsim agreed.
	Verify string `json:"verify"`
	// Budget is the WCET's verdict, "fits" or "over budget", or VerdictNotRun.
	Budget string `json:"budget"`
	// DOCA (--sdk doca) is VerdictPass when the DOCA program's triad agreed and its entry
	// was bounded.
	DOCA string `json:"doca,omitempty"`
}

// A check's verdict.
const (
	VerdictPass   = "pass"
	VerdictFail   = "fail"
	VerdictNotRun = "not run"
)

// manifest lists every file in the compile's fresh directory (report.json is written after)
// and the verdicts of r.
func (c *compilation) manifest(r *CompileReport) (*Manifest, error) {
	m := &Manifest{Verdicts: Verdicts{Verify: c.verdict("verify"), Budget: VerdictNotRun}}
	if r.Budget != nil && c.passed("budget") {
		m.Verdicts.Budget = r.Budget.Verdict
	}
	if c.opt.SDK == SDKDOCA {
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
		h, err := fileHash(p)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, ManifestFile{Path: filepath.ToSlash(rel), Bytes: fi.Size(), SHA256: h})
		return nil
	})
	return m, err
}

// verdict is VerdictPass for a stage that passed, VerdictFail for the one that failed, and
// VerdictNotRun for one after it.
func (c *compilation) verdict(stage string) string {
	switch {
	case c.passed(stage):
		return VerdictPass
	case slices.ContainsFunc(c.times, func(t StageTime) bool { return t.Stage == stage }):
		return VerdictFail
	}
	return VerdictNotRun
}

// vouchers say which verdict a reader needs before it uses a file: the firmware and the
// calls measured on it were verified by verify, the DOCA program and its calls by the doca
// stage.
var vouchers = map[string]func(Verdicts) (string, string){
	FirmwareFile:      func(v Verdicts) (string, string) { return "verify", v.Verify },
	VectorsFile:       func(v Verdicts) (string, string) { return "verify", v.Verify },
	PolicyVectorsFile: func(v Verdicts) (string, string) { return "verify", v.Verify },
	DOCAFirmwareFile:  func(v Verdicts) (string, string) { return "doca", v.DOCA },
	DOCAVectorsFile:   func(v Verdicts) (string, string) { return "doca", v.DOCA },
}

// checkManifest refuses a report without a manifest, or with one nicc would not write.
func (r *CompileReport) checkManifest() error {
	m := r.Manifest
	if m == nil {
		return errors.New("lists no files (written by an older nicc): compile again")
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || path.Clean(f.Path) != f.Path || f.Path == ReportFile || seen[f.Path] {
			return fmt.Errorf("manifest: %q is not a file a compile writes", f.Path)
		}
		seen[f.Path] = true
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != 32 || f.Bytes < 0 {
			return fmt.Errorf("manifest: %s: sha256 %q or size %d is not one nicc writes", f.Path, f.SHA256, f.Bytes)
		}
	}
	if m.Verdicts.Verify != VerdictPass {
		how := ""
		if f := r.Failure; f != nil {
			how = fmt.Sprintf(" (it failed at %s: %s)", f.Stage, f.Kind)
		}
		return fmt.Errorf("the compile did not pass verify%s: nothing in it is verified; compile again", how)
	}
	return nil
}

// checkFiles checks every file of dir the manifest lists against it (a regular file, not a
// link, of the size and SHA-256 listed), and that the verdicts vouch for each file of use.
// Each refusal names the file.
func (r *CompileReport) checkFiles(dir string, use ...string) error {
	m := r.Manifest
	for _, u := range use {
		if !slices.ContainsFunc(m.Files, func(f ManifestFile) bool { return f.Path == u }) {
			if u == DOCAFirmwareFile && r.DOCA == nil {
				return fmt.Errorf("%s was compiled without --sdk doca: it has no DOCA program (%s); compile it with --sdk doca", dir, DOCAFirmwareFile)
			}
			return fmt.Errorf("%s: this compile did not write it (%s does not list it)", filepath.Join(dir, u), ReportFile)
		}
		if vouch := vouchers[u]; vouch != nil {
			if stage, v := vouch(m.Verdicts); v != VerdictPass {
				return fmt.Errorf("%s: the compile's %s stage did not pass (%s), so it is not verified; compile again", filepath.Join(dir, u), stage, v)
			}
		}
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: missing; %s lists it: compile again", p, ReportFile)
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s: not the regular file %s lists (a link or another kind of file); compile again", p, ReportFile)
		case fi.Size() != f.Bytes:
			return fmt.Errorf("%s: changed since nicc compile wrote it (%d bytes, %s lists %d); compile again", p, fi.Size(), ReportFile, f.Bytes)
		}
		h, err := fileHash(p)
		if err != nil {
			return err
		}
		if h != f.SHA256 {
			return fmt.Errorf("%s: changed since nicc compile wrote it (sha256 %.12s, %s lists %.12s); compile again", p, h, ReportFile, f.SHA256)
		}
	}
	return nil
}
