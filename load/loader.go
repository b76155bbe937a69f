package load

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
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
	// MaxOpen bounds the part files open at once (default 32).
	MaxOpen int
	// FileRows starts a new part file after this many rows (default 2M).
	FileRows int64
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
}

// Loader writes records into the lake. Add records, then Close to commit,
// or Abort to drop the files not yet in place.
type Loader struct {
	opt   Options
	ctx   context.Context
	lock  *os.File
	runID string
	seq   int
	tick  int64
	parts map[partKey]*partition
	open  map[partKey]*partFile
	marks *extract.State
	db    *sql.DB
	stats Stats
	// versioned records, per table, that a table has more than one version
	// of some record, so its view must pick the latest.
	versioned map[string]bool
	buf       []byte
}

type partKey struct{ table, platform, date string }

type partition struct {
	partKey
	dir   string
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
		opt.MaxOpen = 32
	}
	if opt.FileRows <= 0 {
		opt.FileRows = fileRows
	}
	if err := os.MkdirAll(opt.Lake, 0o700); err != nil {
		return nil, err
	}
	lk, err := lock(ctx, opt.Lake, opt.LockTimeout)
	if err != nil {
		return nil, err
	}
	l := &Loader{
		opt: opt, ctx: ctx, lock: lk, runID: newRunID(opt.Now()),
		parts: map[partKey]*partition{}, open: map[partKey]*partFile{},
		marks: extract.NewState(), versioned: map[string]bool{},
		stats: Stats{Rows: map[string]int64{}},
	}
	// Files a dead run left half-written are removed: we hold the lock, so
	// no live writer owns them.
	if err := removeTemps(opt.Lake); err != nil {
		unlock(lk)
		return nil, err
	}
	if l.versioned, err = readVersioned(opt.Lake); err != nil {
		unlock(lk)
		return nil, err
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
		return l.stats, err
	}
	err = l.Close()
	return l.stats, err
}

// AddStream adds every record of an NDJSON stream.
func (l *Loader) AddStream(r io.Reader) error {
	n, err := schema.Each(l.ctx, r, l.opt.Name, l.opt.OnSkip, l.Add)
	l.stats.Skipped += n
	return err
}

// Stats returns the counts so far.
func (l *Loader) Stats() Stats { return l.stats }

