// QATTN_SHAPES calls F(D, G, BITS) for a kernel's head size d, group g and
// bits: with all three as constants for the shapes models use (head size
// 64 or 128 in groups of 64, at 8 or 4 bits), so that the compiler
// unrolls those loops for their shape, and else with bits alone constant.
// The quantized-KV decode kernels' entry points share it.
#define QATTN_SHAPES(d, g, bits, F)                                  \
	do {                                                             \
		if ((d) == 64 && (g) == 64 && (bits) == 8) F(64, 64, 8);        \
		else if ((d) == 64 && (g) == 64 && (bits) == 4) F(64, 64, 4);   \
		else if ((d) == 128 && (g) == 64 && (bits) == 8) F(128, 64, 8); \
		else if ((d) == 128 && (g) == 64 && (bits) == 4) F(128, 64, 4); \
		else if ((bits) == 8) F((d), (g), 8);                         \
		else F((d), (g), 4);                                         \
	} while (0)
