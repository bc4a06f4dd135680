// Package nicc_test holds the architecture test: the rules of docs/ARCHITECTURE.md ("Allowed
// imports", sizes) checked against the code with `go list` and go/ast.
package nicc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/nicc-dev/nicc"

// allowedImports is, for each package of ours, the packages of ours its non-test files may
// import (docs/ARCHITECTURE.md, "Allowed imports"). A package missing here fails the test:
// a new package takes its place in the table, and in the document, on purpose.
var allowedImports = map[string][]string{
	"cmd/nicc": {"agent", "artifact", "budget", "ccsim", "compiler", "diff", "distill", "golden", "lab", "memlimit", "model/formats", "prove", "quantize", "student", "target/doca", "target/targets", "termtext"},
	// prove decides behavioural properties on a compile's integer semantics.
	"prove":    {"nicsdk", "quantize", "target/abi", "termtext"},
	"agent":    {"artifact", "ccsim", "lab", "netsim", "nicsdk", "simfw", "termtext"},
	"ccsim":    {},
	"compiler": belowCompiler, // never lab or plot
	// lab is the simulator's glue and controllers, the closed-loop diff, sweep, eval, train
	// glue: above compiler, which never imports it.
	"lab": {"artifact", "budget", "compiler", "diff", "distill", "fwsim", "golden", "memlimit", "student", "model", "model/onnx", "netsim", "nicsdk", "plot", "quantize", "rlcc", "simfw", "target", "target/abi", "target/doca", "termtext", "train"},
	// simfw is a compile as netsim's controller: its firmware in fwsim, or its golden model.
	"simfw": {"budget", "compiler", "fwsim", "netsim", "nicsdk", "quantize", "target"},
	// artifact is a compile directory's contract: its file names, report.json's schema and
	// text, reading it back with its integrity checks, writing it whole.
	"artifact": {"budget", "codegen", "distill", "model", "nicsdk", "prove", "quantize", "rlcc", "target", "target/abi", "target/doca", "termtext"},
	// golden is the golden model: the load and quantize stages, the layouts, the RL-CC
	// parameters' truth, the probe.
	"golden": {"artifact", "distill", "memlimit", "model", "model/formats", "nicsdk", "quantize", "rlcc", "termtext"},
	// diff compares a float model with its integer or tree student (nicc diff, open loop).
	"diff": {"artifact", "golden", "model", "nicsdk", "quantize", "rlcc", "student", "termtext"},
	// student distills a teacher into trees (nicc distill): states, labels, training, report.
	"student": {"artifact", "distill", "golden", "memlimit", "model", "nicsdk", "quantize", "rlcc", "termtext"},
	// verify runs the same calls through the golden model, both host builds and fwsim.
	"verify": {"artifact", "budget", "model", "nicsdk", "quantize", "rlcc", "target", "target/abi"},
	// buildcache keeps a process's builds by what they read.
	"buildcache": {},
	// memlimit refuses counts whose data would not fit the memory limit.
	"memlimit": {"distill", "model", "netsim", "termtext"},
	// plot draws figures from plain series: nothing of ours but nicsdk.
	"plot":               {"nicsdk"},
	"distill":            {"model", "nicsdk", "quantize", "rlcc"},
	"quantize":           {"model", "nicsdk", "rlcc"},
	"codegen":            {"quantize"},
	"internal/softfloat": {"model", "codegen"},
	"internal/testutil":  {"fwsim", "model", "model/onnx", "rlcc"},
	"rlcc":               {"nicsdk"},
	"nicsdk":             nil,
	"fwsim":              {"fwsim/trap"},
	"fwsim/trap":         nil,
	"fwsim/wcet":         {"fwsim"},
	"model":              nil,
	"model/onnx":         {"model"},
	"model/xgboost":      {"model"},
	"model/catboost":     {"model"},
	"model/lightgbm":     {"model"},
	"model/formats":      {"model", "model/onnx", "model/xgboost", "model/catboost", "model/lightgbm"},
	"model/modeltest":    {"model"},
	"netsim":             {"rlcc", "nicsdk"},
	"train":              {"model", "netsim", "nicsdk", "rlcc"},
	"target":             {"fwsim", "nicsdk"},
	"termtext":           nil,
	"budget":             {"fwsim", "fwsim/wcet", "termtext"},
	"target/abi":         {"codegen", "fwsim", "nicsdk", "target"},
	"target/doca":        {"fwsim", "nicsdk", "target"},
	"target/targets":     {"target", "target/abi", "target/doca"},
}

