package teamlake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
)

// The defaults of MaintainOptions' zero values.
const (
	DefaultTargetFileSize   = 128 << 20
	DefaultKeep             = 7 * 24 * time.Hour
	DefaultKeepSnapshots    = 1
	DefaultOrphansOlderThan = 24 * time.Hour
)

// MaintainOptions say what maintenance keeps. A zero value takes its
// default, so that an option left out never makes maintenance delete
// more.
type MaintainOptions struct {
	// TargetFileSize is the size compaction writes files up to; a
	// partition's data files below it are rewritten together when there
	// is more than one.
	TargetFileSize int64
	// Keep is how long a snapshot stays readable after it stopped being
	// the current one: expiry removes older snapshots.
	Keep time.Duration
	// KeepSnapshots is the fewest snapshots of the table's history kept
	// whatever their age (the current one is always kept).
	KeepSnapshots int
	// OrphansOlderThan is the age an object no live snapshot or metadata
	// references must have to be deleted. It must exceed the longest a
	// publish may take between writing a data file and committing it.
	OrphansOlderThan time.Duration
	// DryRun reports what maintenance would do, and does nothing.
	DryRun bool
}

func (o MaintainOptions) withDefaults() MaintainOptions {
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = DefaultTargetFileSize
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.KeepSnapshots <= 0 {
		o.KeepSnapshots = DefaultKeepSnapshots
	}
	if o.OrphansOlderThan <= 0 {
		o.OrphansOlderThan = DefaultOrphansOlderThan
	}
	return o
}

// MaintainReport is what maintaining one table did (with DryRun: would do).
type MaintainReport struct {
	Table       string `json:"table"`
	DryRun      bool   `json:"dry_run,omitempty"`
	Compacted   int    `json:"compacted"`    // small data files replaced
	Written     int    `json:"written"`      // data files written in their place
	Expired     int    `json:"expired"`      // snapshots expired
	Orphans     int    `json:"orphans"`      // unreferenced objects deleted
	OrphanBytes int64  `json:"orphan_bytes"` // their size
	Attempts    int    `json:"attempts"`     // commits tried (more than one a step: conflicts)
	Snapshot    int64  `json:"snapshot"`     // the table's current snapshot afterwards, 0 if none
}

// Maintain compacts, expires and cleans the lake's tables (none: Tables)
// one after another; a table the lake does not hold is reported with
// nothing done. Each step commits on its own and, when another machine's
// commit lands first, reloads the table and tries again, so publishers,
// fetches and maintenance run beside each other.
func (l *Lake) Maintain(ctx context.Context, opt MaintainOptions, tables ...string) ([]MaintainReport, error) {
	if len(tables) == 0 {
		tables = Tables
	}
	opt = opt.withDefaults()
	var out []MaintainReport
	for _, name := range tables {
		rep, err := l.maintainTable(ctx, opt, name)
		if err != nil {
			return out, fmt.Errorf("maintaining %s: %w", name, err)
		}
		out = append(out, rep)
	}
	return out, nil
}

func (l *Lake) maintainTable(ctx context.Context, opt MaintainOptions, name string) (MaintainReport, error) {
	rep := MaintainReport{Table: name, DryRun: opt.DryRun}
	if _, err := l.Table(ctx, name); errors.Is(err, catalog.ErrNoSuchTable) {
		return rep, nil
	} else if err != nil {
		return rep, err
	}
	if err := l.compact(ctx, opt, name, &rep); err != nil {
		return rep, fmt.Errorf("compaction: %w", err)
	}
	if err := l.expire(ctx, opt, name, &rep); err != nil {
		return rep, fmt.Errorf("snapshot expiry: %w", err)
	}
	tbl, err := l.Table(ctx, name)
	if err != nil {
		return rep, err
	}
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(opt.OrphansOlderThan), table.WithDryRun(opt.DryRun))
	if err != nil {
		return rep, fmt.Errorf("orphan cleanup: %w", err)
	}
	if opt.DryRun {
		rep.Orphans = len(res.OrphanFiles)
	} else {
		rep.Orphans = len(res.DeletedFiles)
	}
	rep.OrphanBytes = res.TotalSizeBytes
	if s := tbl.CurrentSnapshot(); s != nil {
		rep.Snapshot = s.SnapshotID
	}
	return rep, nil
}

// compactionConfig picks a partition's data files below target, when it
// has at least two, and packs them into files of up to target.
func compactionConfig(target int64) compaction.Config {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = target
	cfg.MinFileSizeBytes = target
	cfg.MaxFileSizeBytes = target * 9 / 5
	cfg.MinInputFiles = 2
	return cfg
}

