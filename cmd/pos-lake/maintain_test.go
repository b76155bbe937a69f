package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// pos-lake maintain on a table three machines published to compacts its
// files, prints one JSON line for it, and leaves each record once.
func TestMaintainCommand(t *testing.T) {
	s := seaweedtest.Start(t)
	shared := "s3://" + s.TableBucket + "/team"
	env := append(os.Environ(), s.Env()...)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "pos-lake"), append(args, "--lake", shared, "--catalog", s.Catalog, "--table", layout.TableMessages)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pos-lake %v: %v\n%s", args, err, out)
		}
		return out
	}
	for i, r := range [][2]int{{1, 10}, {5, 15}, {12, 20}} {
		lake := t.TempDir()
		loadtest.Load(t, lake, teamlaketest.Messages(r[0], r[1])...)
		run("publish", "--local-lake", lake, "--machine", fmt.Sprintf("box%d", i))
	}
	out := run("maintain", "--keep", "1ms")
	var rep teamlake.MaintainReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("%s", out)
	if rep.Table != layout.TableMessages || rep.Compacted == 0 || rep.Written >= rep.Compacted || rep.Expired != 3 {
		t.Errorf("report %+v; want files compacted into fewer and the 3 snapshots before expired", rep)
	}
	s.Setenv(t)
	l, err := teamlake.Open(context.Background(), teamlake.Options{Lake: shared, Catalog: s.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := teamlaketest.TableIDs(t, l, layout.TableMessages), teamlaketest.IDs(1, 20); !slices.Equal(got, want) {
		t.Fatalf("the shared table holds %v, want each of the 20 records once", got)
	}
}
