package federated

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/healthagents/healthagents/federated/onnx"
)

// ONNX export: a model version as a self-contained ONNX model that takes the
// task's raw feature values and gives class probabilities, with the task's
// standardization inside the graph, so that the model can be used without
// this service, its weight encoding or its scaling.
//
// The graph, all in float64 ("double", so that it computes what Predict
// computes rather than a float32 approximation of it):
//
//	features [N, F] (raw values in task feature order; NaN: missing)
//	  → Max(lo), Min(hi)          clipping of learned features to their range
//	  → Sub(mean), Div(scale)     z-scores
//	  → Max(-clamp_z), Min(clamp_z)
//	  → Where(IsNaN(features), 0) a missing value is imputed as the mean
//	  → Gemm(W, B)                logits
//	  → Sigmoid, then [1-p, p]    (logistic regression: classes negative, positive)
//	    or Softmax                (softmax: label.classes order)
//	  = probabilities [N, C], and class = ArgMax [N] (int64)
const (
	// ONNXOpset is the ai.onnx operator set of the exported graphs.
	ONNXOpset = 13
	// ONNXInput and ONNXProbabilities, ONNXClass name the graph's input
	// and outputs.
	ONNXInput         = "features"
	ONNXProbabilities = "probabilities"
	ONNXClass         = "class"
	// ONNXMediaType is the media type of an exported model.
	ONNXMediaType = "application/onnx"
)

// ONNXClasses returns the class names of the exported model's
// probabilities, in order: negative then positive for logistic regression,
// label.classes for softmax.
func (t Task) ONNXClasses() []string {
	if t.Model.Type == "softmax" {
		return t.Labels.Classes
	}
	return []string{t.Labels.Negative, t.Labels.Positive}
}

