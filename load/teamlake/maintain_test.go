package teamlake_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// openShared opens the shared lake of s as machine.
func openShared(t *testing.T, lake, catalog, machine string) *teamlake.Lake {
	t.Helper()
	l, err := teamlake.Open(context.Background(), teamlake.Options{Lake: lake, Catalog: catalog, Machine: machine})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// publishEach publishes messages from..to one commit each, from one
// local lake, so that partitions hold several small files.
func publishEach(t *testing.T, l *teamlake.Lake, local string, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		loadtest.Load(t, local, teamlaketest.Messages(i, i)...)
		if _, err := l.Publish(context.Background(), local, layout.TableMessages); err != nil {
			t.Fatal(err)
		}
	}
}

// tableRows renders every row of a table's current snapshot, all its
// columns, sorted.
func tableRows(t *testing.T, l *teamlake.Lake, name string) []string {
	t.Helper()
	var out []string
	teamlaketest.EachBatch(t, l, name, func(rec arrow.RecordBatch) {
		for i := range int(rec.NumRows()) {
			var b strings.Builder
			for c, col := range rec.Columns() {
				fmt.Fprintf(&b, "%s=%s;", rec.ColumnName(c), col.ValueStr(i))
			}
			out = append(out, b.String())
		}
	})
	slices.Sort(out)
	return out
}

// partitionFiles counts the data files of each partition of a table's
// current snapshot.
func partitionFiles(t *testing.T, tbl *table.Table) map[string]int {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, task := range tasks {
		out[fmt.Sprint(task.File.Partition())]++
	}
	return out
}

// currentFiles are the objects a table's current metadata references:
// its metadata file, its current snapshot's manifest list, manifests and
// data files.
func currentFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	ctx := context.Background()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{tbl.MetadataLocation()}
	snap := tbl.CurrentSnapshot()
	out = append(out, snap.ManifestList)
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		out = append(out, m.FilePath())
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	return out
}

func exists(t *testing.T, fsys iceio.IO, path string) bool {
	t.Helper()
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f.Close()
	return true
}

func writeObject(t *testing.T, fsys iceio.IO, path string) {
	t.Helper()
	w, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		t.Fatalf("the table's IO %T cannot write", fsys)
	}
	if err := w.WriteFile(path, []byte("not referenced by any snapshot")); err != nil {
		t.Fatal(err)
	}
}

