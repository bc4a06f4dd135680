package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxFileBytes caps the size of any model file nicc reads.
const MaxFileBytes = 64 << 20

// ParseError is a fault in a model file a frontend parses: where it is (byte offset, or -1 when the fault is
// structural) and what is wrong. File is filled in by whoever knows the path.
type ParseError struct {
	File string
	Off  int64
	Msg  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Off >= 0 {
		fmt.Fprintf(&b, "offset %d: ", e.Off)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errorf returns a structural ParseError (no byte offset).
func Errorf(format string, args ...any) error {
	return &ParseError{Off: -1, Msg: fmt.Sprintf(format, args...)}
}

// JSONError is encoding/json's error from reading a frontend's file, as a ParseError with the
// byte offset when the error has one.
func JSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &ParseError{Off: se.Offset, Msg: "JSON syntax: " + se.Error()}
	case errors.As(err, &te):
		return &ParseError{Off: te.Offset, Msg: te.Error()}
	}
	return Errorf("%v", err)
}

// InFile names path in err: a ParseError gets its File set; any other error is prefixed.
func InFile(path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *ParseError
	if errors.As(err, &fe) {
		c := *fe
		c.File = path
		return &c
	}
	return fmt.Errorf("%s: %w", path, err)
}

// ReadFile reads a whole model file, refusing files over MaxFileBytes and empty files.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into one buffer of the file's size (io.ReadAll would grow one to twice that).
	size := int64(512)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = min(st.Size(), MaxFileBytes) + 1
	}
	data := make([]byte, 0, size)
	for len(data) <= MaxFileBytes && err == nil {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		var n int
		n, err = f.Read(data[len(data):min(cap(data), MaxFileBytes+1)])
		data = data[:len(data)+n]
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &ParseError{File: path, Off: -1, Msg: fmt.Sprintf("file is over the %d MiB limit", MaxFileBytes>>20)}
	}
	if len(data) == 0 {
		return nil, &ParseError{File: path, Off: -1, Msg: "file is empty"}
	}
	return data, nil
}

// Load reads a model in the native JSON form.
func Load(path string) (*Model, error) { return LoadWith(path, Unmarshal) }

// LoadWith reads a model file with a frontend's parser. Errors name the file.
func LoadWith(path string, parse func([]byte) (*Model, error)) (*Model, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := parse(data)
	return m, InFile(path, err)
}

// Save writes m in the native JSON form.
func Save(path string, m *Model) error {
	b, err := Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
