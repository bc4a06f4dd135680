package artifact

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/prove"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/termtext"
)

// VectorsInfo names a file of calls of entry that compile wrote for nicc budget.
type VectorsInfo struct {
	Entry   string `json:"entry"`
	File    string `json:"file"` // in the output directory
	Vectors int    `json:"vectors"`
}

// DistilledFrom is where a compile's student (CompileOptions.Student) came from: the
// network teacher, and how closely the trees follow it on the distillation's states. The
// firmware computes the trees exactly (verify); this is its error against the network.
type DistilledFrom struct {
	Teacher     string      `json:"teacher"`
	TeacherKind string      `json:"teacher_kind"`
	States      string      `json:"states"`
	Train       distill.Fit `json:"train"`
	HeldOut     distill.Fit `json:"held_out"`
}

// Seconds is a duration that marshals as seconds.
type Seconds time.Duration

// MarshalJSON writes s in seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(s).Seconds(), 'f', 3, 64)), nil
}

// UnmarshalJSON reads seconds.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*s = Seconds(time.Duration(v * float64(time.Second)))
	return nil
}

func (s Seconds) String() string { return time.Duration(s).Round(time.Millisecond).String() }

// DOCAReport is the DOCA target's verification and budget.
type DOCAReport struct {
	Source   string `json:"source"`
	Firmware string `json:"firmware"`
	Entry    string `json:"entry"`
	// Vectors counts the compared calls: events and parameter changes.
	Vectors    int `json:"vectors"`
	Events     int `json:"events"`
	Decisions  int `json:"decisions"` // RTT events of the algorithm's slot
	Sequences  int `json:"sequences"`
	SetParams  int `json:"set_params"`
	Refused    int `json:"set_params_refused"`
	Batches    int `json:"batches"`
	Mismatches int `json:"mismatches"`
	// Compared names the implementations that agreed on every output word: the results'
	// rate and rtt_req, the 12 context words and the counters after each event; the status
	// and the parameters after each change; the disabled-event mask after each init.
	Compared  []string `json:"compared"`
	UBSan     string   `json:"ubsan"`
	MaxCycles uint64   `json:"max_cycles"` // the longest doca_pcc_dev_user_algo call in fwsim
	// Budget is doca_pcc_dev_user_algo's WCET and measured cycles in the DOCA ELF.
	Budget *budget.Report `json:"budget"`
	// HandlerWCETCycles is nicc_on_event's WCET, the same policy in nicc's ABI, and
	// WCETRatio the DOCA entry's over it.
	HandlerWCETCycles uint64  `json:"handler_wcet_cycles"`
	WCETRatio         float64 `json:"wcet_ratio"`
}

// writeText prints the DOCA target's lines of the compile summary.
func (r *DOCAReport) writeText(tw io.Writer) {
	termtext.Printf(tw, "doca\t%s in %s: %d calls (%d events, %d decisions, in %d sequences; %d parameter changes, %d refused)",
		r.Entry, r.Source, r.Vectors, r.Events, r.Decisions, r.Sequences, r.SetParams, r.Refused)
	if r.Compared != nil {
		termtext.Printf(tw, ": golden == host C == fwsim, %d mismatches; UBSan %s", r.Mismatches, r.UBSan)
	}
	fmt.Fprintln(tw)
	if b := r.Budget; b != nil {
		var measured uint64
		if b.Measured != nil {
			measured = b.Measured.MaxCycles
		}
		termtext.Printf(tw, "\tWCET %d cycles = %s µs, %.3f × %s's %d; measured max %d; budget %s\n", b.WCETCycles,
			budget.Micros(b.WCETMicros), r.WCETRatio, EntryHandler, r.HandlerWCETCycles, max(measured, r.MaxCycles), b.Verdict)
	}
}

// LowerBound is what nicc knows before building, from the integer IR alone, of the firmware
// any of its code forms can make of a model: at least Cycles on the core, and at least Bytes
// of code and constant tables. The fit stage refuses a model whose bound is over the budget
// or the core's memory (CompileOptions.Force builds it anyway).
type LowerBound struct {
	Cycles     uint64 `json:"cycles"`
	CyclesFrom string `json:"cycles_from"` // what was counted
	Bytes      uint64 `json:"bytes"`
	BytesFrom  string `json:"bytes_from"`
}