// Maintenance of a table published in small commits: each partition's
// files are rewritten into one with the same rows, the snapshots before
// are expired, and every file of the current snapshot stays. An object no
// snapshot references is deleted once it is older than the threshold,
// while a newer one stays. A dry run before changes nothing.
func TestMaintainCompactsExpiresCleans(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	l := openShared(t, "s3://"+s.TableBucket+"/pos", s.Catalog, "a")
	local := t.TempDir()
	publishEach(t, l, local, 1, 1)
	tbl, err := l.Table(ctx, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldOrphan := tbl.Location() + "/data/orphan-old.parquet"
	freshOrphan := tbl.Location() + "/data/orphan-fresh.parquet"
	writeObject(t, fsys, oldOrphan)
	oldAt := time.Now()
	publishEach(t, l, local, 2, 12)

	rows := tableRows(t, l, layout.TableMessages)
	if tbl, err = l.Table(ctx, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	before := partitionFiles(t, tbl)
	nsnaps := len(tbl.Metadata().Snapshots())
	t.Logf("%d rows; files per partition before: %v; %d snapshots", len(rows), before, nsnaps)
	if len(rows) != 12 || len(before) != 3 || nsnaps != 12 {
		t.Fatalf("the published table has %d rows in %d partitions and %d snapshots, want 12 in 3 and 12", len(rows), len(before), nsnaps)
	}

	// The dry run counts the one object older than a second that no
	// snapshot references.
	opt := teamlake.MaintainOptions{Keep: time.Millisecond}
	dry := opt
	dry.DryRun, dry.OrphansOlderThan = true, time.Second
	reps, err := l.Maintain(ctx, dry, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run: %+v", reps)
	if r := reps[0]; r.Compacted != 12 || r.Written != 3 || r.Expired != 11 || r.Orphans != 1 || r.Attempts != 0 {
		t.Errorf("dry run: %+v; want 12 files to compact into 3, 11 snapshots to expire, 1 orphan, no commit", r)
	}
	if tbl, err = l.Table(ctx, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	if got := partitionFiles(t, tbl); !maps.Equal(got, before) || len(tbl.Metadata().Snapshots()) != nsnaps || !exists(t, fsys, oldOrphan) {
		t.Fatalf("the dry run changed the table: files %v, %d snapshots", got, len(tbl.Metadata().Snapshots()))
	}

	reps, err = l.Maintain(ctx, opt, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("maintain: %+v", reps)
	r := reps[0]
	if r.Compacted != 12 || r.Written != 3 || r.Expired != 12 || r.Orphans != 0 || r.Attempts != 2 {
		t.Errorf("report %+v; want 12 files compacted into 3, 12 snapshots expired, no orphan a day old, 2 commits", r)
	}
	if got := tableRows(t, l, layout.TableMessages); !slices.Equal(got, rows) {
		t.Errorf("the rows changed:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(rows, "\n"))
	}
	if tbl, err = l.Table(ctx, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	after := partitionFiles(t, tbl)
	t.Logf("files per partition after: %v; %d snapshots", after, len(tbl.Metadata().Snapshots()))
	for p, n := range after {
		if n != 1 {
			t.Errorf("partition %s holds %d files, want 1", p, n)
		}
	}
	if len(after) != len(before) {
		t.Errorf("partitions %v after, want those of %v", after, before)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1 || tbl.CurrentSnapshot().SnapshotID != r.Snapshot {
		t.Errorf("%d snapshots after, current %d; want 1, %d", n, tbl.CurrentSnapshot().SnapshotID, r.Snapshot)
	}

	// Orphans older than a threshold the old one has passed and a fresh
	// one has not: only the old one, and files the expired snapshots
	// referenced, go. With nothing to compact or expire this run is short.
	const threshold = 10 * time.Second
	time.Sleep(threshold + 2*time.Second - time.Since(oldAt))
	writeObject(t, fsys, freshOrphan)
	opt.OrphansOlderThan = threshold
	reps, err = l.Maintain(ctx, opt, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("orphan cleanup: %+v", reps)
	if r := reps[0]; r.Compacted != 0 || r.Expired != 0 || r.Attempts != 0 || r.Orphans == 0 {
		t.Errorf("orphan cleanup: %+v; want nothing compacted or expired, orphans deleted", r)
	}
	if exists(t, fsys, oldOrphan) {
		t.Errorf("%s is still there", oldOrphan)
	}
	if !exists(t, fsys, freshOrphan) {
		t.Errorf("%s, newer than the threshold, was deleted", freshOrphan)
	}
	for _, f := range currentFiles(t, tbl) {
		if !exists(t, fsys, f) {
			t.Errorf("%s, referenced by the current snapshot, was deleted", f)
		}
	}
	if got := tableRows(t, l, layout.TableMessages); !slices.Equal(got, rows) {
		t.Errorf("the rows changed after orphan cleanup:\n%s", strings.Join(got, "\n"))
	}
}

// Maintenance running beside a machine publishing commit after commit
// loses no record and duplicates none; a table the lake does not hold is
// reported with nothing done.
func TestMaintainBesidePublish(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := "s3://" + s.TableBucket + "/pos"
	pub, maint := openShared(t, lake, s.Catalog, "pub"), openShared(t, lake, s.Catalog, "maint")
	publishEach(t, pub, t.TempDir(), 1, 4)
	const last = 24
	locals := map[int]string{}
	for i := 5; i <= last; i++ {
		locals[i] = t.TempDir()
		loadtest.Load(t, locals[i], teamlaketest.Messages(i, i)...)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var pubErr error
	wg.Go(func() {
		defer close(done)
		for i := 5; i <= last; i++ {
			if _, err := pub.Publish(ctx, locals[i], layout.TableMessages); err != nil {
				pubErr = fmt.Errorf("message %d: %w", i, err)
				return
			}
		}
	})
	var reps []teamlake.MaintainReport
	opt := teamlake.MaintainOptions{TargetFileSize: 1 << 20, Keep: time.Millisecond}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		rep, err := maint.Maintain(ctx, opt, layout.TableMessages)
		if err != nil {
			t.Error(err)
			break
		}
		reps = append(reps, rep...)
	}
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	t.Logf("%d maintenance runs: %+v", len(reps), reps)
	if got, want := teamlaketest.TableIDs(t, maint, layout.TableMessages), teamlaketest.IDs(1, last); !slices.Equal(got, want) {
		t.Fatalf("the shared table holds %v, want each of %d records once", got, last)
	}
	compacted := 0
	for _, r := range reps {
		compacted += r.Compacted
	}
	if compacted == 0 {
		t.Errorf("no maintenance run compacted a file")
	}

	reps, err := maint.Maintain(ctx, opt, layout.TableExchanges)
	if err != nil || len(reps) != 1 || reps[0] != (teamlake.MaintainReport{Table: layout.TableExchanges}) {
		t.Errorf("maintaining a table the lake does not hold: %+v, %v", reps, err)
	}
}
