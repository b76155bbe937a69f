package load

// ReadIDs exposes readIDs to the black-box tests of package load_test.
var ReadIDs = readIDs