// over reports whether text and rodata bytes are over m, and says by how much in words.
func (m MemoryBudget) Over(text, rodata uint64) (string, bool) {
	var over []string
	if text > m.TextBytes {
		over = append(over, fmt.Sprintf(".text %s bytes, over the %s-byte budget (%s)", termtext.Thousands(text), termtext.Thousands(m.TextBytes), SourceShort(m.TextSource)))
	}
	if rodata > m.RodataBytes {
		over = append(over, fmt.Sprintf(".rodata %s bytes, over the %s-byte budget (%s)", termtext.Thousands(rodata), termtext.Thousands(m.RodataBytes), SourceShort(m.RodataSource)))
	}
	return strings.Join(over, " and "), len(over) > 0
}

// BuildInfo is how the generated C was printed and compiled.
type BuildInfo struct {
	Form string   `json:"form"` // codegen's form: branch, table, walk or rank
	Opt  []string `json:"opt"`  // gcc's optimisation flags (in place of HostFlags' -O2)
	Why  string   `json:"why"`
	// Candidates are the forms (of a tree ensemble or an LSTM) built and bounded to choose
	// this one (chooseForm), within Memory.
	Candidates []FormCandidate `json:"candidates,omitempty"`
	Memory     *MemoryBudget   `json:"memory_budget,omitempty"`
}

func (b BuildInfo) String() string {
	return fmt.Sprintf("%s form, gcc %s (%s)", b.Form, strings.Join(b.Opt, " "), b.Why)
}

// FormCandidate is one code form the compile built and bounded.
type FormCandidate struct {
	Form   string `json:"form"`
	Detail string `json:"detail"` // the rank form's groups and buckets
	// WCETCycles is the entry's static WCET; PolicyWCET nicc_policy's (in the RL-CC firmware).
	WCETCycles  uint64 `json:"wcet_cycles"`
	PolicyWCET  uint64 `json:"policy_wcet_cycles"`
	TextBytes   uint64 `json:"text_bytes"`
	RodataBytes uint64 `json:"rodata_bytes"`
	Fits        bool   `json:"fits"` // within the memory budget
	Chosen      bool   `json:"chosen"`
	// NotBuilt, when set, says why the form was not built: a cheaper one that fits dominates
	// it (the costs above are then 0).
	NotBuilt string `json:"not_built,omitempty"`
}

// MemoryBudget is the most .text and .rodata a firmware may have, and where each comes from.
type MemoryBudget struct {
	TextBytes    uint64 `json:"text_bytes"`
	TextSource   string `json:"text_source"`
	RodataBytes  uint64 `json:"rodata_bytes"`
	RodataSource string `json:"rodata_source"`
}

// writeCandidates prints the cost of every form built to choose this one, one line each.
func (b BuildInfo) writeCandidates(tw io.Writer) {
	if len(b.Candidates) < 2 {
		return
	}
	m := b.Memory
	built := 0
	for _, c := range b.Candidates {
		if c.NotBuilt == "" {
			built++
		}
	}
	termtext.Printf(tw, "forms\t%d built of %d; memory budget .text %d bytes (%s), .rodata %d (%s)\n",
		built, len(b.Candidates), m.TextBytes, SourceShort(m.TextSource), m.RodataBytes, SourceShort(m.RodataSource))
	for _, c := range b.Candidates {
		mark := " "
		switch {
		case c.NotBuilt != "":
			termtext.Printf(tw, "\t- %-6s not built: %s: %s\n", c.Form, c.NotBuilt, c.Detail)
			continue
		case c.Chosen:
			mark = "*"
		case !c.Fits:
			mark = "!"
		}
		termtext.Printf(tw, "\t%s %-6s WCET %d (%s %d), .text %d, .rodata %d: %s\n",
			mark, c.Form, c.WCETCycles, EntryPolicy, c.PolicyWCET, c.TextBytes, c.RodataBytes, c.Detail)
	}
}

