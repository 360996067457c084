package transcribe

// zlibSize returns len(zlib.compress(data)) for C zlib 1.2.x at level 6
// (what CPython's zlib.compress does by default) without producing the
// bytes: OpenAI's compression-ratio check divides by that length, and
// Go's compress/flate, a different implementation, often differs by a few
// bytes. It follows zlib's deflate_slow (lazy matching over 3-byte hash
// chains, 15-bit hash, chain 128, lazy 16, good 8, nice 128) and its
// block-type choice and Huffman code lengths (trees.c). Inputs that would
// fill more than one deflate block (16383 symbols) report ok=false.
func zlibSize(data []byte) (size int, ok bool) {
	const (
		minMatch  = 3
		maxMatch  = 258
		wsize     = 1 << 15
		hashBits  = 15
		hashMask  = 1<<hashBits - 1
		hashShift = (hashBits + minMatch - 1) / minMatch
		minLook   = maxMatch + minMatch + 1
		maxDist   = wsize - minLook
		goodMatch = 8
		maxLazy   = 16
		niceMatch = 128
		maxChain  = 128
		tooFar    = 4096
		symLimit  = 1<<14 - 1
	)
	if len(data) > wsize-minLook {
		return 0, false
	}
	n := len(data)
	win := make([]byte, n+maxMatch+1) // zero tail, as zlib clears past the data
	copy(win, data)
	head := make([]int, 1<<hashBits)
	prev := make([]int, wsize)
	var ltree [lCodes]int // literal/length frequencies
	var dtree [dCodes]int
	ltree[endBlock] = 1
	syms := 0
	lit := func(c byte) { ltree[c]++; syms++ }
	dist := func(d, lc int) { ltree[lengthCode(lc)+literals+1]++; dtree[distCode(d-1)]++; syms++ }

	insH := 0
	if n >= minMatch {
		insH = int(win[0])
		insH = (insH<<hashShift ^ int(win[1])) & hashMask
	}
	insert := func(pos int) int {
		insH = (insH<<hashShift ^ int(win[pos+minMatch-1])) & hashMask
		h := head[insH]
		prev[pos&(wsize-1)] = h
		head[insH] = pos
		return h
	}
	strstart, lookahead := 0, n
	matchLen, matchStart := minMatch-1, 0
	prevLen, prevMatch := 0, 0
	available := false

	longest := func(cur int) int {
		chain := maxChain
		best := prevLen
		nice := niceMatch
		if prevLen >= goodMatch {
			chain >>= 2
		}
		if nice > lookahead {
			nice = lookahead
		}
		for {
			l := 0
			for l < maxMatch && win[cur+l] == win[strstart+l] {
				l++
			}
			if l > best {
				matchStart, best = cur, l
				if l >= nice {
					break
				}
			}
			cur = prev[cur&(wsize-1)]
			chain--
			if cur <= 0 || chain == 0 {
				break
			}
		}
		return min(best, lookahead)
	}

	for lookahead > 0 {
		hashHead := 0
		if lookahead >= minMatch {
			hashHead = insert(strstart)
		}
		prevLen, prevMatch = matchLen, matchStart
		matchLen = minMatch - 1
		if hashHead != 0 && prevLen < maxLazy && strstart-hashHead <= maxDist {
			matchLen = longest(hashHead)
			if matchLen == minMatch && strstart-matchStart > tooFar {
				matchLen = minMatch - 1
			}
		}
		switch {
		case prevLen >= minMatch && matchLen <= prevLen:
			maxInsert := strstart + lookahead - minMatch
			dist(strstart-1-prevMatch, prevLen-minMatch)
			lookahead -= prevLen - 1
			for k := prevLen - 2; k > 0; k-- {
				strstart++
				if strstart <= maxInsert {
					insert(strstart)
				}
			}
			available = false
			matchLen = minMatch - 1
			strstart++
		case available:
			lit(win[strstart-1])
			strstart++
			lookahead--
		default:
			available = true
			strstart++
			lookahead--
		}
		if syms >= symLimit {
			return 0, false
		}
	}
	if available {
		lit(win[strstart-1])
	}
	return 2 + blockBytes(ltree[:], dtree[:], n) + 4, true
}