// ExportONNX returns version m of task t's model as an ONNX model file.
// columns, when given, are the CSV columns the features are read from (a
// task file's), recorded in the model's metadata beside the feature names.
// A version of a task with learned features needs its scaling (every
// version after the statistics round carries it).
func ExportONNX(t Task, columns []string, m ModelVersion) ([]byte, error) {
	if len(columns) != 0 && len(columns) != len(t.Features) {
		return nil, fmt.Errorf("%w: %d columns for %d features", ErrTask, len(columns), len(t.Features))
	}
	if t.Learns() {
		var err error
		if t, err = t.WithScaling(m.Scaling); err != nil {
			return nil, fmt.Errorf("%w (model version %s has no learned scaling yet)", err, m.Version)
		}
	}
	mdl, err := t.NewModel()
	if err != nil {
		return nil, err
	}
	if len(m.Weights) != mdl.NumWeights() {
		return nil, fmt.Errorf("%w: %d weights for a model of %d", ErrMalformedWeights, len(m.Weights), mdl.NumWeights())
	}
	if err := NaNCheck(m.Weights); err != nil {
		return nil, err
	}
	f := int64(len(t.Features))
	classes := t.ONNXClasses()
	g := onnx.Graph{
		Name: "healthagents_federated",
		Doc:  "Input: raw feature values in task order (float64; NaN is missing). Output: class probabilities in the order of metadata 'classes', and the most probable class index.",
	}
	g.Inputs = []onnx.Value{{Name: ONNXInput, Type: onnx.TypeDouble, Shape: []onnx.Dim{{Param: "N"}, {Size: f}},
		Doc: "Raw values of the features " + strings.Join(featureNames(t), ", ") + "; NaN for a missing value."}}
	g.Outputs = []onnx.Value{
		{Name: ONNXProbabilities, Type: onnx.TypeDouble, Shape: []onnx.Dim{{Param: "N"}, {Size: int64(len(classes))}}, Doc: "Class probabilities: " + strings.Join(classes, ", ") + "."},
		{Name: ONNXClass, Type: onnx.TypeInt64, Shape: []onnx.Dim{{Param: "N"}}, Doc: "Index of the most probable class."},
	}
	scalar := func(name string, v float64) onnx.Tensor {
		return onnx.Tensor{Name: name, Type: onnx.TypeDouble, Doubles: []float64{v}}
	}
	vector := func(name string, v []float64) onnx.Tensor {
		return onnx.Tensor{Name: name, Type: onnx.TypeDouble, Dims: []int64{int64(len(v))}, Doubles: v}
	}
	node := func(op, out string, in ...string) {
		g.Nodes = append(g.Nodes, onnx.Node{Op: op, Name: out, Inputs: in, Outputs: []string{out}})
	}
	mean, scale := make([]float64, f), make([]float64, f)
	lo, hi := make([]float64, f), make([]float64, f)
	for i, ft := range t.Features {
		mean[i], scale[i] = ft.Mean, ft.Scale
		lo[i], hi[i] = math.Inf(-1), math.Inf(1)
		if ft.Learned {
			lo[i], hi[i] = ft.Min, ft.Max
		}
	}
	g.Initializers = append(g.Initializers, vector("mean", mean), vector("scale", scale),
		scalar("neg_clamp_z", -t.ClampZ), scalar("clamp_z", t.ClampZ), scalar("zero", 0))
	node("IsNaN", "missing", ONNXInput)
	raw := ONNXInput
	if t.Learns() {
		g.Initializers = append(g.Initializers, vector("range_min", lo), vector("range_max", hi))
		node("Max", "above_min", raw, "range_min")
		node("Min", "clipped", "above_min", "range_max")
		raw = "clipped"
	}
	node("Sub", "centered", raw, "mean")
	node("Div", "z", "centered", "scale")
	node("Max", "z_above", "z", "neg_clamp_z")
	node("Min", "z_clamped", "z_above", "clamp_z")
	node("Where", "z_imputed", "missing", "zero", "z_clamped")
	// Gemm's B is [F, C]: column c holds class c's coefficients.
	outs := int64(1)
	if t.Model.Type == "softmax" {
		outs = int64(len(classes))
	}
	w, b := make([]float64, f*outs), make([]float64, outs)
	for c := range outs {
		row := m.Weights[c*(f+1) : (c+1)*(f+1)]
		for i := range f {
			w[i*outs+c] = row[i]
		}
		b[c] = row[f]
	}
	g.Initializers = append(g.Initializers,
		onnx.Tensor{Name: "coefficients", Type: onnx.TypeDouble, Dims: []int64{f, outs}, Doubles: w},
		vector("bias", b))
	node("Gemm", "logits", "z_imputed", "coefficients", "bias")
	if t.Model.Type == "softmax" {
		g.Nodes = append(g.Nodes, onnx.Node{Op: "Softmax", Name: ONNXProbabilities, Inputs: []string{"logits"}, Outputs: []string{ONNXProbabilities}, Attrs: []onnx.Attr{{Name: "axis", Int: 1}}})
	} else {
		g.Initializers = append(g.Initializers, scalar("one", 1))
		node("Sigmoid", "positive", "logits")
		node("Sub", "negative", "one", "positive")
		g.Nodes = append(g.Nodes, onnx.Node{Op: "Concat", Name: ONNXProbabilities, Inputs: []string{"negative", "positive"}, Outputs: []string{ONNXProbabilities}, Attrs: []onnx.Attr{{Name: "axis", Int: 1}}})
	}
	g.Nodes = append(g.Nodes, onnx.Node{Op: "ArgMax", Name: ONNXClass, Inputs: []string{ONNXProbabilities}, Outputs: []string{ONNXClass},
		Attrs: []onnx.Attr{{Name: "axis", Int: 1}, {Name: "keepdims", Int: 0}}})
	meta := func(v any) string { b, _ := json.Marshal(v); return string(b) } // plain strings and slices always marshal
	if len(columns) == 0 {
		columns = featureNames(t)
	}
	return onnx.Marshal(&onnx.Model{
		ProducerName: "healthagents", ProducerVersion: "federated-onnx/1", Domain: "org.healthagents.federated",
		ModelVersion: versionNumber(m.Version), Opset: ONNXOpset, Graph: g,
		Doc: fmt.Sprintf("Task %s, model version %s (SHA-256 %s).", t.Name, m.Version, m.Hash),
		Metadata: []onnx.KV{
			{Key: "task", Value: t.Name}, {Key: "task_hash", Value: t.Hash()},
			{Key: "model_version", Value: m.Version}, {Key: "model_hash", Value: m.Hash},
			{Key: "features", Value: meta(featureNames(t))}, {Key: "columns", Value: meta(columns)},
			{Key: "classes", Value: meta(classes)},
		},
	})
}

func featureNames(t Task) []string {
	out := make([]string, len(t.Features))
	for i, f := range t.Features {
		out[i] = f.Name
	}
	return out
}

// versionNumber is N of "1.0.N", the ModelProto's model_version (0 when the
// version has another form).
func versionNumber(v string) int64 {
	n, err := strconv.ParseInt(v[strings.LastIndexByte(v, '.')+1:], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ModelFileName is "<task>-<version>.<ext>" with every character that is
// not an ASCII letter, digit, '.', '_' or '-' made '_': a file name for an
// exported model.
func ModelFileName(task, version, ext string) string {
	b := []byte(task + "-" + version)
	for i, c := range b {
		if !(c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	return string(b) + "." + ext
}

// Columns returns the CSV column of every feature, in task order.
func (tf *TaskFile) Columns() []string {
	out := make([]string, len(tf.Features))
	for i, f := range tf.Features {
		out[i] = f.Column
		if out[i] == "" {
			out[i] = f.Name
		}
	}
	return out
}