// GoldenInfo is what rebuilds a compile's golden model.
type GoldenInfo struct {
	// IR is the integer model's kind: "trees", "mlp" or "lstm".
	IR string `json:"ir"`
	// ModelPath is the model file's absolute path at compile time.
	ModelPath string `json:"model_path"`
	Seed      uint64 `json:"seed"`
	// Calib is --target int8's calibration file, nil for sampled RL-CC states; Samples is
	// --samples (the number of states sampled, or the most rows of Calib read).
	Calib   *FileRef `json:"calib,omitempty"`
	Samples int      `json:"samples,omitempty"`
	// MLP is the integer MLP's configuration, as chosen.
	MLP *MLPConfig `json:"mlp,omitempty"`
	// Form is a tree ensemble's or an LSTM's code form as chosen, and Rank the rank form's
	// layout plan.
	Form string `json:"form,omitempty"`
	// Products is an LSTM's table form's plan of product tables (codegen.Products), empty for
	// codegen.AllRows; Tables is how an earlier report recorded one: the last Tables units of h
	// read from all their rows (0: every unit).
	Products string             `json:"products,omitempty"`
	Tables   int                `json:"tables,omitempty"`
	Rank     *quantize.RankPlan `json:"rank,omitempty"`
	// SourcesHash is the SHA-256 of the C rendered from the IR (hashSources).
	SourcesHash string `json:"sources_sha256"`
}

// FileRef is a file a compile read, with the SHA-256 of its bytes.
type FileRef struct {
	Path string `json:"path"` // absolute
	Hash string `json:"sha256"`
}

// MLPConfig is quantize.MLPOptions as the report records it.
type MLPConfig struct {
	OutFrac       int     `json:"out_frac"`
	ActBits       int     `json:"act_bits"`
	WeightBits    int     `json:"weight_bits"`
	ChannelScales bool    `json:"channel_scales"`
	TanhBits      int     `json:"tanh_bits"`
	TanhClip      float64 `json:"tanh_clip"`
	Packed        bool    `json:"packed,omitempty"`
	OpenReLU      bool    `json:"open_relu,omitempty"`
	UnitOutput    bool    `json:"unit_output,omitempty"`
}

// Options are the quantize.MLPOptions m records.
func (m MLPConfig) Options() quantize.MLPOptions {
	return quantize.MLPOptions{OutFrac: m.OutFrac, ActBits: m.ActBits, WeightBits: m.WeightBits,
		ChannelScales: m.ChannelScales, TanhBits: m.TanhBits, TanhClip: m.TanhClip, Packed: m.Packed, OpenReLU: m.OpenReLU,
		UnitOutput: m.UnitOutput}
}

// formats are the report's input formats.
func (r *CompileReport) Formats() []quantize.Input {
	ins := make([]quantize.Input, len(r.Inputs))
	for i, in := range r.Inputs {
		ins[i] = in.Format()
	}
	return ins
}

// Format is the fixed-point input format in records.
func (in InputInfo) Format() quantize.Input {
	return quantize.Input{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max}
}

// params are the RL-CC parameters the report records (the defaults without the handler).
func (r *CompileReport) FixedParams() nicsdk.Params {
	p := r.Params
	if p == nil {
		return nicsdk.DefaultParams()
	}
	return p.Fixed()
}

// fixed are the parameters p records, in the handler's fixed point.
func (p *RLCCParams) Fixed() nicsdk.Params {
	return nicsdk.Params{Target: p.Target, Beta: p.Beta, Scale: p.Scale, MinRate: p.MinRate, InitRate: p.InitRate, BaseRTT: p.BaseRTT}
}

// MLPWidths names an integer MLP's widths: "w16/a16, per-channel scales" (act 0 is 16), and
// ", packed lanes" under quantize.MLPOptions.Packed (with int8 weights, how they pack), ", unit
// output weights" under UnitOutput.
func MLPWidths(weight, act int, channelScales, packed, unit bool) string {
	scales := "per-tensor scales"
	if channelScales {
		scales = "per-channel scales"
	}
	if packed {
		scales += ", packed lanes" + map[bool]string{true: " (int8 weights three to a 64-bit multiply over int8 inputs, int16 in pairs over wider ones)"}[weight == 8]
	}
	if unit {
		scales += ", unit output weights"
	}
	return fmt.Sprintf("w%d/a%d, %s", weight, cmp.Or(act, 16), scales)
}

// InputLayout is how a policy's inputs map onto the RL-CC handler's window, as report.json
// records it: the names as given (the file's, or --inputs), the layout they form, and the
// permutation that put the model in the policy's order (model input i is slot Permutation[i]).
type InputLayout struct {
	Given       []string `json:"inputs_given"`
	History     int      `json:"history"`
	Features    []string `json:"features"`
	Permutation []int    `json:"permutation"`
	// ByPosition says the names were not RL-CC names and the inputs were taken by position
	// (--handler rlcc on an unnamed model).
	ByPosition bool `json:"by_position,omitempty"`
}

