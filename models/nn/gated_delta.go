package nn

import (
	"math"

	"hark/mlx"
)

// The gated delta rule (Gated DeltaNet, the linear attention of Qwen3-Next
// and Qwen3.5). Each head keeps a state S [Dk, Dv]; for each position t,
// with decay a_t = exp(g_t) (g_t <= 0) and write strength β_t in (0, 1):
//
//	S   = a_t S
//	u_t = β_t (v_t - Sᵀ k_t)       // what S got wrong about v_t, scaled
//	S   = S + k_t u_tᵀ
//	o_t = Sᵀ q_t
//
// GatedDeltaStep runs this one position at a time. GatedDeltaChunked gives
// the same result for a chunk of n positions with matrix products: with G
// the cumulative sum of g inside the chunk and S₀ the state before it,
//
//	u_t + β_t Σ_{s<t} e^{G_t-G_s} (k_t·k_s) u_s = β_t v_t - β_t e^{G_t} S₀ᵀ k_t
//
// is a unit lower-triangular system (I + A) U = βV - (βe^G K) S₀, solved
// with T = (I + A)⁻¹; then
//
//	o_t   = e^{G_t} S₀ᵀ q_t + Σ_{s<=t} e^{G_t-G_s} (q_t·k_s) u_s
//	S_end = e^{G_n} S₀ + Σ_s e^{G_n-G_s} k_s u_sᵀ
//
// A is strictly lower triangular: T comes from forward substitution over
// blocks of 8 rows, each diagonal block inverted by the (exact, as A is
// nilpotent) Neumann product (I - A)(I + A²)(I + A⁴)... (see
// unitLowerInverse for why the blocks stay small).
//
// Shapes: q, k [B, H, L, Dk] (already normalised and scaled), v
// [B, H, L, Dv], g and beta [B, H, L], state [B, H, Dk, Dv] (float32).
// Both return the outputs [B, H, L, Dv] and the new state.

// GatedDeltaStep applies the recurrence position by position.
func GatedDeltaStep(q, k, v, g, beta, state *mlx.Array) (out, next *mlx.Array) {
	s := mlx.NewScope()
	defer s.Close()
	b, h, l := q.Dim(0), q.Dim(1), q.Dim(2)
	decay := mlx.Exp(g)
	outs := make([]*mlx.Array, l)
	for t := 0; t < l; t++ {
		kt := mlx.SliceAxis(k, 2, t, t+1) // [B, H, 1, Dk]
		a := mlx.Reshape(mlx.SliceAxis(decay, 2, t, t+1), b, h, 1, 1)
		bt := mlx.Reshape(mlx.SliceAxis(beta, 2, t, t+1), b, h, 1, 1)
		state = mlx.Mul(state, a)
		u := mlx.Mul(mlx.Sub(mlx.SliceAxis(v, 2, t, t+1), mlx.Matmul(kt, state)), bt) // [B, H, 1, Dv]
		state = mlx.Add(state, mlx.Matmul(mlx.SwapAxes(kt, 2, 3), u))
		outs[t] = mlx.Matmul(mlx.SliceAxis(q, 2, t, t+1), state)
	}
	out = outs[0]
	if l > 1 {
		out = mlx.Concatenate(outs, 2)
	}
	return s.Keep(out), s.Keep(state)
}

// DeltaChunk is the chunk length GatedDeltaChunked uses by default: long
// enough that the products are matrix-sized, short enough that the n×n
// intermediates stay small and the (-A)^j terms stay tame in float32.
const DeltaChunk = 64

// GatedDeltaChunked applies the rule chunk positions at a time (the last
// chunk may be shorter); chunk <= 0 means DeltaChunk.
func GatedDeltaChunked(q, k, v, g, beta, state *mlx.Array, chunk int) (out, next *mlx.Array) {
	if chunk <= 0 {
		chunk = DeltaChunk
	}
	s := mlx.NewScope()
	defer s.Close()
	l := q.Dim(2)
	var outs []*mlx.Array
	for start := 0; start < l; start += chunk {
		end := min(start+chunk, l)
		var o *mlx.Array
		o, state = deltaChunk(mlx.SliceAxis(q, 2, start, end), mlx.SliceAxis(k, 2, start, end), mlx.SliceAxis(v, 2, start, end),
			mlx.SliceAxis(g, 2, start, end), mlx.SliceAxis(beta, 2, start, end), state)
		outs = append(outs, o)
	}
	out = outs[0]
	if len(outs) > 1 {
		out = mlx.Concatenate(outs, 2)
	}
	return s.Keep(out), s.Keep(state)
}

