package lab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
)

// EvalModelOptions are nicc eval MODEL's.
type EvalModelOptions struct {
	Model  string
	Format *model.FileFormat // nil detects it
	Inputs []string          // renames the model's inputs; nil keeps them
	Rows   string            // the CSV of rows, - for standard input
	JSON   bool
}

// EvalModel is nicc eval MODEL: the float model's output for each row of opt.Rows, printed
// to w as the rows stream (see evalRows).
func EvalModel(w io.Writer, opt EvalModelOptions) error {
	m, _, err := golden.LoadModelAs(opt.Model, opt.Format, opt.Inputs)
	if err != nil {
		return err
	}
	in, err := model.OpenCSV(opt.Rows)
	if err != nil {
		return err
	}
	defer in.Close()
	return evalRows(w, in, opt.Rows, m, opt.Model, opt.JSON)
}

// evalRows streams the rows of in (read from path) through m, printing each output as it goes:
// it holds one row, so any file size takes the same memory. Rows before a bad line are printed
// before the error. When the header names every model input, just those columns are read, in
// the model's order, so a reference file with the producing tool's outputs beside the inputs
// evaluates as it is.
func evalRows(stdout io.Writer, in *model.RowReader, path string, m *model.Model, modelPath string, asJSON bool) error {
	cols := inputColumns(in.Names, in.Width(), m)
	width := in.Width()
	if cols != nil {
		width = len(cols)
	}
	ev, err := NewRowEval(m, width)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := bufio.NewWriter(stdout)
	p := &evalPrinter{w: w, json: asJSON}
	err = p.start(modelPath)
	x := make([]float64, width)
	for err == nil {
		var row, y []float64
		if row, err = in.Next(); err != nil {
			break
		}
		if cols != nil {
			for j, c := range cols {
				x[j] = row[c]
			}
			row = x
		}
		if y, err = ev.Eval(row); err != nil {
			err = fmt.Errorf("%s: line %d: %w", path, in.Line(), err)
			break
		}
		if err = p.row(y); err != nil {
			err = fmt.Errorf("%s: line %d: %w", path, in.Line(), err)
		}
	}
	if err == io.EOF {
		err = p.end()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// inputColumns is the column of each value a row gives the model when the header names every
// model input, in any order; nil means the rows are read whole. For a recurrent model the
// header may also name its state (stateColumns): the columns then hold the inputs, h and c,
// for one step each.
func inputColumns(names []string, width int, m *model.Model) []int {
	if names == nil || width < m.NumInputs() {
		return nil
	}
	cols := make([]int, 0, m.NumInputs())
	for _, in := range m.Inputs {
		i := slices.Index(names, in)
		if i < 0 {
			return nil
		}
		cols = append(cols, i)
	}
	if st := m.NewState(); st != nil {
		cols = append(cols, stateColumns(names, len(st.H))...)
	}
	return cols
}

// stateColumns are the columns of an LSTM's h and c when the header names all 2·hidden of
// them as h0_0..h0_{H-1} and c0_0..c0_{H-1} (PyTorch's h0 and c0, as the ONNX export's
// graph inputs are called) or h_0.. and c_0..; else nil.
func stateColumns(names []string, hidden int) []int {
	for _, p := range [][2]string{{"h0_", "c0_"}, {"h_", "c_"}} {
		var cols []int
		for _, prefix := range p {
			for j := range hidden {
				if i := slices.Index(names, prefix+strconv.Itoa(j)); i >= 0 {
					cols = append(cols, i)
				}
			}
		}
		if len(cols) == 2*hidden {
			return cols
		}
	}
	return nil
}

// evalPrinter writes eval's output a row at a time: one line of comma-separated values a row,
// or (json) {"model", "outputs": [[...], ...], "rows"}, indented as writeJSON indents.
type evalPrinter struct {
	w    *bufio.Writer
	json bool
	rows int
}

func (p *evalPrinter) start(modelPath string) error {
	if !p.json {
		return nil
	}
	name, err := json.Marshal(modelPath)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(p.w, "{\n  \"model\": %s,\n  \"outputs\": [", name)
	return err
}

func (p *evalPrinter) row(ys []float64) error {
	p.rows++
	if !p.json {
		for j, y := range ys {
			if j > 0 {
				p.w.WriteByte(',')
			}
			p.w.WriteString(termtext.Num(y))
		}
		return p.w.WriteByte('\n')
	}
	b, err := json.MarshalIndent(ys, "    ", "  ")
	if err != nil {
		return err
	}
	return jsonElement(p.w, p.rows == 1, b)
}

// jsonElement writes b as the next element of a JSON array printed as it streams (a comma
// before all but the first), indented as writeJSON indents.
func jsonElement(w *bufio.Writer, first bool, b []byte) error {
	if !first {
		w.WriteByte(',')
	}
	w.WriteString("\n    ")
	_, err := w.Write(b)
	return err
}

func (p *evalPrinter) end() error {
	if !p.json {
		return nil
	}
	_, err := fmt.Fprintf(p.w, "\n  ],\n  \"rows\": %d\n}\n", p.rows)
	return err
}