// Layout is the nicsdk.Layout l records.
func (l *InputLayout) Layout() nicsdk.Layout {
	var m nicsdk.FeatureMask
	for _, f := range l.Features {
		if x, ok := rlcc.ParseFeature(f); ok {
			m |= 1 << x
		}
	}
	return nicsdk.Layout{History: l.History, Features: m}
}

// String is the layout in prose with its order: "history 2, features action+obs, inputs
// a_prev2,o_prev,a_prev,o (the policy's slots 2,3,0,1)".
func (l *InputLayout) String() string {
	s := fmt.Sprintf("%s, inputs %s", l.Layout(), strings.Join(l.Given, ","))
	if l.ByPosition {
		return s + " taken by position"
	}
	if !IsIdentity(l.Permutation) {
		s += fmt.Sprintf(" reordered to the policy's %s", strings.Join(rlcc.LayoutNames(l.Layout()), ","))
	}
	return s
}

// IsIdentity says perm leaves every input in place.
func IsIdentity(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}

// CheckManifest refuses a report without a manifest, or with one nicc would not write.
func (r *CompileReport) CheckManifest() error {
	m := r.Manifest
	if m == nil {
		return errors.New("lists no files (written by an older nicc): compile again")
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || path.Clean(f.Path) != f.Path || f.Path == ReportFile || seen[f.Path] {
			return fmt.Errorf("manifest: %q is not a file a compile writes", f.Path)
		}
		seen[f.Path] = true
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != 32 || f.Bytes < 0 {
			return fmt.Errorf("manifest: %s: sha256 %q or size %d is not one nicc writes", f.Path, f.SHA256, f.Bytes)
		}
	}
	if m.Verdicts.Verify != VerdictPass {
		how := ""
		if f := r.Failure; f != nil {
			how = fmt.Sprintf(" (it failed at %s: %s)", f.Stage, f.Kind)
		}
		return fmt.Errorf("the compile did not pass verify%s: nothing in it is verified; compile again", how)
	}
	return nil
}

// CheckFiles checks every file of dir the manifest lists against it (a regular file, not a
// link, of the size and SHA-256 listed), and that the verdicts vouch for each file of use.
// Each refusal names the file.
func (r *CompileReport) CheckFiles(dir string, use ...string) error {
	m := r.Manifest
	for _, u := range use {
		if !slices.ContainsFunc(m.Files, func(f ManifestFile) bool { return f.Path == u }) {
			if u == DOCAFirmwareFile && r.DOCA == nil {
				return fmt.Errorf("%s was compiled without --sdk doca: it has no DOCA program (%s); compile it with --sdk doca", dir, DOCAFirmwareFile)
			}
			return fmt.Errorf("%s: this compile did not write it (%s does not list it)", filepath.Join(dir, u), ReportFile)
		}
		if vouch := vouchers[u]; vouch != nil {
			if stage, v := vouch(m.Verdicts); v != VerdictPass {
				return fmt.Errorf("%s: the compile's %s stage did not pass (%s), so it is not verified; compile again", filepath.Join(dir, u), stage, v)
			}
		}
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: missing; %s lists it: compile again", p, ReportFile)
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s: not the regular file %s lists (a link or another kind of file); compile again", p, ReportFile)
		case fi.Size() != f.Bytes:
			return fmt.Errorf("%s: changed since nicc compile wrote it (%d bytes, %s lists %d); compile again", p, fi.Size(), ReportFile, f.Bytes)
		}
		h, err := FileHash(p)
		if err != nil {
			return err
		}
		if h != f.SHA256 {
			return fmt.Errorf("%s: changed since nicc compile wrote it (sha256 %.12s, %s lists %.12s); compile again", p, h, ReportFile, f.SHA256)
		}
	}
	return nil
}

// ParamSources say where each RL-CC parameter came from, by its key (rlcc.ParamField.Key,
// model.RLCCKeys): one of the Source constants.
type ParamSources map[string]string

// Where an RL-CC parameter came from.
const (
	SourceModel   = "model"   // the policy file carries it (nicc train writes it)
	SourceFlag    = "flag"    // its --rlcc-* flag
	SourceDefault = "default" // nicc's default (rlcc.ParamFields)
	SourceCompile = "compile" // the compile directory's report.json
	SourceTrained = "trained" // what nicc train trained under
	SourceGiven   = "given"   // a caller's whole set (an API caller's Params without sources)
	// SourcePathRTT: nicc sim gives every RL-CC policy whose base RTT is 0 the scenario's
	// empty-path RTT, as the host provisions it in each flow's context at flow start.
	SourcePathRTT = "scenario path RTT"
)

