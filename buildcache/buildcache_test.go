package buildcache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// commentBlind empties the comments that reach no build and keeps the others as they are.
func TestCommentBlind(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"/* model a, sha 12 */\nint a; // x\n", "/**/\nint a; //\n"},
		{"/*\n * two\n * lines\n */\nint a;", "/*\n\n\n*/\nint a;"},
		{"int a; /* then */ int b;", "int a; /* then */ int b;"},                          // columns of int b
		{"int a; /* then */  \t\nint b;", "int a; /**/  \t\nint b;"},                      // blanks after it
		{`char *s = "/* no comment */"; /* one */`, `char *s = "/* no comment */"; /**/`}, // a literal
		{`char c = '"'; /* one */`, `char c = '"'; /**/`},
		{`char *s = "a\"/*"; // b`, `char *s = "a\"/*"; //`},
		{"/* µs */\n", "/* µs */\n"},                                   // -Wbidi-chars and the like
		{"/* a /* b */\n", "/* a /* b */\n"},                           // -Wcomment
		{"case 1: /* FALLTHROUGH */\n", "case 1: /* FALLTHROUGH */\n"}, // -Wimplicit-fallthrough
		{"// falls through\n", "// falls through\n"},
		{"// a \\\nint b;", "// a \\\nint b;"}, // a line splice: int b is in the comment
		{"/* unterminated", "/* unterminated"},
		{"int a; /*", "int a; /*"},
		{"x ??/\n/* a */", "x ??/\n/* a */"},         // a trigraph: taken whole
		{"/\\\n* a */ int b;", "/\\\n* a */ int b;"}, // a split delimiter
		{"#include <a/*b>\n/* c */", "#include <a/*b>\n/* c */"},
		{"# include <stdint.h> /* c */\n", "# include <stdint.h> /**/\n"},
		{"#include <a\"b> /* c */\n", "#include <a\"b> /* c */\n"},
		{"\"a\\ \n/* b */", "\"a\\ \n/* b */"}, // gcc's splice with a blank
		{"//", "//"},
		{"/", "/"},
		{"", ""},
	} {
		if got := string(commentBlind([]byte(c.src))); got != c.want {
			t.Errorf("commentBlind(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// Two sources that differ only in the comments commentBlind empties build to the same bytes
// with gcc, UBSan's diagnostics included, and are one key; one that differs in a kept
// comment is another key.
func TestCommentBlindKeyBuildsTheSame(t *testing.T) {
	const body = "#include <stdint.h>\n%s\nint32_t f(int32_t a, int32_t b) {\n\t%s\n\treturn a + b; %s\n}\nint main(void) { return f(2147483647, 0) != 0; }\n"
	one := fmt.Sprintf(body, "/*\n * model: rlcc_teacher, sha256 8e41\n */", "/* the sum */", "// int32")
	two := fmt.Sprintf(body, "/*\n * model: rlcc_teacher_unnamed, sha256 b99f0\n */", "/* a sum of two */", "// no overflow here")
	if bytes.Equal(commentBlind([]byte(one)), commentBlind([]byte(two))) == false {
		t.Fatalf("not one key:\n%s\n%s", commentBlind([]byte(one)), commentBlind([]byte(two)))
	}
	var bins [2][]byte
	for i, src := range []string{one, two} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.c"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-O1", "-findirect-inlining", "-o", "f", "./f.c") // the compiler's UBSan build
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		bins[i] = b
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Error("the two sources built to different bytes")
	}
	kept := fmt.Sprintf(body, "", "/* the sum */ a += 0;", "")
	if bytes.Equal(commentBlind([]byte(kept)), commentBlind([]byte(strings.Replace(kept, "the sum", "a sum", 1)))) {
		t.Error("a comment before code on its line: emptied")
	}
}

func FuzzCommentBlind(f *testing.F) {
	f.Add([]byte("/* a */\nint a; // b\n\"/*\" '\\''"))
	f.Fuzz(func(t *testing.T, src []byte) {
		got := commentBlind(src)
		if len(got) > len(src) || bytes.Count(got, []byte{'\n'}) != bytes.Count(src, []byte{'\n'}) {
			t.Fatalf("commentBlind(%q) = %q: longer, or another line count", src, got)
		}
		if again := commentBlind(got); !bytes.Equal(again, got) {
			t.Fatalf("not idempotent: %q → %q → %q", src, got, again)
		}
	})
}
