package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/nicc-dev/nicc/prove"
	"github.com/nicc-dev/nicc/target/targets"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// compileHelp is nicc compile --help's description.
var compileHelp = `Compiles a tree ensemble (` + formats.Titles("tree ensembles") + `) as it is, or a network
(` + formats.Titles("networks") + `) quantized to integers (--target int) or distilled into trees (--target
trees), in stages: load → quantize → fit → emit → build → verify → budget → report.

  quantize  each input becomes a fixed-point int32; every float split becomes an integer
            threshold that takes the same branch for every representable input; leaves sum
            in a wide accumulator rounded once to Q16.
  fit       before anything is built, a lower bound on the cycles and on the bytes of code
            and tables that any code form nicc emits needs (trees: an instruction per level of
            each tree and an add per tree; networks: an instruction per nonzero weight), at
            the core's cheapest instruction; over the budget or the core's memory
            (memory_bytes, nicc budget --list-cores) it exits 1 with the numbers, unless
            --force. Then it picks a tree ensemble's code form by cost: each candidate is
            built and its WCET taken on --core, and the least WCET whose .text and .rodata
            fit the memory budget (the profile's text_bytes and rodata_bytes, or --max-text
            and --max-rodata) wins; --form restricts the choice. The memory budget holds for
            every form: when no candidate fits, or the one built does not, the compile exits
            1 before verify with the bytes against the budget; --force builds, verifies and
            bounds it anyway, and still exits 1. The candidates: nested
            if/else (up to 512 splits at -O2, up to 16384 at -O1, above that node tables
            walked level by level, which gcc builds in seconds); beside nested if/else, for
            an ensemble with oblivious trees (CatBoost's), the table form (each oblivious
            tree's comparison bits form an index into its leaf table); and for up to 512
            splits and 64 trees the rank form (each feature's rank among its thresholds from
            a bucket table, then one table of exact leaf sums per group of trees, for 1 to 4
            groups).
            An LSTM is chosen the same way between the table form (each recurrent input's
            partial products from a 256-row table), the branch form (multiplied) and the
            table form planned within the budget (per gate input: multiplied, all its rows,
            the rows of |v - m| and a branch on the sign, or rows holding the biases too). The
            report lists every candidate's WCET, .text and .rodata.
  emit      into --out: nicc_policy.c/.h (int32_t nicc_policy(const int32_t *x)), nicsdk.h,
            link.ld, and for --handler rlcc rlcc.h and handler.c, whose entry is
            uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx).
  build     host gcc -std=c99 -Wall -Wextra -Werror -pedantic -O2, the same with
            -fsanitize=undefined, each with a driver (host/driver.c); and firmware.elf with
            riscv64-unknown-elf-gcc (RV64IMC+Zbb, same warnings, -O2).
  verify    the golden model (the integer IR's Go evaluator, inside nicsdk's Go handler for
            rlcc), both host builds and the ELF in fwsim agree bit for bit on --num-vectors calls
            (default 100000): every split's threshold at T-1, T, T+1, T+2 on a path reaching
            it, the extremes of every input range, sampled states; for rlcc also event
            sequences (new, valid, garbage and extreme flow contexts; RTT, CNP, NACK, TX
            events) comparing the returned rate and all 48 context bytes, the context kept in
            emulator memory across each sequence. A mismatch, or UBSan output, exits 1 and
            prints the first mismatching input and the outputs.
  doca      with --sdk doca, after budget: doca_pcc_rlcc.c, a DOCA PCC device program (the
            entry points doca_pcc_dev_user_algo, doca_pcc_dev_user_init and
            doca_pcc_dev_user_set_algo_params; RL-CC's target, beta and scale are algorithm
            parameters settable at run time within checked ranges; counters of decisions and
            clamps) around the same policy and runtime, README-doca.md (building it with
            DOCA's toolchain, the DOCA names it uses and where each was checked), and the
            same triad over it, built against nicc's own stand-in for the DOCA device API
            (nicc_doca_pcc_dev.h/.c): init, flow contexts, DOCA events and parameter
            changes through the golden runtime, both host builds and doca_firmware.elf in
            fwsim, then the WCET of doca_pcc_dev_user_algo beside nicc_on_event's.
  budget    the static WCET of the entry on --core, cycles × threads sharing / clock, must
            fit --budget; over budget exits 1 showing both. The dpa core's clock and costs
            are assumptions (nicc budget --list-cores); --threads models busy
            hardware threads.
  report    --out/report.json and a summary: fidelity against the float model (max abs
            error and RMSE, split into the inputs' and the leaves' share; a probability for a
            binary model), WCET of the entry (and of nicc_policy alone for rlcc), headroom,
            code bytes (.text), flow-state bytes and each stage's time. A failed check (a
            mismatch, UBSan, over budget) writes report.json too, its "failure" saying which
            stage failed, how, and for a mismatch the first differing vector and what each
            implementation returned.

--out DIR is one verified unit: compile writes into a fresh directory beside it
(.DIR.nicc-tmp) and renames that into DIR's place once report.json is written, so no file of an
earlier compile into DIR is left. DIR must be new, empty or an earlier compile's (holding
report.json); a directory of other files, a file, a link, /, ., .., a name starting with '-'
(write ./-foo), or an input file inside DIR exits 2. Bad input, a model refused by fit, or an
interrupt (SIGINT, SIGTERM) leaves DIR as it was and nothing beside it; a second compile into
a DIR another is writing fails at once. report.json's manifest lists every file written with
its SHA-256, and the verdicts reached; eval DIR, budget DIR, sim --policy DIR and diff
--closed-loop --against DIR check the files against it first and refuse, in one line naming
the file, one changed since, missing or linked, a DOCA program that did not pass, a compile
that did not pass verify, or a report without a manifest (an older nicc).

--handler rlcc wraps the model in the RL-CC event handler (features, model, action →
multiplier map, rate update; nicsdk rlcc.h). Its model takes x = (a_prev, o, a_prev2, o_prev)
in Q16 over nicsdk's declared ranges. It is the default (auto) for a model whose inputs are
named in an RL-CC layout, in any order (see --inputs); the model is permuted into the
handler's order when loaded, and report.json records the layout (rlcc_layout). --inputs names
an export's inputs (input[0]..input[3]): a_prev2,o_prev,a_prev,o, or --inputs authors, for a
network trained with NVlabs/RLCC (states oldest first), --inputs nicc for newest first. Without
names, --handler rlcc takes a 4-input model by position in nicc's order. A split on o above 128, where the
handler clamps the observation, is refused. The handler's parameters are --rlcc-target,
--rlcc-beta, --rlcc-scale, --rlcc-min-rate and --rlcc-init-rate (nicsdk's defaults: the NIC
paper's target 0.064 and beta 1.5, scale 12, rates as fractions of line rate); they go into
the firmware, the sampled states (o on [-T, 100T], T = target·scale) and the report.

--handler none compiles the model alone: x[i] is input i in the fixed-point format the
report lists. Each input's range is the hull of its split thresholds and, with --ranges, of
its column of sample rows, widened by 1/64 of its span so every threshold lies inside;
callers clamp inputs to it, which changes no branch.

--ranges ROWS is a CSV or TSV of sample rows, one value per input or a header naming every
input (other columns are ignored). With either handler the rows are verify vectors and
fidelity samples (rows with missing values are left out: firmware inputs are integers).
--predictions adds the error against the source tool's own outputs on those rows: one value
a line, or a table whose last column is the output, so a reference CSV with the inputs
first serves as both.

--target trees distills a network teacher first (nicc distill's flags and defaults: --trees,
--depth, --samples, default 200000 states, learning rate 0.5 then the joint leaf refit, ...)
into --out/student.json and compiles the student (its "vs network" line: the trees against the teacher);
--target auto does that only when the model is a network. --target int (int8 is its old name)
quantizes a network itself into integer weights and activations of 8 or 16 bits on
calibration rows: --calib CSV, or --samples (here default 20000) RL-CC states sampled under
--handler rlcc. A dense network
(quantize.MLP, plus the corners of the input ranges in the calibration) takes the cheapest of
int8 weights and activations (packed), int8 weights with int16 activations, and int16 both whose
max |dy| <= 2/128 and direction flips <= 0.1% against the float teacher, else the cheapest
within 1/128 of the most accurate's max |dy|; --weight-bits and --act-bits (8 or 16) fix it
instead; 8 and 8 pack the hidden layers (each
requantized by a shift): a layer over int8 activations computes three channels with one 64-bit
multiply of int8 weights in 21-bit lanes, the first, over the int32 inputs, two with int16
weights in 32-bit lanes. An LSTM (dense(relu) -> LSTM ->
dense(tanh), quantize.LSTM) keeps h as int8 and c as a mu-law byte code (its range and mu from
calibration) in the flow context after the handler's words, and under --handler rlcc returns the rate multiplier from its output table; its entry
under --handler none is nicc_policy(x, state). The report gives the configuration (and the
ones tried), max |dy| and the flip rate.

` + memlimit.Help + `

Under the RL-CC handler, a float model that fails the sanity probe (nicc sim --help) gets one
warning line on standard error and warnings in report.json; the compile goes on. Exit codes: 0 compiled, verified and within budget; 1 a check failed (a mismatch,
undefined behaviour, over budget, or refused before building as surely over the budget or
the core's memory); 2 bad input (an unreadable or unsupported model, a model
wider than the handler's inputs, flow state over 48 bytes, NaN or Inf in the model, input
ranges that cannot represent a threshold).

  nicc compile testdata/models/rlcc_xgb.json --out build/rlcc
  nicc compile testdata/models/rlcc_xgb.json --out build/rlcc \
      --ranges testdata/models/rlcc_xgb.ref.csv --predictions testdata/models/rlcc_xgb.ref.csv
  nicc compile testdata/lightgbm/lg_dart_breast_cancer.model --out build/bc --handler none \
      --ranges testdata/lightgbm/breast_cancer_test.tsv \
      --predictions testdata/lightgbm/lg_dart_breast_cancer_true_predictions.txt
  nicc compile testdata/models/rlcc_teacher.json --out build/teacher --target int
  nicc compile testdata/models/rlcc_xgb.json --out build/doca --sdk doca
  nicc compile testdata/models/rlcc_lstm.onnx --out build/lstm --target int
  nicc compile testdata/models/rlcc_teacher.onnx --out build/student --target trees --trees 10 --depth 4
  nicc compile policy.json --out build/p --core dpa --budget 1.5us --num-vectors 1000000 --json
  nicc compile testdata/models/rlcc_teacher_unnamed.onnx --target int --out build/int \
      --inputs a_prev,o,a_prev2,o_prev --rlcc-beta 2`