const (
	literals = 256
	endBlock = 256
	lCodes   = literals + 1 + 29
	dCodes   = 30
	blCodes  = 19
)

var (
	extraLBits  = [29]int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	extraDBits  = [30]int{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	extraBLBits = [19]int{16: 2, 17: 3, 18: 7}
	blOrder     = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// lengthCode maps a match length minus 3 (0..255) to its code index 0..28.
func lengthCode(lc int) int {
	switch {
	case lc < 8:
		return lc
	case lc == 255:
		return 28
	}
	b := bitLen(lc) - 1
	return 4*(b-1) + (lc>>(b-2))&3
}

// distCode maps a distance minus 1 to its code 0..29.
func distCode(d int) int {
	if d < 4 {
		return d
	}
	b := bitLen(d) - 1
	return 2*b + (d>>(b-1))&1
}

func bitLen(x int) int {
	n := 0
	for x > 0 {
		n++
		x >>= 1
	}
	return n
}

func staticLLen(n int) int {
	switch {
	case n < 144:
		return 8
	case n < 256:
		return 9
	case n < 280:
		return 7
	}
	return 8
}

// blockBytes is the size of the single final block zlib's _tr_flush_block
// writes for these symbol counts: stored, static or dynamic, whichever is
// smallest (ties prefer static over dynamic, and stored wins only when
// strictly smaller), rounded up to whole bytes.
func blockBytes(ltree, dtree []int, stored int) int {
	var optLen, staticLen int
	lt := huffTree{freq: append([]int(nil), ltree...), extraBase: literals + 1, extra: extraLBits[:], maxLen: 15, static: staticLLen}
	dt := huffTree{freq: append([]int(nil), dtree...), extra: extraDBits[:], maxLen: 15, static: func(int) int { return 5 }}
	lt.build(&optLen, &staticLen)
	dt.build(&optLen, &staticLen)
	// The code lengths are themselves Huffman-coded (build_bl_tree).
	bl := make([]int, blCodes)
	lt.scan(bl)
	dt.scan(bl)
	blt := huffTree{freq: bl, extra: extraBLBits[:], maxLen: 7}
	blt.build(&optLen, nil)
	maxBL := blCodes - 1
	for ; maxBL >= 3; maxBL-- {
		if blt.length[blOrder[maxBL]] != 0 {
			break
		}
	}
	optLen += 3*(maxBL+1) + 5 + 5 + 4
	optB := (optLen + 3 + 7) >> 3
	staticB := (staticLen + 3 + 7) >> 3
	if staticB <= optB {
		optB = staticB
	}
	if stored+4 <= optB {
		return 1 + 4 + stored
	}
	return optB
}

// huffTree is trees.c's build_tree for one alphabet: code lengths from
// frequencies with zlib's heap order and length-limiting.
type huffTree struct {
	freq      []int
	extraBase int
	extra     []int
	maxLen    int
	static    func(int) int // static code length, nil for the bit-length tree
	length    []int
	maxCode   int
}

func (t *huffTree) build(optLen, staticLen *int) {
	elems := len(t.freq)
	nodes := 2*elems + 1
	freq := make([]int, nodes)
	copy(freq, t.freq)
	dad := make([]int, nodes)
	depth := make([]int, nodes)
	length := make([]int, nodes)
	heap := make([]int, 2*lCodes+2)
	heapLen, heapMax := 0, len(heap)-1
	maxCode := -1
	for i := 0; i < elems; i++ {
		if freq[i] != 0 {
			heapLen++
			heap[heapLen] = i
			maxCode = i
		}
	}
	for heapLen < 2 {
		node := 0
		if maxCode < 2 {
			maxCode++
			node = maxCode
		}
		heapLen++
		heap[heapLen] = node
		freq[node] = 1
		depth[node] = 0
		*optLen--
		if t.static != nil {
			*staticLen -= t.static(node)
		}
	}
	t.maxCode = maxCode
	smaller := func(a, b int) bool {
		return freq[a] < freq[b] || (freq[a] == freq[b] && depth[a] <= depth[b])
	}
	down := func(k int) {
		v := heap[k]
		j := k << 1
		for j <= heapLen {
			if j < heapLen && smaller(heap[j+1], heap[j]) {
				j++
			}
			if smaller(v, heap[j]) {
				break
			}
			heap[k] = heap[j]
			k = j
			j <<= 1
		}
		heap[k] = v
	}
	for k := heapLen / 2; k >= 1; k-- {
		down(k)
	}
	node := elems
	for heapLen >= 2 {
		a := heap[1]
		heap[1] = heap[heapLen]
		heapLen--
		down(1)
		b := heap[1]
		heapMax--
		heap[heapMax] = a
		heapMax--
		heap[heapMax] = b
		freq[node] = freq[a] + freq[b]
		depth[node] = max(depth[a], depth[b]) + 1
		dad[a], dad[b] = node, node
		heap[1] = node
		node++
		down(1)
	}
	heapMax--
	heap[heapMax] = heap[1]

	// gen_bitlen: lengths from the root down, limited to maxLen.
	count := make([]int, t.maxLen+1)
	length[heap[heapMax]] = 0
	overflow := 0
	h := heapMax + 1
	for ; h < len(heap)-1; h++ {
		n := heap[h]
		bits := length[dad[n]] + 1
		if bits > t.maxLen {
			bits = t.maxLen
			overflow++
		}
		length[n] = bits
		if n > maxCode {
			continue
		}
		count[bits]++
		x := 0
		if n >= t.extraBase && n-t.extraBase < len(t.extra) {
			x = t.extra[n-t.extraBase]
		}
		*optLen += freq[n] * (bits + x)
		if t.static != nil {
			*staticLen += freq[n] * (t.static(n) + x)
		}
	}
	if overflow > 0 {
		for overflow > 0 {
			bits := t.maxLen - 1
			for count[bits] == 0 {
				bits--
			}
			count[bits]--
			count[bits+1] += 2
			count[t.maxLen]--
			overflow -= 2
		}
		for bits := t.maxLen; bits != 0; bits-- {
			for c := count[bits]; c != 0; {
				h--
				m := heap[h]
				if m > maxCode {
					continue
				}
				if length[m] != bits {
					*optLen += (bits - length[m]) * freq[m]
					length[m] = bits
				}
				c--
			}
		}
	}
	t.length = length[:elems]
}

// scan counts, into bl, the run-length symbols that send_tree would use
// for this tree's code lengths (scan_tree).
func (t *huffTree) scan(bl []int) {
	prevLen, count := -1, 0
	nextLen := t.length[0]
	maxCount, minCount := 7, 4
	if nextLen == 0 {
		maxCount, minCount = 138, 3
	}
	for n := 0; n <= t.maxCode; n++ {
		cur := nextLen
		nextLen = 0xffff // guard past the last code
		if n+1 <= t.maxCode {
			nextLen = t.length[n+1]
		}
		count++
		if count < maxCount && cur == nextLen {
			continue
		}
		switch {
		case count < minCount:
			bl[cur] += count
		case cur != 0:
			if cur != prevLen {
				bl[cur]++
			}
			bl[16]++
		case count <= 10:
			bl[17]++
		default:
			bl[18]++
		}
		count = 0
		prevLen = cur
		switch {
		case nextLen == 0:
			maxCount, minCount = 138, 3
		case cur == nextLen:
			maxCount, minCount = 6, 3
		default:
			maxCount, minCount = 7, 4
		}
	}
}
