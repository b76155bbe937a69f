package load

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/compact"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
	"golang.org/x/sync/semaphore"
)

// Options configure a Loader.
type Options struct {
	Lake string
	// Name is the input's name in diagnostics.
	Name string
	// Now stamps ingested_at on records that lack it.
	Now func() time.Time
	// OnSkip is told about each bad input line; its error stops the run.
	OnSkip schema.SkipFunc
	// LockTimeout bounds the wait for another pos-load (default 10 min).
	LockTimeout time.Duration
	// NoCatalog skips refreshing <lake>/pos.duckdb.
	NoCatalog bool
	// NoCompact leaves the partitions as written (see compact.go).
	NoCompact bool
	// CompactAll compacts every partition of the lake, not only those
	// the run wrote to (a lake an older build left many small files in).
	CompactAll bool
	// MaxOpen bounds the part files open at once (default 8).
	MaxOpen int
	// FileRows starts a new part file after this many rows (default 2M).
	FileRows int64
	// AllowMixedEmbeddings admits chunks of another embedding model or
	// dimension than the lake's (see MixedEmbeddingsError).
	AllowMixedEmbeddings bool
	// RequireScrubbed refuses, and ends the load at, the first record
	// pos-scrub did not scrub (ErrNotScrubbed).
	RequireScrubbed bool
	// DeclareScrubbed records, on the user's word, that the rows a build
	// loaded before records were marked passed pos-scrub.
	DeclareScrubbed bool
	// Fast decodes the records; nil decodes them in Go.
	Fast *jsontext.Fast
	// IDs keeps the ids of the part files read, for the next load in
	// this process (nil: none kept).
	IDs *IDCache
	// Writers keeps the closed Parquet writers, for the next load in this
	// process (nil: none kept).
	Writers *Writers
	// Listing keeps the listings of the lake's partition directories the
	// search index and the usage rollup read, for the next load in this
	// process (nil: each load lists them all).
	Listing *layout.Listing
	// Rollup keeps what the usage rollup's update read and wrote, for the
	// next load in this process (nil: each load reads it again).
	Rollup *rollup.Cache
}

// Stats counts what a load did.
type Stats struct {
	In          int64            // records read
	Rows        map[string]int64 // rows written per table
	Duplicates  int64            // records already in the lake, unchanged: not written
	Versions    int64            // new versions of records already in the lake
	Checkpoints int64            // watermarks committed
	Files       int64            // part files written
	Skipped     int64            // bad input lines
	CatalogErr  error            // why pos.duckdb could not be refreshed, if so
	RollupErr   error            // why the usage rollup could not be updated, if so
	Compacted   int64            // partitions whose small files were merged
	Merged      int64            // files merged by those compactions
	CompactErr  error            // why a partition could not be compacted, if so
	// SearchIndexErr is why the search index could not be brought up to
	// date, if so (search reads the files it lacks one by one).
	SearchIndexErr error
}

// Loader writes records into the lake. Add records, then Close to commit,
// or Abort to drop the files not yet in place.
//
// Records go to two lanes, each a goroutine with its own partitions and
// files: one for the raw layer (the bulk of the bytes) and one for the
// indexed tables, so building rows and compressing pages use both cores.
type Loader struct {
	opt Options
	ctx context.Context
	// The input being read (its name in diagnostics) and the count of
	// records read before it.
	input      string
	inputStart int64
	lock       *os.File
	runID      string
	seq        atomic.Int64
	marks      *watermark.State // watermarks committed to this lake's _state
	// watermarks committed to other state directories (pos-extract
	// --state), and whether each lake a checkpoint named is this one (see
	// mark)
	elsewhere map[string]*watermark.State
	lakes     map[string]bool
	stats     Stats // In and Skipped; the lanes count the rest
	clean     bool  // every file of the run is in place (see unlock)

	lanes   []*lane
	laneFor map[string]*lane // table -> lane

	dbOnce sync.Once
	db     *sql.DB
	dbErr  error

	// versioned records, per table, that a table has more than one version
	// of some record, so its view must pick the latest.
	vmu       sync.Mutex
	versioned map[string]bool
	schemas   map[string][]string // table -> fingerprints of the schemas in its files

	models    []layout.EmbeddingModel // the lake's embedding models, nil until a chunk comes
	lastModel layout.EmbeddingModel   // the model of the last chunk admitted

	scrub    *ScrubState                 // the lake's, with this run's rows
	scrubRun map[string]map[string]int64 // this run's rows per table and mark
	// inflight bounds the bytes of the records read but not yet written
	// by a lane (see send); failed is closed when a lane fails, so the
	// reader never waits on a lane that will not take more.
	inflight   *semaphore.Weighted
	failed     chan struct{}
	failedOnce sync.Once
}

