package load_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

// Loads that share Writers, as a resident pos-sync's do, write the part
// files loads with fresh writers write: a kept writer carries nothing of
// its last file into the next.
func TestWritersKeptAcrossLoads(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	batch := func(load int) []*schema.Record {
		var recs []*schema.Record
		for i := range 300 {
			at := day.Add(time.Duration(i%3)*24*time.Hour + time.Duration(i)*time.Second)
			recs = append(recs, loadtest.Msg(fmt.Sprintf("l%d-m%03d", load, i), fmt.Sprintf("s%d", i%4), fmt.Sprintf("load %d text %d", load, i), at))
		}
		return recs
	}
	pooled, fresh := t.TempDir(), t.TempDir()
	pool := load.NewWriters(8)
	for n := range 3 {
		loadtest.LoadWith(t, load.Options{Lake: pooled, Writers: pool, NoCompact: true}, batch(n)...)
		loadtest.LoadWith(t, load.Options{Lake: fresh, NoCompact: true}, batch(n)...)
		if load.WritersKept(pool) == 0 {
			t.Fatalf("load %d kept no writer for the next", n)
		}
	}
	const q = `SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(length(text)) || ' ' ||
		count(DISTINCT filename) || ' ' || bool_and(text = 'load ' || split_part(split_part(id, '-', 1), 'l', 2) || ' text ' || CAST(split_part(id, 'm', 2) AS INT))
		FROM read_parquet(?, filename = true)`
	glob := func(lake string) string { return layout.Dir(lake, layout.TableMessages, "test", "*") + "/*.parquet" }
	got := loadtest.One(t, loadtest.Views(t, pooled), q, glob(pooled))
	want := loadtest.One(t, loadtest.Views(t, fresh), q, glob(fresh))
	if got != want || want != "900 900 "+fmt.Sprint(textBytes(batch(0))+textBytes(batch(1))+textBytes(batch(2)))+" 9 true" {
		t.Fatalf("through kept writers: %q; with fresh writers: %q", got, want)
	}
}

func textBytes(recs []*schema.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Text)
	}
	return n
}
