package buildcache

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A build's key is what it reads: the same files and flags in two directories are one key;
// any byte of a source, a flag or a file's name more or less is another.
func TestBuildKeyIsWhatTheBuildReads(t *testing.T) {
	src := map[string][]byte{"a.c": []byte("int a;"), "a.h": []byte("#define A 1")}
	k := KeyOf("cc", "/x/one", []string{"-O2", "-I", "/x/one", "/x/one/a.c"}, src)
	if KeyOf("cc", "/y/two", []string{"-O2", "-I", "/y/two", "/y/two/a.c"}, src) != k {
		t.Error("the same build in another directory: another key")
	}
	// Another gcc first on PATH (a wrapper, or the tests' tamperedGCC) is another compiler.
	gcc := KeyOf("gcc host", "/x/one", []string{"-O2"}, src)
	wrapper := t.TempDir()
	if err := os.WriteFile(filepath.Join(wrapper, "gcc"), []byte("#!/bin/sh\nexec /usr/bin/gcc \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", wrapper+string(os.PathListSeparator)+os.Getenv("PATH"))
	if KeyOf("gcc host", "/x/one", []string{"-O2"}, src) == gcc {
		t.Error("another gcc first on PATH: the same key")
	}
	for name, other := range map[string]Key{
		"a source byte": KeyOf("cc", "/x/one", []string{"-O2", "-I", "/x/one", "/x/one/a.c"}, map[string][]byte{"a.c": []byte("int b;"), "a.h": src["a.h"]}),
		"a flag":        KeyOf("cc", "/x/one", []string{"-O1", "-I", "/x/one", "/x/one/a.c"}, src),
		"a file more":   KeyOf("cc", "/x/one", []string{"-O2", "-I", "/x/one", "/x/one/a.c"}, map[string][]byte{"a.c": src["a.c"], "a.h": src["a.h"], "b.h": nil}),
		"the compiler":  KeyOf("clang", "/x/one", []string{"-O2", "-I", "/x/one", "/x/one/a.c"}, src),
		"split args":    KeyOf("cc", "/x/one", []string{"-O2 -I", "/x/one", "/x/one/a.c"}, src),
	} {
		if other == k {
			t.Errorf("%s changed: the same key", name)
		}
	}
}

// The second build of a key writes the first one's bytes and modes without running; a failed
// build is not kept.
func TestBuildCacheReplays(t *testing.T) {
	c := New()
	dir := t.TempDir()
	outs := []string{filepath.Join(dir, "o"), filepath.Join(dir, "bin")}
	runs := 0
	build := func() error {
		runs++
		if err := os.WriteFile(outs[0], []byte("object"), 0o644); err != nil {
			return err
		}
		return os.WriteFile(outs[1], []byte("binary"), 0o755)
	}
	var key Key
	if hit, err := c.Do(key, outs, build); hit || err != nil || runs != 1 {
		t.Fatalf("first build: hit %v, %v, %d runs", hit, err, runs)
	}
	again := []string{filepath.Join(dir, "o2"), filepath.Join(dir, "bin2")}
	if hit, err := c.Do(key, again, build); !hit || err != nil || runs != 1 {
		t.Fatalf("second build: hit %v, %v, %d runs", hit, err, runs)
	}
	for i, p := range again {
		want, _ := os.ReadFile(outs[i])
		got, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		wfi, _ := os.Stat(outs[i])
		if err != nil || !bytes.Equal(got, want) || fi.Mode() != wfi.Mode() {
			t.Errorf("%s: %q (%v), want %q (%v)", p, got, fi.Mode(), want, wfi.Mode())
		}
	}
	failing := Key{1}
	if _, err := c.Do(failing, outs, func() error { return os.ErrInvalid }); err == nil {
		t.Fatal("a failed build: no error")
	}
	if _, ok := c.entries[failing]; ok {
		t.Error("a failed build was kept")
	}
}

// A build of a key under way makes a second one wait and take its outputs; when the first
// fails, the second builds itself.
func TestBuildCacheWaitsForRunning(t *testing.T) {
	c := New()
	dir := t.TempDir()
	out := func(n string) []string { return []string{filepath.Join(dir, n)} }
	for _, fail := range []bool{false, true} {
		key := Key{2}
		if fail {
			key = Key{3}
		}
		started, release := make(chan struct{}), make(chan struct{})
		var runs atomic.Int32
		first := make(chan error)
		go func() {
			_, err := c.Do(key, out("first"), func() error {
				runs.Add(1)
				close(started)
				<-release
				if fail {
					return os.ErrInvalid
				}
				return os.WriteFile(filepath.Join(dir, "first"), []byte("built once"), 0o644)
			})
			first <- err
		}()
		<-started
		second := make(chan bool)
		go func() {
			hit, err := c.Do(key, out("second"), func() error {
				runs.Add(1)
				return os.WriteFile(filepath.Join(dir, "second"), []byte("built again"), 0o644)
			})
			if err != nil {
				t.Error(err)
			}
			second <- hit
		}()
		time.Sleep(50 * time.Millisecond) // the second is waiting, not building
		if n := runs.Load(); n != 1 {
			t.Fatalf("fail %v: %d builds while the first runs, want 1", fail, n)
		}
		close(release)
		if err := <-first; (err != nil) != fail {
			t.Fatalf("fail %v: first build: %v", fail, err)
		}
		hit := <-second
		got, _ := os.ReadFile(filepath.Join(dir, "second"))
		want, wantRuns := "built once", int32(1)
		if fail {
			want, wantRuns = "built again", 2
		}
		if hit == fail || string(got) != want || runs.Load() != wantRuns {
			t.Errorf("fail %v: second build: hit %v, %q, %d builds; want %q, %d builds", fail, hit, got, runs.Load(), want, wantRuns)
		}
	}
}
