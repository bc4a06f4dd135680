package lab

import (
	"testing"

	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
)

// benchSim runs nicc sim's many-to-one with flows flows for 5 simulated ms and reports the
// simulator's speed: events per second and wall seconds per simulated second.
func benchSim(b *testing.B, opt SimOptions) {
	opt.Scenario = "many-to-one"
	opt.Net.DurationNs = 5_000_000
	var r *SimReport
	for b.Loop() {
		var err error
		if r, err = Sim(opt); err != nil {
			b.Fatal(err)
		}
	}
	wall := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(r.SimEvents)/wall, "events/s")
	b.ReportMetric(wall/(float64(opt.Net.DurationNs)/1e9), "wall-s/sim-s")
	b.ReportMetric(float64(r.Decisions), "decisions")
	b.ReportMetric(r.Utilization, "SU%")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSimGolden8192 is many-to-one 8192→1 with the shipped XGBoost policy's golden model
// deciding (issue 13's target: at most 10 s of wall time per simulated second on one core).
//
//	go test ./compiler -run '^$' -bench SimGolden -benchtime 1x
func BenchmarkSimGolden8192(b *testing.B) {
	benchSim(b, SimOptions{Flows: 8192, Policy: compiledFor(b, 8192), Golden: true})
}

// BenchmarkSimGolden8192MTU1K is BenchmarkSimGolden8192 in 1 KB packets, at which nicc reaches
// the papers' scale (every flow decides on each RTT reply, once a packet: every 0.67 ms at
// its fair share, 12 million decisions a simulated second; issue 28's target: at most 20 s
// of wall time per simulated second).
func BenchmarkSimGolden8192MTU1K(b *testing.B) {
	benchSim(b, SimOptions{Flows: 8192, Policy: compiledFor(b, 8192), Golden: true, Net: SimNet{MTU: 1024}})
}

// BenchmarkSimFirmware1024 is many-to-one 1024→1 with the shipped XGBoost policy's firmware in
// fwsim deciding (target: at most 60 s of wall time per simulated second).
func BenchmarkSimFirmware1024(b *testing.B) {
	benchSim(b, SimOptions{Flows: 1024, Policy: compiledFor(b, 1024)})
}

// BenchmarkSimFirmware1024MTU1K is BenchmarkSimFirmware1024 in 1 KB packets: four times
// the decisions.
func BenchmarkSimFirmware1024MTU1K(b *testing.B) {
	benchSim(b, SimOptions{Flows: 1024, Policy: compiledFor(b, 1024), Net: SimNet{MTU: 1024}})
}

// compiledFor compiles the shipped XGBoost policy for flows flows sharing one link: its
// minimum rate below their fair share and new flows starting at it (the defaults, 1/1000 of
// line rate and line rate, would overload the receiver whatever the policy decides).
func compiledFor(b *testing.B, flows int) string {
	p, err := golden.NewParams([]float64{0.064, 1.5, 12, 0.25 / float64(flows), 1 / float64(flows)})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if _, err := compiler.Compile(compiler.CompileOptions{Model: rlccXGB, Out: dir, Vectors: 2000, Seed: 1, Params: p}); err != nil {
		b.Fatal(err)
	}
	return dir
}