// maxInflight bounds the bytes of records between the reader and the
// lanes: a record larger than this is written alone, so the memory a load
// needs is that of its largest record (a few times over: decoded, hashed,
// encoded in pages), not of every huge record the reader got ahead to.
const maxInflight = 64 << 20

// hugeRecord is the size from which a record's garbage is collected as
// soon as a lane has written it.
const hugeRecord = 16 << 20

type partition struct {
	layout.PartKey
	dir   string
	made  bool              // this run created dir (or a parent of it)
	index map[uint64]uint64 // id hash -> content hash, nil until loaded
}

// Open locks the lake and prepares a load.
func Open(ctx context.Context, opt Options) (*Loader, error) {
	if opt.Lake == "" {
		return nil, errors.New("no lake directory")
	}
	abs, err := filepath.Abs(opt.Lake)
	if err != nil {
		return nil, err
	}
	opt.Lake = abs
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.LockTimeout == 0 {
		opt.LockTimeout = 10 * time.Minute
	}
	if opt.MaxOpen <= 0 {
		opt.MaxOpen = 8
	}
	if opt.FileRows <= 0 {
		opt.FileRows = fileRows
	}
	if err := os.MkdirAll(opt.Lake, 0o700); err != nil {
		return nil, err
	}
	lk, dirty, err := lock(ctx, opt.Lake, opt.LockTimeout)
	if err != nil {
		return nil, err
	}
	l := &Loader{
		opt: opt, ctx: ctx, lock: lk, runID: newRunID(opt.Now()),
		marks: watermark.NewState(), versioned: map[string]bool{},
		stats: Stats{Rows: map[string]int64{}}, laneFor: map[string]*lane{},
		inflight: semaphore.NewWeighted(maxInflight), failed: make(chan struct{}),
	}
	for _, tables := range [][]string{{layout.TableRaw}, {layout.TableMessages, layout.TableExchanges, layout.TableSessions, layout.TableDocuments, layout.TableDecisions, layout.TableFileRefs, layout.TableOther}, {layout.TableChunks}} {
		ln := newLane(l)
		l.lanes = append(l.lanes, ln)
		for _, t := range tables {
			l.laneFor[t] = ln
		}
	}
	// Files a dead run left half-written are removed: we hold the lock, so
	// no live writer owns them. Only a run that did not end cleanly leaves
	// any, so a lake of thousands of partitions is walked only then.
	if dirty {
		if err := removeTemps(opt.Lake); err != nil {
			unlock(lk, false)
			return nil, err
		}
	}
	if err := compact.Remove(opt.Lake); err != nil {
		unlock(lk, false)
		return nil, err
	}
	if l.versioned, err = layout.ReadVersioned(opt.Lake); err != nil {
		unlock(lk, false)
		return nil, err
	}
	l.schemas = layout.ReadSchemas(opt.Lake)
	if err := l.openScrubState(); err != nil {
		unlock(lk, false)
		return nil, err
	}
	// Temporary files killed writers left in the lake's own directories.
	if err := layout.SweepTemps(opt.Lake); err != nil {
		unlock(lk, false)
		return nil, err
	}
	for _, ln := range l.lanes {
		go ln.run()
	}
	return l, nil
}

// Load reads NDJSON records from r into the lake and commits them.
func Load(ctx context.Context, r io.Reader, opt Options) (Stats, error) {
	l, err := Open(ctx, opt)
	if err != nil {
		return Stats{}, err
	}
	if err := l.AddStream(r); err != nil {
		l.Abort()
		return l.Stats(), err
	}
	err = l.Close()
	return l.Stats(), err
}

// AddStream adds every record of an NDJSON stream, named in diagnostics
// as Options.Name says.
func (l *Loader) AddStream(r io.Reader) error { return l.AddNamedStream(r, l.opt.Name) }

// AddNamedStream adds every record of an NDJSON stream, named in
// diagnostics (file:line) by name: the loader reads several inputs.
func (l *Loader) AddNamedStream(r io.Reader, name string) error {
	l.input, l.inputStart = name, l.stats.In
	n, err := schema.Each(l.ctx, r, schema.EachOptions{Name: name, OnSkip: l.opt.OnSkip, Fast: l.opt.Fast}, l.Add)
	l.stats.Skipped += n
	return err
}

