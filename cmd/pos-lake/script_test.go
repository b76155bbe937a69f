package main

import (
	"os/exec"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/internal/testbin"
)

// binDir holds the pos-lake binary, for the tests that run it as a process
// of its own.
var binDir string

func TestMain(m *testing.M) {
	clitest.Main(m, "pos-lake", main, func() func() {
		dir, remove := testbin.Build("pos-lake-bin-", func(dir string) *exec.Cmd {
			return exec.Command("go", "build", "-o", dir+"/", ".")
		})
		binDir = dir
		return remove
	})
}

// TestScripts runs testdata/*.txtar: pos-lake's contract with its user.
func TestScripts(t *testing.T) { clitest.Run(t, nil) }