// belowCompiler is every package of ours but the CLI, the lab, the plots and compiler itself.
var belowCompiler = []string{"artifact", "budget", "buildcache", "codegen", "distill", "fwsim", "fwsim/trap", "fwsim/wcet", "golden", "memlimit", "student", "verify", "internal/softfloat", "internal/testutil", "model", "model/catboost", "model/formats",
	"model/lightgbm", "model/modeltest", "model/onnx", "model/xgboost", "netsim", "nicsdk", "prove", "quantize", "rlcc", "target", "target/abi", "target/doca", "target/targets", "termtext", "train"}

// listedPackage is what `go list -json` says of one package that the test uses.
type listedPackage struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// goList is every package of the module as `go list -json ./...` gives it, listed once a test
// run (the tests only read it).
func goList(t *testing.T) []listedPackage {
	t.Helper()
	pkgs, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var listed = sync.OnceValues(func() ([]listedPackage, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goBin, "list", "-json", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		return nil, fmt.Errorf("go list found %d packages; expected the whole module", len(pkgs))
	}
	return pkgs, nil
})

// ours is the module-relative paths of the imports that are packages of this module.
func ours(imports []string) []string {
	var rel []string
	for _, imp := range imports {
		if r, ok := strings.CutPrefix(imp, module+"/"); ok {
			rel = append(rel, r)
		}
	}
	return rel
}

func rel(p listedPackage) string {
	if p.ImportPath == module {
		return "."
	}
	return strings.TrimPrefix(p.ImportPath, module+"/")
}

// TestAllowedImports: every package's non-test imports are within its allowed set.
func TestAllowedImports(t *testing.T) {
	for _, p := range goList(t) {
		name := rel(p)
		if name == "." {
			continue // this test
		}
		allowed, known := allowedImports[name]
		if !known {
			t.Errorf("%s: not in allowedImports; add it here and to docs/ARCHITECTURE.md's table", name)
			continue
		}
		for _, imp := range ours(p.Imports) {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; allowed: %v", name, imp, allowed)
			}
		}
	}
}

// TestTestsStayOnTheirFloor: a package's tests never import a package that depends on it
// (codegen's tests never import compiler, quantize's never import distill, and so on).
func TestTestsStayOnTheirFloor(t *testing.T) {
	pkgs := goList(t)
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[rel(p)] = ours(p.Imports)
	}
	for _, p := range pkgs {
		name := rel(p)
		for _, imp := range ours(append(slices.Clone(p.TestImports), p.XTestImports...)) {
			if imp != name && dependsOn(deps, imp, name) {
				t.Errorf("%s's tests import %s, which depends on %s", name, imp, name)
			}
		}
	}
}

// dependsOn says whether from reaches to through non-test imports.
func dependsOn(deps map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(p string) bool {
		if p == to {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		return slices.ContainsFunc(deps[p], walk)
	}
	return walk(from)
}

// The size rules: no non-test Go file over maxFileLines lines, no function over maxFuncLines
// except fwsim's decode and execute switches.
const (
	maxFileLines = 800
	maxFuncLines = 150
)

var longFuncsAllowed = map[string]bool{"fwsim.exec": true, "fwsim.decode32": true}

func TestSizes(t *testing.T) {
	for _, p := range goList(t) {
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			short := rel(p) + "/" + f
			if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
				t.Errorf("%s: %d lines, over %d: split it by job", short, n, maxFileLines)
			}
			for _, fn := range longFuncs(t, path, src) {
				if !longFuncsAllowed[filepath.Base(p.ImportPath)+"."+fn.name] {
					t.Errorf("%s: func %s is %d lines, over %d", short, fn.name, fn.lines, maxFuncLines)
				}
			}
		}
	}
}

type funcSize struct {
	name  string
	lines int
}

func longFuncs(t *testing.T, path string, src []byte) []funcSize {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var long []funcSize
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > maxFuncLines {
			long = append(long, funcSize{fd.Name.Name, n})
		}
	}
	sort.Slice(long, func(i, j int) bool { return long[i].name < long[j].name })
	return long
}

// maxPackageLines is the most non-test lines a package may hold: past it, it has more than
// one job (fwsim's emulator and its static WCET analysis were one package until they were not).
const maxPackageLines = 4000

func TestPackageSizes(t *testing.T) {
	for _, p := range goList(t) {
		total := 0
		for _, f := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			total += bytes.Count(src, []byte("\n"))
		}
		if total > maxPackageLines {
			t.Errorf("%s: %d non-test lines, over %d: give one of its jobs a package of its own", rel(p), total, maxPackageLines)
		}
	}
}

// maxStructFields is the most fields a struct may have unless it is plain data: a struct that
// stages or methods read and write field by field (a blackboard) hides who hands what to whom.
const maxStructFields = 20

