package fwsim

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"sync"
)

// Class is the cost class of an instruction. A Profile gives the cycles of each class.
type Class uint8

const (
	ClassALU       Class = iota // integer ops, lui, auipc, fence (a no-op here), ecall/ebreak (they trap)
	ClassMul                    // mul, mulw
	ClassMulH                   // mulh, mulhsu, mulhu
	ClassDiv                    // div, divu, rem, remu and the W forms: the worst case
	ClassLoad                   // lb ... lwu
	ClassStore                  // sb ... sd
	ClassBranch                 // beq ... bgeu: Costs.BranchTaken or Costs.BranchNotTaken
	ClassJAL                    // jal
	ClassJALR                   // jalr
	ClassZbbLogic               // andn, orn, xnor
	ClassZbbCount               // clz, clzw, ctz, ctzw, cpop, cpopw
	ClassZbbMinMax              // min, minu, max, maxu
	ClassZbbExt                 // sext.b, sext.h, zext.h
	ClassZbbRotate              // rol, rolw, ror, rori, roriw, rorw
	ClassZbbByte                // orc.b, rev8
	classEnd
)

// classKeys are the names of the classes, which are also the JSON keys of a profile's
// costs (the branch class has two keys: branch_taken and branch_not_taken).
var classKeys = [...]string{
	ClassALU: "alu", ClassMul: "mul", ClassMulH: "mulh", ClassDiv: "div",
	ClassLoad: "load", ClassStore: "store", ClassBranch: "branch",
	ClassJAL: "jal", ClassJALR: "jalr",
	ClassZbbLogic: "zbb_logic", ClassZbbCount: "zbb_count", ClassZbbMinMax: "zbb_minmax",
	ClassZbbExt: "zbb_ext", ClassZbbRotate: "zbb_rotate", ClassZbbByte: "zbb_byte",
}

