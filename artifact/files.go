package artifact

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
)

// Handler is the event handler nicc compile wraps around the model.
type Handler int

const (
	// HandlerAuto is HandlerRLCC for a model whose 4 inputs are named in the RL-CC layout,
	// HandlerNone otherwise.
	HandlerAuto Handler = iota
	// HandlerRLCC compiles the whole RL-CC event handler (nicsdk rlcc.h) around the model:
	// uint32_t nicc_on_event(const struct nicc_event *, struct nicc_flow_ctx *).
	HandlerRLCC
	// HandlerNone compiles the model alone: int32_t nicc_policy(const int32_t *x).
	HandlerNone
	handlerEnd
)

var handlerNames = [...]string{HandlerAuto: "auto", HandlerRLCC: "rlcc", HandlerNone: "none"}

// Valid says h is one of the handlers.
func (h Handler) Valid() bool { return h >= 0 && h < handlerEnd }

func (h Handler) String() string {
	if h >= 0 && h < handlerEnd {
		return handlerNames[h]
	}
	return fmt.Sprintf("handler(%d)", int(h))
}

// HandlerNames lists the names ParseHandler accepts.
func HandlerNames() []string { return handlerNames[:] }

// ParseHandler reads a handler name as the CLI's --handler flag gives it.
func ParseHandler(s string) (Handler, error) {
	for i, n := range handlerNames {
		if n == s {
			return Handler(i), nil
		}
	}
	return 0, fmt.Errorf("unknown handler %q (want one of %s)", s, strings.Join(handlerNames[:], ", "))
}

// Entry points of the firmware.
const (
	EntryHandler = nicsdk.HandlerEntry // HandlerRLCC
	EntryPolicy  = codegen.DefaultFunc // the model alone (HandlerNone; also inside the RL-CC ELF)
)

// Files compile writes into the output directory, besides codegen's policy .c/.h and
// nicsdk's sources.
const (
	HandlerFile  = "handler.c" // HandlerRLCC: the engine entry
	FirmwareFile = abi.ELFFile // the RISC-V ELF
	ReportFile   = "report.json"
	HostDir      = "host" // the host driver (driver.c) and its two builds
	// VectorsFile holds the entry's measured verify calls, and PolicyVectorsFile (the RL-CC
	// handler) nicc_policy's, in nicc budget's vectors format.
	VectorsFile       = "vectors.txt"
	PolicyVectorsFile = "vectors_policy.txt"
)

// StudentFile is CompileOptions.Student's file in the output directory.
const StudentFile = "student.json"

// Files of the DOCA target, in the output directory.
const (
	DOCASourceFile   = "doca_pcc_rlcc.c" // the DOCA PCC device source
	DOCAFirmwareFile = doca.ELFFile      // it, built for fwsim against nicc's stand-in
	DOCAReadmeFile   = "README-doca.md"  // how to build and load it with DOCA's tools
	DOCADriverFile   = "doca_driver.c"   // in HostDir: the DOCA verification driver
	// DOCAVectorsFile holds the measured calls of doca_pcc_dev_user_algo, for nicc budget.
	DOCAVectorsFile = "vectors_doca.txt"
)

// MaxReportBytes caps the report.json nicc reads back.
const MaxReportBytes = 16 << 20
