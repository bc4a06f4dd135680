package codegen

import (
	"bytes"
	"fmt"
	"strings"
)

// printer writes C with tab indentation.
type printer struct {
	b      bytes.Buffer
	indent int
}

// line writes one line at the current indent; an empty line stays empty.
func (p *printer) line(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if s != "" {
		p.b.WriteString(strings.Repeat("\t", p.indent))
		p.b.WriteString(s)
	}
	p.b.WriteByte('\n')
}

// node prints n with its kind's handler.
func (p *printer) node(n *node) {
	switch n.Kind {
	case kindLine:
		p.rawLine(n)
	case kindComment:
		p.comment(n)
	case kindTable:
		p.table(n)
	case kindFunc:
		p.function(n)
	case kindStmt:
		p.stmt(n)
	case kindIf:
		p.ifElse(n)
	case kindAcc:
		p.acc(n)
	case kindLookup:
		p.lookup(n)
	default:
		panic(fmt.Sprintf("codegen: no printer for node kind %s", n.Kind))
	}
}

func (p *printer) nodes(ns []*node) {
	for _, n := range ns {
		p.node(n)
	}
}

func (p *printer) block(ns []*node) {
	p.indent++
	p.nodes(ns)
	p.indent--
}

func (p *printer) rawLine(n *node) { p.line("%s", n.Text) }

// comment prints n's lines through CommentSafe, so no text inside can end the comment.
func (p *printer) comment(n *node) {
	if len(n.Lines) == 1 {
		p.line("/* %s */", CommentSafe(n.Lines[0]))
		return
	}
	p.line("/*")
	for _, l := range n.Lines {
		if l == "" {
			p.line(" *")
		} else {
			p.line(" * %s", CommentSafe(l))
		}
	}
	p.line(" */")
}

// tableWidth is how many table elements go on one line.
const tableWidth = 4

func (p *printer) table(n *node) {
	p.line("static const %s %s[%d] = {", n.Type, n.Name, len(n.Values))
	p.indent++
	for i := 0; i < len(n.Values); i += tableWidth {
		p.line("%s,", strings.Join(n.Values[i:min(i+tableWidth, len(n.Values))], ", "))
	}
	p.indent--
	p.line("};")
}

func (p *printer) function(n *node) {
	p.line("%s", n.Text)
	p.line("{")
	p.block(n.Body)
	p.line("}")
}

func (p *printer) stmt(n *node) { p.line("%s", n.Text) }

func (p *printer) ifElse(n *node) {
	p.line("if (%s) {", n.Text)
	p.block(n.Body)
	if len(n.Else) > 0 {
		p.line("} else {")
		p.block(n.Else)
	}
	p.line("}")
}

func (p *printer) acc(n *node) { p.line("acc += %s;", n.Value) }

// lookup prints acc += Name[bits], one comparison bit a line, the root's the most significant.
func (p *printer) lookup(n *node) {
	d := len(n.Levels)
	p.line("acc += %s[", n.Name)
	p.indent++
	for i, c := range n.Levels {
		sep := " |"
		if i == d-1 {
			sep = ""
		}
		if sh := d - 1 - i; sh > 0 {
			p.line("((uint32_t)(%s) << %d)%s", c, sh, sep)
		} else {
			p.line("(uint32_t)(%s)%s", c, sep)
		}
	}
	p.indent--
	p.line("];")
}
