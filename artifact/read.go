package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// NewFileRef records path with its hash.
func NewFileRef(path string) (*FileRef, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	h, err := FileHash(path)
	if err != nil {
		return nil, err
	}
	return &FileRef{Path: abs, Hash: h}, nil
}

// FileHash is the hex SHA-256 of a file's bytes.
func FileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// IsCompileDir reports whether dir is a nicc compile output directory: a directory holding
// report.json and firmware.elf.
func IsCompileDir(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	for _, f := range []string{ReportFile, FirmwareFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// ReadReport opens the compile directory dir for a reader: it reads dir/report.json, checks
// what the readers rely on (a manifest of the files with verify passed, a handler and an
// entry nicc knows, one finite format per model input, the core's name), then checks every
// file the manifest lists against it, and that its verdicts vouch for each file of use (the
// files the reader runs: firmware.elf, doca_firmware.elf). Every reader of a compile
// directory comes through here.
func ReadReport(dir string, use ...string) (*CompileReport, error) {
	path := filepath.Join(dir, ReportFile)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := parseReport(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.CheckFiles(dir, use...); err != nil {
		return nil, err
	}
	return r, nil
}

func parseReport(data []byte) (*CompileReport, error) {
	if len(data) > MaxReportBytes {
		return nil, fmt.Errorf("over the %d MiB limit of a report", MaxReportBytes>>20)
	}
	var r CompileReport
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a nicc compile report: %v", err)
	}
	if err := r.CheckManifest(); err != nil {
		return nil, err
	}
	h, err := ParseHandler(r.Handler)
	if err != nil || h == HandlerAuto {
		return nil, fmt.Errorf("handler %q: want rlcc or none", r.Handler)
	}
	if want := map[Handler]string{HandlerRLCC: EntryHandler, HandlerNone: EntryPolicy}[h]; r.Entry != want {
		return nil, fmt.Errorf("entry %q: the %s handler's is %s", r.Entry, h, want)
	}
	if len(r.Inputs) == 0 || len(r.Inputs) > 1<<16 || len(r.Inputs) != len(r.Model.Inputs) {
		return nil, fmt.Errorf("%d input formats for %d model inputs", len(r.Inputs), len(r.Model.Inputs))
	}
	for i, in := range r.Inputs {
		if in.Frac < quantize.MinFrac || in.Frac > quantize.MaxFrac || in.Min > in.Max {
			return nil, fmt.Errorf("input %d (%s): format Q%d [%d, %d] is not one nicc writes", i+1, in.Name, in.Frac, in.Min, in.Max)
		}
	}
	if l := r.LSTM; l != nil && (l.StateWords < 1 || l.StateWords > nicsdk.CtxWords) {
		return nil, fmt.Errorf("lstm state_words %d: want 1 to %d", l.StateWords, nicsdk.CtxWords)
	}
	if h == HandlerRLCC && r.Params == nil {
		return nil, fmt.Errorf("the rlcc handler's report has no rlcc_params")
	}
	if r.Budget == nil || r.Budget.Core.Name == "" {
		return nil, fmt.Errorf("no budget section naming the core")
	}
	return &r, nil
}

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
