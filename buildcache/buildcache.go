// Package buildcache is a process's builds by what they read: the same compiler, arguments and
// sources give the same outputs, so a process that builds the same code twice runs the
// compiler for it once. docs/ARCHITECTURE.md describes where compile uses it.
package buildcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The builds of this process, by what they were built from. gcc is deterministic: the same
// sources and flags give the same object and the same linked file, and no build names a
// path (the firmware names none; the host drivers are built in the compile directory from
// paths relative to it, so even the UBSan build's diagnostics name ./rlcc.h; two compile
// directories of one model hold byte-identical builds; the DOCA target's UBSan driver, built
// from absolute paths, is never kept, doca.go). So a process that builds the same
// code twice (the fit stage's candidates of two compiles of one model, a sweep, a matrix,
// the tests) runs gcc for it once; the second build writes the first one's bytes.
// Verification runs on every compile's own files whatever built them.

// Key is what a build reads: the compiler (the file its name runs, toolID), its
// arguments (with dir, where the sources are, written as a placeholder, so that two
// directories of the same files are one key) and each source the build can see, by name,
// blind to comments that reach no output (commentBlind).
type Key [sha256.Size]byte

// KeyOf is the Key of tool run with args over sources (name → bytes, the names relative
// to dir).
func KeyOf(tool, dir string, args []string, sources map[string][]byte) Key {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte(toolID(tool)))
	for _, a := range args {
		field([]byte(strings.ReplaceAll(a, dir, "\x00dir")))
	}
	for _, n := range slices.Sorted(maps.Keys(sources)) {
		field([]byte(n))
		field(commentBlind(sources[n]))
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// toolID names the compiler a command line's first word runs: the file it resolves to on
// PATH, with its size and modification time, as ccache does. Another gcc first on PATH, or
// the same one replaced, is another compiler. tool is a name and what follows it (KeyOf's
// "gcc host"); a name not found is itself (its build fails).
func toolID(tool string) string {
	name, rest, _ := strings.Cut(tool, " ")
	path, err := exec.LookPath(name)
	if err != nil {
		return tool
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fi, err := os.Stat(path)
	if err != nil {
		return tool
	}
	return fmt.Sprintf("%s %d %d %s", path, fi.Size(), fi.ModTime().UnixNano(), rest)
}

// SourcesOnDisk reads each file named in expect (paths relative to dir) as it is on disk:
// what a build of dir can read, for its key.
func SourcesOnDisk(dir string, expect map[string][]byte) (map[string][]byte, error) {
	onDisk := make(map[string][]byte, len(expect))
	for n := range expect {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		onDisk[n] = b
	}
	return onDisk, nil
}

// buildOutput is one file a build wrote.
type buildOutput struct {
	data []byte
	mode os.FileMode
}

// MaxBytes bounds what the cache holds; the oldest builds go first.
const MaxBytes = 64 << 20

type Cache struct {
	mu      sync.Mutex
	entries map[Key][]buildOutput
	order   []Key
	bytes   int
	// running are the builds under way, each closed when it ends: a second build of the same
	// key waits for the first (fit's speculative host build of its leading candidate, then the
	// build stage's of the chosen one) instead of running gcc beside it.
	running map[Key]chan struct{}
}

// Process is the process's cache.
var Process = New()

// New is an empty cache.
func New() *Cache {
	return &Cache{entries: map[Key][]buildOutput{}, running: map[Key]chan struct{}{}}
}

// do writes to outs what a build of key wrote before, or runs build, which writes outs, and
// keeps them. While another build of key is under way it waits for it, then takes its outputs
// (or builds itself, when that one failed). It reports whether the outputs came from the cache.
func (c *Cache) Do(key Key, outs []string, build func() error) (cached bool, err error) {
	c.mu.Lock()
	for c.running[key] != nil {
		ch := c.running[key]
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
	got, ok := c.entries[key]
	if !ok {
		c.running[key] = make(chan struct{})
	}
	c.mu.Unlock()
	if ok {
		for i, p := range outs {
			if err := os.WriteFile(p, got[i].data, got[i].mode); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	defer func() {
		c.mu.Lock()
		close(c.running[key])
		delete(c.running, key)
		c.mu.Unlock()
	}()
	if err := build(); err != nil {
		return false, err
	}
	made := make([]buildOutput, len(outs))
	size := 0
	for i, p := range outs {
		fi, err := os.Stat(p)
		if err != nil {
			return false, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return false, err
		}
		made[i] = buildOutput{b, fi.Mode().Perm()}
		size += len(b)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok || size > MaxBytes {
		return false, nil
	}
	for c.bytes+size > MaxBytes {
		old := c.order[0]
		c.order = c.order[1:]
		for _, o := range c.entries[old] {
			c.bytes -= len(o.data)
		}
		delete(c.entries, old)
	}
	c.entries[key] = made
	c.order = append(c.order, key)
	c.bytes += size
	return false, nil
}

// commentBlind is src with each comment that cannot reach a build's output written as an
// empty one with the same newlines, for keyOf: sources that differ only in such comments
// (the model's name and hash nicc writes in them) are one key. gcc drops comments before it
// parses, so no comment reaches an object; a comment is kept as it is where it could reach
// the build another way:
//   - the columns of what follows it on its line (UBSan names line and column): a block
//     comment followed by more than blanks on its line;
//   - a warning, which -Werror makes an error: /* in a block comment (-Wcomment), a
//     non-ASCII or control character (-Wbidi-chars), a fall-through marker
//     (-Wimplicit-fallthrough);
//   - the comment's extent: a backslash in it (a line splice), no end.
//
// A source in which the lexing here could part from gcc's is taken whole: one with "??" (a
// trigraph), "/\" or "*\" (a delimiter split by a line splice), a backslash before blanks
// and a newline (gcc's lenient splice), or an #include <...> whose name holds a quote or
// what starts a comment (a header name is no string: gcc reads no comment in it).
func commentBlind(src []byte) []byte {
	for _, bad := range []string{"??", "/\\", "*\\"} {
		if bytes.Contains(src, []byte(bad)) {
			return src
		}
	}
	if spliceWithBlanks.Match(src) {
		return src
	}
	for _, name := range headerName.FindAll(src, -1) {
		if bytes.ContainsAny(name, "\"'") || bytes.Contains(name, []byte("/*")) || bytes.Contains(name, []byte("//")) {
			return src
		}
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); {
		c := src[i]
		if c == '"' || c == '\'' { // a literal, to its closing quote or its line's end
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			out = append(out, src[i:j]...)
			i = j
			continue
		}
		if c != '/' || i+1 == len(src) || (src[i+1] != '*' && src[i+1] != '/') {
			out = append(out, c)
			i++
			continue
		}
		block := src[i+1] == '*'
		var body []byte // the comment's text between its delimiters
		end := len(src) // where the comment ends
		if block {
			k := bytes.Index(src[i+2:], []byte("*/"))
			if k < 0 {
				return src
			}
			body, end = src[i+2:i+2+k], i+2+k+2
		} else {
			if k := bytes.IndexByte(src[i+2:], '\n'); k >= 0 {
				end = i + 2 + k
			}
			body = src[i+2 : end]
		}
		if blindable(body, src[end:], block) {
			out = append(out, src[i:i+2]...)
			out = append(out, bytes.Repeat([]byte{'\n'}, bytes.Count(body, []byte{'\n'}))...)
			if block {
				out = append(out, '*', '/')
			}
		} else {
			out = append(out, src[i:end]...)
		}
		i = end
	}
	return out
}

var (
	spliceWithBlanks = regexp.MustCompile(`\\[ \t\f\v\r]+\n`)
	headerName       = regexp.MustCompile(`#[ \t]*include[ \t]*<[^>\n]*`)
)

// blindable: whether commentBlind may empty a comment of text body, followed by rest.
func blindable(body, rest []byte, block bool) bool {
	for _, b := range body {
		if b >= 0x80 || b == '\\' || (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
			return false
		}
	}
	lower := bytes.ToLower(body)
	if bytes.Contains(lower, []byte("fall")) || bytes.Contains(lower, []byte("thru")) || bytes.Contains(body, []byte("/*")) {
		return false
	}
	if !block {
		return true
	}
	if k := bytes.IndexByte(rest, '\n'); k >= 0 {
		rest = rest[:k]
	}
	return len(bytes.Trim(rest, " \t")) == 0
}
