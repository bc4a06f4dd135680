package model

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// NumPy's own files (testdata/gen/npy.py) read as the same rows as their CSV: float64 exactly,
// float32 as float32, a 1-D int16 array one value a row.
func TestReadNumPy(t *testing.T) {
	read := map[string]*Rows{}
	for _, name := range []string{"rlcc_states.csv", "rlcc_states.npy", "rlcc_states_f32.npz", "o_int16.npy"} {
		rows, err := ReadCSVFile("../testdata/rows/" + name)
		if err != nil {
			t.Fatal(err)
		}
		read[name] = rows
	}
	want, f64, f32, i16 := read["rlcc_states.csv"], read["rlcc_states.npy"], read["rlcc_states_f32.npz"], read["o_int16.npy"]
	if len(want.Data) != 200 || len(f64.Data) != 200 || len(f32.Data) != 200 || len(i16.Data) != 200 || f64.Names != nil {
		t.Fatalf("%d, %d, %d, %d rows, names %v", len(want.Data), len(f64.Data), len(f32.Data), len(i16.Data), f64.Names)
	}
	for r, row := range want.Data {
		for c, v := range row {
			if f64.Data[r][c] != v || f32.Data[r][c] != float64(float32(v)) {
				t.Fatalf("row %d column %d: %v and %v, want %v and float32 %v", r+1, c+1, f64.Data[r][c], f32.Data[r][c], v, float32(v))
			}
		}
		if len(i16.Data[r]) != 1 || i16.Data[r][0] != float64(int16(row[1]*100)) {
			t.Fatalf("row %d: %v, want %v", r+1, i16.Data[r], int16(row[1]*100))
		}
	}
}

// npyFile is an .npy file with header dict h and data.
func npyFile(h string, data []byte) []byte {
	b := append([]byte(nil), npyMagic...)
	b = append(b, 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), data...)
}

// Bad arrays are one-line errors naming the file, never a panic.
func TestReadNumPyRefuses(t *testing.T) {
	dir := t.TempDir()
	eight := make([]byte, 16)
	var zipTwo bytes.Buffer
	zw := zip.NewWriter(&zipTwo)
	for _, n := range []string{"a.npy", "b.npy"} {
		w, _ := zw.Create(n)
		w.Write(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", eight))
	}
	zw.Close()
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"truncated":  {npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4, 2), }", eight), "truncated"},
		"bigendian":  {npyFile("{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }", eight), "big-endian"},
		"fortran":    {npyFile("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }", eight), "Fortran order"},
		"3d":         {npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2), }", eight), "2-D"},
		"complex":    {npyFile("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", eight), "dtype"},
		"float16":    {npyFile("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", eight), "float32 or float64"},
		"empty":      {npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }", nil), "no data rows"},
		"noshape":    {npyFile("{'descr': '<f8', 'fortran_order': False, }", eight), "no shape"},
		"huge":       {npyFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 4), }", int64(math.MaxInt64/8)), eight), "too large"},
		"version":    {append(append([]byte(nil), npyMagic...), 9, 0, 0, 0), "version 9.0"},
		"two arrays": {zipTwo.Bytes(), "holds 2 arrays"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".npy")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadCSVFile(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line naming the file and %q", name, err, c.want)
		}
	}
}

