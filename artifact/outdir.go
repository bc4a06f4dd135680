package artifact

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// Output directories are often shared or checked out from somewhere else, so nicc never
// writes through a symbolic link it finds there: a planted link would otherwise have nicc (or
// gcc) overwrite whatever it points at.

// OutDir makes dir (and its parents) unless it exists; an existing dir must be a real
// directory, not a symbolic link.
func OutDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; nicc does not write through links (give the real directory)", dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	case err == nil:
		return nil
	case !os.IsNotExist(err):
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// clearOut makes path free for a new file: a regular file there is removed, a symbolic link
// or anything else is refused.
func clearOut(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; nicc does not write through links (remove it)", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file", path)
	}
	return os.Remove(path)
}

// createOut creates path as a new file (clearOut, then an exclusive create, so a link
// planted in between is refused too).
func createOut(path string) (*os.File, error) {
	if err := clearOut(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// WriteOut writes data to path through createOut.
func WriteOut(path string, data []byte) error {
	f, err := createOut(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteOutTo writes what w writes to path through createOut.
func WriteOutTo(path string, w io.WriterTo) error {
	f, err := createOut(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteModel writes m in nicc's native JSON to path, making its directory (OutDir) first.
func WriteModel(path string, m *model.Model) error {
	if err := OutDir(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := model.Marshal(m)
	if err != nil {
		return err
	}
	return WriteOut(path, b)
}

// A compile directory is one verified unit: compile builds it in a fresh directory beside
// --out and renames that into place only once report.json is written, so a reader never
// sees the files of two compiles side by side, and an interrupted compile leaves the old
// directory as it was.

// stagingSuffix and asideSuffix name the directories a compile keeps beside --out while it
// runs: the new one being built (one per --out, created exclusively, so that a second
// compile into the same directory fails), and the old one for the moment of the swap.
const (
	stagingSuffix = ".nicc-tmp"
	asideSuffix   = ".nicc-old-"
)

// StagedOut is a compile's fresh directory beside out.
type StagedOut struct {
	out     string // --out as given
	abs     string // its absolute path
	Dir     string // the fresh directory, absolute: .<base>.nicc-tmp in the same parent
	Existed bool   // out was there when the compile started
	done    bool   // committed or discarded
}

// CheckOut refuses an --out that cannot be a directory compile replaces: one that reads
// as an option, the root, or a name ending in . or ...
func CheckOut(out string) error {
	switch base := filepath.Base(filepath.Clean(out)); {
	case out == "":
		return fmt.Errorf("compile needs --out DIR")
	case strings.HasPrefix(out, "-"):
		return fmt.Errorf("--out %q starts with '-' and would read as an option (write ./%s for a directory of that name)", out, out)
	case base == string(filepath.Separator) || base == "." || base == "..":
		return fmt.Errorf("--out %q: compile replaces its output directory whole; give a directory of its own, by name, not %s", out, base)
	}
	return nil
}

// StageOut checks out (a name CheckOut accepts; a new directory, an empty one or an
// earlier compile's, never a link) and creates the fresh directory beside it, making out's
// parents first.
func StageOut(out string) (*StagedOut, error) {
	if err := CheckOut(out); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if err := replaceable(out); err != nil {
		return nil, err
	}
	_, err = os.Lstat(out)
	existed := err == nil
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	s := &StagedOut{out: out, abs: abs, Existed: existed, Dir: filepath.Join(parent, "."+filepath.Base(abs)+stagingSuffix)}
	if err := os.Mkdir(s.Dir, 0o755); errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s: another nicc compile is writing it (%s exists; if none is running, a killed one left it: remove it)", out, s.Dir)
	} else if err != nil {
		return nil, err
	}
	return s, nil
}

// replaceable refuses an out that compile must not replace: a link, a file, or a directory
// that is neither empty nor a compile's (holding report.json).
func replaceable(out string) error {
	fi, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; nicc does not write through links (give the real directory)", out)
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", out)
	}
	if rf, err := os.Lstat(filepath.Join(out, ReportFile)); err == nil && rf.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%s is a directory of other files (no %s): compile replaces its output directory whole; give a new or empty directory", out, ReportFile)
	}
	return nil
}

// Commit puts the fresh directory in out's place: an old out is renamed aside, the fresh one
// renamed in, the old one removed. Between the two renames (two system calls) out does not
// exist; a compile killed there leaves the old directory aside, under .<base>.nicc-old-*.
func (s *StagedOut) Commit() error {
	s.done = true
	if err := replaceable(s.out); err != nil {
		os.RemoveAll(s.Dir)
		return err
	}
	var aside [8]byte
	rand.Read(aside[:])
	old := filepath.Join(filepath.Dir(s.abs), "."+filepath.Base(s.abs)+asideSuffix+hex.EncodeToString(aside[:]))
	err := os.Rename(s.abs, old)
	moved := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(s.Dir)
		return err
	}
	if err := os.Rename(s.Dir, s.abs); err != nil {
		if moved {
			os.Rename(old, s.abs)
		}
		os.RemoveAll(s.Dir)
		return err
	}
	if moved {
		return os.RemoveAll(old)
	}
	return nil
}

// Discard removes the fresh directory, leaving out as it was.
func (s *StagedOut) Discard() {
	if !s.done {
		s.done = true
		os.RemoveAll(s.Dir)
	}
}

// CopyFile copies the file src to dst through clearOut, as a new file with src's permissions.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := clearOut(dst); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