// Stats returns the counts; complete once Close or Abort returned.
func (l *Loader) Stats() Stats {
	st := l.stats
	st.Rows = map[string]int64{}
	for t, n := range l.stats.Rows {
		st.Rows[t] = n
	}
	for _, ln := range l.lanes {
		for t, n := range ln.stats.Rows {
			st.Rows[t] += n
		}
		st.Duplicates += ln.stats.Duplicates
		st.Versions += ln.stats.Versions
		st.Files += ln.stats.Files
	}
	return st
}

// Add writes one record (checkpoints are held until Close commits them).
func (l *Loader) Add(rec *schema.Record) error {
	l.stats.In++
	if rec.Kind == schema.KindCheckpoint {
		if rec.Checkpoint != nil && rec.Checkpoint.Path != "" {
			return l.mark(rec.Checkpoint)
		}
		return nil
	}
	if err := l.checkScrubbed(rec); err != nil {
		return err
	}
	if rec.IngestedAt.IsZero() {
		rec.IngestedAt = l.opt.Now()
	}
	mark := scrubMark(rec)
	// Titles, decision sentences and contexts arrive whole, scrubbed as
	// their sources are: they are cut here, where a cut cannot leave part
	// of a secret and never splits a redaction marker.
	excerpt.Finish(rec)
	if rec.Kind == schema.KindChunk {
		if err := l.checkEmbedding(rec); err != nil {
			return err
		}
	}
	if rec.Kind != schema.KindRaw && len(rec.Raw) > 0 {
		// Not normalized: the native record still rides on the record.
		if err := l.noteScrub(layout.TableRaw, mark); err != nil {
			return err
		}
		if err := l.send(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw = nil
	}
	if err := l.noteScrub(tableFor(rec.Kind), mark); err != nil {
		return err
	}
	return l.send(rec)
}

// send hands a record to its table's lane, once the records in flight
// leave room for it (maxInflight). After a huge record it waits until the
// lane has written it, so the next line is not read, and decoded, while
// the huge one is still in memory.
func (l *Loader) send(rec *schema.Record) error {
	ln := l.laneFor[tableFor(rec.Kind)]
	n := min(recordBytes(rec), maxInflight)
	if err := l.acquire(n); err != nil {
		return err
	}
	select {
	case ln.in <- item{rec, n}:
	case <-ln.done:
		l.inflight.Release(n)
		return ln.err
	case <-l.ctx.Done():
		l.inflight.Release(n)
		return l.ctx.Err()
	}
	if n < hugeRecord {
		return nil
	}
	if err := l.acquire(maxInflight); err != nil {
		return err
	}
	l.inflight.Release(maxInflight)
	return nil
}

// acquire takes n bytes of the inflight budget, waiting for the lanes to
// write what holds it; it gives up when the load is cancelled or a lane
// has failed.
func (l *Loader) acquire(n int64) error {
	if l.inflight.TryAcquire(n) {
		return nil
	}
	ctx, cancel := context.WithCancel(l.ctx)
	go func() {
		select {
		case <-l.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := l.inflight.Acquire(ctx, n)
	cancel()
	if err == nil {
		return nil
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	for _, ln := range l.lanes {
		select {
		case <-ln.done:
			if ln.err != nil {
				return ln.err
			}
		default:
		}
	}
	return errors.New("a lane stopped")
}

// recordBytes estimates the memory a record holds: its texts.
func recordBytes(rec *schema.Record) int64 { return int64(schema.SizeHint(rec)) }

// markVersioned records, before any file with a second version of a
// record is in place, that the table's view must pick the latest version.
func (l *Loader) markVersioned(table string) error {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if l.versioned[table] {
		return nil
	}
	l.versioned[table] = true
	return layout.WriteVersioned(l.opt.Lake, l.versioned)
}

// noteSchema records, before a file of the table is published, the
// Parquet schema this build writes for it. Views read a table whose files
// all share one schema without union_by_name, which would read every file's
// footer each time a view is defined.
func (l *Loader) noteSchema(table string) error {
	fp := layout.SchemaFingerprint(table)
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if slices.Contains(l.schemas[table], fp) {
		return nil
	}
	l.schemas[table] = append(l.schemas[table], fp)
	b, _ := json.MarshalIndent(l.schemas, "", " ")
	return atomicfile.Write(filepath.Join(l.opt.Lake, "_state", layout.SchemasFile), b)
}

// compact merges the small files of the given partitions.
func (l *Loader) compact(parts []layout.PartKey) error {
	run := &compact.Run{Lake: l.opt.Lake, Name: l.partName, NoteSchema: l.noteSchema}
	err := run.Partitions(l.ctx, parts)
	l.stats.Compacted += run.Compacted
	l.stats.Merged += run.Merged
	return err
}

// partName names the run's next part file.
func (l *Loader) partName() string {
	return fmt.Sprintf("part-%s-%05d.parquet", l.runID, l.seq.Add(1))
}

// duck returns the DuckDB connection that reads partitions' ids, opened
// on first use.
func (l *Loader) duck() (*sql.DB, error) {
	l.dbOnce.Do(func() { l.db, l.dbErr = catalog.OpenDB("") })
	return l.db, l.dbErr
}

// Close commits every open file, then the watermarks, then refreshes the
// catalog. The lake is complete after each file rename; the watermarks move
// only once all of this run's files are in place.
func (l *Loader) Close() error {
	defer l.release()
	err := l.stopLanes(false)
	if err == nil {
		err = publishLanes(l.opt.Lake, l.lanes)
	}
	if err != nil {
		// The lanes have stopped: drop what none of them put in place.
		for _, ln := range l.lanes {
			ln.abortFiles()
		}
		return err
	}
	// Every file is in place: the run leaves no temporary file behind.
	l.clean = true
	var touched []layout.PartKey
	for _, ln := range l.lanes {
		touched = append(touched, ln.touched...)
	}
	// The data is in place whatever happens to the compaction: a failed
	// one is reported, and tried again by a later load.
	if l.opt.CompactAll {
		all, err := compact.AllPartitions(l.opt.Lake)
		if err != nil {
			return err
		}
		touched = all
	}
	if !l.opt.NoCompact || l.opt.CompactAll {
		l.stats.CompactErr = l.compact(touched)
	}
	// The usage rollup reads only the files in place: it is brought up to
	// date while the search index and the watermarks are.
	// It ends before the lake is unlocked, whatever this returns.
	rolled := make(chan error, 1)
	go func() { rolled <- l.opt.Rollup.Update(l.ctx, l.opt.Lake, l.opt.Listing) }()
	waitRollup := sync.OnceFunc(func() { l.stats.RollupErr = <-rolled })
	defer waitRollup()
	// The search index, after the compaction that replaces chunks files:
	// derived from the files in place, it is brought up to date by a later
	// load if this one fails to.
	if slices.ContainsFunc(touched, func(k layout.PartKey) bool { return k.Table == layout.TableChunks }) ||
		!searchindex.HasSegments(l.opt.Lake) && layout.FileExists(layout.TableDir(l.opt.Lake, layout.TableChunks)) ||
		searchindex.OlderSegments(l.opt.Lake) {
		l.stats.SearchIndexErr = updateSearchIndex(l.opt.Listing, l.opt.Lake, l.runID)
	}
	n, err := l.commitMarks()
	l.stats.Checkpoints = int64(n)
	if err != nil {
		return err
	}
	if len(l.scrubRun) > 0 {
		if err := writeScrubState(l.opt.Lake, l.scrub); err != nil {
			return err
		}
	}
	if err := l.logRun(); err != nil {
		return err
	}
	waitRollup() // the catalog's views name the rollup's file
	if !l.opt.NoCatalog && (l.Stats().Files > 0 || !layout.FileExists(filepath.Join(l.opt.Lake, catalog.CatalogFile))) {
		l.stats.CatalogErr = catalog.WriteCatalog(l.ctx, l.opt.Lake)
	}
	return nil
}

// Abort drops the files that are not in place yet; files already renamed
// are complete and stay (a re-run skips their records).
func (l *Loader) Abort() {
	l.stopLanes(true)
	l.release()
}

// stopLanes ends every lane, then waits for them all: ended together, they
// finish their files at once, each on its core.
func (l *Loader) stopLanes(abort bool) error {
	for _, ln := range l.lanes {
		ln.end(abort)
	}
	var errs []error
	for _, ln := range l.lanes {
		<-ln.done
		errs = append(errs, ln.err)
	}
	return errors.Join(errs...)
}

func (l *Loader) release() {
	if l.db != nil {
		l.db.Close()
		l.db = nil
	}
	unlock(l.lock, l.clean)
	l.lock = nil
}
