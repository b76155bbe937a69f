package teamlake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// shared starts a server and points the AWS SDK's variables at it.
func shared(t *testing.T) *seaweedtest.Server {
	s := seaweedtest.Start(t)
	s.Setenv(t)
	return s
}

// Two machines whose lakes share records publish at once: the shared
// table holds every record once, and publishing again adds nothing, also
// when a machine has lost its record of what it sent.
func TestPublishTwoMachines(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lakes := []string{t.TempDir(), t.TempDir()}
	loadtest.Load(t, lakes[0], teamlaketest.Messages(1, 6)...)
	loadtest.Load(t, lakes[1], teamlaketest.Messages(4, 9)...)
	open := func(machine string) *teamlake.Lake {
		l, err := teamlake.Open(ctx, teamlake.Options{Lake: "s3://" + s.TableBucket + "/pos", Catalog: s.Catalog, Machine: machine})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ls := []*teamlake.Lake{open("a"), open("b")}
	var wg sync.WaitGroup
	reps := make([][]teamlake.TableReport, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { reps[i], errs[i] = ls[i].Publish(ctx, lakes[i], layout.TableMessages) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("machine %d: %v", i, err)
		}
	}
	t.Logf("reports: %+v", reps)
	if got := teamlaketest.TableIDs(t, ls[0], layout.TableMessages); !slices.Equal(got, teamlaketest.IDs(1, 9)) {
		t.Fatalf("shared messages: %v, want %v", got, teamlaketest.IDs(1, 9))
	}
	if added := reps[0][0].Added + reps[1][0].Added; added != 9 {
		t.Errorf("added %d rows in all, want 9", added)
	}

	// Again: nothing new to send.
	rep, err := ls[0].Publish(ctx, lakes[0], layout.TableMessages)
	if err != nil || rep[0].Files != 0 {
		t.Errorf("second publish: %+v, %v; want no files", rep, err)
	}
	// A machine that lost its record of what it sent sends its files again,
	// and the table keeps each record once.
	if err := os.RemoveAll(filepath.Join(lakes[1], "_state", "teamlake")); err != nil {
		t.Fatal(err)
	}
	rep, err = ls[1].Publish(ctx, lakes[1], layout.TableMessages)
	if err != nil || rep[0].Files == 0 || rep[0].Added != 0 {
		t.Errorf("publish after losing the record: %+v, %v; want files sent and 0 rows added", rep, err)
	}
	if got := teamlaketest.TableIDs(t, ls[1], layout.TableMessages); !slices.Equal(got, teamlaketest.IDs(1, 9)) {
		t.Errorf("shared messages after re-publishing: %v, want %v", got, teamlaketest.IDs(1, 9))
	}
}

// A local partition directory holding a file of another day's rows
// between two of its own (a lake written by hand, or by an older pos) is
// still published whole, each row in its day's partition.
func TestPublishUnclusteredFiles(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := t.TempDir()
	// Messages 1 and 2 are of 2026-11-03, message 3 of 2026-11-04.
	for _, i := range []int{1, 3, 2} {
		loadtest.Load(t, lake, teamlaketest.Messages(i, i)...)
	}
	dir := func(date string) string {
		return layout.Dir(lake, layout.TableMessages, "test", date)
	}
	move := func(from, to string) {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(from, "*.parquet"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v, %v", from, files, err)
		}
		slices.Sort(files)
		for i, f := range files {
			if err := os.Rename(f, filepath.Join(dir("2026-11-03"), fmt.Sprintf("%s%d.parquet", to, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	move(dir("2026-11-03"), "a") // messages 1 and 2: a0, a1
	move(dir("2026-11-04"), "a0x")
	l, err := teamlake.Open(ctx, teamlake.Options{Lake: "s3://" + s.TableBucket + "/pos", Catalog: s.Catalog, Machine: "a"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Publish(ctx, lake, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	if rep[0].Files != 3 || rep[0].Added != 3 {
		t.Errorf("report %+v, want 3 files and 3 rows added", rep[0])
	}
	if got := teamlaketest.TableIDs(t, l, layout.TableMessages); !slices.Equal(got, teamlaketest.IDs(1, 3)) {
		t.Errorf("shared messages: %v, want %v", got, teamlaketest.IDs(1, 3))
	}
	days := map[string]int{}
	teamlaketest.EachBatch(t, l, layout.TableMessages, func(rec arrow.RecordBatch) {
		ts := rec.Column(0).(*array.Timestamp)
		for i := range ts.Len() {
			days[ts.Value(i).ToTime(arrow.Microsecond).UTC().Format("2006-01-02")]++
		}
	}, "ts")
	if days["2026-11-03"] != 2 || days["2026-11-04"] != 1 {
		t.Errorf("rows by day %v, want 2 on 2026-11-03 and 1 on 2026-11-04", days)
	}
	reps, err := l.Check(ctx, layout.TableMessages)
	if err != nil || len(reps) != 1 || len(reps[0].Problems) != 0 {
		t.Errorf("check: %+v, %v", reps, err)
	}
}
