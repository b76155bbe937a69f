//go:build cgo && linux

package load

// DuckDB's bindings link with -rdynamic, which puts every one of its
// ~60,000 symbols in the dynamic symbol table: the binaries that link it
// were 7 MB larger and spent ~10 ms of every start in the dynamic loader
// (pos-query --version 37 -> 27 ms). Nothing is loaded into them that
// would look those symbols up: the extensions pos uses are built in, and
// DuckDB never loads others (see dsnOptions).

// #cgo LDFLAGS: -Wl,--no-export-dynamic
import "C"