// readNPY never panics, reads no more rows than its header declares and its bytes hold, and
// reading every row at once (readAll, a block at a time) gives what reading one row at a
// time gives: the same rows, or the same error.
func FuzzReadNPY(f *testing.F) {
	for _, p := range []string{"../testdata/rows/rlcc_states.npy", "../testdata/rows/o_int16.npy"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := readNPY(bytes.NewReader(b), int64(len(b))); err == nil && a.rows*a.cols*int64(a.size) > int64(len(b)) {
			t.Fatalf("a header for %d×%d values of %d bytes taken from a file of %d", a.rows, a.cols, a.size, len(b))
		}
		a, err := readNPY(bytes.NewReader(b), 0) // a stream: cut data is found as rows are read
		if err != nil {
			return
		}
		row := make([]float64, a.cols)
		var want [][]float64
		var wantErr error
		for n := int64(0); ; n++ {
			if err := a.next(row); err != nil {
				if n > a.rows {
					t.Fatalf("%d rows read, the header says %d", n, a.rows)
				}
				if err != io.EOF {
					wantErr = err
				}
				break
			}
			want = append(want, append([]float64(nil), row...))
		}
		r := newRowReader(bytes.NewReader(nil))
		if err := r.startNPY(bytes.NewReader(b), 0); err != nil {
			if a.rows != 0 {
				t.Fatalf("startNPY: %v", err)
			}
			return
		}
		got, err := r.readAll(1 << 20)
		switch {
		case a.rows > (1<<20)/rowBytes(int(a.cols)):
			if err == nil || !strings.Contains(err.Error(), "over the 1 MiB limit") {
				t.Fatalf("%d rows over the limit: %v", a.rows, err)
			}
		case wantErr != nil:
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("error %v, one at a time %v", err, wantErr)
			}
		case err != nil:
			t.Fatalf("%v; one at a time read every row", err)
		default:
			if diff := cmp.Diff(want, got.Data, cmpopts.EquateNaNs()); diff != "" {
				t.Fatalf("rows differ (-one at a time +whole):\n%s", diff)
			}
		}
	})
}

// npyReader reads file as a stream of unknown size (standard input), so a cut file is
// found mid-read.
func npyReader(t *testing.T, file []byte) *RowReader {
	r := newRowReader(bytes.NewReader(nil))
	if err := r.startNPY(bytes.NewReader(file), 0); err != nil {
		t.Fatal(err)
	}
	return r
}

// Reading a whole array a block at a time (readAll) gives the rows, or the error, that
// reading it one row at a time (Next) gives: arrays of several blocks, every dtype width,
// cut at random bytes.
func TestReadNPYBlocksAsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	for i := range 60 {
		descr := []string{"<f8", "<f4", "<i2", "|u1", "|b1", "<i8"}[i%6]
		size := map[byte]int{'8': 8, '4': 4, '2': 2, '1': 1}[descr[2]]
		cols := 1 + rng.IntN(5)
		rows := 1 + rng.IntN(3*npyBlock/8/cols)
		data := make([]byte, rows*cols*size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if descr == "|b1" {
			for j := range data {
				data[j] &= 1
			}
		}
		file := npyFile(fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, rows, cols), data)
		if i%2 == 1 {
			file = file[:len(file)-rng.IntN(len(data))]
		}
		got, gotErr := npyReader(t, file).readAll(MaxHeldBytes)
		one := npyReader(t, file)
		var want [][]float64
		var wantErr error
		for {
			row, err := one.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, append([]float64(nil), row...))
		}
		switch {
		case wantErr != nil:
			if gotErr == nil || gotErr.Error() != wantErr.Error() {
				t.Fatalf("case %d (%s, %d×%d, %d bytes): error %v, want %v", i, descr, rows, cols, len(file), gotErr, wantErr)
			}
		case gotErr != nil:
			t.Fatalf("case %d: %v", i, gotErr)
		default:
			if diff := cmp.Diff(want, got.Data, cmpopts.EquateNaNs()); diff != "" {
				t.Fatalf("case %d (%s, %d×%d): rows differ (-one by one +whole):\n%s", i, descr, rows, cols, diff)
			}
		}
	}
}

// An array over the limit on rows held is refused from its header, with the exact need.
func TestReadNPYLimit(t *testing.T) {
	file := npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (100, 4), }", make([]byte, 3200))
	_, err := npyReader(t, file).readAll(560)
	want := "100 rows of 4 values need 5600 bytes, over the 560 bytes limit on rows held in memory (rows × (8 bytes × values + 24))"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if rows, err := npyReader(t, file).readAll(5600); err != nil || len(rows.Data) != 100 {
		t.Fatalf("at the limit: %v", err)
	}
}
