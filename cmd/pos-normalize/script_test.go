package main

import (
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, "pos-normalize", main, nil) }

// TestScripts runs testdata/*.txtar: pos-normalize's contract with its user.
func TestScripts(t *testing.T) { clitest.Run(t, nil) }
