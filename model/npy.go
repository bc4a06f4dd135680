package model

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// NumPy's .npy (what np.save writes: a PyTorch user's states are tensor.numpy() saved) and .npz
// (np.savez, np.savez_compressed: a zip of .npy arrays) are rows too: a 2-D array is one row a
// first index, its second the values; a 1-D array is one value a row. Little-endian (or
// byte-wide) floats, signed and unsigned integers and bools; C order. An .npz must hold one
// array. They have no header: a row's values are the model's inputs in order.

// npyMagic opens every .npy file; zipMagic every .npz.
var (
	npyMagic = []byte("\x93NUMPY")
	zipMagic = []byte("PK\x03\x04")
)

// maxNPYHeader bounds an .npy header (NumPy writes a few hundred bytes).
const maxNPYHeader = 1 << 16

// npyRows streams the rows of one .npy array.
type npyRows struct {
	r          io.Reader
	kind       byte // 'f', 'i', 'u' or 'b'
	size       int  // bytes a value
	rows, cols int64
	done       int64
	buf        []byte // read's bytes, reused
}

var (
	npyDescr   = regexp.MustCompile(`'descr':\s*'([<>|=])([fiub])(\d+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNPY reads an .npy header from r (after which r holds the data) and checks the data fits
// in size bytes when size > 0.
func readNPY(r io.Reader, size int64) (*npyRows, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil || !bytes.HasPrefix(pre, npyMagic) {
		return nil, fmt.Errorf("not a NumPy .npy array (no \\x93NUMPY magic)")
	}
	var n int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf(".npy header: %v", err)
		}
		n = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf(".npy header: %v", err)
		}
		n = int(min(binary.LittleEndian.Uint32(b[:]), maxNPYHeader+1))
	default:
		return nil, fmt.Errorf(".npy format version %d.%d: want 1, 2 or 3", pre[6], pre[7])
	}
	if n > maxNPYHeader {
		return nil, fmt.Errorf(".npy header over %d bytes", maxNPYHeader)
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf(".npy header: %v", err)
	}
	h := string(hb)
	a := &npyRows{r: bufio.NewReaderSize(r, 1<<16)}
	d := npyDescr.FindStringSubmatch(h)
	if d == nil {
		return nil, fmt.Errorf(".npy header: dtype %s: want little-endian floats, integers or bools (np.float32, np.float64, ...)", quoteDescr(h))
	}
	a.kind = d[2][0]
	a.size, _ = strconv.Atoi(d[3])
	switch {
	case d[1] == ">" && a.size > 1:
		return nil, fmt.Errorf(".npy dtype %s%s%s is big-endian: save it little-endian (arr.astype('<f8'))", d[1], d[2], d[3])
	case a.kind == 'f' && a.size != 4 && a.size != 8, a.kind != 'f' && a.kind != 'b' && a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8, a.kind == 'b' && a.size != 1:
		return nil, fmt.Errorf(".npy dtype %s%s%s: want float32 or float64, an integer or bool", d[1], d[2], d[3])
	}
	if f := npyFortran.FindStringSubmatch(h); f == nil || f[1] == "True" {
		return nil, fmt.Errorf(".npy array in Fortran order: save it in C order (np.ascontiguousarray)")
	}
	s := npyShape.FindStringSubmatch(h)
	if s == nil {
		return nil, fmt.Errorf(".npy header has no shape")
	}
	var dims []int64
	for _, f := range strings.Split(s[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf(".npy shape (%s): not a shape", s[1])
		}
		dims = append(dims, v)
	}
	switch len(dims) {
	case 1:
		a.rows, a.cols = dims[0], 1
	case 2:
		a.rows, a.cols = dims[0], dims[1]
	default:
		return nil, fmt.Errorf(".npy shape (%s): want a 2-D array of rows (or 1-D, one value a row)", s[1])
	}
	if a.cols == 0 || a.cols > maxLineBytes/8 {
		return nil, fmt.Errorf(".npy shape (%s): %d values a row, want 1 to %d", s[1], a.cols, maxLineBytes/8)
	}
	if a.rows > math.MaxInt64/a.cols/int64(a.size) {
		return nil, fmt.Errorf(".npy shape (%s): too large", s[1])
	}
	if data := a.rows * a.cols * int64(a.size); size > 0 && data > size {
		return nil, fmt.Errorf(".npy shape (%s) holds %d bytes of data; the file has %d: truncated", s[1], data, size)
	}
	return a, nil
}

// quoteDescr is the header's dtype, for an error.
func quoteDescr(h string) string {
	if i := strings.Index(h, "'descr':"); i >= 0 {
		rest := h[i+len("'descr':"):]
		if j := strings.IndexAny(rest, ",}"); j >= 0 {
			return strconv.Quote(strings.TrimSpace(rest[:j]))
		}
	}
	return "(none)"
}

// next reads the next row into row, or io.EOF after the last.
func (a *npyRows) next(row []float64) error {
	_, err := a.read(row)
	return err
}

// read fills dst, whole rows of cols values, with as many of the rows left as it holds, and
// says how many it filled. Its error is next's for the first row it could not read, io.EOF
// after the last row. The bytes come in blocks of at most npyBlock (one row when larger).
func (a *npyRows) read(dst []float64) (int, error) {
	if a.done == a.rows {
		return 0, io.EOF
	}
	rowLen := int(a.cols) * a.size
	want := int(min(int64(len(dst))/a.cols, a.rows-a.done, int64(max(1, npyBlock/rowLen))))
	if cap(a.buf) < want*rowLen {
		a.buf = make([]byte, want*rowLen)
	}
	n, err := io.ReadFull(a.r, a.buf[:want*rowLen])
	got := n / rowLen
	a.decode(dst[:got*int(a.cols)], a.buf[:got*rowLen])
	a.done += int64(got)
	if err != nil {
		if n%rowLen == 0 && err == io.ErrUnexpectedEOF {
			err = io.EOF // the row it failed on has none of its bytes: reading it alone would say EOF
		}
		return got, fmt.Errorf(".npy row %d of %d: truncated (%v)", a.done+1, a.rows, err)
	}
	return got, nil
}

// npyBlock bounds the bytes read runs in one go.
const npyBlock = 1 << 16

// decode converts b, values of the array's dtype, to dst.
func (a *npyRows) decode(dst []float64, b []byte) {
	switch {
	case a.kind == 'f' && a.size == 8:
		for i := range dst {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case a.kind == 'f':
		for i := range dst {
			dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case a.kind == 'u' || a.kind == 'b':
		for i := range dst {
			dst[i] = float64(uintLE(b[i*a.size : (i+1)*a.size]))
		}
	default:
		for i := range dst {
			dst[i] = float64(intLE(b[i*a.size : (i+1)*a.size]))
		}
	}
}

func uintLE(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func intLE(b []byte) int64 {
	v := uintLE(b)
	sh := 64 - 8*uint(len(b))
	return int64(v<<sh) >> sh
}

// openNPZ opens the one array of the .npz f (of size bytes) for readNPY.
func openNPZ(f *os.File, size int64) (io.ReadCloser, int64, error) {
	z, err := zip.NewReader(f, size)
	if err != nil {
		return nil, 0, fmt.Errorf("not a readable .npz (zip) file: %v", err)
	}
	var names []string
	for _, m := range z.File {
		names = append(names, strconv.Quote(m.Name))
	}
	if len(z.File) != 1 {
		return nil, 0, fmt.Errorf(".npz holds %d arrays (%s): want one (np.savez(file, states))", len(z.File), strings.Join(names, ", "))
	}
	m := z.File[0]
	rc, err := m.Open()
	if err != nil {
		return nil, 0, fmt.Errorf(".npz array %s: %v", names[0], err)
	}
	return rc, int64(min(m.UncompressedSize64, math.MaxInt64)), nil
}
