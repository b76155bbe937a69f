// Package clitest runs a pos binary's testscripts (cmd/pos-<x>/testdata/*.txtar):
// the binary's main is registered as a command of the test binary, so the
// scripts exercise the real program — flags, stdin, stdout, stderr and exit
// status — in one readable place per binary.
//
// It also runs a binary's app in-process (Call) and checks such a run
// against a table row (Case), for the tests that need more than a script.
//
// It is imported by tests only.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "rewrite the files that scripts compare output against (cmp stdout FILE)")

// Main is a TestMain: it registers the binary's main as the command name
// and runs the tests. setup, when not nil, runs before the tests (and not
// when the test binary runs as the command); the function it returns runs
// after them.
func Main(m *testing.M, name string, main func(), setup func() (teardown func())) {
	testscript.Main(runner{m, setup}, map[string]func(){name: main})
}

// MainCmds is Main for a test binary that stands for several commands,
// each named by its main.
func MainCmds(m *testing.M, cmds map[string]func(), setup func() (teardown func())) {
	testscript.Main(runner{m, setup}, cmds)
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

// Call runs app in-process as the command line "NAME args..." reading
// stdin, and returns its exit code and what it wrote to stdout and stderr.
func Call(app *cli.App, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cmdio.Run(context.Background(), app, append([]string{app.Name}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// Case is a run of a binary and what it must do: exit with Code, and
// print on stdout and stderr what the regular expressions Stdout and
// Stderr match (an empty one matches anything).
type Case struct {
	Name   string
	Stdin  string
	Args   []string
	Code   int
	Stdout string // regexp
	Stderr string // regexp
}

// Check runs app on the case's stdin and arguments (see Call), reports
// where its exit code or output differ from the case's, and returns the
// output for the checks a test adds.
func (tc Case) Check(t *testing.T, app *cli.App) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := Call(app, tc.Stdin, tc.Args...)
	if code != tc.Code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.Code, stdout, stderr)
	}
	if !regexp.MustCompile(tc.Stdout).MatchString(stdout) {
		t.Errorf("stdout %q\ndoes not match %s", stdout, tc.Stdout)
	}
	if !regexp.MustCompile(tc.Stderr).MatchString(stderr) {
		t.Errorf("stderr %q\ndoes not match %s", stderr, tc.Stderr)
	}
	return stdout, stderr
}
