package mlxc

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"hark/mlx"
)

// g builds one op's part of MLX's graph on the MLX thread. Every array it
// makes is a temporary released when the op ends; finish hands the
// result's reference to the output Array.
type g struct {
	b    *Backend
	l    *library
	op   string
	tmps []array
}

// op runs build on the MLX thread and stores its result in out.
func (b *Backend) op(name string, out *mlx.Array, build func(c *g) array) {
	b.w.run(func() {
		c := &g{b: b, l: b.lib, op: name}
		defer c.release()
		if out.Size() == 0 {
			// Nothing to compute; some MLX ops refuse empty results
			// (a convolution shorter than its kernel) that Hark allows.
			c.finish(out, c.fromHost(nil, out.Dims(), mlxDtype(out.DType())))
			return
		}
		c.finish(out, build(c))
	})
}

func (c *g) release() {
	for _, t := range c.tmps {
		c.l.mlx_array_free(t)
	}
	c.tmps = c.tmps[:0]
}

// ok checks one mlx-c call and keeps its result as a temporary.
func (c *g) ok(rc int32, r array) array {
	if r != 0 {
		c.tmps = append(c.tmps, r)
	}
	c.b.check(c.op, rc)
	return r
}

// finish casts r to out's dtype where MLX's promotion differs, checks the
// shape and gives out its own reference.
func (c *g) finish(out *mlx.Array, r array) {
	want := mlxDtype(out.DType())
	if c.l.mlx_array_dtype(r) != want {
		r = c.astype(r, want)
	}
	if got := c.shape(r); !slices.Equal(got, out.Dims()) {
		panic(opError(c.op, fmt.Sprintf("internal: MLX result shape %v, want %v", got, out.Dims())))
	}
	var keep array
	c.b.check(c.op, c.l.mlx_array_set(&keep, r))
	out.SetStorage(keep)
}

func (c *g) shape(r array) []int {
	n := int(c.l.mlx_array_ndim(r))
	s := make([]int, n)
	if n > 0 {
		p := unsafe.Slice((*int32)(c.l.mlx_array_shape(r)), n)
		for i, d := range p {
			s[i] = int(d)
		}
	}
	return s
}

func (c *g) dtypeOf(r array) dtype { return c.l.mlx_array_dtype(r) }

// ints converts Go ints for mlx-c's const int* parameters; the returned
// pointer is valid while the slice is (never nil, even when empty).
func ints(v []int) (*int32, uintptr) {
	s := make([]int32, len(v)+1)
	for i, x := range v {
		s[i] = int32(x)
	}
	return &s[0], uintptr(len(v))
}

// fromHost makes an MLX array holding a copy of the raw bytes data.
func (c *g) fromHost(data unsafe.Pointer, shape []int, dt dtype) array {
	var dummy [8]byte
	if data == nil {
		data = unsafe.Pointer(&dummy[0])
	}
	sp, n := ints(shape)
	r := c.l.mlx_array_new_data(data, sp, int32(n), dt)
	if r == 0 {
		panic(opError(c.op, takeError()))
	}
	c.tmps = append(c.tmps, r)
	return r
}

// scalar is a 0-d array of dtype dt holding v converted as the cpu
// backend's Full converts it.
func (c *g) scalar(v float64, dt dtype) array {
	var buf [4]byte
	p := unsafe.Pointer(&buf[0])
	switch dt {
	case dtFloat32:
		*(*float32)(p) = float32(v)
	case dtFloat16:
		*(*uint16)(p) = mlx.F32ToF16(float32(v))
	case dtBfloat16:
		*(*uint16)(p) = mlx.F32ToBF16(float32(v))
	case dtInt32:
		*(*int32)(p) = int32(v)
	case dtUint32:
		*(*uint32)(p) = uint32(v)
	case dtUint8:
		buf[0] = uint8(v)
	case dtBool:
		if v != 0 {
			buf[0] = 1
		}
	default:
		panic(opError(c.op, fmt.Sprintf("internal: scalar of MLX dtype %d", dt)))
	}
	return c.fromHost(p, nil, dt)
}

func (c *g) f32(v float64) array { return c.scalar(v, dtFloat32) }

func isHalf(d dtype) bool { return d == dtFloat16 || d == dtBfloat16 }

func isFloat(d dtype) bool { return d == dtFloat32 || isHalf(d) }

// The graph builders: thin wrappers that keep the temporaries.

func (c *g) astype(x array, dt dtype) array {
	var r array
	return c.ok(c.l.mlx_astype(&r, x, dt, c.b.s), r)
}

// wide is x in float32 when it is a half type: ops that Hark computes in
// float32 and rounds once take it.
func (c *g) wide(x array) array {
	if isHalf(c.dtypeOf(x)) {
		return c.astype(x, dtFloat32)
	}
	return x
}

func (c *g) reshape(x array, shape []int) array {
	var r array
	sp, n := ints(shape)
	return c.ok(c.l.mlx_reshape(&r, x, sp, n, c.b.s), r)
}

type binFn func(res *array, a, b array, s stream) int32
type unFn func(res *array, a array, s stream) int32

func (c *g) bin(f binFn, a, b array) array {
	var r array
	return c.ok(f(&r, a, b, c.b.s), r)
}

func (c *g) un(f unFn, a array) array {
	var r array
	return c.ok(f(&r, a, c.b.s), r)
}

func (c *g) add(a, b array) array { return c.bin(c.l.mlx_add, a, b) }
func (c *g) mul(a, b array) array { return c.bin(c.l.mlx_multiply, a, b) }

func (c *g) where(cond, a, b array) array {
	var r array
	return c.ok(c.l.mlx_where(&r, cond, a, b, c.b.s), r)
}

func (c *g) swapLast(x array) array {
	n := len(c.shape(x))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	perm[n-1], perm[n-2] = perm[n-2], perm[n-1]
	return c.transpose(x, perm)
}

func (c *g) transpose(x array, perm []int) array {
	var r array
	pp, n := ints(perm)
	return c.ok(c.l.mlx_transpose_axes(&r, x, pp, n, c.b.s), r)
}

func (c *g) slice(x array, start, stop, strides []int) array {
	var r array
	s1, n1 := ints(start)
	s2, n2 := ints(stop)
	s3, n3 := ints(strides)
	return c.ok(c.l.mlx_slice(&r, x, s1, n1, s2, n2, s3, n3, c.b.s), r)
}

func (c *g) anyAxis(x array, axis int, keep bool) array {
	var r array
	ap, n := ints([]int{axis})
	return c.ok(c.l.mlx_any_axes(&r, x, ap, n, keep, c.b.s), r)
}

func (c *g) maxAxis(x array, axis int, keep bool) array {
	var r array
	ap, n := ints([]int{axis})
	return c.ok(c.l.mlx_max_axes(&r, x, ap, n, keep, c.b.s), r)
}

var negInf = math.Inf(-1)

func ptr[T any](s []T) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
