//go:build !amd64

package query

const dotCodesSIMD = false

func dotCodesAVX2(q *float32, c *int8, n int) float32 { panic("no AVX2") }
