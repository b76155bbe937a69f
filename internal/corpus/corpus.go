// Package corpus locates the real session files that tests and benchmarks
// run over: $POS_CORPUS, or shared/corpus beside the checkout
// (../shared/corpus from the repository's root), with a folder per
// platform. The corpus is never part of the repository; the tests that need
// it skip, saying so, when it is absent.
//
// It is imported by tests only.
package corpus

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/extract/platforms"
)

// Path is the corpus's absolute path, whether it is there or not.
func Path() string {
	dir := os.Getenv("POS_CORPUS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		// internal/corpus/corpus.go → the checkout's parent.
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return abs
}

// Dir is the corpus's absolute path; it skips the test or benchmark when
// the corpus is absent.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := Path()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("%s is absent: the real-corpus tests need it (set POS_CORPUS)", dir)
	}
	return dir
}

// Folder is the folder of the corpus at dir that holds p's histories: the
// first of p's name and aliases (Claude Code's is "claude") that names a
// folder there. A platform the corpus has no folder for has none.
func Folder(dir string, p platform.Platform) (string, bool) {
	for _, name := range append([]string{p.Name}, p.Aliases...) {
		f := filepath.Join(dir, name)
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			return f, true
		}
	}
	return "", false
}

// Platform is the folder of the corpus that holds the named platform's
// histories (see Folder); it skips the test or benchmark when the corpus
// has none.
func Platform(tb testing.TB, name string) string {
	tb.Helper()
	p, ok := platforms.Lookup(name)
	if !ok {
		tb.Fatalf("no platform %q", name)
	}
	dir, ok := Folder(Dir(tb), p)
	if !ok {
		tb.Skipf("the corpus at %s has no %s folder: the real-corpus tests need it (set POS_CORPUS)", Path(), p.Name)
	}
	return dir
}
