// Command pos-sync-client runs a sync in the resident pos-sync: what
// `pos-sync --resident` does, from a binary small enough to start in a
// few milliseconds, for the hooks that sync after every turn.
package main

import (
	"os"

	"github.com/pos-lake/pos/cmd/internal/resident"
)

func main() { os.Exit(resident.ClientMain()) }
