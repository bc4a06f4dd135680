package model

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Rows is a table of input vectors, as read from a CSV file.
type Rows struct {
	Names []string // from the header line, or nil
	Data  [][]float64
}

// ReadCSV reads numbers separated by commas (or tabs), one row per line, all rows the same
// width. A first line that does not parse as numbers is a header of names. Blank lines are
// skipped. Values parse with strconv, so "NaN" and "Inf" are accepted as missing/extreme inputs.
func ReadCSV(r io.Reader) (*Rows, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	out := &Rows{}
	width := -1
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		sep := ","
		if !strings.Contains(text, ",") && strings.Contains(text, "\t") {
			sep = "\t"
		}
		fields := strings.Split(text, sep)
		if width >= 0 && len(fields) != width {
			return nil, fmt.Errorf("line %d: %d values, want %d", line, len(fields), width)
		}
		row := make([]float64, len(fields))
		var bad error
		for i, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				bad = fmt.Errorf("line %d: column %d: %q is not a number", line, i+1, f)
				break
			}
			row[i] = v
		}
		width = len(fields)
		if bad != nil {
			if out.Names == nil && len(out.Data) == 0 {
				for _, f := range fields {
					out.Names = append(out.Names, strings.TrimSpace(f))
				}
				continue
			}
			return nil, bad
		}
		out.Data = append(out.Data, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out.Data) == 0 {
		return nil, fmt.Errorf("no data rows")
	}
	return out, nil
}