// deltaChunk is one chunk of GatedDeltaChunked.
func deltaChunk(q, k, v, g, beta, state *mlx.Array) (out, next *mlx.Array) {
	s := mlx.NewScope()
	defer s.Close()
	b, h, n := q.Dim(0), q.Dim(1), q.Dim(2)
	G := mlx.Cumsum(g, 2, false, true) // [B, H, n]
	Gt := mlx.Reshape(G, b, h, n, 1)
	Gs := mlx.Reshape(G, b, h, 1, n)
	// e^{G_t - G_s} where s <= t, else 0; masked before exp, since above
	// the diagonal the exponent is positive and may overflow.
	lower := mlx.CreateCausalMask(n, n, 0)
	decay := mlx.Exp(mlx.Where(lower, mlx.Sub(Gt, Gs), mlx.Scalar(math.Inf(-1), mlx.Float32))) // [B, H, n, n]
	strict := mlx.Tri(n, n, -1, mlx.Float32)
	bcol := mlx.Reshape(beta, b, h, n, 1)
	A := mlx.Mul(mlx.Mul(mlx.Mul(mlx.MatmulT(k, k), decay), strict), bcol)
	T := unitLowerInverse(A, n)
	eG := mlx.Exp(Gt) // [B, H, n, 1]
	w := mlx.Matmul(T, mlx.Mul(v, bcol))
	kd := mlx.Matmul(T, mlx.Mul(k, mlx.Mul(bcol, eG)))
	u := mlx.Sub(w, mlx.Matmul(kd, state)) // [B, H, n, Dv]
	out = mlx.Add(mlx.Matmul(mlx.Mul(q, eG), state), mlx.Matmul(mlx.Mul(mlx.MatmulT(q, k), decay), u))
	gn := mlx.SliceAxis(Gt, 2, n-1, n) // [B, H, 1, 1]
	kw := mlx.Mul(k, mlx.Exp(mlx.Sub(gn, Gt)))
	next = mlx.Add(mlx.Mul(state, mlx.Exp(gn)), mlx.Matmul(mlx.SwapAxes(kw, 2, 3), u))
	return s.Keep(out), s.Keep(next)
}

// unitLowerInverse returns (I + A)⁻¹ for A [..., n, n] strictly lower
// triangular, by block forward substitution over diagonal blocks of
// invBlock rows: row block j of the inverse is
//
//	T[j, :j] = -D_j A[j, :j] T[:j, :j],  T[j, j] = D_j = (I + A_jj)⁻¹
//
// The Neumann product that inverts a diagonal block sums terms as large
// as binomial(b-1, (b-1)/2) that cancel to entries of at most about one
// when keys repeat (A_jj near all ones below the diagonal), so it is kept
// to blocks small enough for float32; the substitution between blocks
// only ever forms the bounded entries of T.
func unitLowerInverse(A *mlx.Array, n int) *mlx.Array {
	if n <= invBlock {
		return neumannInverse(A, n)
	}
	s := mlx.NewScope()
	defer s.Close()
	var t *mlx.Array // T[:r0, :r0]
	for r0 := 0; r0 < n; r0 += invBlock {
		r1 := min(r0+invBlock, n)
		rows := mlx.SliceAxis(A, -2, r0, r1)
		d := neumannInverse(mlx.SliceAxis(rows, -1, r0, r1), r1-r0)
		if t == nil {
			t = d
			continue
		}
		x := mlx.Neg(mlx.Matmul(d, mlx.Matmul(mlx.SliceAxis(rows, -1, 0, r0), t))) // [..., b, r0]
		zshape := t.Shape()
		zshape[len(zshape)-1] = r1 - r0
		top := mlx.Concatenate([]*mlx.Array{t, mlx.Zeros(zshape, t.DType())}, -1)
		t = mlx.Concatenate([]*mlx.Array{top, mlx.Concatenate([]*mlx.Array{x, d}, -1)}, -2)
	}
	return s.Keep(t)
}

// invBlock is the diagonal block unitLowerInverse inverts by the Neumann
// product: with b = 8 the largest cancelling term is binomial(7, 3) = 35,
// which float32 carries with error ~1e-6 (16 gives 6435 and errors ~1e-4
// on repeated keys; 64 loses every digit).
const invBlock = 8

// neumannInverse is (I + A)⁻¹ for A [..., n, n] strictly lower
// triangular as Σ_{j<n} X^j = (I + X)(I + X²)(I + X⁴)... with X = -A:
// exact, as A is nilpotent, in log2(n) products.
func neumannInverse(A *mlx.Array, n int) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	x := mlx.Neg(A)
	eye := mlx.Sub(mlx.Tri(n, n, 0, mlx.Float32), mlx.Tri(n, n, -1, mlx.Float32))
	p := mlx.Add(x, eye)
	for span := 2; span < n; span *= 2 {
		x = mlx.Matmul(x, x)
		p = mlx.Add(p, mlx.Matmul(p, x))
	}
	return s.Keep(p)
}

// L2Normalize divides x by its Euclidean norm over the last axis, as the
// reference kernels do: x / sqrt(Σx² + eps).
func L2Normalize(x *mlx.Array, eps float64) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	return s.Keep(mlx.Mul(x, mlx.Rsqrt(mlx.AddScalar(mlx.Sum(mlx.Square(x), true, -1), eps))))
}

// Softplus is log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|) so
// that large x neither overflows nor loses precision.
func Softplus(x *mlx.Array) *mlx.Array {
	s := mlx.NewScope()
	defer s.Close()
	return s.Keep(mlx.Add(mlx.MaximumScalar(x, 0), mlx.Log1p(mlx.Exp(mlx.Neg(mlx.Abs(x))))))
}
