package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// Three machines whose lakes overlap publish into one shared lake at
// once, some killed with SIGKILL at random points, then all again to the
// end: the shared table holds each record once, and a fetched cache
// answers as a local lake loaded with all three machines' records.
func TestThreeMachinesKilled(t *testing.T) {
	s := seaweedtest.Start(t)
	ranges := [][2]int{{1, 40}, {20, 60}, {50, 90}}
	lakes := make([]string, len(ranges))
	for i, r := range ranges {
		lakes[i] = t.TempDir()
		loadtest.Load(t, lakes[i], teamlaketest.Messages(r[0], r[1])...)
	}
	all := t.TempDir()
	loadtest.Load(t, all, teamlaketest.Messages(1, 90)...)
	shared := "s3://" + s.TableBucket + "/team"
	// The scrub key of --pii (on by default), so that no key file is made
	// in the user's home.
	env := append(os.Environ(), append(s.Env(), "POS_SCRUB_KEY=pos-lake test key of 32 bytes or more")...)
	publish := func(i int) *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "pos-lake"), "publish", "--lake", shared, "--catalog", s.Catalog,
			"--local-lake", lakes[i], "--machine", fmt.Sprintf("box%d", i), "--table", layout.TableMessages)
		cmd.Env = env
		return cmd
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range 3 {
		var wg sync.WaitGroup
		for i := range lakes {
			cmd := publish(i)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			kill := round < 2 && rng.IntN(3) > 0 // the last round runs to the end
			after := time.Duration(rng.IntN(1500)) * time.Millisecond
			wg.Go(func() {
				if kill {
					time.Sleep(after)
					cmd.Process.Kill()
				}
				err := cmd.Wait()
				t.Logf("round %d, box%d (killed: %v): %v\n%s", round, i, kill, err, out.String())
				if !kill && err != nil {
					t.Errorf("box%d: %v", i, err)
				}
			})
		}
		wg.Wait()
	}
	s.Setenv(t)
	l, err := teamlake.Open(context.Background(), teamlake.Options{Lake: shared, Catalog: s.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := teamlaketest.TableIDs(t, l, layout.TableMessages), teamlaketest.IDs(1, 90); !slices.Equal(got, want) {
		t.Fatalf("the shared table holds %d rows, want each of the 90 records once: %v", len(got), got)
	}

	cache := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "pos-lake"), "fetch", "--lake", shared, "--catalog", s.Catalog, "--cache", cache, "--table", layout.TableMessages)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	if g, w := loadtest.One(t, loadtest.Views(t, cache), "SELECT string_agg(concat_ws('|', id, platform, date, session_id, text, ts), '\n' ORDER BY id) FROM messages"),
		loadtest.One(t, loadtest.Views(t, all), "SELECT string_agg(concat_ws('|', id, platform, date, session_id, text, ts), '\n' ORDER BY id) FROM messages"); g != w {
		t.Errorf("the fetched cache's messages differ from a local lake's of all three machines' records:\n%s\nwant\n%s", g, w)
	}
}
