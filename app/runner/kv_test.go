package runner

import (
	"context"
	"strings"
	"testing"

	"hark/engine"
	"hark/models/nn"
)

// The check before a load assumes the KV cache the generations will keep:
// on a machine with room for the model with a 4-bit cache but not with a
// float32 one, a chat that keeps 4 bits loads it and one that keeps
// float32 is refused, in the figures the fit verdict uses (Admission).
func TestAcquireKVChecksTheCacheItWillKeep(t *testing.T) {
	chat, _ := models(t)
	q4 := nn.KVQuant{Bits: 4, Group: 32} // stories260K's heads are 8 wide
	admit := func(q nn.KVQuant) int64 {
		e, err := engine.Estimate(chat, engine.EstimateOptions{KV: q})
		if err != nil {
			t.Fatal(err)
		}
		return Admission(Chat, e)
	}
	small, full := admit(q4), admit(nn.KVQuant{})
	if small >= full {
		t.Fatalf("a 4-bit cache needs %d, float32 %d", small, full)
	}
	budget := (small + full) / 2
	if engine.Verdict(small, budget) == engine.FitTooBig || engine.Verdict(full, budget) != engine.FitTooBig {
		t.Fatalf("budget %d does not split %d and %d", budget, small, full)
	}
	r := New(Options{Available: func() int64 { return budget }})
	defer r.Close()

	if _, err := r.AcquireKV(context.Background(), Chat, chat, nn.KVQuant{}, nil); err == nil || !strings.Contains(err.Error(), "cannot load") {
		t.Fatalf("float32 cache on a machine too small for it: %v", err)
	}
	l, err := r.AcquireKV(context.Background(), Chat, chat, q4, nil)
	if err != nil {
		t.Fatalf("4-bit cache within the budget: %v", err)
	}
	if !l.Loaded || l.Engine == nil {
		t.Fatalf("lease %+v", l)
	}
	if got := r.Loaded(); len(got) != 1 || got[0].Bytes != small {
		t.Fatalf("admitted %+v, want %d bytes", got, small)
	}
	l.Release()

	// The model is loaded (for a 4-bit cache) and idle: a use that keeps
	// float32 is checked again, not handed the model admitted for less.
	if _, err := r.AcquireKV(context.Background(), Chat, chat, nn.KVQuant{}, nil); err == nil || !strings.Contains(err.Error(), "cannot load") {
		t.Fatalf("float32 cache after a 4-bit load: %v", err)
	}
	if _, err := r.AcquireKV(context.Background(), Chat, chat, nn.KVQuant{Bits: 3}, nil); err == nil || !strings.Contains(err.Error(), "kv_bits 3") {
		t.Fatalf("3-bit cache: %v", err)
	}
}

// A shared lease (a desktop chat's) is admitted for the KV cache the
// conversation keeps, as AcquireKV is; the rows it reserves are counted
// at the float rate whatever that cache, as a batch row keeps float keys
// and values (a quantized cache never batches).
func TestShareKVAdmitsTheConversationsCache(t *testing.T) {
	chat, _ := models(t)
	q4 := nn.KVQuant{Bits: 4, Group: 32}
	est, err := engine.Estimate(chat, engine.EstimateOptions{KV: q4})
	if err != nil {
		t.Fatal(err)
	}
	small := Admission(Chat, est)
	perFloat, _ := kvOf(t, chat)
	const row = 16
	bound := nn.BatchCacheBound(perFloat, []int{row})
	if bound <= est.KVCache {
		t.Fatalf("a %d-token float row (%d bytes) is no more than the 4-bit conversation (%d): the test needs it larger", row, bound, est.KVCache)
	}
	r := New(Options{Available: noAvail})
	defer r.Close()
	l, err := r.ShareKV(context.Background(), Chat, chat, q4, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if got := r.Loaded(); len(got) != 1 || got[0].Bytes != small {
		t.Fatalf("admitted %+v, want the 4-bit figure %d", got, small)
	}
	if err := l.Reserve(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Loaded()[0].Bytes, small-est.KVCache+bound; got != want {
		t.Fatalf("with a %d-token row the model holds %d, want %d (its float keys and values in place of the 4-bit conversation)", row, got, want)
	}
	if _, err := r.ShareKV(context.Background(), Chat, chat, nn.KVQuant{Bits: 3}, nil); err == nil || !strings.Contains(err.Error(), "kv_bits 3") {
		t.Fatalf("3-bit cache: %v", err)
	}
}
