package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// forged is a name crafted to forge a line of nicc's output on a terminal: a newline and the
// compile summary's all-clear, a clear-screen escape, a carriage return, a right-to-left
// override and a NUL.
const forged = "a\n verified 0 mismatches\x1b[2J\r\u202eb\x00c"

// forgedOneLine is forged without its newline and carriage return, for LightGBM's
// feature_names= line, whose names are separated by white space.
const forgedOneLine = "a\x1b[2J\u202eb\x00c"

// terminalSafe fails unless every rune of out is one a terminal shows as itself, a newline or
// a tab, and no line starts with the forged text.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r == utf8.RuneError || r != '\n' && r != '\t' && !strconv.IsPrint(r) {
			t.Errorf("%s: byte %d is %q:\n%s", what, i, r, out)
			return
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "verified 0 mismatches") {
			t.Errorf("%s: a forged line %q:\n%s", what, l, out)
		}
	}
}

// escaped checks that out shows the forged name, escaped.
func escaped(t *testing.T, what, out string) {
	t.Helper()
	if !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("%s: the crafted name is not shown escaped:\n%s", what, out)
	}
}

func replaceOnce(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("no %q to replace", old)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// craftedModels are the shipped models of every format with a crafted model name (where the
// format has one) and first input name.
func craftedModels(t *testing.T) map[string]string {
	t.Helper()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	xgb := replaceOnce(t, read(models+"rlcc_xgb.json"), `"feature_names":["a_prev",`, `"feature_names":[`+jsonString(forged)+",")
	out := map[string]string{"xgboost": writeFile(t, "crafted.json", string(xgb))}

	native := read(models + "rlcc_teacher.json")
	native = replaceOnce(t, native, `"name": "rlcc_teacher"`, `"name": `+jsonString(forged))
	native = replaceOnce(t, native, `"a_prev",`, jsonString(forged)+",")
	out["nicc json"] = writeFile(t, "native.json", string(native))

	// ONNX, patched in place (same-length strings keep the protobuf valid): the graph input
	// "state" renamed where it is declared and where the first node reads it, its doc_string's
	// list of entry names spoilt (so the entries are named after the input), and the model's
	// doc_string.
	pb := bytes.ReplaceAll(read(models+"rlcc_teacher.onnx"), []byte("\x0a\x05state"), []byte("\x0a\x05\n\x1b[2J"))
	pb = replaceOnce(t, pb, "a_prev,o,a_prev2,o_prev", "a_prev,o,a_prev2,o_pre\x00")
	pb = replaceOnce(t, pb, "RL-CC teacher", "\nverified 0\x1b\r")
	out["onnx"] = writeFile(t, "crafted.onnx", string(pb))

	cb := read("../../testdata/catboost/kiwicom-xor-model.json")
	cb = replaceOnce(t, cb, `"flat_feature_index":0,`, `"flat_feature_index":0,"feature_id":`+jsonString(forged)+",")
	cb = replaceOnce(t, cb, `"flat_feature_index":1,`, `"flat_feature_index":1,"feature_id":"b",`)
	out["catboost"] = writeFile(t, "catboost.json", string(cb))

	lgb := read(lgbDir + "lg_dart_breast_cancer.model")
	lgb = replaceOnce(t, lgb, "feature_names=Column_0 ", "feature_names="+forgedOneLine+" ")
	out["lightgbm"] = writeFile(t, "crafted.model", string(lgb))
	return out
}

// TestCraftedNamesReachNoTerminal: names crafted to forge output lines or drive the terminal,
// inside files of every format, reach nicc inspect's text, the compile summary, eval DIR and
// budget DIR (which read them back from report.json), and error messages only escaped.
func TestCraftedNamesReachNoTerminal(t *testing.T) {
	t.Parallel()
	for format, p := range craftedModels(t) {
		code, stdout, stderr := nicc(t, "inspect", p)
		if code != exitOK {
			t.Fatalf("%s: inspect: exit %d: %s", format, code, stderr)
		}
		terminalSafe(t, format+": inspect", stdout+stderr)
		escaped(t, format+": inspect", stdout)
	}

	xgb := craftedModels(t)["xgboost"]
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", xgb, "--out", out, "--handler", "none", "--form", "walk", "--vectors", "2000")
	if code != exitOK || !strings.Contains(stdout, "0 mismatches; UBSan clean") {
		t.Fatalf("compile: exit %d: %s%s", code, stdout, stderr)
	}
	terminalSafe(t, "compile", stdout+stderr)
	escaped(t, "compile", stdout)

	code, stdout, stderr = nicc(t, "budget", out)
	terminalSafe(t, "budget DIR", stdout+stderr)

	rows := writeFile(t, "rows.csv", "1,2,3,4\n0.5,0,1,1\n")
	code, stdout, stderr = nicc(t, "eval", out, "--input", rows)
	if code != exitOK {
		t.Fatalf("eval DIR: exit %d: %s%s", code, stdout, stderr)
	}
	terminalSafe(t, "eval DIR", stdout+stderr)
	escaped(t, "eval DIR", stdout)

	// an error that lists the inputs' names: rows of the wrong width
	narrow := writeFile(t, "narrow.csv", "1,2\n")
	code, stdout, stderr = nicc(t, "eval", out, "--input", narrow)
	if code != exitBadInput || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("eval DIR, rows of 2 values: exit %d: %q", code, stderr)
	}
	terminalSafe(t, "eval DIR error", stdout+stderr)
	escaped(t, "eval DIR error", stderr)
}

// TestCraftedFileErrorsOneLine: parser errors that quote a crafted file's content, and a
// file name holding control characters, reach the terminal as one escaped line.
func TestCraftedFileErrorsOneLine(t *testing.T) {
	b, err := os.ReadFile(models + "rlcc_teacher.onnx")
	if err != nil {
		t.Fatal(err)
	}
	// Same-length patches keep the protobuf valid: a node's name and an op type nicc lacks.
	b = replaceOnce(t, b, "\x1a\x07/5/Tanh", "\x1a\x07\n\x1b[2J\r\x00")
	b = replaceOnce(t, b, "\x22\x04Tanh", "\x22\x04\x1b[2J")
	for _, c := range []struct{ what, path string }{
		{"onnx node name and op type", writeFile(t, "crafted.onnx", string(b))},
		{"xgboost, not JSON", writeFile(t, "crafted.json", "{\"learner\": \""+forged+"\n")},
		{"a file name", filepath.Join(t.TempDir(), "m\n verified 0 mismatches\x1b[2J.json")},
	} {
		code, stdout, stderr := nicc(t, "inspect", c.path)
		if code != exitBadInput || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.what, code, stdout, stderr)
		}
		terminalSafe(t, c.what, stderr)
	}
	// A crafted file name of a readable model: the report's model line shows it escaped.
	gz, err := os.ReadFile("../../testdata/catboost/float_regression_model.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var cb bytes.Buffer
	if _, err := cb.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, "cat\x1b[2J\r\u202eb\n verified 0 mismatches.json", cb.String()) // no NUL: not in a file name
	code, stdout, stderr := nicc(t, "inspect", "--format", "catboost", p)
	if code != exitOK {
		t.Fatalf("inspect of a crafted file name: exit %d: %s", code, stderr)
	}
	terminalSafe(t, "a crafted file name", stdout+stderr)
}
