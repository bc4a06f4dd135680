package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// DirState is every entry under dir, by its path relative to dir, with its mode and, for a
// regular file, its SHA-256: two states are equal when nothing under dir changed.
func DirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st[rel] = d.Type().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			h := sha256.Sum256(b)
			st[rel] += " " + hex.EncodeToString(h[:])
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