// compact rewrites each partition's small data files into fewer, in one
// commit that replaces them. The rows are read and written as they are:
// the table's records, their values and their count do not change. When
// a publisher commits first, the files written are committed again on its
// snapshot as long as every file they replace is still live there as it
// was (a publish only appends); otherwise they are removed and the
// compaction planned again.
func (l *Lake) compact(ctx context.Context, opt MaintainOptions, name string, rep *MaintainReport) error {
	var (
		plan    compaction.Plan
		results []table.CompactionGroupResult // written, not yet committed
	)
	for attempt := 1; ; attempt++ {
		tbl, err := l.Table(ctx, name)
		if err != nil {
			return errors.Join(err, removeOutputs(ctx, tbl, results))
		}
		if results != nil && !stillLive(ctx, tbl, plan) {
			if err := removeOutputs(ctx, tbl, results); err != nil {
				return err
			}
			results = nil
		}
		if results == nil {
			if tbl.CurrentSnapshot() == nil {
				return nil
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				return err
			}
			plan, err = compactionConfig(opt.TargetFileSize).PlanCompaction(tasks)
			if err != nil || len(plan.Groups) == 0 {
				return err
			}
			if opt.DryRun {
				for _, g := range plan.Groups {
					rep.Compacted += len(g.Tasks)
				}
				rep.Written = plan.EstOutputFiles
				return nil
			}
			if results, err = writeCompaction(ctx, tbl, plan, opt.TargetFileSize); err != nil {
				return errors.Join(err, removeOutputs(ctx, tbl, results))
			}
		}
		rep.Attempts++
		err = commitRewrite(ctx, tbl, results)
		if err == nil {
			rep.Compacted, rep.Written = 0, 0
			for _, r := range results {
				rep.Compacted += len(r.OldDataFiles)
				rep.Written += len(r.NewDataFiles)
			}
			return nil
		}
		if errors.As(err, new(errStaging)) {
			return errors.Join(err, removeOutputs(ctx, tbl, results))
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			// The catalog may have taken the commit: the files stay.
			return err
		}
		if attempt == maxAttempts {
			return errors.Join(err, removeOutputs(ctx, tbl, results))
		}
		if err := backoff(ctx, attempt); err != nil {
			return errors.Join(err, removeOutputs(ctx, tbl, results))
		}
	}
}

// writeCompaction writes the plan's groups' new files. On an error it
// returns what was written, for removal.
func writeCompaction(ctx context.Context, tbl *table.Table, plan compaction.Plan, target int64) ([]table.CompactionGroupResult, error) {
	var out []table.CompactionGroupResult
	for _, g := range plan.Groups {
		gr, err := table.ExecuteCompactionGroup(ctx, tbl,
			table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes},
			table.WithCompactionTargetFileSize(target))
		out = append(out, gr)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// commitRewrite commits the written groups on tbl's snapshot as one
// rewrite.
func commitRewrite(ctx context.Context, tbl *table.Table, results []table.CompactionGroupResult) error {
	txn := tbl.NewTransaction()
	rw := txn.NewRewrite(iceberg.Properties{"pos.maintain": "compaction"})
	for _, r := range results {
		rw.ApplyResult(r)
	}
	if err := rw.Commit(ctx); err != nil {
		return errStaging{err}
	}
	_, err := txn.Commit(ctx)
	return err
}

// errStaging is a rewrite that failed before reaching the catalog.
type errStaging struct{ error }

func (e errStaging) Unwrap() error { return e.error }

// stillLive tells whether every file the plan replaces is live in tbl's
// current snapshot with the delete files it had when planned.
func stillLive(ctx context.Context, tbl *table.Table, plan compaction.Plan) bool {
	if tbl.CurrentSnapshot() == nil {
		return false
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return false
	}
	deletes := map[string]int{}
	for _, t := range tasks {
		deletes[t.File.FilePath()] = len(t.DeleteFiles) + len(t.EqualityDeleteFiles) + len(t.DeletionVectorFiles)
	}
	for _, g := range plan.Groups {
		for _, t := range g.Tasks {
			n, ok := deletes[t.File.FilePath()]
			if !ok || n != len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) {
				return false
			}
		}
	}
	return true
}

// removeOutputs removes compaction outputs no snapshot references.
func removeOutputs(ctx context.Context, tbl *table.Table, results []table.CompactionGroupResult) error {
	var files []iceberg.DataFile
	for _, r := range results {
		files = append(files, r.NewDataFiles...)
	}
	if tbl == nil {
		return nil // left to the orphan cleanup
	}
	return removeFiles(ctx, tbl, files)
}

func removeFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) error {
	if len(files) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if err := fsys.Remove(f.FilePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// expire removes the snapshots no reader may still be reading: those
// that stopped being current more than opt.Keep ago, beyond the last
// opt.KeepSnapshots. It leaves their files to the orphan cleanup, which
// deletes only what no remaining snapshot references.
func (l *Lake) expire(ctx context.Context, opt MaintainOptions, name string, rep *MaintainReport) error {
	for attempt := 1; ; attempt++ {
		tbl, err := l.Table(ctx, name)
		if err != nil {
			return err
		}
		meta := tbl.Metadata()
		if meta.CurrentSnapshot() == nil {
			return nil
		}
		txn := tbl.NewTransaction()
		err = txn.ExpireSnapshots(table.WithOlderThan(opt.Keep),
			table.WithRetainLast(retained(meta, time.Now().Add(-opt.Keep), opt.KeepSnapshots)),
			table.WithPostCommit(false))
		if err != nil {
			return err
		}
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		n := len(meta.Snapshots()) - len(staged.Metadata().Snapshots())
		if n <= 0 || opt.DryRun {
			rep.Expired = max(n, 0)
			return nil
		}
		rep.Attempts++
		_, err = txn.Commit(ctx)
		if err == nil {
			rep.Expired = n
			return nil
		}
		if !errors.Is(err, table.ErrCommitFailed) || attempt == maxAttempts {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// retained is how many snapshots of the current one's line to keep
// whatever their age: at least least, the current one, and each one that
// was still current after cutoff (its child was committed after it). A
// snapshot's own time is when it was committed, not when it was
// replaced, so without this a snapshot a fetch began reading a minute
// ago would expire as soon as a commit replaced it, were it committed
// more than Keep ago.
func retained(meta table.Metadata, cutoff time.Time, least int) int {
	n := 1
	s := meta.CurrentSnapshot()
	for s != nil && s.ParentSnapshotID != nil && s.TimestampMs >= cutoff.UnixMilli() {
		if s = meta.SnapshotByID(*s.ParentSnapshotID); s != nil {
			n++
		}
	}
	return max(n, least)
}
