package load

import "testing"

func BenchmarkZZRollupRows(b *testing.B) {
	st, _ := ReadRollup("/work/tmp/cl")
	for i := 0; i < b.N; i++ {
		if _, err := ReadRollupRows(st.Path); err != nil { b.Fatal(err) }
	}
}
func BenchmarkZZReadRollup(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ReadRollup("/work/tmp/cl"); err != nil { b.Fatal(err) }
	}
}