// plainData are the structs over maxStructFields that are data, not blackboards, each with why.
var plainData = map[string]string{
	"quantize.MLPLayer":       "an IR: one integer layer's weights, scales and formats",
	"quantize.LSTMIR":         "an IR: the integer LSTM",
	"netsim.Result":           "a result: one run's figures",
	"fwsim.Machine":           "the emulated hart's architectural state (registers, memory, decoded code), private to the interpreter",
	"compiler.CompileOptions": "options: what the user asked",
	"artifact.CompileReport":  "a result: report.json's schema",
	"lab.SimOptions":          "options: what the user asked",
	"netsim.Config":           "options: the network and the run a user sets",
}

func TestNoBlackboards(t *testing.T) {
	for _, p := range goList(t) {
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				fields := 0
				for _, fl := range st.Fields.List {
					fields += max(1, len(fl.Names))
				}
				name := filepath.Base(p.ImportPath) + "." + ts.Name.Name
				if _, ok := plainData[name]; fields > maxStructFields && !ok {
					t.Errorf("%s/%s: struct %s has %d fields, over %d: hand its data between stages as typed values (or, if it is plain data, say so in plainData)", rel(p), f, ts.Name.Name, fields, maxStructFields)
				}
				return true
			})
		}
	}
}

// nevers are imports that must not happen even indirectly: each package's room stays below the
// rooms that use it.
var nevers = map[string][]string{
	"compiler": {"lab", "plot", "cmd/nicc", "diff"},
	"artifact": {"compiler", "lab", "cmd/nicc"},
	"golden":   {"compiler", "lab", "cmd/nicc"},
	"student":  {"compiler", "lab", "diff"},
	"diff":     {"compiler", "lab"},
	"verify":   {"compiler", "lab", "golden"},
	"target":   {"compiler", "budget", "lab", "artifact"},
	"budget":   {"compiler", "lab"},
	"netsim":   {"fwsim", "compiler", "lab"},
	"ccsim":    {"lab", "netsim", "fwsim"},
	"fwsim":    {"fwsim/wcet"},
	"plot":     {"compiler", "lab", "netsim"},
	"quantize": {"codegen", "fwsim"},
	"model":    {"quantize"},
}

func TestNevers(t *testing.T) {
	pkgs := goList(t)
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[rel(p)] = ours(p.Imports)
	}
	for from, tos := range nevers {
		for pkg := range deps {
			if pkg != from && !strings.HasPrefix(pkg, from+"/") {
				continue
			}
			for _, to := range tos {
				if pkg != to && dependsOn(deps, pkg, to) {
					t.Errorf("%s reaches %s through its imports: never", pkg, to)
				}
			}
		}
	}
}

// TestDependsOn keeps the floor check honest: it must see compiler above codegen and not
// below it.
func TestDependsOn(t *testing.T) {
	deps := map[string][]string{"compiler": {"codegen"}, "codegen": {"quantize"}, "quantize": {"model"}}
	for _, c := range []struct {
		from, to string
		want     bool
	}{{"compiler", "model", true}, {"codegen", "compiler", false}, {"model", "quantize", false}} {
		if got := dependsOn(deps, c.from, c.to); got != c.want {
			t.Errorf("dependsOn(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// docFileName is a Go file's name as docs/ARCHITECTURE.md writes it, in backquotes: a path
// ending in .go.
var docFileName = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")

// TestArchitectureNamesEveryFile: docs/ARCHITECTURE.md names every non-test Go file of the
// module (testdata aside), by its base name, or, where base names repeat across packages, by
// its package's directory and base name (doca/firmware.go); a longer path ending in it counts.
func TestArchitectureNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range docFileName.FindAllSubmatch(doc, -1) {
		named[string(m[1])] = true
	}
	var files []string // module-relative paths
	bases := map[string]int{}
	for _, p := range goList(t) {
		if rel(p) == "." || strings.Contains(rel(p), "testdata") {
			continue
		}
		for _, f := range p.GoFiles {
			files = append(files, rel(p)+"/"+f)
			bases[f]++
		}
	}
	if len(files) < 50 {
		t.Fatalf("found %d non-test Go files; expected the whole module", len(files))
	}
	for _, f := range files {
		key := filepath.Base(f)
		if bases[key] > 1 {
			key = filepath.Base(filepath.Dir(f)) + "/" + key
		}
		found := false
		for n := range named {
			if n == key || strings.HasSuffix(n, "/"+key) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/ARCHITECTURE.md does not name %s (as `%s`): give it a line with its job in \"Layout: one package, one job\"", f, key)
		}
	}
}
