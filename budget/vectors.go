package budget

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Vector is one call's arguments, a0 first.
type Vector struct {
	Line int
	Args []Arg
}

// Arg is a register argument: an integer, or bytes placed in emulator memory and passed by address.
type Arg struct {
	Int   uint64
	Bytes []byte // non-nil: copy into memory, pass the address
}

// Limits on a vectors file.
const (
	maxArgs        = 8
	maxVectorBytes = 1 << 20
	MaxVectors     = 1 << 20
)

// VectorsHelp documents the vectors file format for --help.
const VectorsHelp = `A vectors file holds one call per line: up to 8 arguments separated by spaces, for a0..a7.
An argument is an integer (decimal, 0x hex, or negative decimal, passed in the register as
64 bits) or hex: followed by bytes in hex (copied into emulator memory, 16-byte aligned, and
passed by address; the firmware may write there). Blank lines and # comments are skipped.

  # handler(const struct event *ev, struct flow_ctx *ctx)
  hex:01000000e8030000 hex:000000000000000000000000`

// ReadVectors parses a vectors file (see VectorsHelp). Errors name the line.
func ReadVectors(r io.Reader) ([]Vector, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4*maxVectorBytes)
	var out []Vector
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) > maxArgs {
			return nil, fmt.Errorf("line %d: %d arguments, at most %d fit in a0..a7", line, len(fields), maxArgs)
		}
		if len(out) == MaxVectors {
			return nil, fmt.Errorf("line %d: more than %d vectors", line, MaxVectors)
		}
		v := Vector{Line: line}
		for i, f := range fields {
			a, err := parseArg(f)
			if err != nil {
				return nil, fmt.Errorf("line %d: argument %d: %v", line, i+1, err)
			}
			v.Args = append(v.Args, a)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no vectors")
	}
	return out, nil
}

func parseArg(f string) (Arg, error) {
	if h, ok := strings.CutPrefix(f, "hex:"); ok {
		if len(h) > 2*maxVectorBytes {
			return Arg{}, fmt.Errorf("over %d bytes", maxVectorBytes)
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return Arg{}, fmt.Errorf("%q: %v", f, err)
		}
		if b == nil {
			b = []byte{}
		}
		return Arg{Bytes: b}, nil
	}
	if strings.HasPrefix(f, "-") {
		n, err := strconv.ParseInt(f, 0, 64)
		if err != nil {
			return Arg{}, fmt.Errorf("%q is not a 64-bit integer", f)
		}
		return Arg{Int: uint64(n)}, nil
	}
	n, err := strconv.ParseUint(f, 0, 64)
	if err != nil {
		return Arg{}, fmt.Errorf("%q is not an integer or hex: bytes", f)
	}
	return Arg{Int: n}, nil
}

// WriteVectors writes vs in the vectors file format, one call a line: memory arguments as
// hex: bytes, integers in decimal. ReadVectors reads back the same calls.
func WriteVectors(w io.Writer, vs []Vector) error {
	bw := bufio.NewWriter(w)
	for _, v := range vs {
		for i, a := range v.Args {
			if i > 0 {
				bw.WriteByte(' ')
			}
			if a.Bytes != nil {
				bw.WriteString("hex:")
				bw.WriteString(hex.EncodeToString(a.Bytes))
			} else {
				bw.WriteString(strconv.FormatUint(a.Int, 10))
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
