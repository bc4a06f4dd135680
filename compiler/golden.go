package compiler

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// The golden model of a compile is its integer IR: what verify compared the firmware with.
// report.json records what rebuilds it (GoldenInfo), so nicc eval DIR can run the firmware
// beside it on new rows long after the compile: the model file (checked against the report's
// hash), the input formats the report lists, and for --target int8 the calibration and the
// configuration chosen. The rebuild must render the same C the compile emitted (its SHA-256
// is recorded too), which proves it is the same integer model.

// hashSources is the SHA-256 of rendered C files: each name and length, then its bytes, in
// name order.
func hashSources(files map[string][]byte) string {
	h := sha256.New()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenInfo is the report's GoldenInfo for this compilation.
func (c *compilation) goldenInfo() (*artifact.GoldenInfo, error) {
	abs, err := filepath.Abs(c.opt.Model)
	if err != nil {
		return nil, err
	}
	g := &artifact.GoldenInfo{IR: "trees", ModelPath: abs, Seed: c.opt.Seed, SourcesHash: c.sourcesHash}
	switch c.Policy.(type) {
	case *quantize.TreeIR, *quantize.LSTMIR:
		g.Form, g.Products = c.form.String(), c.products.String()
	}
	if c.rank != nil {
		g.Rank = &c.rank.Plan
	}
	if o := c.opt.Int8; o != nil {
		g.IR, g.Samples = "lstm", o.Samples
		if _, mlp := c.Policy.(*quantize.MLPIR); mlp {
			q := c.Int8Quant
			g.IR, g.MLP = "mlp", &artifact.MLPConfig{OutFrac: q.OutFrac, ActBits: q.ActBits, WeightBits: q.WeightBits,
				ChannelScales: q.ChannelScales, TanhBits: q.TanhBits, TanhClip: q.TanhClip, Packed: q.Packed, OpenReLU: q.OpenReLU,
				UnitOutput: q.UnitOutput}
		}
		if o.Calib != "" {
			if g.Calib, err = artifact.NewFileRef(o.Calib); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// Compiled is a compile output directory read back: its report, its firmware, and the golden
// model rebuilt from what the report records.
type Compiled struct {
	Dir      string
	Report   *artifact.CompileReport
	Firmware string // the ELF's path
	c        *golden.Model
}

// Policy is the golden integer policy: a *quantize.TreeIR, *quantize.MLPIR or *quantize.LSTMIR.
func (cp *Compiled) Policy() quantize.Policy { return cp.c.Policy }

// Model is the float model, its inputs in the policy's order.
func (cp *Compiled) Model() *model.Model { return cp.c.Float }

// Params are the RL-CC parameters the compile recorded (the defaults without the handler).
func (cp *Compiled) Params() nicsdk.Params { return cp.c.Params }

// Layout is the window the RL-CC handler feeds the policy (see loaded.layout).
func (cp *Compiled) Layout() nicsdk.Layout { return cp.c.Layout() }

// Handler is the handler the compile wrapped around the policy: HandlerRLCC or HandlerNone.
func (cp *Compiled) Handler() artifact.Handler { return cp.c.Handler }

// OpenCompiled reads the compile output directory dir (ReadReport, using firmware.elf and
// the files of use) and rebuilds its golden model from the
// model file the report records, or from modelPath when it is not "" (the same model moved:
// its hash must match). A model, or a calibration file, that changed since the compile is
// refused, and so is a rebuild that does not render the C the compile emitted.
func OpenCompiled(dir, modelPath string, use ...string) (*Compiled, error) {
	r, err := artifact.ReadReport(dir, append([]string{artifact.FirmwareFile}, use...)...)
	if err != nil {
		return nil, err
	}
	where := filepath.Join(dir, artifact.ReportFile)
	g := r.Golden
	if g == nil {
		return nil, fmt.Errorf("%s: records no golden model (an older nicc wrote it): compile again", where)
	}
	var int8 *golden.Int8Options
	if g.IR != "trees" {
		int8 = &golden.Int8Options{Samples: g.Samples}
		if g.Calib != nil {
			h, err := artifact.FileHash(g.Calib.Path)
			if err != nil {
				return nil, fmt.Errorf("%s: calibration file: %w", where, err)
			}
			if h != g.Calib.Hash {
				return nil, fmt.Errorf("%s: calibration file %s has changed since the compile (model IR sha256 %.12s, the report says %.12s)", where, g.Calib.Path, h, g.Calib.Hash)
			}
			int8.Calib = g.Calib.Path
		}
	}
	c, err := loadRecorded(dir, r, modelPath, int8)
	if err != nil {
		return nil, err
	}
	if len(r.Inputs) != c.Float.NumInputs() {
		return nil, fmt.Errorf("%s: %d input formats; model %s takes %d inputs", where, len(r.Inputs), c.Float.Name, c.Float.NumInputs())
	}
	form, err := requantize(c, g, r.Formats())
	if err != nil {
		return nil, fmt.Errorf("%s: rebuilding the golden model: %w", where, err)
	}
	plan, err := newCodePlan(c, form)
	if err != nil {
		return nil, err
	}
	rd, err := render(c.Policy, plan, fileNames)
	if err != nil {
		return nil, err
	}
	if got := hashSources(rd.sources()); got != g.SourcesHash {
		return nil, fmt.Errorf("%s: the golden model rebuilt from %s renders other C than the compile emitted (sources sha256 %.12s, the report says %.12s)", where, modelPath, got, g.SourcesHash)
	}
	return &Compiled{Dir: dir, Report: r, Firmware: filepath.Join(dir, artifact.FirmwareFile), c: c}, nil
}

// LoadRecordedModel loads the float model the compile of r (in dir) read, as it read it (its
// format, its inputs as given, its handler, in the policy's order), from the path r records
// or modelPath when not "" (the same model moved), and checks it against r's model hash. It
// quantizes nothing: the golden model is OpenCompiled's.
func LoadRecordedModel(dir string, r *artifact.CompileReport, modelPath string) (*model.Model, error) {
	var int8 *golden.Int8Options
	if g := r.Golden; g != nil && g.IR != "trees" {
		int8 = &golden.Int8Options{Samples: g.Samples} // load takes a network for --target int only
	}
	c, err := loadRecorded(dir, r, modelPath, int8)
	if err != nil {
		return nil, err
	}
	return c.Float, nil
}

// loadRecorded is the load stage as the compile of r ran it, on the model file r records (or
// modelPath, the same model moved), checked against r's layout and model hash.
func loadRecorded(dir string, r *artifact.CompileReport, modelPath string, int8 *golden.Int8Options) (*golden.Model, error) {
	where := filepath.Join(dir, artifact.ReportFile)
	var seed uint64
	if g := r.Golden; g != nil {
		modelPath, seed = cmp.Or(modelPath, g.ModelPath), g.Seed
	}
	if modelPath == "" {
		return nil, fmt.Errorf("%s: records no model file (an older nicc wrote it): compile again", where)
	}
	handler, _ := artifact.ParseHandler(r.Handler)
	format, err := golden.ParseFormat(r.Model.Format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	params := r.FixedParams()
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	// The model's input names as compiled: --inputs may have renamed the file's. Under RL-CC,
	// the names as given, which put the model in the policy's order again.
	inputs := r.Model.Inputs
	if r.Layout != nil {
		inputs = r.Layout.Given
	}
	c := golden.New(golden.Options{Model: modelPath, Format: format, Inputs: inputs, Handler: handler, Params: params,
		ParamSources: golden.SourcesAll(artifact.SourceCompile), Seed: seed, Int8: int8})
	if err := c.Load(""); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: the model compiled: %w (pass --model with the file if it moved)", where, err)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if (c.InLayout == nil) != (r.Layout == nil) || c.InLayout != nil && !golden.SameLayout(c.InLayout, r.Layout) {
		return nil, fmt.Errorf("%s: the model's inputs as recorded (%v) load as another RL-CC layout (%v)", where, r.Layout, c.InLayout)
	}
	h, err := model.Hash(c.Float)
	if err != nil {
		return nil, model.InFile(modelPath, err)
	}
	if h != r.Model.Hash {
		return nil, fmt.Errorf("%s: model %s has changed since the compile (model IR sha256 %.12s, the report says %.12s): pass --model with the file compiled, or compile again", where, modelPath, h, r.Model.Hash)
	}
	return c, nil
}

// requantize is the quantize stage with the choices the report g records: it turns the
// loaded model into the integer IR g describes, over its input formats, and gives the code
// form g records.
func requantize(c *golden.Model, g *artifact.GoldenInfo, inputs []quantize.Input) (candidate, error) {
	var form candidate
	if g.Form != "" { // a report before code forms, or an LSTM's before the table form: branch, the zero form
		var err error
		if form.form, err = codegen.ParseForm(g.Form); err != nil {
			return form, err
		}
	}
	switch g.IR {
	case "trees":
		if c.Float.Ensemble == nil {
			return form, fmt.Errorf("model %s is not a tree ensemble", c.Float.Name)
		}
		ir, err := quantize.Trees(c.Float, inputs, quantize.TreeOptions{OutFrac: quantize.DefaultOutFrac})
		if err != nil {
			return form, err
		}
		c.Policy = ir
		if g.Rank != nil {
			form.rank, err = ir.BuildRank(*g.Rank)
		}
		return form, err
	case "mlp", "lstm":
		if (g.IR == "lstm") != (c.Float.Kind() == model.KindLSTM) || c.Float.Ensemble != nil {
			return form, fmt.Errorf("model %s is not an %s network", c.Float.Name, g.IR)
		}
		calib, err := c.CalibRows()
		if err != nil {
			return form, err
		}
		if g.IR == "lstm" {
			if err := c.QuantizeLSTM(inputs, calib); err != nil {
				return form, err
			}
			form.products, err = recordedProducts(c.Policy.(*quantize.LSTMIR), g)
			return form, err
		}
		if g.MLP == nil {
			return form, fmt.Errorf("the report records no MLP configuration")
		}
		c.Opt.Int8.Quant = g.MLP.Options()
		calib, _ = golden.WithCorners(calib, inputs)
		return form, c.ChooseMLP(inputs, calib)
	}
	return form, fmt.Errorf("golden ir %q: want trees, mlp or lstm", g.IR)
}

// recordedProducts is the LSTM's plan of product tables the report g records.
func recordedProducts(ir *quantize.LSTMIR, g *artifact.GoldenInfo) (codegen.Products, error) {
	switch {
	case g.Products != "":
		return codegen.ParseProducts(g.Products)
	case g.Tables > 0:
		if g.Tables > ir.Hidden {
			return nil, fmt.Errorf("the report records %d product tables for %d units", g.Tables, ir.Hidden)
		}
		ps := codegen.AllRows(ir)
		for i := ir.Pre.Out; i < ir.Gates.In-g.Tables; i++ {
			ps[i] = codegen.ProductMul
		}
		return ps, nil
	}
	return nil, nil
}
