package model

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadCSVRule pins the one rule every command's rows follow: a header only when every field
// of the first line is a unique name, and every other line all numbers, else an error naming
// the line and column.
func TestReadCSVRule(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name, in string
		names    []string
		data     [][]float64
		err      string
	}{
		{"plain", "1,2\n3,4\n", nil, [][]float64{{1, 2}, {3, 4}}, ""},
		{"header", "a,b\n1,2\n", []string{"a", "b"}, [][]float64{{1, 2}}, ""},
		{"quoted header", "\"a\", \"b c\"\n1,2\n", []string{"a", "b c"}, [][]float64{{1, 2}}, ""},
		{"bom before data", "\ufeff1,2\n3,4\n", nil, [][]float64{{1, 2}, {3, 4}}, ""},
		{"bom before header", "\ufeffa,b\n1,2\n", []string{"a", "b"}, [][]float64{{1, 2}}, ""},
		{"tabs, NaN, Inf", "1\t2\nnan\t-Inf\n", nil, [][]float64{{1, 2}, {nan, math.Inf(-1)}}, ""},
		{"spaces, CRLF, blank lines", "\n 1 , 2 \r\n\r\n3,4\r\n", nil, [][]float64{{1, 2}, {3, 4}}, ""},

		{"empty field in first row", "1,,3,4\n5,6,7,8\n", nil, nil, `line 1: column 2: "" is not a number (write NaN for a missing value)`},
		{"NA in first row", "1,NA,3,4\n5,6,7,8\n", nil, nil, `line 1: column 2: "NA" is not a number (write NaN for a missing value)`},
		{"quoted number in first row", "\"1\",2,3,4\n5,6,7,8\n", nil, nil, `line 1: column 1: "\"1\"" is not a number (values are bare numbers, not quoted)`},
		{"all quoted numbers", "\"1\",\"2\"\n5,6\n", nil, nil, `line 1: column 1: "\"1\"" is not a name, so the line is not a header (a header's fields are unique names: not empty, not numbers, not NA)`},
		{"header with an empty name", "a,,c\n1,2,3\n", nil, nil, `line 1: column 2: "" is not a name, so the line is not a header (a header's fields are unique names: not empty, not numbers, not NA)`},
		{"header with NA", "a,na\n1,2\n", nil, nil, `line 1: column 2: "na" is not a name, so the line is not a header (a header's fields are unique names: not empty, not numbers, not NA)`},
		{"duplicated name", "a,b, a\n1,2,3\n", nil, nil, `line 1: columns 1 and 3 are both named "a"`},
		{"duplicated after quotes", "a,\" a\"\n1,2\n", nil, nil, `line 1: columns 1 and 2 are both named "a"`},
		{"name among numbers", "1,x\n", nil, nil, `line 1: column 2: "x" is not a number`},
		{"second header", "a,b\n1,2\na,b\n", nil, nil, `line 3: column 1: "a" is not a number`},
		{"empty field later", "1,2\n\n3,\n", nil, nil, `line 3: column 2: "" is not a number (write NaN for a missing value)`},
		{"short row", "1,2\n3\n", nil, nil, "line 2: 1 values, want 2"},
		{"long row", "a,b\n1,2\n3,4,5,6\n", nil, nil, "line 3: 4 values, want 2"},
		{"out of range", "1,1e999\n", nil, nil, `line 1: column 2: "1e999" is beyond the float64 range`},
		{"header alone", "a,b\n\n", nil, nil, "no data rows"},
		{"empty", "", nil, nil, "no data rows"},
		{"blank", "\ufeff\n \n", nil, nil, "no data rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := ReadCSV(strings.NewReader(c.in))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rows.Names, c.names) {
				t.Errorf("names %q, want %q", rows.Names, c.names)
			}
			if len(rows.Data) != len(c.data) {
				t.Fatalf("%d rows, want %d", len(rows.Data), len(c.data))
			}
			for i := range c.data {
				for j, want := range c.data[i] {
					if got := rows.Data[i][j]; got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Errorf("row %d value %d: %v, want %v", i+1, j+1, got, want)
					}
				}
			}
		})
	}
}

func TestReadCSVLongLine(t *testing.T) {
	_, err := ReadCSV(io.MultiReader(strings.NewReader("1\n"), strings.NewReader(strings.Repeat("1", maxLineBytes+1))))
	if err == nil || err.Error() != "line 2: longer than 16 MiB" {
		t.Fatalf("error %v", err)
	}
}

func TestRowReaderLines(t *testing.T) {
	r, err := NewRowReader(strings.NewReader("a,b\n\n1,2\n3,4\n"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(row) != 2 || r.Width() != 2 {
			t.Fatalf("row %v, width %d", row, r.Width())
		}
		lines = append(lines, r.Line())
	}
	if !reflect.DeepEqual(lines, []int{3, 4}) {
		t.Errorf("lines %v, want [3 4]", lines)
	}
}

// TestReadCSVFileErrors checks that errors name the file, and that rows over the limit are
// refused with the whole file's estimate.
func TestReadCSVFileErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(strings.Repeat("1,2,3,4\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// 56 bytes a row (4 values and a slice header): 10 rows fit in 560 bytes, the 11th does not.
	_, err = r.readAll(560)
	want := path + ": about 100 rows of 4 values (estimated from the file's 800 bytes) need 5600 bytes, over the 560 bytes limit on rows held in memory (rows × (8 bytes × values + 24))"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if _, err := ReadCSV(strings.NewReader("1\n2\n3\n")); err != nil {
		t.Fatal(err)
	}
	r2, _ := NewRowReader(strings.NewReader("1\n2\n3\n"))
	if _, err := r2.readAll(64); err == nil || err.Error() != "line 3: 3 rows of 1 values need 96 bytes, over the 64 bytes limit on rows held in memory (rows × (8 bytes × values + 24))" {
		t.Fatalf("error %v", err)
	}
	if err := os.WriteFile(path, []byte("1,,3,4\n5,6,7,8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCSVFile(path); err == nil || err.Error() != path+`: line 1: column 2: "" is not a number (write NaN for a missing value)` {
		t.Fatalf("error %v", err)
	}
}
