package schema

// testFast is sonic's Fast, as the bulk binaries decode with it; an
// internal test cannot import schema/fastjson (it imports schema), so
// fast_ext_test.go sets it.
var testFast *Fast

func SetTestFast(f *Fast) { testFast = f }
