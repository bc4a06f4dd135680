package compiler

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nicc-dev/nicc/model"
)

// Output directories are often shared or checked out from somewhere else, so nicc never
// writes through a symbolic link it finds there: a planted link would otherwise have nicc (or
// gcc) overwrite whatever it points at.

// outDir makes dir (and its parents) unless it exists; an existing dir must be a real
// directory, not a symbolic link.
func outDir(dir string) error {
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

// writeOut writes data to path through createOut.
func writeOut(path string, data []byte) error {
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

// writeOutTo writes what w writes to path through createOut.
func writeOutTo(path string, w io.WriterTo) error {
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

// writeModel writes m in nicc's native JSON to path, making its directory (outDir) first.
func writeModel(path string, m *model.Model) error {
	if err := outDir(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := model.Marshal(m)
	if err != nil {
		return err
	}
	return writeOut(path, b)
}
