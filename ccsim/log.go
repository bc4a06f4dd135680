package ccsim

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The decision log: one CSV row per decision, in decision order, the request's nine fields as
// they arrived and the answer. It is what nicc agent --log writes and what a replay reads.
var logHeader = []string{"seq", "rtt_ns", "nacks", "cnps", "bytes", "rate_fxp20", "interval_ns", "tx_events", "flow_tag", "host", "multiplier_q16", "cycles"}

// Entry is one decision of a log.
type Entry struct {
	Seq int64
	Request
	Decision
}

// LogWriter writes a decision log.
type LogWriter struct {
	w   *csv.Writer
	seq int64
}

// NewLogWriter starts a log on w with its header.
func NewLogWriter(w io.Writer) (*LogWriter, error) {
	l := &LogWriter{w: csv.NewWriter(w)}
	return l, l.w.Write(logHeader)
}

// Write logs one decision.
func (l *LogWriter) Write(r Request, d Decision) error {
	row := make([]string, 0, len(logHeader))
	row = append(row, strconv.FormatInt(l.seq, 10))
	for _, f := range r.Fields() {
		row = append(row, strconv.FormatUint(uint64(f), 10))
	}
	row = append(row, strconv.FormatUint(uint64(d.MultiplierQ16), 10), strconv.FormatUint(d.Cycles, 10))
	l.seq++
	return l.w.Write(row)
}

// Flush writes what is buffered.
func (l *LogWriter) Flush() error {
	l.w.Flush()
	return l.w.Error()
}

// MaxLogEntries bounds the entries ReadLog keeps: 4 Mi decisions, about 256 MiB as entries.
const MaxLogEntries = 1 << 22

// maxLogLine bounds a log line: twelve numbers of at most 20 digits, and their commas.
const maxLogLine = 256

// ReadLog reads a decision log (gzipped when it starts with gzip's magic), at most max entries
// (0: MaxLogEntries; more is an error). Sequence numbers must count up from 0.
func ReadLog(r io.Reader, max int) ([]Entry, error) {
	if max <= 0 || max > MaxLogEntries {
		max = MaxLogEntries
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReader(zr)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, maxLogLine), maxLogLine)
	if !sc.Scan() {
		return nil, fmt.Errorf("header: %w", scanErr(sc.Err()))
	}
	if head := strings.TrimSuffix(sc.Text(), "\r"); head != strings.Join(logHeader, ",") {
		return nil, fmt.Errorf("header %q is not a decision log's (%s)", head, strings.Join(logHeader, ","))
	}
	var out []Entry
	for line := 2; sc.Scan(); line++ {
		if len(out) == max {
			return nil, fmt.Errorf("line %d: more than %d decisions", line, max)
		}
		row := strings.Split(strings.TrimSuffix(sc.Text(), "\r"), ",")
		if len(row) != len(logHeader) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(row), len(logHeader))
		}
		e, err := parseEntry(row)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if e.Seq != int64(len(out)) {
			return nil, fmt.Errorf("line %d: seq %d, want %d", line, e.Seq, len(out))
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", len(out)+2, scanErr(err))
	}
	return out, nil
}

func parseEntry(row []string) (Entry, error) {
	var e Entry
	var err error
	if e.Seq, err = strconv.ParseInt(row[0], 10, 64); err != nil {
		return e, fmt.Errorf("seq: %w", err)
	}
	var f [9]uint32
	for i := range f {
		v, err := strconv.ParseUint(row[1+i], 10, 32)
		if err != nil {
			return e, fmt.Errorf("%s: %w", logHeader[1+i], err)
		}
		f[i] = uint32(v)
	}
	e.Request = RequestOf(f)
	m, err := strconv.ParseUint(row[10], 10, 32)
	if err != nil {
		return e, fmt.Errorf("multiplier_q16: %w", err)
	}
	e.MultiplierQ16 = uint32(m)
	if e.Cycles, err = strconv.ParseUint(row[11], 10, 64); err != nil {
		return e, fmt.Errorf("cycles: %w", err)
	}
	return e, nil
}

// ReadLogFile is ReadLog of the file at path, its errors naming it.
func ReadLogFile(path string, max int) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	es, err := ReadLog(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

func scanErr(err error) error {
	switch {
	case err == nil:
		return errors.New("empty file")
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("a line over %d bytes", maxLogLine)
	}
	return err
}
