package golden

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// The --inputs generators: InputsNicc names the inputs in the policy's order (newest state
// first), InputsAuthors in NVlabs/RLCC's FeatureHistory order (oldest state first).
const (
	InputsNicc    = "nicc"
	InputsAuthors = "authors"
)

// DefaultFeatures is --features' default: the authors' config/rlcc.yaml agent_features.
var DefaultFeatures = strings.Join(rlcc.AuthorsFeatures, ",")

// InputsSpec is what --inputs, --history and --features say: Names, explicit names or a
// generator (InputsNicc, InputsAuthors); History and Features (a comma-separated list) are
// the generator's window (0 and "": the authors' defaults).
type InputsSpec struct {
	Names    string
	History  int
	Features string
}

// ParseInputs resolves the --inputs flags to one name per model input ("" is nil, the
// model's own names): a generator's names, or comma-separated names, each non-empty and
// unique. The names are taken as given; loading a policy reads them as an RL-CC layout.
func ParseInputs(spec InputsSpec) ([]string, error) {
	s := strings.TrimSpace(spec.Names)
	gen := strings.ToLower(s)
	if (spec.History != 0 || spec.Features != "") && gen != InputsNicc && gen != InputsAuthors {
		return nil, fmt.Errorf("--history and --features shape --inputs %s or --inputs %s; --inputs %q names the inputs itself", InputsAuthors, InputsNicc, s)
	}
	switch gen {
	case "":
		return nil, nil
	case InputsNicc, InputsAuthors:
		h := spec.History
		if h == 0 {
			h = rlcc.AuthorsHistory
		}
		if h < 1 || h >= rlcc.MaxHistory {
			return nil, fmt.Errorf("--history %d: want 1 to %d states", h, rlcc.MaxHistory-1)
		}
		list := spec.Features
		if list == "" {
			list = DefaultFeatures
		}
		mask, _, err := rlcc.ParseFeatures(list)
		if err != nil {
			return nil, fmt.Errorf("--features %q: %w", list, err)
		}
		if gen == InputsNicc {
			return rlcc.LayoutNames(nicsdk.Layout{History: h, Features: mask}), nil
		}
		return rlcc.AuthorsNames(strings.Split(list, ","), h), nil
	}
	names := strings.Split(s, ",")
	for i, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("--inputs %q: name %d is empty", s, i+1)
		}
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("--inputs %q: %q is named twice", s, n)
		}
		names[i] = n
	}
	return names, nil
}

// LayoutsAccepted names the ways to give a model's inputs an RL-CC layout, for errors.
var LayoutsAccepted = "--inputs " + InputsNicc + " (newest state first: " + strings.Join(rlcc.Names, ",") + "), --inputs " + InputsAuthors +
	" [--history K --features LIST] (NVlabs/RLCC, oldest first: a_prev2,o_prev,a_prev,o), or the names in the model's order, e.g. --inputs a_prev2,o_prev,a_prev,o"

// newInputLayout records layout l and perm for names.
func newInputLayout(names []string, l nicsdk.Layout, perm []int) *artifact.InputLayout {
	return &artifact.InputLayout{Given: slices.Clone(names), History: l.History, Features: featureWords(l.Features), Permutation: perm}
}

// featureWords names the features of m, in nicsdk.Feature order.
func featureWords(m nicsdk.FeatureMask) []string {
	words := [nicsdk.NumFeatures]string{"action", "obs", "infl", "rate"}
	var s []string
	for f := range nicsdk.NumFeatures {
		if m.Has(f) {
			s = append(s, words[f])
		}
	}
	return s
}

// isRLCCNamed reports whether every name is an RL-CC input name (rlcc.ParseSlot): the model
// means an RL-CC layout, and a repeated or missing slot is an error that names it.
func isRLCCNamed(names []string) bool {
	for _, n := range names {
		if _, ok := rlcc.ParseSlot(n); !ok {
			return false
		}
	}
	return len(names) > 0
}

// policyOrder puts a model the RL-CC handler runs in the policy's order: its names read as an
// RL-CC layout (rlcc.ParseLayout), the model permuted (model.PermuteInputs) and its inputs
// renamed to the layout's canonical names. A model whose names are not RL-CC names is taken
// by position as the default layout when it has its width (note says so). A layout that does
// not fit the flow context is refused (a stateful policy's words are checked at compile). A model of another width is refused, with noneHint (how the
// command takes a model that is no RL-CC policy, or "") before the layouts it could name.
func PolicyOrder(path string, m *model.Model, noneHint string) (*model.Model, *artifact.InputLayout, string, error) {
	l, perm, err := rlcc.ParseLayout(m.Inputs)
	if err != nil {
		if isRLCCNamedLoosely(m.Inputs) {
			return nil, nil, "", fmt.Errorf("%s: model %s's inputs (%s): %w", path, m.Name, strings.Join(m.Inputs, ", "), err)
		}
		if n := nicsdk.DefaultLayout.Inputs(); m.NumInputs() != n {
			wider := "wider than"
			if m.NumInputs() < n {
				wider = "narrower than"
			}
			return nil, nil, "", fmt.Errorf("%s: model %s has %d inputs, %s the RL-CC handler's %d (%s); %sname its inputs in an RL-CC layout: %s",
				path, m.Name, m.NumInputs(), wider, n, rlcc.NameList, noneHint, LayoutsAccepted)
		}
		l, perm = nicsdk.DefaultLayout, []int{0, 1, 2, 3}
		il := newInputLayout(m.Inputs, l, perm)
		il.ByPosition = true
		note := fmt.Sprintf("inputs (%s) taken by position as (%s)", strings.Join(m.Inputs, ", "), rlcc.NameList)
		out := *m
		out.Inputs = slices.Clone(rlcc.Names)
		return &out, il, note, nil
	}
	if err := l.Check(0); err != nil {
		return nil, nil, "", fmt.Errorf("%s: model %s's inputs (%s) form the RL-CC layout %s: %w", path, m.Name, strings.Join(m.Inputs, ", "), l, err)
	}
	p, err := model.PermuteInputs(m, perm)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", path, err)
	}
	p.Inputs = rlcc.LayoutNames(l)
	return p, newInputLayout(m.Inputs, l, perm), "", nil
}

