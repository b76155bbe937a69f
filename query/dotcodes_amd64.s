#include "textflag.h"

// func dotCodesAVX2(q *float32, c *int8, n int) float32
TEXT ·dotCodesAVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop:
	CMPQ CX, $16
	JLT  done
	VPMOVSXBD (DI), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS (SI), Y2, Y0
	VPMOVSXBD 8(DI), Y3
	VCVTDQ2PS Y3, Y3
	VFMADD231PS 32(SI), Y3, Y1
	ADDQ $16, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  loop

done:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET
