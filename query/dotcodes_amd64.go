package query

import "golang.org/x/sys/cpu"

// dotCodesSIMD scores with AVX2 and FMA where the processor has them:
// eight dimensions an instruction instead of one.
var dotCodesSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotCodesAVX2 is the inner product of q and c over their first n
// elements, n a multiple of 16.
//
//go:noescape
func dotCodesAVX2(q *float32, c *int8, n int) float32
