package codegen

import "fmt"

// The C the generator prints is first lowered to this small AST (lower.go), then printed with
// one handler per kind (print.go).

// kind is a C AST node's kind.
type kind int

const (
	// kindLine is one raw line at the current indent (a preprocessor line, or blank when empty).
	kindLine kind = iota
	// kindComment is a block comment, one line of Text per line.
	kindComment
	// kindTable is a file-scope static const array: Type Name[len(Values)].
	kindTable
	// kindFunc is a function definition: Text is the signature, Body its statements.
	kindFunc
	// kindStmt is one statement line (a declaration, an assignment, a return).
	kindStmt
	// kindIf is if (Text) { Body } else { Else }.
	kindIf
	// kindAcc is acc += Value, a leaf.
	kindAcc
	// kindLookup is acc += Name[index], the index built from comparison bits (Levels).
	kindLookup
	kindEnd
)

var kindNames = [...]string{
	kindLine: "line", kindComment: "comment", kindTable: "table", kindFunc: "func",
	kindStmt: "stmt", kindIf: "if", kindAcc: "acc", kindLookup: "lookup",
}

func (k kind) String() string {
	if k >= 0 && k < kindEnd && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// node is one C AST node; which fields it uses depends on Kind.
type node struct {
	Kind kind
	Text string
	// Lines is a comment's text.
	Lines []string
	// Name and Type are a table's or a lookup's array name and a table's element type.
	Name, Type string
	// Values are a table's elements as C literals; Value is a leaf's.
	Values []string
	Value  string
	// Levels are a lookup's comparisons, root first: each contributes one index bit, 1 when
	// the comparison is true.
	Levels []string
	Body   []*node
	Else   []*node
}
