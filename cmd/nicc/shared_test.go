package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Tests that mostly wait on training, simulation or gcc call t.Parallel, so that they run two
// at a time (go test's -parallel is GOMAXPROCS) once the sequential tests are done; a test that
// sets the environment, changes directory, drives a terminal or sends a signal stays sequential.

// compiled is one nicc compile: its exit code, its output and its --out directory.
type compiled struct {
	code           int
	stdout, stderr string
	dir            string
	once           sync.Once
}

// The compiles tests share: a test that only reads a compile directory (and its summary)
// takes it from sharedCompile, which compiles each argument list once a package run into a
// directory under sharedRoot (TestMain makes it and removes it). A test that changes a
// compile directory copies it first (os.CopyFS) or compiles its own.
var (
	sharedRoot string
	sharedMu   sync.Mutex
	shared     = map[string]*compiled{}
)

// sharedCompile runs nicc compile --out DIR args..., once for each args.
func sharedCompile(t *testing.T, args ...string) *compiled {
	t.Helper()
	key := strings.Join(args, "\x00")
	sharedMu.Lock()
	c, ok := shared[key]
	if !ok {
		c = &compiled{dir: filepath.Join(sharedRoot, strconv.Itoa(len(shared)), "out")}
		shared[key] = c
	}
	sharedMu.Unlock()
	c.once.Do(func() { c.code, c.stdout, c.stderr = nicc(t, append([]string{"compile", "--out", c.dir}, args...)...) })
	return c
}

// runShared runs the package's tests with sharedRoot made for their shared compiles.
func runShared(m *testing.M) int {
	root, err := os.MkdirTemp("", "nicc-cmd-test-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	sharedRoot = root
	return m.Run()
}
