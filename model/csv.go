package model

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Every nicc command that reads rows of numbers (eval --input, compile --ranges, --predictions
// and --calib, diff --calib, distill --states and --held-out-states) reads them here, by one
// rule:
//   - one row a line; fields separated by commas, or by tabs on a line without a comma; spaces
//     around a field ignored; blank lines skipped; a UTF-8 byte-order mark opening the file
//     dropped;
//   - a value is a float64 as strconv.ParseFloat reads it: "NaN" and "Inf" included, for the
//     commands that take missing or extreme values, but not 1e999;
//   - the first line is a header when every field is a name: not empty, not a number, not a
//     missing-value word (NA, N/A, NULL, None), bare or in double quotes, and no two alike;
//   - every other line is values, as many as the first line has fields. Anything else (an
//     empty field, NA, a quoted number, a name among numbers) is an error naming the line and
//     column: a row is never dropped or guessed at.
//
// A NumPy .npy or .npz file (npy.go), recognised by its first bytes, is rows too.

// MaxHeldBytes caps the memory of the rows a command holds (--ranges, --predictions, --calib,
// --states): rows × (8 bytes a value + a 24-byte slice header). eval streams its rows and has
// no cap.
const MaxHeldBytes = 512 << 20

// rowBytes is what holding one row of width values costs.
func rowBytes(width int) int64 { return 8*int64(width) + 24 }

// maxLineBytes caps one line, so a file without newlines cannot take unbounded memory.
const maxLineBytes = 16 << 20

// Rows is a table of input vectors, as read from a CSV file.
type Rows struct {
	Names []string // from the header line, or nil
	Data  [][]float64
}

// RowReader reads rows one at a time (see the rule above).
type RowReader struct {
	Names []string // the header's names, or nil

	path  string // for errors; "" when reading a plain io.Reader
	size  int64  // the file's size when known, else 0
	file  io.Closer
	sc    *bufio.Scanner
	line  int       // the line of the row last returned
	read  int64     // bytes consumed so far
	width int       // fields a line
	row   []float64 // Next's result, reused
	ahead bool      // row holds the first data row, read to tell a header from data
	npy   *npyRows  // the rows of a NumPy array (npy.go), read in place of lines
}

// NewRowReader reads r's first line, a header or the first row. A file with no data rows is
// an error.
func NewRowReader(r io.Reader) (*RowReader, error) {
	rr := newRowReader(r)
	return rr, rr.start()
}

func newRowReader(r io.Reader) *RowReader {
	rr := &RowReader{sc: bufio.NewScanner(r)}
	rr.sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	return rr
}

// OpenCSV opens path ("-" is standard input) for NewRowReader. Its errors, and Next's, name the
// file. Close it when done.
func OpenCSV(path string) (*RowReader, error) {
	var r io.Reader = os.Stdin
	var size int64
	var file io.Closer
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		r, file = f, f
	}
	br := bufio.NewReader(r)
	rr := newRowReader(br)
	rr.path, rr.size, rr.file = path, size, file
	magic, _ := br.Peek(len(npyMagic))
	err := error(nil)
	switch f, isFile := file.(*os.File); {
	case bytes.Equal(magic, npyMagic):
		err = rr.startNPY(br, size)
	case bytes.HasPrefix(magic, zipMagic) && isFile:
		var rc io.ReadCloser
		if rc, size, err = openNPZ(f, size); err == nil {
			rr.file = multiCloser{rc, f}
			err = rr.startNPY(rc, size)
		}
		err = rr.wrap(err)
	default:
		err = rr.start()
	}
	if err != nil {
		rr.Close()
		return nil, err
	}
	return rr, nil
}

// startNPY reads a NumPy array's header from r (of size bytes when known).
func (r *RowReader) startNPY(from io.Reader, size int64) error {
	a, err := readNPY(from, size)
	if err != nil {
		return r.wrap(err)
	}
	if a.rows == 0 {
		return r.errorf("no data rows")
	}
	r.npy, r.width, r.row = a, int(a.cols), make([]float64, a.cols)
	return nil
}

