package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTrees is the most trees an ensemble may have: at one add a tree, already 18 times the
// 2 µs budget on the fastest core profile, and a cap that keeps what a reader allocates per
// tree (its decoded JSON, its IR) small beside the file.
const MaxTrees = 1 << 16

// ListCaps bound the JSON lists a reader decodes: all the lists at a path together may have
// at most its number of entries. A path is the object keys from the top joined by dots, "[]"
// standing for any entry of a list: "oblivious_trees[].splits" is the splits of every tree.
// Keys match as encoding/json matches them, case-insensitively.
type ListCaps map[string]int

// CheckLists counts, before anything is decoded, the entries of the lists at each cap's path
// and refuses a file whose count is over the cap, in one line with the count. encoding/json
// allocates a Go value for every entry of a list it decodes, a struct of tens of bytes for
// an entry of two ("{}"), and grows the slice as it goes: a 64 MiB file of empty entries
// took 5 GB. A reader that caps every list it decodes into a slice (and decodes no JSON
// object into a map) bounds its decoded memory by the caps and the file's size. Lists
// elsewhere (fields the reader ignores) are skipped unread. Malformed JSON is left to the
// decoder, which refuses it before allocating (CheckLists returns nil).
func CheckLists(data []byte, caps ListCaps) error {
	if !json.Valid(data) {
		return nil
	}
	root := &capNode{}
	for path, max := range caps {
		n := root
		for seg := range strings.SplitSeq(strings.ReplaceAll(path, "[]", ".[]"), ".") {
			if seg == "" {
				continue
			}
			k := string(foldKey([]byte(seg)))
			if n.kids == nil {
				n.kids = map[string]*capNode{}
			}
			if n.kids[k] == nil {
				n.kids[k] = &capNode{}
			}
			n = n.kids[k]
		}
		n.path, n.max = path, max
	}
	s := listScan{data: data}
	s.value(root)
	return s.err
}

// capNode is one step of the caps' paths: its children by folded key ("[]" for a list's
// entries), and the cap of the lists that end here (path "" when none does).
type capNode struct {
	kids  map[string]*capNode
	path  string
	max   int
	count int
}

// listScan walks valid JSON, following only the keys of the caps' paths.
type listScan struct {
	data []byte
	i    int
	err  error
}

func (s *listScan) ws() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t' || s.data[s.i] == '\n' || s.data[s.i] == '\r') {
		s.i++
	}
}

// value scans the value at s.i; n is its place among the caps (nil: none below it).
func (s *listScan) value(n *capNode) {
	s.ws()
	if n == nil || s.err != nil {
		s.skip()
		return
	}
	switch s.data[s.i] {
	case '{':
		s.i++
		for s.ws(); s.data[s.i] != '}' && s.err == nil; s.ws() {
			if s.data[s.i] == ',' {
				s.i++
				s.ws()
			}
			start := s.i
			s.str()
			key := s.data[start+1 : s.i-1]
			if strings.IndexByte(string(key), '\\') >= 0 {
				var k string
				_ = json.Unmarshal(s.data[start:s.i], &k)
				key = []byte(k)
			}
			s.ws()
			s.i++ // ':'
			s.value(n.kids[string(foldKey(key))])
		}
		s.i++
	case '[':
		s.i++
		entries := n.kids["[]"]
		s.ws()
		for k := 0; s.data[s.i] != ']' && s.err == nil; k++ {
			if s.data[s.i] == ',' {
				s.i++
			}
			if n.path != "" {
				if n.count++; n.count > n.max {
					s.err = &ParseError{Off: int64(s.i), Msg: fmt.Sprintf("%s: over %d entries in all, the most nicc reads", n.path, n.max)}
					return
				}
			}
			s.value(entries)
			s.ws()
		}
		s.i++
	default:
		s.skip()
	}
}

// skip moves past the value at s.i without looking into it.
func (s *listScan) skip() {
	s.ws()
	depth := 0
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			s.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return // the end of the enclosing value
			}
			if depth--; depth == 0 {
				s.i++
				return
			}
		case ',', ':':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
}

// str moves past the string at s.i.
func (s *listScan) str() {
	for s.i++; s.i < len(s.data); s.i++ {
		switch s.data[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return
		}
	}
}

// foldKey is encoding/json's folding of a key for its case-insensitive match.
func foldKey(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}