// Add writes one record (checkpoints are held until Close commits them).
func (l *Loader) Add(rec *schema.Record) error {
	l.stats.In++
	l.tick++
	if rec.Kind == schema.KindCheckpoint {
		if rec.Checkpoint != nil && rec.Checkpoint.Path != "" {
			l.marks.Put(rec.Checkpoint)
		}
		return nil
	}
	if rec.IngestedAt.IsZero() {
		rec.IngestedAt = l.opt.Now()
	}
	if rec.Kind != schema.KindRaw && len(rec.Raw) > 0 {
		// Not normalized: the native record still rides on the record.
		if err := l.add(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw = nil
	}
	if err := l.add(rec); err != nil {
		return err
	}
	if l.tick%1024 == 0 {
		return l.closeIdle()
	}
	return nil
}

func (l *Loader) add(rec *schema.Record) error {
	table := tableFor(rec.Kind)
	hash, size := l.hash(rec)
	if rec.ID == "" {
		rec.ID = schema.ID("anonymous", string(rec.Kind), hash)
	}
	key := partKey{table: table, platform: partValue(rec.Platform), date: dateOf(rec.TS)}
	p, err := l.partition(key)
	if err != nil {
		return err
	}
	idh, ch := xxhash.Sum64String(rec.ID), xxhash.Sum64String(hash)
	if old, ok := p.index[idh]; ok {
		if old == ch {
			l.stats.Duplicates++
			return nil
		}
		l.stats.Versions++
		if !l.versioned[table] {
			// Say so before any file with the new version is in place, so
			// the views never show two versions of a record.
			l.versioned[table] = true
			if err := writeVersioned(l.opt.Lake, l.versioned); err != nil {
				return err
			}
		}
	}
	p.index[idh] = ch
	var row any
	switch table {
	case TableRaw:
		row = rawRow(rec, hash)
	case TableMessages:
		row = messageRow(rec, hash)
	case TableExchanges:
		row = exchangeRow(rec, hash)
	case TableSessions:
		row = sessionRow(rec, hash)
	case TableDocuments:
		row = documentRow(rec, hash)
	default:
		row = otherRow(rec, hash)
	}
	pf := l.open[key]
	if pf == nil {
		if len(l.open) >= l.opt.MaxOpen {
			if err := l.closeLRU(); err != nil {
				return err
			}
		}
		if pf, err = l.openPart(p); err != nil {
			return err
		}
		l.open[key] = pf
	}
	if err := pf.add(row, size, l.tick); err != nil {
		return err
	}
	l.stats.Rows[table]++
	if pf.full() || pf.rows >= l.opt.FileRows {
		delete(l.open, key)
		return l.commit(pf)
	}
	return nil
}

// hash is the content hash that tells a new version of a record from a
// repeat: it covers what the record says, not when or from which file it was
// read, nor which session replayed it.
func (l *Loader) hash(rec *schema.Record) (string, int) {
	if rec.Kind == schema.KindRaw {
		return schema.ContentHash(rec.Raw), len(rec.Raw) + 256
	}
	c := *rec
	c.IngestedAt = time.Time{}
	c.Source = nil
	if c.Kind == schema.KindMessage {
		c.SessionID = ""
	}
	l.buf = schema.AppendRecord(l.buf[:0], &c)
	size := len(l.buf)
	h := schema.ContentHash(l.buf)
	if cap(l.buf) > 16<<20 {
		l.buf = nil
	}
	return h, size
}

var partRE = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// partValue makes a value safe as a hive partition directory name.
func partValue(s string) string {
	if s == "" {
		return "unknown"
	}
	return partRE.ReplaceAllString(s, "_")
}

func dateOf(t time.Time) string {
	if t.IsZero() {
		return "1970-01-01"
	}
	return t.UTC().Format("2006-01-02")
}

// Dir is the directory of a table's partition.
func Dir(lake, table, platform, date string) string {
	if table == TableRaw {
		return filepath.Join(lake, "raw", "platform="+platform, "date="+date)
	}
	return filepath.Join(lake, "indexed", table, "platform="+platform, "date="+date)
}

// TableDir is the root directory of a table.
func TableDir(lake, table string) string {
	if table == TableRaw {
		return filepath.Join(lake, "raw")
	}
	return filepath.Join(lake, "indexed", table)
}

func (l *Loader) partition(key partKey) (*partition, error) {
	if p, ok := l.parts[key]; ok {
		return p, nil
	}
	p := &partition{partKey: key, dir: Dir(l.opt.Lake, key.table, key.platform, key.date)}
	idx, err := l.readIndex(p.dir)
	if err != nil {
		return nil, err
	}
	p.index = idx
	l.parts[key] = p
	return p, nil
}

// readIndex reads the ids and content hashes already in a partition.
func (l *Loader) readIndex(dir string) (map[uint64]uint64, error) {
	idx := map[uint64]uint64{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(files) == 0 {
		return idx, nil
	}
	if l.db == nil {
		db, err := OpenDB("")
		if err != nil {
			return nil, err
		}
		l.db = db
	}
	rows, err := l.db.QueryContext(l.ctx, `SELECT id, content_hash FROM read_parquet(?::VARCHAR[], union_by_name=true)`, files)
	if err != nil {
		return nil, fmt.Errorf("reading ids in %s: %w", dir, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, h string
		if err := rows.Scan(&id, &h); err != nil {
			return nil, err
		}
		idx[xxhash.Sum64String(id)] = xxhash.Sum64String(h)
	}
	return idx, rows.Err()
}

func (l *Loader) commit(pf *partFile) error {
	if err := pf.commit(); err != nil {
		return err
	}
	l.stats.Files++
	// Forget the partition's ids: memory stays bounded by the partitions
	// being written, and a later record for it reads them back from the
	// files, this one included.
	delete(l.parts, pf.part.partKey)
	return nil
}

// closeIdle commits part files no record went to for a while, so a
// backfill that walks through many days keeps few files open.
func (l *Loader) closeIdle() error {
	for k, pf := range l.open {
		if l.tick-pf.lastUse > 50_000 {
			delete(l.open, k)
			if err := l.commit(pf); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Loader) closeLRU() error {
	var oldest *partFile
	var key partKey
	for k, pf := range l.open {
		if oldest == nil || pf.lastUse < oldest.lastUse {
			oldest, key = pf, k
		}
	}
	if oldest == nil {
		return nil
	}
	delete(l.open, key)
	return l.commit(oldest)
}

// Close commits every open file, then the watermarks, then refreshes the
// catalog. The lake is complete after each file rename; the watermarks move
// only once all of this run's files are in place.
func (l *Loader) Close() error {
	defer l.release()
	keys := make([]partKey, 0, len(l.open))
	for k := range l.open {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b partKey) int { return strings.Compare(a.table+a.platform+a.date, b.table+b.platform+b.date) })
	for _, k := range keys {
		pf := l.open[k]
		delete(l.open, k)
		if err := l.commit(pf); err != nil {
			l.abortOpen()
			return err
		}
	}
	if n := l.marks.Len(); n > 0 {
		if err := extract.MergeState(filepath.Join(l.opt.Lake, "_state"), l.marks); err != nil {
			return fmt.Errorf("committing watermarks: %w", err)
		}
		l.stats.Checkpoints = int64(n)
	}
	if err := l.logRun(); err != nil {
		return err
	}
	if !l.opt.NoCatalog {
		l.stats.CatalogErr = WriteCatalog(l.ctx, l.opt.Lake)
	}
	return nil
}

// Abort drops the files that are not in place yet; files already renamed
// are complete and stay (a re-run skips their records).
func (l *Loader) Abort() {
	l.abortOpen()
	l.release()
}

func (l *Loader) abortOpen() {
	for k, pf := range l.open {
		pf.abort()
		delete(l.open, k)
	}
}

func (l *Loader) release() {
	if l.db != nil {
		l.db.Close()
		l.db = nil
	}
	unlock(l.lock)
	l.lock = nil
}

// logRun appends this run's counts to <lake>/_state/runs.ndjson.
func (l *Loader) logRun() error {
	entry := map[string]any{
		"run": l.runID, "at": l.opt.Now().UTC().Format(time.RFC3339), "in": l.stats.In,
		"rows": l.stats.Rows, "duplicates": l.stats.Duplicates, "versions": l.stats.Versions,
		"files": l.stats.Files, "checkpoints": l.marks.Len(), "skipped": l.stats.Skipped,
	}
	b, _ := json.Marshal(entry)
	f, err := os.OpenFile(filepath.Join(l.opt.Lake, "_state", "runs.ndjson"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func removeTemps(lake string) error {
	for _, root := range []string{filepath.Join(lake, "raw"), filepath.Join(lake, "indexed")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".parquet.tmp") {
				return os.Remove(path)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

const versionedFile = "versioned.json"

func readVersioned(lake string) (map[string]bool, error) {
	m := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(lake, "_state", versionedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	return m, json.Unmarshal(b, &m)
}

// Versioned reports, per table, whether the lake holds more than one
// version of some record (the views must then pick the latest).
func Versioned(lake string) map[string]bool {
	m, err := readVersioned(lake)
	if err != nil {
		return map[string]bool{TableRaw: true, TableMessages: true, TableExchanges: true, TableDocuments: true, TableOther: true}
	}
	return m
}

func writeVersioned(lake string, m map[string]bool) error {
	b, _ := json.Marshal(m)
	return extract.WriteFileAtomic(filepath.Join(lake, "_state", versionedFile), b)
}
