// Package model is nicc's float IR of a trained policy: dense and LSTM networks and tree
// ensembles, their native JSON form, and the float64 evaluator that defines what the teacher means.
package model

// NativeVersion is the version tag of the native JSON form, in its "format" field.
const NativeVersion = "nicc.model/v1"

// Model is one trained policy. Exactly one of Layers and Ensemble is set.
type Model struct {
	Version string `json:"format"` // NativeVersion
	Name    string `json:"name,omitempty"`
	// Doc says where the model came from and anything a user must know about it.
	Doc    string   `json:"doc,omitempty"`
	Inputs []string `json:"inputs"`
	// RLCC are the RL-CC handler parameters the policy was trained under (nicc train writes
	// them), by RLCCKeys' names; nil when the file gives none.
	RLCC map[string]float64 `json:"rlcc,omitempty"`

	// Layers run in order; at most one is an LSTM.
	Layers   []Layer   `json:"layers,omitempty"`
	Ensemble *Ensemble `json:"ensemble,omitempty"`
}

// Kind names what a model is, for reports.
type Kind int

const (
	KindMLP Kind = iota
	KindLSTM
	KindTrees
	kindEnd
)

var kindNames = [...]string{KindMLP: "mlp", KindLSTM: "lstm", KindTrees: "trees"}

func (k Kind) String() string { return enumName(kindNames[:], int(k)) }

// Kind reports whether m is a feed-forward network, a recurrent one, or a tree ensemble.
func (m *Model) Kind() Kind {
	if m.Ensemble != nil {
		return KindTrees
	}
	for _, l := range m.Layers {
		if l.Op == OpLSTM {
			return KindLSTM
		}
	}
	return KindMLP
}

// NumInputs is the width of the feature vector the model reads.
func (m *Model) NumInputs() int { return len(m.Inputs) }

// NumOutputs is the width of the model's output.
func (m *Model) NumOutputs() int {
	if m.Ensemble != nil || len(m.Layers) == 0 {
		return 1
	}
	return m.Layers[len(m.Layers)-1].Out
}

// LayerOp is the operation of one network layer.
type LayerOp int

const (
	OpDense LayerOp = iota
	OpLSTM
	opEnd
)

var opNames = [...]string{OpDense: "dense", OpLSTM: "lstm"}

func (o LayerOp) String() string { return enumName(opNames[:], int(o)) }

// Layer is a dense layer or a one-layer LSTM cell.
//
// Dense: y = Act(W·x + B), W is Out×In.
//
// LSTM (PyTorch semantics, gate order i, f, g, o): W is 4·Out×In, R is 4·Out×Out,
// B and RB are the input and recurrent biases (4·Out each, or absent). Out is the hidden size;
// Act is unused, and the hidden state h is the layer's output.
type Layer struct {
	Op      LayerOp
	In, Out int
	W       [][]float64
	B       []float64
	R       [][]float64
	RB      []float64

	Act Activation
	// Alpha is leaky_relu's negative slope.
	Alpha float64
	// Lo and Hi bound clip.
	Lo, Hi float64
}

// Activation is an elementwise function applied after a dense layer.
type Activation int

const (
	ActIdentity Activation = iota
	ActReLU
	ActTanh
	ActSigmoid
	ActLeakyReLU
	ActClip
	actEnd
)

var actNames = [...]string{
	ActIdentity: "identity", ActReLU: "relu", ActTanh: "tanh", ActSigmoid: "sigmoid",
	ActLeakyReLU: "leaky_relu", ActClip: "clip",
}

func (a Activation) String() string { return enumName(actNames[:], int(a)) }

// Ensemble is a sum of binary decision trees: Transform(Base + Σ leaf).
type Ensemble struct {
	Base      float64   `json:"base"`
	Transform Transform `json:"transform"`
	// SigmoidScale multiplies the score inside the sigmoid (LightGBM's sigmoid parameter); 0 means 1.
	SigmoidScale float64 `json:"sigmoid_scale,omitempty"`
	// Float32 says the producing tool compares features and thresholds as float32 and sums
	// the score in float32 (XGBoost).
	Float32 bool `json:"float32,omitempty"`
	// Float32Splits says the producing tool compares features and thresholds as float32 but
	// sums the score in float64 (CatBoost). Float32 implies it.
	Float32Splits bool   `json:"float32_splits,omitempty"`
	Trees         []Tree `json:"trees"`
}

// Transform maps an ensemble's raw score to its output.
type Transform int

const (
	TransformIdentity Transform = iota
	TransformSigmoid
	transformEnd
)

var transformNames = [...]string{TransformIdentity: "identity", TransformSigmoid: "sigmoid"}

func (t Transform) String() string { return enumName(transformNames[:], int(t)) }

// Tree is a binary tree whose root is Nodes[0].
type Tree struct {
	Nodes []Node `json:"nodes"`
}

// Node is a leaf (Leaf set, Value its output) or a split on one feature.
type Node struct {
	Leaf  bool
	Value float64

	Feature   int
	Threshold float64
	// Cmp is the test that sends x left: x < t, x <= t or x > t.
	Cmp         Cmp
	Left, Right int
	DefaultLeft bool
	Missing     Missing
}

// Cmp is a split's comparison; true goes left.
type Cmp int

const (
	CmpLT Cmp = iota // XGBoost
	CmpLE            // LightGBM, scikit-learn
	CmpGT            // CatBoost
	cmpEnd
)

var cmpNames = [...]string{CmpLT: "<", CmpLE: "<=", CmpGT: ">"}

func (c Cmp) String() string { return enumName(cmpNames[:], int(c)) }

// Missing says which feature values a split treats as missing, sending them the default way.
type Missing int

const (
	// MissingNaN: NaN goes the default way (XGBoost; LightGBM missing_type NaN).
	MissingNaN Missing = iota
	// MissingZero: NaN and values within ±1e-35 of zero go the default way (LightGBM missing_type Zero).
	MissingZero
	// MissingNone: NaN is read as 0 and compared like any value (LightGBM missing_type None).
	MissingNone
	missingEnd
)

var missingNames = [...]string{MissingNaN: "nan", MissingZero: "zero", MissingNone: "none"}

func (m Missing) String() string { return enumName(missingNames[:], int(m)) }
