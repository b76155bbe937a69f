package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/cmd/internal/resident"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	clitest.MainCmds(m, map[string]func(){
		"pos-sync":        main,
		"pos-sync-client": func() { os.Exit(resident.ClientMain()) },
	}, nil)
}

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
