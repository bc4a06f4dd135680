package fwsim

import (
	"strings"
	"testing"
)

func TestKindNames(t *testing.T) {
	seen := map[string]Kind{}
	for k := Invalid; k < kindEnd; k++ {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "Kind(") {
			t.Errorf("kind %d has no name", k)
		}
		if old, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d are both named %q", old, k, name)
		}
		seen[name] = k
	}
	if got := kindEnd.String(); !strings.HasPrefix(got, "Kind(") {
		t.Errorf("kindEnd.String() = %q, want the fallback", got)
	}
	if n := len(Kinds()); n != int(kindEnd)-1 {
		t.Errorf("len(Kinds()) = %d, want %d", n, kindEnd-1)
	}
}

func TestClassNames(t *testing.T) {
	for c := ClassALU; c < classEnd; c++ {
		if s := c.String(); s == "" || strings.HasPrefix(s, "Class(") {
			t.Errorf("class %d has no name", c)
		}
	}
	for f := FormNone; f < operandFormEnd; f++ {
		if s := f.String(); s == "" || strings.HasPrefix(s, "OperandForm(") {
			t.Errorf("operand form %d has no name", f)
		}
	}
}

func TestProfilesLoadAndCiteSources(t *testing.T) {
	ps := Profiles()
	if len(ps) < 3 {
		t.Fatalf("%d profiles, want dpa and at least two real cores", len(ps))
	}
	if ps[0].Name != DefaultProfile {
		t.Errorf("first profile is %q, want the default %q", ps[0].Name, DefaultProfile)
	}
	names := map[string]bool{}
	for _, p := range ps {
		names[p.Name] = true
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Doc == "" {
			t.Errorf("%s: no doc", p.Name)
		}
		for _, k := range SourceKeys() {
			if strings.TrimSpace(p.Sources[k]) == "" {
				t.Errorf("%s: number %s has no source", p.Name, k)
			}
		}
		for c := ClassALU; c < classEnd; c++ {
			if p.Cost(c, false) == 0 || p.Cost(c, true) == 0 {
				t.Errorf("%s: class %v costs 0", p.Name, c)
			}
		}
		if p.Name != DefaultProfile && !strings.Contains(p.Doc, "approximation") {
			t.Errorf("%s: doc does not say its 32-bit costs are an approximation for RV64", p.Name)
		}
		q, err := LookupProfile(p.Name)
		if err != nil || q.Name != p.Name {
			t.Errorf("LookupProfile(%q) = %v, %v", p.Name, q, err)
		}
	}
	for _, want := range []string{"dpa", "ibex", "cv32e40p", "sifive-e31"} {
		if !names[want] {
			t.Errorf("no profile %q", want)
		}
	}
	dpa, err := LookupProfile("")
	if err != nil || dpa.Name != "dpa" || dpa.ClockHz != 1.8e9 || dpa.Threads != 1 {
		t.Errorf("default profile = %+v, %v", dpa, err)
	}
	if !strings.Contains(dpa.Sources["clock_hz"], "assumption") || !strings.Contains(dpa.Sources["threads"], "assumption") ||
		!strings.HasPrefix(dpa.Sources["memory_bytes"], "assumption") {
		t.Errorf("dpa clock, threads and memory must be labelled assumptions: %q, %q, %q",
			dpa.Sources["clock_hz"], dpa.Sources["threads"], dpa.Sources["memory_bytes"])
	}
	if dpa.MemoryBytes != 1536<<10 {
		t.Errorf("dpa memory_bytes = %d, want 1.5 MiB", dpa.MemoryBytes)
	}
	if c := dpa.MinCost(); c != 1 {
		t.Errorf("dpa MinCost() = %d, want 1 (alu)", c)
	}
	if _, err := LookupProfile("pentium"); err == nil || !strings.Contains(err.Error(), "dpa") {
		t.Errorf("LookupProfile(pentium) error = %v, want one listing the profiles", err)
	}
	// Profiles returns copies.
	ps[0].Costs.ALU = 99
	ps[0].Sources["alu"] = ""
	if p, _ := LookupProfile(ps[0].Name); p.Costs.ALU == 99 || p.Sources["alu"] == "" {
		t.Error("Profiles() shares state with the registry")
	}
}

func TestParseProfileRejects(t *testing.T) {
	good, err := profileFS.ReadFile("profiles/ibex.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", `"threads": 1,`, `"threads": 1, "bogus": 2,`, "unknown field"},
		{"zero cost", `"alu": 1,`, `"alu": 0,`, "cost alu"},
		{"no source", `"mul": "Ibex`, `"mulx": "Ibex`, "no source for mul"},
		{"empty source", `"store": "Ibex docs, Pipeline Details table: Load/Store, 1 - N stall cycles (stores await the response too)"`, `"store": " "`, "no source for store"},
		{"bad clock", `"clock_hz": 1.0e8`, `"clock_hz": -1`, "clock_hz"},
		{"bad threads", `"threads": 1,`, `"threads": 0,`, "threads"},
		{"no memory", `"memory_bytes": 1048576,`, ``, "memory_bytes 0"},
		{"tiny memory", `"memory_bytes": 1048576,`, `"memory_bytes": 100,`, "memory_bytes 100"},
		{"huge memory", `"memory_bytes": 1048576,`, `"memory_bytes": 1e15,`, "memory_bytes"},
		{"memory unsourced", `"memory_bytes": "Ibex`, `"memory": "Ibex`, "no source for memory_bytes"},
		{"text over memory", `"text_bytes": 524288,`, `"text_bytes": 2097152,`, "text_bytes 2097152 and rodata_bytes 524288 must be in [4096, memory_bytes 1048576]"},
		{"no rodata budget", `"rodata_bytes": 524288,`, ``, "rodata_bytes 0"},
		{"text budget unsourced", `"text_bytes": "assumption`, `"text": "assumption`, "no source for text_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(string(good), tc.from, tc.to, 1)
			if s == string(good) {
				t.Fatalf("replacement %q not found", tc.from)
			}
			_, err := ParseProfile([]byte(s))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
