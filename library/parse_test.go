package library

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/safetensors"
)

func TestConfigFingerprintIgnoresFormatting(t *testing.T) {
	a := []byte(`{"model_type":"llama","rms_norm_eps":1e-05,"rope_theta":10000.0,"architectures":["LlamaForCausalLM"],"x":{"b":1,"a":[true,null,"é<>&"]}}`)
	b := []byte("{\n  \"x\": {\"a\": [true, null, \"\\u00e9<>&\"], \"b\": 1.0},\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"rope_theta\": 10000,\n  \"rms_norm_eps\": 0.00001,\n  \"model_type\": \"llama\"\n}\n")
	fa, err := ConfigFingerprint(a)
	must(t, err)
	fb, err := ConfigFingerprint(b)
	must(t, err)
	if fa != fb || len(fa) != 16 {
		t.Fatalf("%s != %s", fa, fb)
	}
	canon, _ := CanonicalJSON(a)
	want := `{"architectures":["LlamaForCausalLM"],"model_type":"llama","rms_norm_eps":1e-05,"rope_theta":10000,"x":{"a":[true,null,"é<>&"],"b":1}}`
	if string(canon) != want {
		t.Fatalf("canonical\n got %s\nwant %s", canon, want)
	}
	// Any value change changes it.
	for _, c := range []string{
		`{"model_type":"llama2","rms_norm_eps":1e-05,"rope_theta":10000.0,"architectures":["LlamaForCausalLM"],"x":{"b":1,"a":[true,null,"é<>&"]}}`,
		`{"model_type":"llama","rms_norm_eps":1e-06,"rope_theta":10000.0,"architectures":["LlamaForCausalLM"],"x":{"b":1,"a":[true,null,"é<>&"]}}`,
		`{"model_type":"llama","rms_norm_eps":1e-05,"rope_theta":10000.0,"architectures":["LlamaForCausalLM"],"x":{"b":1,"a":[null,true,"é<>&"]}}`,
	} {
		if f, _ := ConfigFingerprint([]byte(c)); f == fa {
			t.Errorf("unchanged for %s", c)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `nul`} {
		if _, err := ConfigFingerprint([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if n, _ := canonicalNumber("-0"); n != "0" {
		t.Errorf("-0 → %s", n)
	}
	if n, _ := canonicalNumber("-0.0"); n != "0" {
		t.Errorf("-0.0 → %s", n)
	}
	if n, _ := canonicalNumber("123456789012345678901234567890"); n != "123456789012345678901234567890" {
		t.Errorf("big int → %s", n)
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e3,-0.0,"x\u0001"],"b":{"c":null}}`))
	f.Add([]byte(`[1e400, 12345678901234567890]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := CanonicalJSON(b)
		if err != nil {
			return
		}
		// The canonical form is valid JSON and a fixed point.
		if !json.Valid(c) {
			t.Fatalf("invalid canonical JSON %q from %q", c, b)
		}
		c2, err := CanonicalJSON(c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("not idempotent: %q → %q (%v)", c, c2, err)
		}
		// Reformatting keeps the fingerprint.
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			f1, _ := ConfigFingerprint(b)
			f2, _ := ConfigFingerprint(buf.Bytes())
			if f1 != f2 {
				t.Fatalf("indent changed fingerprint of %q", b)
			}
		}
	})
}

func TestParseRepoFolder(t *testing.T) {
	good := map[string]string{
		"models--meta-llama--Llama-3.2-1B":     "meta-llama/Llama-3.2-1B",
		"models--gpt2":                         "gpt2",
		"models--mlx-community--Qwen3-4B-4bit": "mlx-community/Qwen3-4B-4bit",
	}
	for in, want := range good {
		got, err := ParseRepoFolder(in)
		if err != nil || got != want {
			t.Errorf("%s → %q %v", in, got, err)
		}
		if RepoFolder(want) != in {
			t.Errorf("RepoFolder(%s) = %s", want, RepoFolder(want))
		}
	}
	for _, bad := range []string{"datasets--a--b", "models--", "models--a--", "models----b", "models--a--b--c", "models--a b--c", "models--../x", "models--a--.hidden"} {
		if got, err := ParseRepoFolder(bad); err == nil {
			t.Errorf("%s accepted as %q", bad, got)
		}
	}
}

func FuzzParseRepoFolder(f *testing.F) {
	f.Add("models--org--name")
	f.Add("models--x")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseRepoFolder(s)
		if err != nil {
			return
		}
		if RepoFolder(id) != s || ValidRepoID(id) != nil || strings.Contains(id, "..") {
			t.Fatalf("%q → %q does not round-trip", s, id)
		}
	})
}

func TestParseRef(t *testing.T) {
	c, err := ParseRef([]byte(strings.ToUpper(commitA) + "\n"))
	if err != nil || c != commitA {
		t.Fatalf("%q %v", c, err)
	}
	for _, bad := range []string{"", "main", commitA[:39], commitA + "0", "\xff\xfe", strings.Repeat("a", 2000)} {
		if _, err := ParseRef([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	f.Add([]byte(commitA))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseRef(b)
		if err == nil && (!IsCommit(c) || strings.ToLower(c) != c) {
			t.Fatalf("%q → %q", b, c)
		}
	})
}

func TestSTHeaderStats(t *testing.T) {
	// A 4-bit MLX layer (64×64 in 64×8 packed words) and a bf16 norm,
	// read back through the one safetensors header reader.
	path := filepath.Join(t.TempDir(), "model.safetensors")
	must(t, safetensors.Write(path, []safetensors.Tensor{
		{Name: "l.weight", DType: "U32", Shape: []int{64, 8}, Data: make([]byte, 64*8*4)},
		{Name: "l.scales", DType: "F16", Shape: []int{64, 2}, Data: make([]byte, 64*2*2)},
		{Name: "l.biases", DType: "F16", Shape: []int{64, 2}, Data: make([]byte, 64*2*2)},
		{Name: "norm.weight", DType: "BF16", Shape: []int{64}, Data: make([]byte, 64*2)},
	}, map[string]string{"format": "mlx"}))
	h, err := safetensors.ReadHeader(path)
	must(t, err)
	var s tensorStats
	s.add(h, func(string) int { return 4 })
	if s.params != 64*64+64 || s.dtype() != "bfloat16" {
		t.Fatalf("params %d dtype %s", s.params, s.dtype())
	}
}

func TestSTHeaderStatsSaturate(t *testing.T) {
	// The largest packed tensor a header can declare, at 1 bit, must not
	// overflow into a negative count.
	var s tensorStats
	s.add([]safetensors.Info{
		{Name: "a.weight", DType: "U32", Shape: []int{math.MaxInt32, math.MaxInt32}},
		{Name: "a.scales", DType: "F32", Shape: []int{1}},
	}, func(string) int { return 1 })
	if s.params <= 0 {
		t.Fatalf("params %d", s.params)
	}
}
