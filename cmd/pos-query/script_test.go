package main

import (
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs testdata/*.txtar: pos-query's contract with its user.
// $POS_LAKE is the fixture lake (querytest.FixtureLake), which the scripts
// only read.
func TestScripts(t *testing.T) {
	clitest.Run(t, func(env *testscript.Env) error {
		env.Setenv("POS_LAKE", lake)
		return nil
	})
}
