package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
)

// LoadTiktoken builds a byte-level BPE tokenizer from a tiktoken rank file
// (one "base64-token rank" pair per line, as Whisper ships gpt2.tiktoken and
// multilingual.tiktoken) with GPT-2's split pattern. The special tokens get
// the ids after the last rank, in the order given, as Whisper assigns them.
// EOS is "<|endoftext|>" when listed.
func LoadTiktoken(path string, special []string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := FromTiktoken(data, special)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return t, nil
}

// FromTiktoken is LoadTiktoken on the file's bytes.
func FromTiktoken(data []byte, special []string) (*Tokenizer, error) {
	vocab := map[string]int{}
	raw := map[string]int{} // raw bytes -> rank
	maxRank := -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"base64 rank\"", line)
		}
		rank, err := strconv.Atoi(string(fields[1]))
		if err != nil || rank < 0 {
			return nil, fmt.Errorf("line %d: bad rank %q", line, fields[1])
		}
		if rank > maxRank {
			maxRank = rank
		}
		// Whisper's multilingual file ends with "=", an empty token: it only
		// reserves its rank, so the special ids still start after it.
		if len(bytes.Trim(fields[0], "=")) == 0 {
			continue
		}
		tok, err := base64.StdEncoding.DecodeString(string(fields[0]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		raw[string(tok)] = rank
		vocab[byteLevelEncode(string(tok))] = rank
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("no ranks")
	}
	idx := newVocabIndex(len(vocab))
	for tok, id := range vocab {
		idx.set(tok, id)
	}
	m := newBPE(idx)
	// tiktoken merges the adjacent pair whose concatenation has the lowest
	// rank. Every split of a token into two known tokens is such a pair, and
	// its priority is the token's own rank.
	for tok, rank := range raw {
		for k := 1; k < len(tok); k++ {
			a, okA := raw[tok[:k]]
			b, okB := raw[tok[k:]]
			if okA && okB {
				m.merges[pairKey(a, b)] = merge{rank: int32(rank), id: int32(rank)}
			}
		}
	}
	t := &Tokenizer{
		model:     m,
		pre:       &byteLevelPre{useRegex: true},
		dec:       decodeFunc(byteLevelDecodeChain),
		byteLevel: true,
		bos:       -1,
		eos:       -1,
	}
	next := maxRank + 1
	added := make([]*AddedToken, 0, len(special))
	for _, s := range special {
		added = append(added, &AddedToken{ID: next, Content: s, Special: true})
		next++
	}
	t.finish(added)
	if id, ok := t.TokenID("<|endoftext|>"); ok {
		t.eos = id
	}
	return t, nil
}