// CompileReport is what nicc compile found, as report.json holds it.
type CompileReport struct {
	// Failure is the check that failed, when one did: the report then holds what the stages
	// before it found.
	Failure *Failure  `json:"failure,omitempty"`
	Model   ModelInfo `json:"model"`
	Handler string    `json:"handler"`
	Entry   string    `json:"entry"`
	// Notes are things a user should know that are not errors.
	Notes []string `json:"notes,omitempty"`
	// Warnings are the sanity probe's (probeWarnings): the policy moves the rate the wrong
	// way in a plain situation.
	Warnings []string `json:"warnings,omitempty"`
	Out      string   `json:"out"`
	// Files are the sources written into Out (the firmware ELF, the host driver and this
	// report aside).
	Files []string `json:"files"`
	// Firmware is the RISC-V ELF in Out ("" when the build failed).
	Firmware string `json:"firmware,omitempty"`
	// Host are the host verification driver's source and its two builds (strict and UBSan),
	// by their paths in Out.
	Host   []string    `json:"host,omitempty"`
	Inputs []InputInfo `json:"inputs"`
	Params *RLCCParams `json:"rlcc_params,omitempty"`
	// Layout is how the model's inputs map onto the RL-CC handler's window (the model was
	// put in the policy's order when it was loaded); every reader of the directory reads it.
	Layout *InputLayout `json:"rlcc_layout,omitempty"`
	Quant  QuantInfo    `json:"quantization"`
	// Int8 is the integer MLP's quantization (--target int), in place of Quant's trees.
	Int8 *Int8Info `json:"int8,omitempty"`
	// LSTM is the integer LSTM's quantization (--target int on a recurrent network).
	LSTM   *LSTMInfo    `json:"lstm,omitempty"`
	Verify VerifyReport `json:"verify"`

	// Fidelity compares the firmware with the float model on the sampled float states (and
	// sample rows) of verify, in the model's output units (a probability for a binary model).
	// None for an LSTM, whose error depends on its state: see LSTM and HandlerFidelity.
	Fidelity *Fidelity `json:"fidelity,omitempty"`
	// HandlerFidelity does the same over the RL-CC handler's decisions in the event
	// sequences that start from a new or a valid flow context, on the RTT events whose o_t
	// was drawn uniformly (not aimed at a threshold or an edge). The float state is the
	// observation computed in float64 from the same RTT, base RTT and rate (o_{t-1}: the
	// previous such float observation), and the multipliers a_{t-1}, a_{t-2} the context
	// holds. For an LSTM: every decision of the sequences that start from a new flow, against
	// the float LSTM run along the same sequence with its own state on the same (quantized)
	// inputs, so all of the error is the integer network's, its drift included.
	HandlerFidelity *Fidelity `json:"fidelity_handler,omitempty"`
	// Tool compares with the source tool's own predictions on the sample rows.
	Tool *ToolFidelity `json:"fidelity_tool,omitempty"`
	// Teacher, for a network distilled into trees (compile --target trees), is the trees'
	// error against the network teacher (the float model the user trained) on the
	// distillation's states; Fidelity above is the firmware against the trees.
	Teacher *DistilledFrom `json:"fidelity_teacher,omitempty"`

	Budget *budget.Report `json:"budget,omitempty"`
	// Prove is what --require proved (nicc prove's report); absent without it.
	Prove *prove.Report `json:"prove,omitempty"`
	// PolicyAlone is the model's own WCET inside the RL-CC firmware.
	PolicyAlone *PolicyCost `json:"policy_alone,omitempty"`
	// DOCA is the DOCA PCC target's verification and budget (--sdk doca).
	DOCA *DOCAReport `json:"doca,omitempty"`

	// LowerBound is what any code form can do at best, as the fit stage counted it before
	// building: the budget and the core's memory were checked against it.
	LowerBound *LowerBound `json:"lower_bound"`
	// Build is the code form and the optimisation level the C was built with.
	Build BuildInfo `json:"build"`

	// Golden records what rebuilds the golden model, for nicc eval DIR (see GoldenInfo).
	Golden *GoldenInfo `json:"golden,omitempty"`
	// VectorFiles are the verify calls the budget measured, one file per entry, written beside
	// the ELF in nicc budget's vectors format: nicc budget DIR re-runs them and reproduces the
	// measured max.
	VectorFiles []VectorsInfo `json:"vector_files,omitempty"`

	CodeBytes   uint64 `json:"code_bytes"`   // .text of the ELF
	RodataBytes uint64 `json:"rodata_bytes"` // .rodata (constant tables)
	StateBytes  int    `json:"state_bytes"`  // flow context bytes the decision keeps
	StateLimit  int    `json:"state_limit_bytes"`

	// Times are the stages run, in order, with how long each took.
	Times []StageTime `json:"stage_times"`
	// Manifest lists every file the compile wrote, with its SHA-256, and its verdicts.
	Manifest *Manifest `json:"manifest"`
}

