package cmdio

import (
	"io/fs"
	"strings"
)

// Help is a command's long text for --help, kept in its binary's
// help/NAME.txt (embedded in files) so that main.go holds the flags and
// the action only. The final newline is dropped, and each of vars' pairs
// replaces a placeholder ("{{platforms}}") with a value known at run time.
// A missing file is an empty text.
func Help(files fs.FS, name string, vars ...string) string {
	b, _ := fs.ReadFile(files, "help/"+name+".txt")
	return strings.NewReplacer(vars...).Replace(strings.TrimSuffix(string(b), "\n"))
}
