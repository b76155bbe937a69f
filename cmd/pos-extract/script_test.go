package main

import (
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
)

// TestScripts runs testdata/*.txtar: pos-extract's contract with its user.
func TestScripts(t *testing.T) { clitest.Run(t, nil) }
