package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/ccsim"
)

// ccsimLog is a whole CCsim 16→1 evaluation answered live by adpgCCsim's firmware
// (testdata/ccsim/README.md).
const ccsimLog = "../../testdata/ccsim/m2o16_adpg_firmware.csv.gz"

// adpgCCsim is the compile that answered ccsimLog.
var adpgCCsim = []string{models + "rlcc_adpg.json", "--target", "trees", "--rlcc-base-rtt", "8.192"}

// TestAgentReplaysCCsim: on every request of a recorded CCsim run, the firmware and its golden
// model answer what the firmware answered live; a log changed in one answer fails the replay.
func TestAgentReplaysCCsim(t *testing.T) {
	t.Parallel()
	c := sharedCompile(t, adpgCCsim...)
	if c.code != 0 {
		t.Fatalf("compile: %s", c.stderr)
	}
	for _, golden := range []bool{false, true} {
		args := []string{"agent", "--ccsim", "--policy", c.dir, "--replay", ccsimLog, "--json"}
		if golden {
			args = append(args, "--golden")
		}
		code, out, stderr := nicc(t, args...)
		var run struct {
			Decisions, Same, Flows, Hosts int64
			RateDrift                     int64                      `json:"rate_drift"`
			Cycles                        *struct{ Decisions int64 } `json:"decision_cycles"`
		}
		if err := json.Unmarshal([]byte(out), &run); err != nil || code != 0 {
			t.Fatalf("golden %v: exit %d, %v: %s", golden, code, err, stderr)
		}
		if run.Same != run.Decisions || run.Decisions < 100_000 || run.Flows != 16 || run.Hosts != 16 {
			t.Fatalf("golden %v: %+v: want every decision of 16 flows on 16 hosts as logged", golden, run)
		}
		if run.RateDrift > run.Decisions/200 {
			t.Errorf("%d of %d requests' rates are not what the flow's last answer asked for: CCsim did not apply them", run.RateDrift, run.Decisions)
		}
		if (run.Cycles != nil) == golden || (run.Cycles != nil && run.Cycles.Decisions != run.Decisions) {
			t.Errorf("golden %v: cycles %+v; want the firmware's, for every decision", golden, run.Cycles)
		}
	}

	// One answer changed: the replay names it and exits 1.
	raw, err := os.ReadFile(ccsimLog)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	text.ReadFrom(zr)
	lines := strings.SplitN(text.String(), "\n", 1002)[:1001]
	f := strings.Split(lines[500], ",")
	f[10] = "1"
	lines[500] = strings.Join(f, ",")
	tampered := filepath.Join(t.TempDir(), "tampered.csv")
	if err := os.WriteFile(tampered, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := nicc(t, "agent", "--ccsim", "--policy", c.dir, "--golden", "--replay", tampered)
	if code != exitCheck || !strings.Contains(out, "same as logged: 999 of 1000") || !strings.Contains(out, "decision 499 (") ||
		!strings.Contains(stderr, "1 of 1000 decisions differ from the log") {
		t.Fatalf("tampered log: exit %d\n%s%s", code, out, stderr)
	}
}

// TestAgentServesCCsim: nicc agent answers CCsim's protocol on a socket, stops after
// --max-requests, and logs every decision.
func TestAgentServesCCsim(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile := filepath.Join(t.TempDir(), "log.csv")
	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := nicc(t, "agent", "--ccsim", "--multiplier", "0.9", "--listen", addr, "--max-requests", "3", "--log", logFile, "--reply-gap", "0")
		done <- result{code, out, stderr}
	}()
	for i := range 3 {
		var m uint32
		for try := 0; ; try++ {
			if m, err = ccsim.Ask(addr, ccsim.Request{RTTNs: 9000, RateFxp20: 1 << 20, FlowTag: uint32(i), Host: 1}, 5*time.Second); err == nil || try == 100 {
				break
			}
			time.Sleep(20 * time.Millisecond) // the agent is still starting
		}
		if err != nil || m != 58982 {
			t.Fatalf("request %d: %d, %v; want 0.9 in Q16, 58982", i, m, err)
		}
	}
	r := <-done
	if r.code != 0 || !strings.Contains(r.out, "decisions: 3 over 3 flows on 1 hosts") || !strings.Contains(r.out, "stopped: 3 requests answered") {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	log, err := ccsim.ReadLogFile(logFile, 0)
	if err != nil || len(log) != 3 || log[2].FlowTag != 2 || log[2].MultiplierQ16 != 58982 {
		t.Fatalf("log %+v, %v", log, err)
	}
}

func TestAgentRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--multiplier", "1"}, `Required flag "ccsim" not set`},
		{[]string{"agent", "--ccsim"}, "agent needs --policy"},
		{[]string{"agent", "--ccsim", "--multiplier", "0"}, "--multiplier 0: want a multiplier in (0, 65536)"},
		{[]string{"agent", "--ccsim", "--multiplier", "NaN"}, "want a multiplier in (0, 65536)"},
		{[]string{"agent", "--ccsim", "--policy", "swift"}, "not swift"},
		{[]string{"agent", "--ccsim", "--multiplier", "1", "--idle", "-1s"}, "--idle \"-1s\": want a duration"},
		{[]string{"agent", "--ccsim", "--multiplier", "1", "--replay", "x.csv", "--log", "y.csv"}, "--log serves CCsim; --replay answers a log without it"},
		{[]string{"agent", "--ccsim", "--multiplier", "1", "--replay", "/nonexistent.csv"}, "no such file"},
		{[]string{"agent", "--ccsim", "--policy", models + "rlcc_adpg.json", "--listen", "256.0.0.1:1"}, "--listen"},
	} {
		code, _, stderr := nicc(t, c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
