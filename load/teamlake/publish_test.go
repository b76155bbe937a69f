package teamlake_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

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
