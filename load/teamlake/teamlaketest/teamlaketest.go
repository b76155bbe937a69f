// Package teamlaketest has what the tests of the shared lake share: the
// messages they load into local lakes and the ids a shared table holds.
//
// It is imported by tests only.
package teamlaketest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/schema"
)

// ID is the id of message i.
func ID(i int) string { return fmt.Sprintf("m%03d", i) }

// IDs are the ids of messages from..to.
func IDs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, ID(i))
	}
	return out
}

// Messages are messages from..to of one session, five hours apart from
// 2026-11-03 09:00 UTC on, so that they span days. They carry pos-scrub's
// mark (schema.ScrubSecrets), as records of a pipeline with pos-scrub do:
// a shared lake takes no rows that were never scrubbed.
func Messages(from, to int) []*schema.Record {
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var out []*schema.Record
	for i := from; i <= to; i++ {
		r := loadtest.Msg(ID(i), "s1", fmt.Sprintf("message %d", i), day.Add(time.Duration(i)*5*time.Hour))
		r.SetScrubMark(schema.ScrubSecrets)
		out = append(out, r)
	}
	return out
}

// TableIDs are the ids of a shared table's current snapshot, sorted, one
// per row.
func TableIDs(t testing.TB, l *teamlake.Lake, name string) []string {
	t.Helper()
	ctx := context.Background()
	tbl, err := l.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var out []string
	for tr.Next() {
		col := tr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			out = append(out, col.Value(i))
		}
	}
	slices.Sort(out)
	return out
}
