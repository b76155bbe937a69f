// Package clitest runs a pos binary's testscripts (cmd/pos-<x>/testdata/*.txtar):
// the binary's main is registered as a command of the test binary, so the
// scripts exercise the real program — flags, stdin, stdout, stderr and exit
// status — in one readable place per binary.
//
// It is imported by tests only.
package clitest

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the files that scripts compare output against (cmp stdout FILE)")

// Main is a TestMain: it registers the binary's main as the command name
// and runs the tests. setup, when not nil, runs before the tests (and not
// when the test binary runs as the command); the function it returns runs
// after them.
func Main(m *testing.M, name string, main func(), setup func() (teardown func())) {
	testscript.Main(runner{m, setup}, map[string]func(){name: main})
}

type runner struct {
	m     *testing.M
	setup func() func()
}

func (r runner) Run() int {
	if r.setup == nil {
		return r.m.Run()
	}
	teardown := r.setup()
	defer teardown()
	return r.m.Run()
}

// Run runs the scripts in testdata. Each starts with a clean environment:
// HOME is $WORK/home (so the default lake, key and models live under the
// script's directory), the lake is not named, and the process keeps the
// default scheduling policy. setup, when not nil, adds to it.
//
// Besides testscript's commands, a script has
//
//	exits N CMD [ARGS...]
//
// which runs CMD as exec does and fails unless its exit status is N: the
// pos binaries' exit codes mean something (see cmdio), and "! exec" alone
// would accept any of them.
func Run(t *testing.T, setup func(*testscript.Env) error) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": exits},
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("POS_SCHED", "normal")
			if setup != nil {
				return setup(env)
			}
			return nil
		},
	})
}

func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
