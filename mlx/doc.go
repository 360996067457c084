// Package mlx is Hark's array core: n-dimensional arrays with MLX's API
// shape and semantics, computed by a backend behind the Backend interface.
// Backends are drivers in packages of their own that register themselves:
// mlx/cpu (Hark's CPU backend) and mlx/mlxc (Apple's MLX through libmlxc,
// loaded at run time: Metal on a Mac). mlx/backends links them all; a
// binary imports it once. kit.go is what a backend author gets.
//
// # Arrays and dtypes
//
// An Array has a shape and one of the dtypes Bool, Uint8, Uint32, Int32,
// Float16, BFloat16, Float32. Build arrays with FromSlice, FromBits,
// FromBytes, Full/Zeros/Ones, Arange; read them back with Float32s,
// Float64s, Int32s, Ints, Uint32s, Uint8s, Bools, Bits, Item.
//
// Binary ops promote their operands with PromoteTypes (MLX's table: bool <
// integers < floats; f16 with bf16 gives f32; u32 with i32 gives i32 here as
// Hark has no int64). Division and pow of integers give float32, comparisons
// give bool. Float16/BFloat16 inputs are computed in float32 internally and
// rounded once to the input dtype (round to nearest even), which for + - * /
// and sqrt equals the correctly rounded half-precision result. Reductions,
// softmax, norms, rope and attention accumulate in float32 or better and
// return the input dtype, as MLX does. Scalar helpers (AddScalar, MulScalar,
// ...) treat the scalar like an MLX "weak" Python scalar: it takes the
// array's dtype.
//
// # Laziness and Eval
//
// MLX builds a graph and computes on Eval. The cpu backend computes each op
// when it is called, so Eval only validates; the mlxc backend is lazy, as
// MLX is. Reading data evaluates implicitly. Write code as for MLX (call
// Eval at step boundaries) so that both behave the same.
//
// # Ownership
//
// Every op returns a new Array that the caller owns and must release with
// Free (idempotent; views such as Reshape share reference-counted storage,
// so freeing either side is always safe). LiveArrays counts arrays not yet
// freed; tests assert it returns to zero. Arrays may be read by ops on
// several goroutines at once, except a view (see below) before its first
// use, which materialises it.
//
// Model code should use scopes instead of freeing each intermediate:
//
//	s := mlx.NewScope()
//	defer s.Close()
//	h := mlx.RMSNorm(x, w, 1e-5)
//	y := mlx.MatmulT(h, wq) // h and other temporaries die at Close
//	return s.Keep(y)        // y survives, owned by the enclosing scope
//
// Close frees every array created while the scope was innermost, except the
// kept ones, which move to the parent scope (or become caller-owned when
// there is none). Scoped(fn) is the closure form. Each goroutine has its own
// scope stack: an array joins the innermost scope of the goroutine that
// creates it, so models may run on several goroutines at once (chat and
// transcription). A goroutine must close its scopes before it exits.
// Detach(a) takes an array out of its scope for long-lived state such as
// KV-cache storage; its owner frees it (DetachedArrays counts these).
//
// # Errors
//
// Following MLX, which raises on bad shapes, ops panic on programmer errors
// (incompatible shapes, bad axes, wrong dtypes) with a message naming the op
// and the shapes. Functions whose input typically comes from files or
// configuration return errors instead: SetBackend, FromBytes, Quantize,
// CheckQuantParams.
//
// # Backends
//
// Select makes the one choice of backend, from --backend, HARK_BACKEND, the
// app's setting or auto (mlxc where it loads and offers a GPU, else cpu),
// and says why; a backend that fails to open leaves the cpu in place with
// the failure as the reason. SetBackend(name) selects directly. Arrays
// remember their backend; mixing backends in one op panics. An op a
// backend cannot run panics with an *OpError (ErrUnsupported,
// ErrOutOfMemory), which CatchOpError turns into one request's error.
//
// Optional fast paths are capability interfaces a backend may implement
// (QuantPacker, DecodeAttender, QuantizedDecodeAttender, ResidentMaker,
// MemoryManager, ScratchReleaser, Describer); without them the ops compose the result from
// the required methods.
//
// # Views and copies
//
// Reshape, Flatten, ExpandDims, Squeeze and transposes that only move
// axes of length 1 share storage, and Slice returns a strided view (O(1));
// views are reference-counted, so freeing the source first is safe. An op
// that needs a view's data contiguous copies it once, on first use;
// attention reads float32 views in place, so a KV-cache prefix costs
// nothing. Other transposes and BroadcastTo copy. Use MatmulT rather than Matmul(x, Transpose(w)) for
// weights in [out, in] layout.
//
// SliceAssign is the one mutating op: it writes into an array's own storage
// (copying first if a view still shares it, so no other array ever changes
// under its owner), which is what a KV cache needs:
//
//	mlx.SliceAssign(cacheK, k, []int{0, 0, offset}, []int{B, H, offset + L}, nil)
//	keys := mlx.SliceAxis(cacheK, 2, 0, offset+L) // a view, freed with the step's scope
package mlx