func compileCommand() *cli.Command {
	return &cli.Command{
		Name:        "compile",
		Usage:       "compile a policy into verified NIC firmware (a tree ensemble as it is, a network with --target int or --target trees): C, RISC-V ELF, bit-exact verification, WCET against the budget",
		ArgsUsage:   "POLICY",
		Description: compileHelp,
		Flags:       compileFlags(),
		Action:      runCompile,
	}
}

// threadsFlag is compile's and budget's --threads: the hardware threads sharing one pipeline,
// which multiply a decision's time (nicc sim's --threads is the same number).
var threadsFlag = &cli.IntFlag{Name: "threads", Usage: "hardware threads sharing the pipeline (a decision's time is its cycles × threads / clock)", DefaultText: "the profile's"}

// checkThreads refuses a --threads below 1.
func checkThreads(c *cli.Context) error {
	if c.IsSet("threads") && c.Int("threads") < 1 {
		return fmt.Errorf("--threads %d: want at least 1", c.Int("threads"))
	}
	return nil
}

// compileFlags are nicc compile's flags.
func compileFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "out", Usage: "output directory: created, or replaced whole when it holds an earlier compile"},
		&cli.StringFlag{Name: "handler", Value: "auto", Usage: "rlcc (the whole RL-CC event handler), none (the model alone) or auto"},
		&cli.StringFlag{Name: "sdk", Value: "nicc", Usage: "device API of the firmware: nicc (nicc_on_event) or doca (also a DOCA PCC device source, verified and bounded the same way; needs --handler rlcc)"},
		&cli.StringFlag{Name: "core", Value: budget.DefaultCore, Usage: "core profile for the WCET (nicc budget --list-cores)"},
		&cli.StringFlag{Name: "budget", Value: "2us", Usage: "time one decision may take: 2us, 1.5µs, 900ns"},
		&cli.StringSliceFlag{Name: "require", Usage: "properties the compile must prove, as nicc prove --property takes them (cuts-when-congested[:k], raises-when-idle[:k], monotone-in-o, bounded-step[:lo..hi], rate-in-range), comma separated or repeated: one refuted or unknown fails the compile (exit 1) and report.json says which; the proof goes into report.json's prove", DefaultText: "none"},
		threadsFlag,
		&cli.IntFlag{Name: "num-vectors", Value: compiler.DefaultVectors, Usage: "verify compares at least `N` calls (nicc budget --vectors is a file of calls)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the vector sampler"},
		&cli.StringFlag{Name: "ranges", Usage: "CSV/TSV of sample rows: verify vectors, fidelity samples, and the input ranges of --handler none"},
		&cli.StringFlag{Name: "predictions", Usage: "the source tool's outputs on the --ranges rows: one a line, or the last column"},
		&cli.StringFlag{Name: "form", Usage: "the code form: a tree ensemble's branch, walk, rank or table, an LSTM's table or branch (default: the least WCET within the memory budget)"},
		&cli.Uint64Flag{Name: "max-text", Usage: "most `BYTES` of .text the chosen code form may have", DefaultText: "the core profile's text_bytes"},
		&cli.Uint64Flag{Name: "max-rodata", Usage: "most `BYTES` of .rodata the chosen code form may have", DefaultText: "the core profile's rodata_bytes"},
		forceFlag,
		formatFlag,
		inputsFlag, historyFlag, featuresFlag,
		jsonFlag,
	}, append(rlccFlags(), targetFlags()...)...)
}

