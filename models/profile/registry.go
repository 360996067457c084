package profile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kind is what a model does.
type Kind string

const (
	KindChat   Kind = "chat"   // a causal LM Hark chats with
	KindSpeech Kind = "speech" // a Whisper-style speech recognizer
	KindOther  Kind = "other"  // anything else (embedders, vision...)
)

// Family is one model family a graph package can run. Check, when set,
// rejects configs of the family that the package cannot run (an unsupported
// head layout, rope scaling...) with a reason for the user.
type Family struct {
	Name          string
	Architectures []string
	ModelTypes    []string
	Kind          Kind
	Check         func(*Config) error
	// Inactive, for mixture-of-experts families, is how many of the
	// model's parameters a token does not use: the routed experts it is
	// not sent to (see ActiveParams).
	Inactive func(*Config) int64
	// QuantMethods are transformers quant_methods the family's loader
	// reads itself (GPT-OSS's released "mxfp4"), beyond MLX affine.
	QuantMethods []string
}

var (
	mu       sync.RWMutex
	families []Family
)

// Register adds a family; graph packages call it from init. Registering a
// name twice panics, as it is a programming error.
func Register(f Family) {
	if f.Name == "" || f.Kind == "" {
		panic("profile: family needs a name and a kind")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, g := range families {
		if g.Name == f.Name {
			panic("profile: family registered twice: " + f.Name)
		}
	}
	families = append(families, f)
}

// Families returns the registered families sorted by name.
func Families() []Family {
	mu.RLock()
	out := append([]Family(nil), families...)
	mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Signature names the registered families; the library stores it to know
// when support verdicts computed by another build are stale.
func Signature() string {
	var names []string
	for _, f := range Families() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ",")
}

// Resolution is the verdict on one config.
type Resolution struct {
	Family    string `json:"family,omitempty"`
	Kind      Kind   `json:"kind"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// Quantization Hark's kernels run: MLX affine with these bits and groups.
var (
	quantModes  = []string{"affine", "mxfp4"}
	quantBits   = map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true, 8: true}
	quantGroups = map[int]bool{32: true, 64: true, 128: true}
)

// Resolve matches cfg against the registered families. A nil cfg (no or
// unreadable config.json) is unsupported of kind other.
func Resolve(cfg *Config) Resolution {
	if cfg == nil {
		return Resolution{Kind: KindOther, Reason: "no readable config.json"}
	}
	fams := Families()
	f, ok := match(fams, cfg)
	if !ok {
		return Resolution{Kind: GuessKind(cfg), Reason: unsupportedReason(fams, cfg)}
	}
	r := Resolution{Family: f.Name, Kind: f.Kind}
	if reason := quantReason(cfg.Quant); reason != "" && !slices.Contains(f.QuantMethods, cfg.Quant.Method) {
		r.Reason = reason
		return r
	}
	if f.Check != nil {
		if err := f.Check(cfg); err != nil {
			r.Reason = err.Error()
			return r
		}
	}
	r.Supported = true
	return r
}

// match prefers an architecture match (the most specific name), then the
// model_type, then text_config's model_type.
func match(fams []Family, cfg *Config) (Family, bool) {
	for _, f := range fams {
		for _, a := range f.Architectures {
			for _, ca := range cfg.Architectures {
				if a == ca {
					return f, true
				}
			}
		}
	}
	for _, mt := range []string{cfg.ModelType, cfg.TextModelType} {
		if mt == "" {
			continue
		}
		for _, f := range fams {
			for _, t := range f.ModelTypes {
				if t == mt {
					return f, true
				}
			}
		}
	}
	return Family{}, false
}

func unsupportedReason(fams []Family, cfg *Config) string {
	var names []string
	for _, f := range fams {
		names = append(names, f.Name)
	}
	supported := "no model families are built into this Hark"
	if len(names) > 0 {
		supported = "supported: " + strings.Join(names, ", ")
	}
	switch {
	case cfg.ModelType != "":
		return fmt.Sprintf("model_type %q is not supported (%s)", cfg.ModelType, supported)
	case len(cfg.Architectures) > 0:
		return fmt.Sprintf("architecture %q is not supported (%s)", cfg.Architectures[0], supported)
	default:
		return fmt.Sprintf("config.json names no model_type or architectures (%s)", supported)
	}
}

func quantReason(q *Quant) string {
	if q == nil {
		return ""
	}
	if q.Method != "" && q.Method != "mlx" {
		return fmt.Sprintf("quantization method %q is not supported (supported: MLX affine quantization)", q.Method)
	}
	if err := checkQuant(q.Mode, q.Bits, q.GroupSize); err != "" {
		return err
	}
	for _, k := range q.OverrideKeys() {
		o := q.Overrides[k]
		if o.Skip {
			continue
		}
		mode, bits, group := o.Mode, o.Bits, o.GroupSize
		if mode == "" {
			mode = q.Mode
		}
		if bits == 0 {
			bits = q.Bits
		}
		if group == 0 {
			group = q.GroupSize
		}
		if err := checkQuant(mode, bits, group); err != "" {
			return k + ": " + err
		}
	}
	return ""
}

func checkQuant(mode string, bits, group int) string {
	if mode == "" {
		mode = "affine"
	}
	ok := false
	for _, m := range quantModes {
		ok = ok || m == mode
	}
	if !ok {
		return fmt.Sprintf("quantization mode %q is not supported (supported: %s)", mode, strings.Join(quantModes, ", "))
	}
	if mode == "mxfp4" {
		if bits != 4 || group != 32 {
			return fmt.Sprintf("mxfp4 quantization has groups of 32 and 4 bits, not groups of %d and %d bits", group, bits)
		}
		return ""
	}
	if !quantBits[bits] {
		return fmt.Sprintf("%d-bit quantization is not supported (supported: 2, 3, 4, 5, 6, 8 bits)", bits)
	}
	if !quantGroups[group] {
		return fmt.Sprintf("quantization group size %d is not supported (supported: 32, 64, 128)", group)
	}
	return ""
}

// GuessKind classifies a config no family claims, so the library can still
// say what the model is: Whisper-like speech models, causal LMs, or other.
func GuessKind(cfg *Config) Kind {
	if cfg == nil {
		return KindOther
	}
	lower := func(s string) string { return strings.ToLower(s) }
	for _, t := range []string{cfg.ModelType, cfg.TextModelType} {
		if strings.Contains(lower(t), "whisper") {
			return KindSpeech
		}
	}
	for _, a := range cfg.Architectures {
		la := lower(a)
		switch {
		case strings.Contains(la, "whisper"), strings.HasSuffix(la, "forspeechseq2seq"), strings.HasSuffix(la, "forctc"):
			return KindSpeech
		case strings.HasSuffix(la, "forcausallm"), strings.HasSuffix(la, "lmheadmodel"):
			return KindChat
		}
	}
	if _, ok := cfg.Raw["num_mel_bins"]; ok {
		return KindSpeech
	}
	for _, a := range cfg.Architectures {
		if strings.HasSuffix(lower(a), "forconditionalgeneration") && cfg.TextModelType != "" {
			return KindChat // multimodal wrappers around a text LM (Gemma 3)
		}
	}
	return KindOther
}

// ActiveParams is the parameters one token uses out of total, for a
// supported mixture-of-experts model; ok is false for other models, whose
// every parameter is active.
func ActiveParams(cfg *Config, total int64) (active int64, ok bool) {
	if cfg == nil {
		return 0, false
	}
	f, found := match(Families(), cfg)
	if !found || f.Inactive == nil || !Resolve(cfg).Supported {
		return 0, false
	}
	in := f.Inactive(cfg)
	if in <= 0 || in >= total {
		return 0, false
	}
	return total - in, true
}
