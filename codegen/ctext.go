package codegen

import (
	"fmt"
	"strings"
)

// Text from a model file (its name, its input names) reaches the C only inside comments,
// and only through CommentSafe: the printer passes every comment line through it.

// CommentSafe is s in an alphabet that cannot end a C comment, start another, splice lines or
// form a trigraph: printable ASCII stays, except that a backslash, a '/' after '*', a '*'
// after '/' and a '?' after '?' are written \xNN, as is every other byte (control
// characters, newlines, non-ASCII).
func CommentSafe(s string) string {
	var b strings.Builder
	prev := byte(0) // the last byte written
	for i := 0; i < len(s); i++ {
		c := s[i]
		unsafe := c < 0x20 || c > 0x7e || c == '\\' ||
			(c == '/' && prev == '*') || (c == '*' && prev == '/') || (c == '?' && prev == '?')
		if unsafe {
			fmt.Fprintf(&b, `\x%02x`, c)
			prev = 'x' // any hex digit: it pairs with nothing
			continue
		}
		b.WriteByte(c)
		prev = c
	}
	return b.String()
}

// maxNameBytes is how much of a name from a model file the C comments show.
const maxNameBytes = 64

// shownName is a name from a model file as the comments show it: at most maxNameBytes of it,
// then how long it was. The printer makes it comment-safe.
func shownName(s string) string {
	if len(s) > maxNameBytes {
		return fmt.Sprintf("%s... (%d bytes)", s[:maxNameBytes], len(s))
	}
	return s
}

// CommentName is a name from a model file for a comment nicc writes outside codegen's
// printer: capped as the printer's comments cap it, then CommentSafe.
func CommentName(s string) string { return CommentSafe(shownName(s)) }

// ModelLine is the line of a generated file's header comment that names the model: the name
// capped as every name in a comment is, not yet escaped (the comment printer escapes it).
func ModelLine(name string) string {
	if name == "" {
		return "model:  (unnamed)"
	}
	return "model:  " + shownName(name)
}

// CodeOnly is C source as the compiler's first phases see it: trigraphs replaced, lines
// spliced, each comment replaced by one space; string and character literals are kept. An
// unterminated comment or literal is an error with its line.
func CodeOnly(src []byte) ([]byte, error) {
	s := spliceLines(replaceTrigraphs(string(src)))
	var out strings.Builder
	line := 1
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(s[i:i+2+end], "\n")
			out.WriteByte(' ')
			i += 2 + end + 2
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			out.WriteByte(' ')
			i += end
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' {
					j++
				}
				if j < len(s) && s[j] == '\n' {
					return nil, fmt.Errorf("line %d: unterminated literal", line)
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("line %d: unterminated literal", line)
			}
			out.WriteString(s[i : j+1])
			i = j + 1
		default:
			if c == '\n' {
				line++
			}
			out.WriteByte(c)
			i++
		}
	}
	return []byte(out.String()), nil
}

// trigraphs are C99's nine, which gcc -std=c99 replaces before anything else.
var trigraphs = strings.NewReplacer("??=", "#", "??(", "[", "??/", `\`, "??)", "]", "??'", "^",
	"??<", "{", "??!", "|", "??>", "}", "??-", "~")

func replaceTrigraphs(s string) string { return trigraphs.Replace(s) }

// spliceLines deletes each backslash-newline (and, as gcc does, a backslash followed by
// spaces and a newline).
func spliceLines(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r') {
				j++
			}
			if j < len(s) && s[j] == '\n' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Directives are the preprocessor directives of C source (from CodeOnly's text), one per
// line, spaces collapsed.
func Directives(src []byte) ([]string, error) {
	code, err := CodeOnly(src)
	if err != nil {
		return nil, err
	}
	var ds []string
	for _, l := range strings.Split(string(code), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			ds = append(ds, "#"+strings.Join(strings.Fields(t[1:]), " "))
		}
	}
	return ds, nil
}

// Identifiers are the identifier tokens of C source outside comments and literals.
func Identifiers(src []byte) (map[string]bool, error) {
	code, err := CodeOnly(src)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	s := string(code)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			i = j + 1
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			ids[s[i:j]] = true
			i = j
		case c >= '0' && c <= '9':
			// a number, with its suffixes and hex digits
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || (s[j] >= '0' && s[j] <= '9') || s[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return ids, nil
}

func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
