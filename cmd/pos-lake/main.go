// Command pos-lake publishes a local lake to a shared one, Iceberg tables in
// an S3-compatible bucket that many machines write, and fetches the shared
// lake's current snapshot into a local cache that pos-query and pos-mcp read
// as a local lake (package load/teamlake).
package main

import (
	"os"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/lakecli"
)

func main() { os.Exit(cmdio.Main(lakecli.New())) }
