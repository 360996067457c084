package mlxc

import (
	"fmt"
	"unsafe"

	"hark/mlx"
)

// hostBytes returns the bytes of a host slice of out's element type.
func hostBytes(op string, out *mlx.Array, src any) unsafe.Pointer {
	n := out.Size()
	check := func(l int) {
		if l != n {
			panic(fmt.Sprintf("mlxc %s: %d values for %v", op, l, out))
		}
	}
	dt := out.DType()
	bad := func() { panic(fmt.Sprintf("mlxc %s: %T for a %v array", op, src, dt)) }
	var p unsafe.Pointer
	switch s := src.(type) {
	case []float32:
		if dt != mlx.Float32 {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []uint16:
		if dt != mlx.Float16 && dt != mlx.BFloat16 {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []int32:
		if dt != mlx.Int32 {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []uint32:
		if dt != mlx.Uint32 {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []uint8:
		if dt != mlx.Uint8 && dt != mlx.Bool {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []bool:
		if dt != mlx.Bool {
			bad()
		}
		check(len(s))
		p = unsafe.Pointer(unsafe.SliceData(s))
	default:
		bad()
	}
	return p
}

// FromHost implements mlx.Backend; MLX copies the data.
func (b *Backend) FromHost(out *mlx.Array, src any) {
	p := hostBytes("FromHost", out, src)
	b.op("FromHost", out, func(c *g) array {
		r := c.fromHost(p, out.Dims(), mlxDtype(out.DType()))
		if out.DType() == mlx.Bool {
			// Go bools are 0 or 1 already, but []uint8 sources may hold
			// any non-zero value: MLX's bool must be 0 or 1.
			z := c.scalar(0, dtUint8)
			r = c.bin(c.l.mlx_not_equal, c.view(r, dtUint8), z)
		}
		return r
	})
}

func (c *g) view(x array, dt dtype) array {
	var r array
	return c.ok(c.l.mlx_view(&r, x, dt, c.b.s), r)
}

// FromBytes implements mlx.Backend: raw little-endian bytes of out's
// dtype (Hark's hosts are all little-endian, as MLX's are).
func (b *Backend) FromBytes(out *mlx.Array, raw []byte) {
	if len(raw) != out.Size()*out.DType().Size() {
		panic(fmt.Sprintf("mlxc FromBytes: %d bytes for %v", len(raw), out))
	}
	b.op("FromBytes", out, func(c *g) array {
		r := c.fromHost(unsafe.Pointer(unsafe.SliceData(raw)), out.Dims(), mlxDtype(out.DType()))
		if out.DType() == mlx.Bool {
			z := c.scalar(0, dtUint8)
			r = c.bin(c.l.mlx_not_equal, c.view(r, dtUint8), z)
		}
		return r
	})
}

// CopyToHost implements mlx.Backend. It evaluates a, makes it row-major
// contiguous and copies the bytes out on the MLX thread.
func (b *Backend) CopyToHost(a *mlx.Array, dst any) {
	n := a.Size()
	var p unsafe.Pointer
	var size int
	switch d := dst.(type) {
	case []float32:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)*4
		if len(d) != n || a.DType() != mlx.Float32 {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	case []uint16:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)*2
		if len(d) != n || (a.DType() != mlx.Float16 && a.DType() != mlx.BFloat16) {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	case []int32:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)*4
		if len(d) != n || a.DType() != mlx.Int32 {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	case []uint32:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)*4
		if len(d) != n || a.DType() != mlx.Uint32 {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	case []uint8:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)
		if len(d) != n || (a.DType() != mlx.Uint8 && a.DType() != mlx.Bool) {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	case []bool:
		p, size = unsafe.Pointer(unsafe.SliceData(d)), len(d)
		if len(d) != n || a.DType() != mlx.Bool {
			panic(fmt.Sprintf("mlxc CopyToHost: %T of %d for %v", dst, len(d), a))
		}
	default:
		panic(fmt.Sprintf("mlxc CopyToHost: unsupported %T", dst))
	}
	if n == 0 {
		return
	}
	b.w.run(func() {
		c := &g{b: b, l: b.lib, op: "CopyToHost"}
		defer c.release()
		var r array
		r = c.ok(c.l.mlx_contiguous(&r, handle(a), false, c.b.s), r)
		c.b.check(c.op, c.l.mlx_array_eval(r))
		src := c.l.mlx_array_data_uint8(r)
		if src == nil {
			panic(opError(c.op, takeError()))
		}
		copy(unsafe.Slice((*byte)(p), size), unsafe.Slice((*byte)(src), size))
	})
}

// Full implements mlx.Backend.
func (b *Backend) Full(out *mlx.Array, value float64) {
	b.op("Full", out, func(c *g) array {
		dt := mlxDtype(out.DType())
		v := c.scalar(value, dt)
		var r array
		sp, n := ints(out.Dims())
		return c.ok(c.l.mlx_full(&r, sp, n, v, dt, c.b.s), r)
	})
}

// Arange implements mlx.Backend. The values are made on the host as the
// cpu backend makes them (start + i*step in float64, then converted):
// MLX accumulates in the output dtype, which drifts for long float ranges.
func (b *Backend) Arange(out *mlx.Array, start, step float64) {
	n := out.Size()
	f := make([]float64, n)
	for i := range f {
		f[i] = start + float64(i)*step
	}
	var p unsafe.Pointer
	switch out.DType() {
	case mlx.Float32:
		s := make([]float32, n+1)
		for i, v := range f {
			s[i] = float32(v)
		}
		p = unsafe.Pointer(&s[0])
	case mlx.Float16, mlx.BFloat16:
		s := make([]uint16, n+1)
		for i, v := range f {
			if out.DType() == mlx.Float16 {
				s[i] = mlx.F32ToF16(float32(v))
			} else {
				s[i] = mlx.F32ToBF16(float32(v))
			}
		}
		p = unsafe.Pointer(&s[0])
	case mlx.Int32:
		s := make([]int32, n+1)
		for i, v := range f {
			s[i] = int32(v)
		}
		p = unsafe.Pointer(&s[0])
	case mlx.Uint32:
		s := make([]uint32, n+1)
		for i, v := range f {
			s[i] = uint32(v)
		}
		p = unsafe.Pointer(&s[0])
	default:
		s := make([]uint8, n+1)
		for i, v := range f {
			if out.DType() == mlx.Bool {
				if v != 0 {
					s[i] = 1
				}
			} else {
				s[i] = uint8(v)
			}
		}
		p = unsafe.Pointer(&s[0])
	}
	b.op("Arange", out, func(c *g) array { return c.fromHost(p, out.Dims(), mlxDtype(out.DType())) })
}

// AsType implements mlx.Backend.
func (b *Backend) AsType(x, out *mlx.Array) {
	b.op("AsType", out, func(c *g) array {
		xh := handle(x)
		if x.DType() == out.DType() {
			var r array
			return c.ok(c.l.mlx_copy(&r, xh, c.b.s), r)
		}
		return c.astype(xh, mlxDtype(out.DType()))
	})
}

// View implements mlx.Backend: MLX's reshape shares the data.
func (b *Backend) View(x, out *mlx.Array) {
	b.op("View", out, func(c *g) array { return c.reshape(handle(x), out.Dims()) })
}
