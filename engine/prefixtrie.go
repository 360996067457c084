package engine

import (
	"sync"

	"hark/mlx"
	"hark/models/nn"
)

// The shared prefix cache: every batched generation on an engine looks its
// prompt up in a trie of fixed-size token blocks, each node holding the
// keys and values of its block for every layer, and copies the longest
// cached run of blocks into its own cache instead of prefilling it; after
// its prefill it adds the blocks it computed. So two clients that send the
// same system prompt prefill it once, and a conversation's next turn
// reuses its earlier turns, whoever else used the model in between.
//
// A block's keys depend on every token before it, so a node is keyed by
// its block's tokens under its parent: the path from the root is the
// whole prefix. Memory is bounded by the engine's PrefixCacheBytes: the
// least recently used leaves go first (a node is only dropped once its
// children are, so every kept node's prefix stays complete). Only models
// whose every layer is a float full-attention cache use it (sliding
// windows drop positions; recurrent state is not per position).

// PrefixBlock is how many tokens a node of the prefix trie holds.
const PrefixBlock = 64

// DefaultPrefixCacheBytes bounds the prefix trie of an engine unless
// LoadOptions says otherwise; the runner counts it in a chat model's
// memory.
const DefaultPrefixCacheBytes = 256 << 20

type prefixNode struct {
	parent   *prefixNode
	key      string // the block's tokens
	children map[string]*prefixNode
	k, v     []*mlx.Array // per layer, [1, H, L, D]: L is PrefixBlock but for a prompt's last, partial block
	bytes    int64
	used     uint64 // tick of the last lookup or insert that passed it
}

// prefixTrie is an engine's shared prefix cache.
type prefixTrie struct {
	mu    sync.Mutex
	root  prefixNode
	limit int64
	bytes int64
	tick  uint64
	nodes int
}

func blockKey(ids []int) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	return string(b)
}