func (c Class) String() string {
	if int(c) < len(classKeys) && classKeys[c] != "" {
		return classKeys[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Class is the cost class of instructions of kind k.
func (k Kind) Class() Class {
	switch k {
	case MUL, MULW:
		return ClassMul
	case MULH, MULHSU, MULHU:
		return ClassMulH
	case DIV, DIVU, REM, REMU, DIVW, DIVUW, REMW, REMUW:
		return ClassDiv
	case LB, LH, LW, LD, LBU, LHU, LWU:
		return ClassLoad
	case SB, SH, SW, SD:
		return ClassStore
	case BEQ, BNE, BLT, BGE, BLTU, BGEU:
		return ClassBranch
	case JAL:
		return ClassJAL
	case JALR:
		return ClassJALR
	case ANDN, ORN, XNOR:
		return ClassZbbLogic
	case CLZ, CLZW, CTZ, CTZW, CPOP, CPOPW:
		return ClassZbbCount
	case MAX, MAXU, MIN, MINU:
		return ClassZbbMinMax
	case SEXT_B, SEXT_H, ZEXT_H:
		return ClassZbbExt
	case ROL, ROLW, ROR, RORI, RORIW, RORW:
		return ClassZbbRotate
	case ORC_B, REV8:
		return ClassZbbByte
	}
	return ClassALU
}

// Costs are the cycles an instruction of each class takes on a profile's core, issue to
// the issue of the next instruction, for a single hardware thread with the pipeline to
// itself. The model is per instruction: it does not look at neighbours, so where a core
// stalls on a dependency (load-use, multiply result) the cost includes that stall, which
// makes the number an upper bound for independent instructions.
type Costs struct {
	ALU            uint32 `json:"alu"`
	Mul            uint32 `json:"mul"`
	MulH           uint32 `json:"mulh"`
	Div            uint32 `json:"div"` // worst case over operands
	Load           uint32 `json:"load"`
	Store          uint32 `json:"store"`
	BranchTaken    uint32 `json:"branch_taken"`
	BranchNotTaken uint32 `json:"branch_not_taken"`
	JAL            uint32 `json:"jal"`
	JALR           uint32 `json:"jalr"`
	ZbbLogic       uint32 `json:"zbb_logic"`
	ZbbCount       uint32 `json:"zbb_count"`
	ZbbMinMax      uint32 `json:"zbb_minmax"`
	ZbbExt         uint32 `json:"zbb_ext"`
	ZbbRotate      uint32 `json:"zbb_rotate"`
	ZbbByte        uint32 `json:"zbb_byte"`
}

// Profile is the cycle model of one core: data, loaded from fwsim/profiles/*.json.
type Profile struct {
	Name    string  `json:"name"`
	Doc     string  `json:"doc"`
	ClockHz float64 `json:"clock_hz"`
	// Threads is the number of hardware threads that share the pipeline by default. The
	// time of a decision is cycles × threads sharing / clock.
	Threads int `json:"threads"`
	// MemoryBytes is the memory the firmware's code and constant tables may occupy at the
	// costs of Costs (no cache misses): nicc compile refuses a model that surely needs more.
	MemoryBytes uint64 `json:"memory_bytes"`
	// TextBytes and RodataBytes are the memory budget nicc compile chooses a tree ensemble's or
	// an LSTM's code form within: the most .text and .rodata a firmware may have (nicc compile
	// --max-text and --max-rodata override them).
	TextBytes   uint64 `json:"text_bytes"`
	RodataBytes uint64 `json:"rodata_bytes"`
	Costs       Costs  `json:"costs"`
	// Sources says where each number comes from, or "assumption", keyed by JSON name:
	// "clock_hz", "threads", "memory_bytes", "text_bytes", "rodata_bytes", and each key of Costs ("alu", "branch_taken", ...).
	Sources map[string]string `json:"sources"`
}

// DefaultProfile is the name of the profile used when none is given.
const DefaultProfile = "dpa"

// Cost is the cycles of one instruction of class c. taken matters only for ClassBranch.
func (p *Profile) Cost(c Class, taken bool) uint64 {
	k := &p.Costs
	switch c {
	case ClassALU:
		return uint64(k.ALU)
	case ClassMul:
		return uint64(k.Mul)
	case ClassMulH:
		return uint64(k.MulH)
	case ClassDiv:
		return uint64(k.Div)
	case ClassLoad:
		return uint64(k.Load)
	case ClassStore:
		return uint64(k.Store)
	case ClassBranch:
		if taken {
			return uint64(k.BranchTaken)
		}
		return uint64(k.BranchNotTaken)
	case ClassJAL:
		return uint64(k.JAL)
	case ClassJALR:
		return uint64(k.JALR)
	case ClassZbbLogic:
		return uint64(k.ZbbLogic)
	case ClassZbbCount:
		return uint64(k.ZbbCount)
	case ClassZbbMinMax:
		return uint64(k.ZbbMinMax)
	case ClassZbbExt:
		return uint64(k.ZbbExt)
	case ClassZbbRotate:
		return uint64(k.ZbbRotate)
	case ClassZbbByte:
		return uint64(k.ZbbByte)
	}
	return 0
}

// MaxCost is the worst-case cycles of one instruction of class c (for a branch, the larger
// of taken and not taken). Static WCET uses it where the cost depends on data.
func (p *Profile) MaxCost(c Class) uint64 {
	return max(p.Cost(c, false), p.Cost(c, true))
}

// MinCost is the cycles of the profile's cheapest instruction: a lower bound on any one
// instruction, whatever it is.
func (p *Profile) MinCost() uint64 {
	m := uint64(math.MaxUint64)
	for c := ClassALU; c < classEnd; c++ {
		m = min(m, p.Cost(c, false), p.Cost(c, true))
	}
	return m
}

// Seconds converts a cycle count to seconds on this core with threads hardware threads
// sharing the pipeline (threads <= 0 means p.Threads).
func (p *Profile) Seconds(cycles uint64, threads int) float64 {
	if threads <= 0 {
		threads = p.Threads
	}
	return float64(cycles) * float64(threads) / p.ClockHz
}

// SourceKeys are the keys every profile's Sources must have: "clock_hz", "threads",
// "memory_bytes", "text_bytes", "rodata_bytes" and the JSON name of every field of Costs.
func SourceKeys() []string {
	keys := []string{"clock_hz", "threads", "memory_bytes", "text_bytes", "rodata_bytes"}
	for _, c := range costFields(&Costs{}) {
		keys = append(keys, c.key)
	}
	return keys
}

type costField struct {
	key string
	v   *uint32
}

func costFields(k *Costs) []costField {
	return []costField{
		{"alu", &k.ALU}, {"mul", &k.Mul}, {"mulh", &k.MulH}, {"div", &k.Div},
		{"load", &k.Load}, {"store", &k.Store},
		{"branch_taken", &k.BranchTaken}, {"branch_not_taken", &k.BranchNotTaken},
		{"jal", &k.JAL}, {"jalr", &k.JALR},
		{"zbb_logic", &k.ZbbLogic}, {"zbb_count", &k.ZbbCount}, {"zbb_minmax", &k.ZbbMinMax},
		{"zbb_ext", &k.ZbbExt}, {"zbb_rotate", &k.ZbbRotate}, {"zbb_byte", &k.ZbbByte},
	}
}

// maxCost bounds any one cost so that cycle sums cannot overflow in practice and a typo
// (1e9 cycles for an add) is caught.
const maxCost = 1 << 16

// Bounds on a profile's memory: a page, and 4 GiB (a typo such as 1.5e15 is caught).
const (
	minMemory = 1 << 12
	maxMemory = 1 << 32
)

// ParseProfile reads and validates one profile in the JSON form of fwsim/profiles/*.json.
// Unknown fields, a missing or zero cost, a clock or thread count that is not positive, and
// a number without a source are errors.
func ParseProfile(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("fwsim: profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks that every number is in range and has a source.
func (p *Profile) Validate() error {
	if p.Name == "" {
		return fmt.Errorf("fwsim: profile: no name")
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("fwsim: profile %s: %s", p.Name, fmt.Sprintf(format, a...))
	}
	if !(p.ClockHz > 0) || math.IsInf(p.ClockHz, 0) {
		return bad("clock_hz %v is not a positive number", p.ClockHz)
	}
	if p.Threads < 1 || p.Threads > 1024 {
		return bad("threads %d is not in [1, 1024]", p.Threads)
	}
	if p.MemoryBytes < minMemory || p.MemoryBytes > maxMemory {
		return bad("memory_bytes %d is not in [%d, %d]", p.MemoryBytes, minMemory, uint64(maxMemory))
	}
	if p.TextBytes < minMemory || p.TextBytes > p.MemoryBytes || p.RodataBytes < minMemory || p.RodataBytes > p.MemoryBytes {
		return bad("text_bytes %d and rodata_bytes %d must be in [%d, memory_bytes %d]", p.TextBytes, p.RodataBytes, minMemory, p.MemoryBytes)
	}
	for _, f := range costFields(&p.Costs) {
		if *f.v == 0 || *f.v > maxCost {
			return bad("cost %s = %d is not in [1, %d]", f.key, *f.v, maxCost)
		}
	}
	known := map[string]bool{}
	for _, k := range SourceKeys() {
		known[k] = true
		if strings.TrimSpace(p.Sources[k]) == "" {
			return bad("no source for %s", k)
		}
	}
	for k := range p.Sources {
		if !known[k] {
			return bad("source for unknown number %q", k)
		}
	}
	return nil
}

//go:embed profiles/*.json
var profileFS embed.FS

var profiles = sync.OnceValues(func() ([]*Profile, error) {
	ents, err := profileFS.ReadDir("profiles")
	if err != nil {
		return nil, err
	}
	var ps []*Profile
	for _, e := range ents {
		data, err := profileFS.ReadFile(path.Join("profiles", e.Name()))
		if err != nil {
			return nil, err
		}
		p, err := ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		if want := strings.TrimSuffix(e.Name(), ".json"); p.Name != want {
			return nil, fmt.Errorf("%s: profile is named %q, want %q", e.Name(), p.Name, want)
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		// the default first, then by name
		if (ps[i].Name == DefaultProfile) != (ps[j].Name == DefaultProfile) {
			return ps[i].Name == DefaultProfile
		}
		return ps[i].Name < ps[j].Name
	})
	return ps, nil
})

// Profiles returns copies of the shipped profiles, the default ("dpa") first, then by name.
func Profiles() []*Profile {
	ps, err := profiles()
	if err != nil {
		// The profiles are embedded and checked by tests; a bad one is a build defect.
		panic("fwsim: embedded profiles: " + err.Error())
	}
	out := make([]*Profile, len(ps))
	for i, p := range ps {
		out[i] = p.clone()
	}
	return out
}

// orDefault validates p, or gives the default profile when p is nil.
func orDefault(p *Profile) (*Profile, error) {
	if p == nil {
		return LookupProfile(DefaultProfile)
	}
	return p, p.Validate()
}

// LookupProfile returns a copy of the shipped profile with the given name; "" means the
// default.
func LookupProfile(name string) (*Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	ps, err := profiles()
	if err != nil {
		return nil, fmt.Errorf("fwsim: embedded profiles: %w", err)
	}
	var names []string
	for _, p := range ps {
		if p.Name == name {
			return p.clone(), nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("fwsim: no core profile %q (have %s)", name, strings.Join(names, ", "))
}

func (p *Profile) clone() *Profile {
	q := *p
	q.Sources = make(map[string]string, len(p.Sources))
	for k, v := range p.Sources {
		q.Sources[k] = v
	}
	return &q
}
