package main

import (
	"path/filepath"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) { clitest.Main(m, "pos-sync", main, nil) }

// TestScripts runs testdata/*.txtar: pos-sync's contract with its user.
// $HOMES is the repository's synthetic agent homes (testdata/).
func TestScripts(t *testing.T) {
	homes, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	clitest.Run(t, func(env *testscript.Env) error {
		env.Setenv("HOMES", homes)
		env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "data"))
		return nil
	})
}