func runCompile(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("compile takes one POLICY file, got %d arguments", c.NArg())
	}
	if err := artifact.CheckOut(c.String("out")); err != nil {
		return err
	}
	format, err := golden.ParseFormat(c.String("format"))
	if err != nil {
		return err
	}
	handler, err := artifact.ParseHandler(c.String("handler"))
	if err != nil {
		return err
	}
	sdk, err := targets.Parse(c.String("sdk"))
	if err != nil {
		return err
	}
	limit, err := budget.Parse(c.String("budget"))
	if err != nil {
		return err
	}
	if err := checkThreads(c); err != nil {
		return err
	}
	if c.Int("num-vectors") < 1 {
		return fmt.Errorf("--num-vectors %d: want at least 1", c.Int("num-vectors"))
	}
	if c.String("predictions") != "" && c.String("ranges") == "" {
		return fmt.Errorf("--predictions needs the rows they were made on (--ranges)")
	}
	inputs, err := modelInputs(c)
	if err != nil {
		return err
	}
	params, src, err := rlccParams(c)
	if err != nil {
		return err
	}
	var require []prove.Property
	if c.IsSet("require") {
		if require, err = proveProperties("require", c.StringSlice("require")); err != nil {
			return err
		}
	}
	opt := compiler.CompileOptions{Require: require,
		Model: c.Args().First(), Format: format, Inputs: inputs, Out: c.String("out"), Handler: handler, Params: params, ParamSources: src, SDK: sdk,
		Core: c.String("core"), Budget: limit, ThreadsSharing: c.Int("threads"),
		Vectors: c.Int("num-vectors"), Seed: c.Uint64("seed"),
		Ranges: c.String("ranges"), Predictions: c.String("predictions"), Force: c.Bool("force"),
		Form: c.String("form"), MaxText: c.Uint64("max-text"), MaxRodata: c.Uint64("max-rodata"),
	}
	if err := distillForCompile(c, &opt); err != nil {
		return err
	}
	var done func()
	opt.Progress, done = progressBars(c)
	defer done()
	// An interrupt stops the compile, which removes what it wrote and leaves --out as it was.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := compiler.CompileContext(ctx, opt)
	var ce *budget.CheckError
	if err != nil && (r == nil || !errors.As(err, &ce)) {
		if errors.As(err, &ce) {
			return checkFailed{err}
		}
		return err
	}
	warn(c, r.Warnings)
	perr := printReport(c, r)
	if err != nil {
		return checkFailed{err}
	}
	return perr
}

// barWriter is where progress bars go: standard error when it is a terminal and the output
// is not --json; nil (no bars) otherwise. Standard output carries only the results.
func barWriter(c *cli.Context) io.Writer {
	f, ok := c.App.ErrWriter.(*os.File)
	if !ok || c.Bool("json") || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return f
}

// progressBars is the progress function for a long run and what ends its bar: a nil function
// and a no-op when barWriter gives no bars.
func progressBars(c *cli.Context) (compiler.ProgressFunc, func()) {
	bw := barWriter(c)
	if bw == nil {
		return nil, func() {}
	}
	p := &progress{w: bw}
	return p.update, p.finish
}

// progress shows a bar per long stage on the terminal.
type progress struct {
	w     io.Writer
	stage string
	bar   *progressbar.ProgressBar
}

func (p *progress) update(stage string, done, total int) {
	if stage != p.stage || p.bar == nil {
		p.finish()
		p.stage = stage
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%-7s", stage)),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100_000_000),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
		p.bar = nil
	}
	p.stage = ""
}