// StageTime is how long one stage of compile took.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// ModelInfo names the compiled model.
type ModelInfo struct {
	File   string `json:"file"`
	Format string `json:"format"`
	Name   string `json:"name"`
	// Hash is the model IR's SHA-256 (model.Hash: nicc's canonical JSON of the model as read,
	// input names included), not the file's: the text labels it "model IR sha256". The JSON
	// name stays "sha256" (golden.go and older reports read it).
	Hash      string   `json:"sha256"`
	Inputs    []string `json:"inputs"`
	Trees     int      `json:"trees"`
	Transform string   `json:"transform"`
}

// InputInfo is one input's fixed-point format.
type InputInfo struct {
	Name       string  `json:"name"`
	Frac       int     `json:"frac"`
	Min        int32   `json:"min"`
	Max        int32   `json:"max"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Resolution float64 `json:"resolution"`
	Source     string  `json:"range_from"`
	Splits     int     `json:"splits"`
}

// RLCCParams are the RL-CC handler's parameters as compiled (Q16; rates fxp20), and the
// real numbers they stand for.
type RLCCParams struct {
	Target   uint32 `json:"target_q16"`
	Beta     uint32 `json:"beta_q16"`
	Scale    uint32 `json:"scale_q16"`
	MinRate  uint32 `json:"min_rate_fxp20"`
	InitRate uint32 `json:"init_rate_fxp20"`
	BaseRTT  uint32 `json:"base_rtt_ns,omitempty"` // 0 (absent): learned per flow

	TargetReal   float64 `json:"target"`
	BetaReal     float64 `json:"beta"`
	ScaleReal    float64 `json:"scale"`
	MinRateReal  float64 `json:"min_rate"`
	InitRateReal float64 `json:"init_rate"`

	// Sources say where each parameter came from, by its key (model.RLCCKeys): the model
	// file, a flag, the default, ... (the Source constants).
	Sources ParamSources `json:"sources,omitempty"`
}

// Int8Info summarises an integer MLP: the configuration chosen and its fidelity against the
// float teacher on the calibration set.
type Int8Info struct {
	WeightBits    int  `json:"weight_bits"`
	ActBits       int  `json:"act_bits"`
	ChannelScales bool `json:"channel_scales"`
	// Packed: hidden layers requantized by a shift, two (three: int8 over int8) channels to a 64-bit multiply.
	Packed bool `json:"packed,omitempty"`
	// OpenReLU: hidden relus without the upper clamp.
	OpenReLU bool `json:"open_relu,omitempty"`
	// UnitOutput: the final weights' magnitudes folded into the relu channels before them.
	UnitOutput  bool   `json:"unit_output,omitempty"`
	TanhBits    int    `json:"tanh_bits"`
	OutFrac     int    `json:"out_frac"`
	AccBits     []int  `json:"acc_bits"` // per layer
	Calibration string `json:"calibration"`
	// CalibRows, MaxAbsDy and FlipRate are quantize's fidelity on the calibration rows: max
	// |y_int − y_float| and the fraction of rows whose RL-CC direction (increase, hold,
	// decrease) differs.
	CalibRows int     `json:"calib_rows"`
	MaxAbsDy  float64 `json:"max_abs_dy"`
	FlipRate  float64 `json:"flip_rate"`
	// Trials are the configurations tried, cheapest first, when none was given: the first
	// that met the targets (else the cheapest near the most accurate, golden.Int8NearDy) was chosen.
	Trials []Int8Trial `json:"trials,omitempty"`
}

// widths names the trial's configuration: "w16/a16", "w16/a16 packed".
func (t Int8Trial) widths() string {
	s := fmt.Sprintf("w%d/a%d", t.WeightBits, t.ActBits)
	if t.Packed {
		s += " packed"
	}
	if t.UnitOutput {
		s += " unit"
	}
	if t.OpenReLU {
		s += " open"
	}
	return s
}

// Int8Trial is one configuration tried and its measured fidelity on the calibration rows (or
// why quantize refused it).
type Int8Trial struct {
	WeightBits   int     `json:"weight_bits"`
	ActBits      int     `json:"act_bits"`
	Packed       bool    `json:"packed,omitempty"`
	OpenReLU     bool    `json:"open_relu,omitempty"`
	UnitOutput   bool    `json:"unit_output,omitempty"`
	MaxAbsDy     float64 `json:"max_abs_dy"`
	FlipRate     float64 `json:"flip_rate"`
	MeetsTargets bool    `json:"meets_targets"`
	Refused      string  `json:"refused,omitempty"`
}

// LSTMInfo summarises an integer LSTM: its formats, its state in the flow context, and its
// fidelity against the float teacher over the calibration sequences.
type LSTMInfo struct {
	Hidden int `json:"hidden"`
	// StateBytes are h and c at one byte each, in StateWords context words after the
	// handler's (StateLayout says which).
	StateBytes  int     `json:"state_bytes"`
	StateWords  int     `json:"state_words"`
	StateLayout string  `json:"state_layout"`
	LaneBits    int     `json:"lane_bits"`
	PreMax      int     `json:"x_t_grid_max"`
	SigStep     float64 `json:"sigmoid_step"`
	TanhStep    float64 `json:"tanh_step"`
	CellScale   float64 `json:"cell_scale"`
	OutScale    float64 `json:"out_scale"`
	// Folded is true when the output table holds the RL-CC rate multiplier (the action →
	// multiplier map folded in) rather than y.
	Folded      bool    `json:"folded_multiplier"`
	OutFrac     int     `json:"out_frac"`
	Calibration string  `json:"calibration"`
	CalibRows   int     `json:"calib_rows"`
	SeqLen      int     `json:"seq_len"`
	MaxAbsDy    float64 `json:"max_abs_dy"`
	FlipRate    float64 `json:"flip_rate"`
}

// QuantInfo summarises the integer IR.
type QuantInfo struct {
	AccFrac    int     `json:"acc_frac"`
	AccBits    int     `json:"acc_bits"`
	OutFrac    int     `json:"out_frac"`
	Rounding   string  `json:"rounding"`
	Splits     int     `json:"splits"`
	Leaves     int     `json:"leaves"`
	MaxDepth   int     `json:"max_depth"`
	Folded     int     `json:"folded_splits"`
	ConstTrees int     `json:"const_trees"`
	LeafErr    float64 `json:"leaf_err_bound"`  // score units
	OutErr     float64 `json:"out_err_bound"`   // score units
	ScoreErr   float64 `json:"score_err_bound"` // LeafErr + OutErr
}

// ErrStats are the largest absolute error and the root mean square error.
type ErrStats struct {
	MaxAbs float64 `json:"max_abs_err"`
	RMSE   float64 `json:"rmse"`
}

// Fidelity splits the firmware's error against the float model at a float state xf into
// the part the input quantization causes (float model at the quantized inputs vs at xf)
// and the part the leaves and the final rounding cause (firmware vs float model at the
// quantized inputs).
type Fidelity struct {
	What    string   `json:"what"`
	Vectors int      `json:"vectors"`
	Total   ErrStats `json:"total"`
	Inputs  ErrStats `json:"inputs"`
	Leaves  ErrStats `json:"leaves"`
	// InputDev is, per input, the largest |xf − the quantized input's value|.
	InputDev []float64 `json:"input_max_dev"`
}

// ToolFidelity compares with the source tool's own predictions.
type ToolFidelity struct {
	File string `json:"file"`
	Rows int    `json:"rows"`
	// SkippedMissing counts the rows left out because a value is missing (NaN).
	SkippedMissing int      `json:"skipped_missing"`
	Firmware       ErrStats `json:"firmware"`    // the firmware's output vs the tool's
	Float          ErrStats `json:"float_model"` // nicc's float import vs the tool's
}

// PolicyCost is the model's own WCET and measured cycles.
type PolicyCost struct {
	WCETCycles uint64  `json:"wcet_cycles"`
	WCETMicros float64 `json:"wcet_us"`
	MaxCycles  uint64  `json:"max_measured_cycles"`
}

// NewRLCCParams is p for a report: the fixed-point words and the real numbers they stand for.
func NewRLCCParams(p nicsdk.Params) *RLCCParams {
	return &RLCCParams{Target: p.Target, Beta: p.Beta, Scale: p.Scale, MinRate: p.MinRate, InitRate: p.InitRate, BaseRTT: p.BaseRTT,
		TargetReal: float64(p.Target) / nicsdk.Q16One, BetaReal: float64(p.Beta) / nicsdk.Q16One,
		ScaleReal: float64(p.Scale) / nicsdk.Q16One, MinRateReal: float64(p.MinRate) / nicsdk.LineRate,
		InitRateReal: float64(p.InitRate) / nicsdk.LineRate}
}

// WithSources is p with where each parameter came from.
func (p *RLCCParams) WithSources(src ParamSources) *RLCCParams {
	p.Sources = src
	return p
}

// String is the parameters in one line, as the flags that set them would, each with where
// it came from when the report knows.
func (p *RLCCParams) String() string {
	from := func(key string) string {
		if s, ok := p.Sources[key]; ok {
			return " (" + s + ")"
		}
		return ""
	}
	if p.Sources != nil {
		base := "0 = provisioned by the host at flow start, else learned"
		if p.BaseRTT != 0 {
			base = fmt.Sprintf("%.4g µs", float64(p.BaseRTT)/1000)
		}
		return fmt.Sprintf("target %.4g%s, beta %.4g%s, scale %.4g%s, min rate %.4g%s and init rate %.4g%s of line rate, base RTT %s%s",
			p.TargetReal, from("target"), p.BetaReal, from("beta"), p.ScaleReal, from("scale"), p.MinRateReal, from("min_rate"),
			p.InitRateReal, from("init_rate"), base, from("base_rtt_us"))
	}
	s := fmt.Sprintf("target %.4g, beta %.4g, scale %.4g, min rate %.4g, init rate %.4g (of line rate)",
		p.TargetReal, p.BetaReal, p.ScaleReal, p.MinRateReal, p.InitRateReal)
	if p.BaseRTT != 0 {
		s += fmt.Sprintf(", base RTT %.4g µs", float64(p.BaseRTT)/1000)
	}
	return s
}

// VecKind is where a verify vector came from.
type VecKind int

const (
	// VecThreshold: a split's integer threshold T, at T-1, T, T+1 and T+2, on a path that
	// reaches the split.
	VecThreshold VecKind = iota
	// VecExtreme: every input at its range's ends, and each input at one end.
	VecExtreme
	// VecRow: a sample row (--ranges), quantized.
	VecRow
	// VecSampled: a float state drawn uniformly from the input ranges, quantized.
	VecSampled
	// VecNearThreshold: each input near a random threshold of its own, or uniform.
	VecNearThreshold
	// VecEvent: one event of an RL-CC event sequence.
	VecEvent
	vecKindEnd
)

var vecKindNames = [...]string{
	VecThreshold: "threshold±1", VecExtreme: "extreme", VecRow: "row", VecSampled: "sampled",
	VecNearThreshold: "near-threshold", VecEvent: "event",
}

func (k VecKind) String() string {
	if k >= 0 && k < vecKindEnd {
		return vecKindNames[k]
	}
	return fmt.Sprintf("veckind(%d)", int(k))
}

// VerifyReport says what verify compared.
type VerifyReport struct {
	// Vectors is the number of calls compared: policy vectors plus events.
	Vectors int `json:"vectors"`
	// Kinds counts them by VecKind.
	Kinds map[string]int `json:"kinds"`
	// Sequences and Events: RL-CC event sequences, each from its own starting flow context,
	// the context persisting across the sequence's calls (RTTEvents of them RTT events).
	Sequences int `json:"sequences,omitempty"`
	Events    int `json:"events,omitempty"`
	RTTEvents int `json:"rtt_events,omitempty"`
	// Batches is the number of runs of each host build (at most 65536 calls each).
	Batches int `json:"batches"`
	// Compared names the implementations that agreed on every vector.
	Compared   []string `json:"compared"`
	Mismatches int      `json:"mismatches"`
	UBSan      string   `json:"ubsan"`
	// MaxCycles is the longest fwsim call of the entry; MaxPolicyCycles of the policy.
	MaxCycles       uint64 `json:"max_cycles"`
	MaxPolicyCycles uint64 `json:"max_policy_cycles"`
}
