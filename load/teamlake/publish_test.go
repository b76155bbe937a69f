package teamlake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/schema"
)

// shared starts a server and points the AWS SDK's variables at it.
func shared(t *testing.T) *seaweedtest.Server {
	s := seaweedtest.Start(t)
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s
}

// msgs are messages m<from>..m<to> of one session over two days.
func msgs(from, to int) []*schema.Record {
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var out []*schema.Record
	for i := from; i <= to; i++ {
		ts := day.Add(time.Duration(i) * 5 * time.Hour)
		out = append(out, loadtest.Msg(fmt.Sprintf("m%02d", i), "s1", fmt.Sprintf("message %d", i), ts))
	}
	return out
}

// ids are the message ids of the shared lake's messages table, sorted,
// one per row.
func ids(t *testing.T, l *teamlake.Lake) []string {
	t.Helper()
	tbl, err := l.Table(context.Background(), layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []string
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	for tr.Next() {
		col := tr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			out = append(out, col.Value(i))
		}
	}
	slices.Sort(out)
	return out
}

func want(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("m%02d", i))
	}
	return out
}

// Two machines whose lakes share records publish at once: the shared
// table holds every record once, and publishing again adds nothing, also
// when a machine has lost its record of what it sent.
func TestPublishTwoMachines(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lakes := []string{t.TempDir(), t.TempDir()}
	loadtest.Load(t, lakes[0], msgs(1, 6)...)
	loadtest.Load(t, lakes[1], msgs(4, 9)...)
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
	if got := ids(t, ls[0]); !slices.Equal(got, want(1, 9)) {
		t.Fatalf("shared messages: %v, want %v", got, want(1, 9))
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
	if got := ids(t, ls[1]); !slices.Equal(got, want(1, 9)) {
		t.Errorf("shared messages after re-publishing: %v, want %v", got, want(1, 9))
	}
}