// wrap names the file in err.
func (r *RowReader) wrap(err error) error {
	if err == nil || r.path == "" || strings.HasPrefix(err.Error(), r.path+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", r.path, err)
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var first error
	for _, c := range m {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close closes the file OpenCSV opened.
func (r *RowReader) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// Line is the line number of the row Next last returned.
func (r *RowReader) Line() int { return r.line }

// Width is the number of values in every row.
func (r *RowReader) Width() int { return r.width }

// Next returns the next row, or io.EOF after the last. The slice is reused by the next call.
func (r *RowReader) Next() ([]float64, error) {
	if r.npy != nil {
		if err := r.npy.next(r.row); err != nil {
			if err == io.EOF {
				return nil, err
			}
			return nil, r.wrap(err)
		}
		r.line++
		return r.row, nil
	}
	if r.ahead {
		r.ahead = false
		return r.row, nil
	}
	text, err := r.scan()
	if err != nil {
		return nil, err
	}
	if err := r.values(text, r.line, r.row); err != nil {
		return nil, err
	}
	return r.row, nil
}

// start reads the first line and decides whether it is a header.
func (r *RowReader) start() error {
	text, err := r.scan()
	if err == io.EOF {
		return r.errorf("no data rows")
	}
	if err != nil {
		return err
	}
	fields := split(text)
	r.width = len(fields)
	r.row = make([]float64, r.width)
	names, bad := header(fields)
	if names == nil {
		if bad >= 0 { // no field is a number: it was meant as a header
			return r.errorf("line %d: column %d: %q is not a name, so the line is not a header (a header's fields are unique names: not empty, not numbers, not NA)", r.line, bad+1, fields[bad])
		}
		if err := r.values(text, r.line, r.row); err != nil {
			return err
		}
		r.ahead = true
		return nil
	}
	for i, n := range names {
		for j := range i {
			if names[j] == n {
				return r.errorf("line %d: columns %d and %d are both named %q", r.line, j+1, i+1, n)
			}
		}
	}
	r.Names = names
	if _, err := r.Next(); err == io.EOF {
		return r.errorf("no data rows")
	} else if err != nil {
		return err
	}
	r.ahead = true
	return nil
}

// scan returns the next non-blank line, trimmed, or io.EOF.
func (r *RowReader) scan() (string, error) {
	for r.sc.Scan() {
		r.line++
		b := r.sc.Bytes()
		r.read += int64(len(b)) + 1
		if r.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if text := strings.TrimSpace(string(b)); text != "" {
			return text, nil
		}
	}
	switch err := r.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return "", r.errorf("line %d: longer than %d MiB", r.line+1, maxLineBytes>>20)
	case err != nil:
		return "", r.errorf("%v", err)
	}
	return "", io.EOF
}

// values parses one line of values, line, into row. It reads only r's path: workers call it
// at once (csv_batch.go).
func (r *RowReader) values(text string, line int, row []float64) error {
	sep := separator(text)
	for col := 0; ; col++ {
		f, rest, more := strings.Cut(text, sep)
		if col == len(row) {
			return r.errorf("line %d: %d values, want %d", line, col+1+strings.Count(text, sep), len(row))
		}
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if errors.Is(err, strconv.ErrRange) {
			return r.errorf("line %d: column %d: %q is beyond the float64 range", line, col+1, f)
		}
		if err != nil {
			hint := ""
			switch {
			case f == "" || missingWord(f):
				hint = " (write NaN for a missing value)"
			case strings.HasPrefix(f, `"`):
				hint = " (values are bare numbers, not quoted)"
			}
			return r.errorf("line %d: column %d: %q is not a number%s", line, col+1, f, hint)
		}
		row[col] = v
		if !more {
			if col+1 != len(row) {
				return r.errorf("line %d: %d values, want %d", line, col+1, len(row))
			}
			return nil
		}
		text = rest
	}
}

func (r *RowReader) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if r.path != "" {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	return err
}

func separator(text string) string {
	if !strings.Contains(text, ",") && strings.Contains(text, "\t") {
		return "\t"
	}
	return ","
}

func split(text string) []string {
	fields := strings.Split(text, separator(text))
	for i, f := range fields {
		fields[i] = strings.TrimSpace(f)
	}
	return fields
}

// header returns the first line's fields as names when every one is a name. Otherwise, when
// no field is a number, bad is the first field that is not a name; else bad is -1.
func header(fields []string) (names []string, bad int) {
	bad = -1
	names = make([]string, len(fields))
	for i, f := range fields {
		if _, err := strconv.ParseFloat(f, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return nil, -1
		}
		n, ok := name(f)
		if !ok && bad < 0 {
			bad = i
		}
		names[i] = n
	}
	if bad >= 0 {
		return nil, bad
	}
	return names, -1
}

// name reads a header field: bare or in double quotes (spaces inside them trimmed too), not
// empty, not a number, not a missing-value word, no quote inside.
func name(f string) (string, bool) {
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		f = strings.TrimSpace(f[1 : len(f)-1])
	}
	if f == "" || strings.Contains(f, `"`) || missingWord(f) {
		return "", false
	}
	if _, err := strconv.ParseFloat(f, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return "", false
	}
	return f, true
}

// missingWord reports the words other tools write for a missing value; nicc's is NaN.
func missingWord(f string) bool {
	for _, w := range [...]string{"NA", "N/A", "NULL", "None"} {
		if strings.EqualFold(f, w) {
			return true
		}
	}
	return false
}

// ReadCSV reads every row of r (see the rule above), refusing rows that would hold more than
// MaxHeldBytes.
func ReadCSV(r io.Reader) (*Rows, error) {
	rr, err := NewRowReader(r)
	if err != nil {
		return nil, err
	}
	return rr.readAll(MaxHeldBytes)
}

// ReadCSVFile reads every row of path ("-" is standard input) as ReadCSV does; errors name
// the file.
func ReadCSVFile(path string) (*Rows, error) {
	rr, err := OpenCSV(path)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	return rr.readAll(MaxHeldBytes)
}

// tooMany is the error for rows over limit bytes, with the whole file's estimate when its
// size is known.
func (r *RowReader) tooMany(rows, line int, read, limit int64) error {
	over := fmt.Sprintf("over the %s limit on rows held in memory (rows × (8 bytes × values + 24))", sizeText(limit))
	if r.size > read {
		est := int64(float64(rows) * float64(r.size) / float64(read))
		return r.errorf("about %d rows of %d values (estimated from the file's %d bytes) need %s, %s",
			est, r.width, r.size, sizeText(est*rowBytes(r.width)), over)
	}
	return r.errorf("line %d: %d rows of %d values need %s, %s", line, rows, r.width, sizeText(int64(rows)*rowBytes(r.width)), over)
}

func sizeText(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
