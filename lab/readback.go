package lab

import (
	"fmt"
	"path/filepath"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/nicsdk"
)

// readBack is a compile directory as a sim controller runs it. Its firmware (firmware.elf, or
// with --sdk doca doca_firmware.elf) needs only report.json, read with artifact.ReadReport
// (which checks every file against the manifest and that the verdicts vouch for the ELF), and
// what it records: the parameters, the layout, the model's name, the core, the sanity probe's
// warnings. Nothing is quantized and no C rendered. Only the golden model (--golden) is
// rebuilt, by compiler.OpenCompiled.
type readBack struct {
	report   *artifact.CompileReport
	params   nicsdk.Params
	layout   nicsdk.Layout
	warnings []string
	golden   *compiler.Compiled // with --golden
}

// readCompiled reads the compile directory dir for opt: its firmware, or with opt.Golden its
// rebuilt golden model. A compile without the RL-CC handler is refused.
func readCompiled(opt SimOptions) (*readBack, error) {
	if opt.Golden {
		cp, err := compiler.OpenCompiled(opt.Policy, opt.Model, opt.sdk().ELF())
		if err != nil {
			return nil, err
		}
		if cp.Handler() != artifact.HandlerRLCC {
			return nil, noHandler(opt.Policy)
		}
		return &readBack{report: cp.Report, params: cp.Params(), layout: cp.Layout(), warnings: golden.ProbeWarnings(cp.Model(), cp.Params()), golden: cp}, nil
	}
	dir := opt.Policy
	r, err := artifact.ReadReport(dir, artifact.FirmwareFile, opt.sdk().ELF())
	if err != nil {
		return nil, err
	}
	where := filepath.Join(dir, artifact.ReportFile)
	params := r.FixedParams()
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if h, _ := artifact.ParseHandler(r.Handler); h != artifact.HandlerRLCC {
		return nil, noHandler(dir)
	}
	rb := &readBack{report: r, params: params, layout: nicsdk.DefaultLayout, warnings: r.Warnings}
	if r.Layout != nil {
		rb.layout = r.Layout.Layout()
	}
	words := 0
	if r.LSTM != nil {
		words = r.LSTM.StateWords
	}
	if err := rb.layout.Check(words); err != nil || rb.layout.Inputs() != len(r.Inputs) {
		return nil, fmt.Errorf("%s: rlcc_layout %v is not a window of its %d inputs the handler feeds (%v)", where, rb.layout, len(r.Inputs), err)
	}
	if len(rb.warnings) == 0 {
		// A report without warnings may predate the probe: run it on the float model, as the
		// compile would have (loading it, quantizing nothing).
		m, err := compiler.LoadRecordedModel(dir, r, opt.Model)
		if err != nil {
			return nil, err
		}
		rb.warnings = golden.ProbeWarnings(m, params)
	}
	return rb, nil
}

func noHandler(dir string) error {
	return fmt.Errorf("%s: compiled with --handler none: its firmware is not an RL-CC event handler", dir)
}