// restore copies into caches (fresh, of the engine's model) the longest
// run of cached blocks that prompt starts with, leaving at least one
// prompt token to run, and returns how many tokens it restored.
func (t *prefixTrie) restore(prompt []int, caches []nn.Cache) int {
	if t == nil || len(prompt) < 2 {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	var path []*prefixNode
	n := &t.root
	for end := PrefixBlock; end < len(prompt); end += PrefixBlock {
		c := n.children[blockKey(prompt[end-PrefixBlock:end])]
		if c == nil {
			break
		}
		c.used = t.tick
		path = append(path, c)
		n = c
	}
	// After the whole blocks, the child that shares the most leading
	// tokens with the rest of the prompt gives those tokens too (a block's
	// first j positions depend only on its first j tokens): a prompt
	// shorter than a block, or a shared system turn that ends mid-block,
	// is still reused to the token.
	done := len(path) * PrefixBlock
	var part *prefixNode
	partLen := 0
	if rest := prompt[done : len(prompt)-1]; len(rest) > 0 {
		for _, c := range n.children {
			if j := commonTokens(c.key, rest); j > partLen {
				part, partLen = c, j
			}
		}
	}
	if part != nil {
		part.used = t.tick
	}
	fail := func() int {
		// Not a cache the trie serves: start clean.
		for _, c := range caches {
			c.Reset()
		}
		return 0
	}
	for _, node := range path {
		for i, c := range caches {
			if !nn.AppendKV(c, node.k[i], node.v[i]) {
				return fail()
			}
		}
	}
	if part != nil {
		s := mlx.NewScope()
		defer s.Close()
		for i, c := range caches {
			if !nn.AppendKV(c, mlx.SliceAxis(part.k[i], 2, 0, partLen), mlx.SliceAxis(part.v[i], 2, 0, partLen)) {
				return fail()
			}
		}
	}
	return done + partLen
}

// commonTokens is how many leading tokens of ids the block key holds.
func commonTokens(key string, ids []int) int {
	j := 0
	for ; j < len(ids) && 4*j+4 <= len(key); j++ {
		id := ids[j]
		if key[4*j] != byte(id) || key[4*j+1] != byte(id>>8) || key[4*j+2] != byte(id>>16) || key[4*j+3] != byte(id>>24) {
			break
		}
	}
	return j
}

// insert adds the blocks of prompt that caches (which hold at least the
// prompt's positions) computed and the trie lacks, then evicts down to
// the limit.
func (t *prefixTrie) insert(prompt []int, caches []nn.Cache) {
	t.insertFrom(prompt, len(caches), func(layer, from, to int) (*mlx.Array, *mlx.Array, bool) {
		return nn.KVRange(caches[layer], from, to)
	})
}

// insertRow adds row i of the batch caches, whose first len(ids)
// positions hold ids: a row leaving the batch gives its prompt and the
// reply it generated, so a conversation's next turn (which repeats both)
// is reused to the token.
func (t *prefixTrie) insertRow(ids []int, caches []nn.Cache, i int) {
	t.insertFrom(ids, len(caches), func(layer, from, to int) (*mlx.Array, *mlx.Array, bool) {
		return nn.BatchRowKV(caches[layer], i, from, to)
	})
}

// insertFrom adds the blocks of ids the trie lacks, taking each layer's
// keys and values for positions [from, to) from kv.
func (t *prefixTrie) insertFrom(ids []int, layers int, kv func(layer, from, to int) (k, v *mlx.Array, ok bool)) {
	if t == nil || len(ids) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	n := &t.root
	// Whole blocks, then the last partial block as a leaf (no block can
	// follow it: the next one would not start on a boundary), which
	// restore reuses to the token.
	for start := 0; start < len(ids); start += PrefixBlock {
		end := min(start+PrefixBlock, len(ids))
		key := blockKey(ids[start:end])
		c := n.children[key]
		if c == nil && end-start < PrefixBlock {
			// A partial block that a longer sibling already starts
			// with: restore serves it from there.
			for _, sib := range n.children {
				if len(sib.key) > len(key) && sib.key[:len(key)] == key {
					sib.used = t.tick
					t.evict(sib)
					return
				}
			}
		}
		if c == nil {
			c = &prefixNode{parent: n, key: key}
			for layer := range layers {
				k, v, ok := kv(layer, start, end)
				if !ok {
					mlx.Free(c.k...)
					mlx.Free(c.v...)
					return
				}
				c.k, c.v = append(c.k, k), append(c.v, v)
				c.bytes += int64(k.Size()*k.DType().Size() + v.Size()*v.DType().Size())
			}
			if c.bytes > t.limit {
				mlx.Free(c.k...)
				mlx.Free(c.v...)
				return
			}
			// A partial leaf this block extends (the prompt's tail, now
			// followed by the reply) serves nothing the block does not.
			for _, sib := range n.children {
				if len(sib.children) == 0 && len(sib.key) < len(key) && key[:len(sib.key)] == sib.key {
					t.drop(sib)
				}
			}
			if n.children == nil {
				n.children = map[string]*prefixNode{}
			}
			n.children[key] = c
			t.bytes += c.bytes
			t.nodes++
		}
		c.used = t.tick
		n = c
	}
	t.evict(n)
}

// evict drops least recently used leaves until the trie fits its limit,
// sparing keep (the node just inserted) and its ancestors.
func (t *prefixTrie) evict(keep *prefixNode) {
	for t.bytes > t.limit {
		spared := map[*prefixNode]bool{}
		for n := keep; n != nil; n = n.parent {
			spared[n] = true
		}
		var victim *prefixNode
		var walk func(n *prefixNode)
		walk = func(n *prefixNode) {
			for _, c := range n.children {
				if len(c.children) == 0 {
					if !spared[c] && (victim == nil || c.used < victim.used) {
						victim = c
					}
				} else {
					walk(c)
				}
			}
		}
		walk(&t.root)
		if victim == nil {
			// Only the new path is left and it alone is over the limit:
			// give up its deepest blocks.
			if keep == &t.root || len(keep.children) > 0 {
				return
			}
			victim, keep = keep, keep.parent
		}
		t.drop(victim)
	}
}

func (t *prefixTrie) drop(n *prefixNode) {
	delete(n.parent.children, n.key)
	mlx.Free(n.k...)
	mlx.Free(n.v...)
	t.bytes -= n.bytes
	t.nodes--
}

// clear frees every node.
func (t *prefixTrie) clear() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var walk func(n *prefixNode)
	walk = func(n *prefixNode) {
		for _, c := range n.children {
			walk(c)
			mlx.Free(c.k...)
			mlx.Free(c.v...)
		}
		n.children = nil
	}
	walk(&t.root)
	t.bytes, t.nodes = 0, 0
}

// PrefixCacheStats is the shared prefix cache's size.
type PrefixCacheStats struct {
	Blocks int   `json:"blocks"`
	Bytes  int64 `json:"bytes"`
	Limit  int64 `json:"limit"`
}

// PrefixCache reports the shared prefix cache's size (zero when the
// model's caches cannot be shared by block).
func (e *Engine) PrefixCache() PrefixCacheStats {
	t := e.prefix
	if t == nil {
		return PrefixCacheStats{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return PrefixCacheStats{Blocks: t.nodes, Bytes: t.bytes, Limit: t.limit}
}

// initPrefix gives e a shared prefix cache of limit bytes (0: the
// default, < 0: none) when every layer of its model keeps a float
// full-attention cache.
func (e *Engine) initPrefix(limit int64) {
	if limit < 0 {
		return
	}
	if limit == 0 {
		limit = DefaultPrefixCacheBytes
	}
	cs := e.Model.NewCaches()
	defer nn.FreeCaches(cs)
	for _, c := range cs {
		if kc, ok := c.(*nn.KVCache); !ok || !nn.Batchable(kc) {
			return
		}
	}
	e.prefix = &prefixTrie{limit: limit}
}
