package main

import (
	"strings"
	"testing"
)

// TestRowsRuleAtEveryCommand gives the rows that used to lose their first line (taken for a
// header) to every command that reads rows: each must refuse them with the same one line,
// naming the file, line and column, and exit 2.
func TestRowsRuleAtEveryCommand(t *testing.T) {
	good := writeFile(t, "good.csv", "1,0.5,1,0.5\n1.1,30,0.9,2\n")
	xgb, teacher := models+"rlcc_xgb.json", models+"rlcc_teacher.json"
	commands := []struct {
		name string
		args func(csv string) []string
	}{
		{"eval", func(csv string) []string { return []string{"eval", xgb, "--input", csv} }},
		{"compile --ranges", func(csv string) []string {
			return []string{"compile", xgb, "--handler", "none", "--ranges", csv, "--out", t.TempDir()}
		}},
		{"compile --predictions", func(csv string) []string {
			return []string{"compile", xgb, "--handler", "none", "--ranges", good, "--predictions", csv, "--out", t.TempDir()}
		}},
		{"compile --calib", func(csv string) []string {
			return []string{"compile", teacher, "--target", "int8", "--calib", csv, "--out", t.TempDir()}
		}},
		{"diff --calib", func(csv string) []string { return []string{"diff", teacher, "--calib", csv} }},
		{"distill --states", func(csv string) []string {
			return []string{"distill", teacher, "--states", csv, "--out", t.TempDir() + "/s.json"}
		}},
		{"distill --held-out-states", func(csv string) []string {
			return []string{"distill", teacher, "--held-out-states", csv, "--out", t.TempDir() + "/s.json"}
		}},
	}
	rows := []struct{ name, text, want string }{
		{"empty field", "1,,3,4\n5,6,7,8\n", `line 1: column 2: "" is not a number (write NaN for a missing value)`},
		{"NA", "1,NA,3,4\n5,6,7,8\n", `line 1: column 2: "NA" is not a number (write NaN for a missing value)`},
		{"quoted", "\"1\",2,3,4\n5,6,7,8\n", `line 1: column 1: "\"1\"" is not a number (values are bare numbers, not quoted)`},
		{"duplicated column", "a_prev,o,a_prev,o_prev\n1,2,3,4\n", `line 1: columns 1 and 3 are both named "a_prev"`},
	}
	for _, r := range rows {
		csv := writeFile(t, "rows.csv", r.text)
		for _, c := range commands {
			code, stdout, stderr := nicc(t, c.args(csv)...)
			if want := "nicc: " + csv + ": " + r.want + "\n"; code != exitBadInput || stdout != "" || stderr != want {
				t.Errorf("%s, %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.name, r.name, code, stdout, stderr, want)
			}
		}
	}
}

// TestEvalReadsEveryRow checks that a first row of data is never taken for a header: with a
// byte-order mark, NaN (a missing value for trees) or plain, each of the two rows prints a line.
func TestEvalReadsEveryRow(t *testing.T) {
	for _, text := range []string{
		"\ufeff1,0.5,1,0.5\n1.1,30,0.9,2\n",
		"1,NaN,1,0.5\n1.1,30,0.9,2\n",
		"\ufeffa_prev,o,a_prev2,o_prev\n1,0.5,1,0.5\n1.1,30,0.9,2\n",
	} {
		code, stdout, stderr := nicc(t, "eval", models+"rlcc_xgb.json", "--input", writeFile(t, "rows.csv", text))
		if code != exitOK || strings.Count(stdout, "\n") != 2 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want two lines", text, code, stderr, stdout)
		}
	}
}

// TestEvalStopsAtTheBadLine: eval streams, so the rows before a bad line are printed, and the
// error names the line.
func TestEvalStopsAtTheBadLine(t *testing.T) {
	csv := writeFile(t, "rows.csv", "1,0.5,1,0.5\n1.1,30,0.9,2\n1,2,NA,4\n")
	code, stdout, stderr := nicc(t, "eval", models+"rlcc_xgb.json", "--input", csv)
	_, want, _ := nicc(t, "eval", models+"rlcc_xgb.json", "--input", writeFile(t, "two.csv", "1,0.5,1,0.5\n1.1,30,0.9,2\n"))
	if code != exitBadInput || stdout != want || stderr != "nicc: "+csv+`: line 3: column 3: "NA" is not a number (write NaN for a missing value)`+"\n" {
		t.Errorf("exit %d, stdout %q (want %q), stderr %q", code, stdout, want, stderr)
	}
	csv = writeFile(t, "nan.csv", "1,0.5,1,0.5\n1,NaN,1,0\n")
	code, stdout, stderr = nicc(t, "eval", models+"rlcc_teacher.json", "--input", csv)
	if code != exitBadInput || strings.Count(stdout, "\n") != 1 || stderr != "nicc: "+csv+": line 2: value 2 is NaN; only tree ensembles take missing values\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
