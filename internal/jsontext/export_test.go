package jsontext

// testFast is sonic's Fast, as the bulk binaries read with it; an internal
// test cannot import the package that makes it (it imports jsontext), so
// fast_ext_test.go sets it.
var testFast *Fast

func SetTestFast(f *Fast) { testFast = f }
