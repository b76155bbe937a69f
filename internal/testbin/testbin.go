// Package testbin builds pos's binaries once for the tests of a package
// that run them as a user does (first on PATH, chained in pipelines), and
// removes them when the tests are done.
//
// It is imported by tests only.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Build makes a temporary directory named from prefix and runs build(dir),
// a command that writes the binaries into it, its output on the test's.
// It returns the directory and what removes it; a failed build exits 1
// before any test runs.
func Build(prefix string, build func(dir string) *exec.Cmd) (dir string, remove func()) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		panic(err)
	}
	cmd := build(dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	return dir, func() { os.RemoveAll(dir) }
}

// Main is a TestMain: it builds the binaries (see Build), sets *binDir to
// their directory, runs the tests, removes the directory and exits with
// the tests' status.
func Main(m *testing.M, prefix string, binDir *string, build func(dir string) *exec.Cmd) {
	dir, remove := Build(prefix, build)
	*binDir = dir
	code := m.Run()
	remove()
	os.Exit(code)
}

// ExitCode is the exit status of a command that ran, from the error its
// Run (or Output, CombinedOutput, Wait) returned: 0 for nil. A command
// that could not run, or was not waited for, fails the test.
func ExitCode(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}
