package llm

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"

	"hark/mlx/safetensors"
)

// Pieces of the float64 references the internal MoE tests are written
// against (glm_internal_test.go, glm4moe_internal_test.go).

// checkpoint64 returns a reader of dir's model.safetensors tensors as
// float64, the file open until the test ends.
func checkpoint64(t *testing.T, dir string) func(name string) []float64 {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func(name string) []float64 {
		v, err := f.Float32s(name)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
}

// normalInputs is n standard normal values from a PCG seeded (seed1,
// seed2): a test's hidden states.
func normalInputs(seed1, seed2 uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
	}
	return xs
}

// sigmoidScores is DeepSeek-V3-style routing's scores: sigmoid(router x)
// for each of the router's rows (router [experts, len(x)], row-major).
func sigmoidScores(router, x []float64) []float64 {
	scores := make([]float64, len(router)/len(x))
	for e := range scores {
		var l float64
		for j, xj := range x {
			l += router[e*len(x)+j] * xj
		}
		scores[e] = 1 / (1 + math.Exp(-l))
	}
	return scores
}

// topExperts is torch.topk(scores + bias, k)'s indices, sorted.
func topExperts(scores, bias []float64, k int) []int {
	return groupTopExperts(scores, bias, k, 1, 1)
}

// groupTopExperts is transformers' noaux_tc choice, sorted: scores plus
// bias, every expert outside the topGroups groups (of len/groups) whose
// two best sum highest set to 0, then the k largest. With one group it
// is plain top-k.
func groupTopExperts(scores, bias []float64, k, groups, topGroups int) []int {
	n := len(scores)
	key := make([]float64, n)
	for i := range key {
		key[i] = scores[i]
		if bias != nil {
			key[i] += bias[i]
		}
	}
	size := n / groups
	rank := make([]float64, groups)
	for g := range rank {
		part := append([]float64(nil), key[g*size:(g+1)*size]...)
		sort.Sort(sort.Reverse(sort.Float64Slice(part)))
		rank[g] = part[0] + part[1]
		if size == 1 {
			rank[g] = part[0]
		}
	}
	order := make([]int, groups)
	for g := range order {
		order[g] = g
	}
	sort.SliceStable(order, func(x, y int) bool { return rank[order[x]] > rank[order[y]] })
	for _, g := range order[topGroups:] {
		for e := g * size; e < (g+1)*size; e++ {
			key[e] = 0
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return key[idx[x]] > key[idx[y]] })
	top := append([]int(nil), idx[:k]...)
	sort.Ints(top)
	return top
}
