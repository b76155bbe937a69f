package teamlake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
	"github.com/pos-lake/pos/schema"
)

// Check passes on a published lake, counting the ids a changed record
// holds twice; with a data file deleted from the bucket it fails, naming
// the file.
func TestCheck(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	l, _ := publishTwo(t, s, "team")
	// Message 3 changed since it was published: the shared table holds
	// both versions.
	changed := t.TempDir()
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	edited := loadtest.Msg(teamlaketest.ID(3), "s1", "message 3, edited", day.Add(15*time.Hour))
	edited.SetScrubMark(schema.ScrubSecrets)
	loadtest.Load(t, changed, edited)
	if _, err := l.Publish(ctx, changed, layout.TableMessages); err != nil {
		t.Fatal(err)
	}

	// A table created with no snapshot yet has nothing to check.
	if err := l.CreateEmptyTable(ctx, layout.TableExchanges); err != nil {
		t.Fatal(err)
	}

	reps, err := l.Check(ctx)
	t.Logf("reports: %+v", reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(teamlake.Tables) {
		t.Fatalf("%d reports, want one a table (%d)", len(reps), len(teamlake.Tables))
	}
	var msgs teamlake.CheckReport
	for _, r := range reps {
		switch {
		case r.Table == layout.TableMessages:
			msgs = r
		case r.Table == layout.TableExchanges:
			if !r.Exists || r.Snapshot != 0 || r.Files != 0 || r.Format != 2 {
				t.Errorf("the empty exchanges table: %+v", r)
			}
		case r.Exists:
			t.Errorf("%s exists, but nothing published it", r.Table)
		}
	}
	if !msgs.Exists || msgs.Snapshot == 0 || msgs.Files < 2 || msgs.Rows != 10 || msgs.SameID != 1 || msgs.Format != 2 {
		t.Errorf("messages: %+v; want a snapshot, 2 or more files, 10 rows, 1 id held twice, format 2", msgs)
	}

	// A writer that appends records the table holds already, as publishing
	// never does, leaves pairs held twice.
	tbl, err := l.Table(ctx, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn := tbl.NewTransaction()
	err = txn.AppendTable(ctx, at, 1<<16, nil)
	at.Release()
	if err == nil {
		tbl, err = txn.Commit(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	reps, err = l.Check(ctx, layout.TableMessages)
	if !errors.Is(err, teamlake.ErrCheck) || len(reps) != 1 || len(reps[0].Problems) != 1 ||
		reps[0].Problems[0] != "10 rows repeat an (id, content_hash) pair another row holds" || reps[0].Rows != 20 {
		t.Errorf("checking with every record appended twice: %+v, %v", reps, err)
	}

	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone := tasks[0].File.FilePath()
	teamlaketest.DeleteObject(t, gone)
	reps, err = l.Check(ctx, layout.TableMessages)
	t.Logf("after deleting %s: %+v, %v", gone, reps, err)
	if !errors.Is(err, teamlake.ErrCheck) || !strings.Contains(err.Error(), gone) {
		t.Fatalf("checking with a data file gone: %v; want ErrCheck naming %s", err, gone)
	}
	if len(reps) != 1 || reps[0].Problems[0] != "data file "+gone+": missing from the bucket" {
		t.Errorf("the report: %+v; want its first problem to name %s", reps, gone)
	}
}