// inDefaultOrder reports whether names are the default RL-CC layout in the policy's order.
func InDefaultOrder(names []string) bool {
	l, perm, err := rlcc.ParseLayout(names)
	return err == nil && l.IsDefault() && artifact.IsIdentity(perm)
}

// isRLCCNamedLoosely reports whether any of names is an RL-CC input name: the model meant a
// layout, and a name that does not fit it is an error, not a reason to take it by position.
func isRLCCNamedLoosely(names []string) bool {
	for _, n := range names {
		if _, ok := rlcc.ParseSlot(n); ok {
			return true
		}
	}
	return false
}

// sameLayout says whether two recorded layouts feed the model alike (inputs taken by position
// are the default layout in order).
func SameLayout(a, b *artifact.InputLayout) bool {
	return a.Layout() == b.Layout() && slices.Equal(a.Permutation, b.Permutation)
}

// loadedPolicy is a model loaded for a handler: under HandlerRLCC in the policy's order, with
// the layout that put it there and a note when its inputs were taken by position.
type LoadedPolicy struct {
	Model   *model.Model
	Format  *model.FileFormat
	Handler artifact.Handler
	Layout  *artifact.InputLayout
	Note    string
}

// loadPolicy loads path with its inputs renamed (LoadModelAs), resolves handler h by the names,
// and under the RL-CC handler puts the model in the policy's order (policyOrder, with noneHint).
func LoadPolicy(path string, format *model.FileFormat, inputs []string, h artifact.Handler, noneHint string) (*LoadedPolicy, error) {
	m, f, err := LoadModelAs(path, format, inputs)
	if err != nil {
		return nil, err
	}
	lp := &LoadedPolicy{Model: m, Format: f, Handler: ResolveHandler(h, m.Inputs)}
	if lp.Handler == artifact.HandlerRLCC {
		if lp.Model, lp.Layout, lp.Note, err = PolicyOrder(path, m, noneHint); err != nil {
			return nil, err
		}
	}
	return lp, nil
}

// teacherInputs are the names the teacher of diff --closed-loop is loaded with: the layout the
// compile directory recorded (rec; nil for a report without one keeps given), so that teacher
// and firmware read the same window. Names the user gave (given), or the teacher's own RL-CC
// names, must form that layout: otherwise it is an error naming both.
func TeacherInputs(teacher string, format *model.FileFormat, given []string, dir string, rec *artifact.InputLayout) ([]string, error) {
	if rec == nil {
		return given, nil
	}
	names, from := given, "--inputs"
	if names == nil {
		m, _, err := LoadModel(teacher, format)
		if err != nil {
			return nil, err
		}
		if m.NumInputs() != len(rec.Given) {
			return nil, fmt.Errorf("teacher %s: model %s takes %d inputs; %s was compiled for %d (%s)", teacher, m.Name, m.NumInputs(), dir, len(rec.Given), rec)
		}
		if !isRLCCNamedLoosely(m.Inputs) {
			if rec.ByPosition {
				return slices.Clone(rlcc.Names), nil
			}
			return rec.Given, nil
		}
		names, from = m.Inputs, "its inputs"
	}
	l, perm, err := rlcc.ParseLayout(names)
	if err != nil || !SameLayout(newInputLayout(names, l, perm), rec) {
		return nil, fmt.Errorf("teacher %s: %s (%s) do not form the layout %s was compiled with (%s); leave --inputs out to use the compile's", teacher, from, strings.Join(names, ","), dir, rec)
	}
	return names, nil
}

// ResolveHandler is h, or for HandlerAuto the handler the input names choose: HandlerRLCC
// for inputs named in any RL-CC layout (rlcc.ParseLayout), HandlerNone otherwise.
func ResolveHandler(h artifact.Handler, inputs []string) artifact.Handler {
	if h != artifact.HandlerAuto {
		return h
	}
	if isRLCCNamed(inputs) {
		return artifact.HandlerRLCC
	}
	return artifact.HandlerNone
}
