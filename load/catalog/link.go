//go:build cgo && linux

package catalog

// DuckDB's bindings link with -rdynamic, which puts every one of its
// symbols in the dynamic symbol table: the binaries that link it grow by
// megabytes, and every start of them waits on the dynamic loader. Nothing
// is loaded into them that would look those symbols up: the extensions pos
// uses are built in, and DuckDB never loads others (see dsnOptions).

// #cgo LDFLAGS: -Wl,--no-export-dynamic
import "C"
