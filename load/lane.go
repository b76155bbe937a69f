package load

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/internal/durable"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

// lane writes the tables routed to it, in its own goroutine: their
// partitions, open part files and finished files are its alone.
type lane struct {
	loader *Loader
	in     chan item
	done   chan struct{} // closed when run returns; err is then set
	err    error

	tick  int64
	parts map[layout.PartKey]*partition
	open  map[layout.PartKey]*partFile
	// finished part files, complete under their temporary names, waiting
	// to be published
	finished      []*partFile
	finishedBytes int64
	published     time.Time        // when the lane last published
	touched       []layout.PartKey // partitions the lane put files in
	buf           []byte
	// idle holds closed writers per table, for the next part file
	idle      map[string][]rowWriter
	stats     Stats
	aborting  atomic.Bool
	closeOnce sync.Once
}

func newLane(l *Loader) *lane {
	return &lane{
		loader: l, in: make(chan item, 256), done: make(chan struct{}),
		parts: map[layout.PartKey]*partition{}, open: map[layout.PartKey]*partFile{}, idle: map[string][]rowWriter{},
		published: time.Now(),
		stats:     Stats{Rows: map[string]int64{}},
	}
}

// run writes every record sent to the lane. When the channel is closed it
// finishes its files, unless the load is being aborted; they are published
// by the Loader, with the other lanes' (publishLanes).
func (l *lane) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		it, ok, err := l.next(timer)
		if !ok {
			break
		}
		l.err = err
		if l.err == nil && it.rec != nil {
			l.err = l.add(it.rec)
			l.loader.inflight.Release(it.n)
			if it.n >= hugeRecord {
				// A huge record's copies (decoded, hashed, encoded in
				// pages) are garbage now: collected at once, they are
				// not still there when the next huge record comes.
				runtime.GC()
			}
			if l.err == nil && l.tick%1024 == 0 {
				l.err = l.closeIdle()
			}
		}
		if l.err != nil {
			l.loader.failedOnce.Do(func() { close(l.loader.failed) })
			l.abortFiles()
			return
		}
	}
	if l.aborting.Load() {
		l.abortFiles()
		return
	}
	if l.err = l.closeAll(); l.err != nil {
		l.abortFiles()
		return
	}
	for t, ws := range l.idle {
		for _, w := range ws {
			l.loader.opt.Writers.put(t, w)
		}
	}
}

// item is a record sent to a lane, with the bytes of the Loader's
// inflight budget it holds until the lane has written it.
type item struct {
	rec *schema.Record
	n   int64
}

// next returns the next record (ok false once the input is closed). While
// the input is idle it publishes the finished files once they have waited
// publishEvery (returning no record), so a stalled stream's files become
// visible.
func (l *lane) next(timer *time.Timer) (it item, ok bool, err error) {
	select {
	case it, ok = <-l.in:
		return it, ok, nil
	default:
	}
	if len(l.finished) == 0 {
		it, ok = <-l.in
		return it, ok, nil
	}
	wait := publishEvery - time.Since(l.published)
	if wait > 0 {
		timer.Reset(wait)
		select {
		case it, ok = <-l.in:
			timer.Stop()
			return it, ok, nil
		case <-timer.C:
		}
	}
	return item{}, true, l.publish()
}

// closeAll finishes the open files; the Loader publishes what they and
// the other lanes left finished together (publishLanes).
func (l *lane) closeAll() error {
	for k, pf := range l.open {
		delete(l.open, k)
		if err := l.commit(pf); err != nil {
			return err
		}
	}
	return nil
}

// end closes the lane's input (once) without waiting for it to finish
// (see Loader.stopLanes); with abort, its unpublished files are dropped
// instead of published.
func (l *lane) end(abort bool) {
	if abort {
		l.aborting.Store(true)
	}
	l.closeOnce.Do(func() { close(l.in) })
}

func (l *lane) abortFiles() {
	for k, pf := range l.open {
		pf.abort()
		delete(l.open, k)
	}
	for _, pf := range l.finished {
		os.Remove(pf.tmp)
		if pf.index != nil {
			pf.index.abort()
		}
	}
	l.finished = nil
}

func (l *lane) add(rec *schema.Record) error {
	l.tick++
	table := tableFor(rec.Kind)
	hash, size := l.hash(rec)
	if rec.ID == "" {
		rec.ID = schema.ID("anonymous", string(rec.Kind), hash)
	}
	key := layout.PartKey{Table: table, Platform: layout.PartValue(rec.Platform), Date: layout.DateOf(partitionTime(rec))}
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
		if err := l.loader.markVersioned(table); err != nil {
			return err
		}
	}
	p.index[idh] = ch
	var row any
	if table != layout.TableChunks { // a chunk's row is made below, with its part file's index
		row = rowsFor(table).row(rec, hash)
	}
	pf := l.open[key]
	if pf == nil {
		if len(l.open) >= l.loader.opt.MaxOpen {
			if err := l.closeLRU(); err != nil {
				return err
			}
		}
		if pf, err = l.openPart(p); err != nil {
			return err
		}
		l.open[key] = pf
	}
	if table == layout.TableChunks {
		row = chunkRow(rec, hash, pf.index)
	}
	if err := pf.add(row, size, l.tick); err != nil {
		return err
	}
	l.stats.Rows[table]++
	if size >= hugeRecord {
		// Its writer's buffers are now the size of the record: the file
		// is finished at once and the writer dropped, not kept open or
		// idle with them.
		pf.huge = true
	}
	if pf.full() || pf.rows >= l.loader.opt.FileRows || pf.huge {
		delete(l.open, key)
		return l.commit(pf)
	}
	return nil
}

// hash is the content hash that tells a new version of a record from a
// repeat: it covers what the record says, not when or from which file it was
// read, nor which session replayed it.
func (l *lane) hash(rec *schema.Record) (string, int) {
	if rec.Kind == schema.KindRaw {
		return schema.ContentHash(rec.Raw), len(rec.Raw) + 256
	}
	c := *rec
	c.IngestedAt = time.Time{}
	c.Source = nil
	if c.Kind == schema.KindMessage {
		c.SessionID = ""
	}
	if n := schema.SizeHint(rec); cap(l.buf) < n {
		// Sized once: grown by appends, a huge record's encoding would
		// leave copies of half, a quarter … of it behind.
		l.buf = make([]byte, 0, n)
	}
	l.buf = schema.AppendRecord(l.buf[:0], &c)
	size := len(l.buf)
	h := schema.ContentHash(l.buf)
	if cap(l.buf) > 16<<20 {
		l.buf = nil
	}
	return h, size
}

// partitionTime is the time whose day names a record's date partition: its
// ts, but a session rollup's latest activity. A sync writes the rollups of
// the sessions it read to the days of their new lines (usually one), not to
// the day each open exchange began; the sessions view combines a session's
// rollups from every partition, so where one lies changes no answer.
func partitionTime(rec *schema.Record) time.Time {
	if rec.Kind == schema.KindSession && rec.Session != nil && !rec.Session.LastTS.IsZero() {
		return rec.Session.LastTS
	}
	return rec.TS
}

func (l *lane) partition(key layout.PartKey) (*partition, error) {
	if p, ok := l.parts[key]; ok {
		return p, nil
	}
	p := &partition{PartKey: key, dir: layout.Dir(l.loader.opt.Lake, key.Table, key.Platform, key.Date)}
	idx, err := l.readIndex(p.dir)
	if err != nil {
		return nil, err
	}
	p.index = idx
	l.parts[key] = p
	return p, nil
}

// readIndex reads the ids and content hashes already in a partition.
func (l *lane) readIndex(dir string) (map[uint64]uint64, error) {
	idx := map[uint64]uint64{}
	files, _ := filepath.Glob(filepath.Join(fsglob.Quote(dir), "*.parquet"))
	for _, f := range files {
		if err := l.loader.opt.IDs.addIDs(f, idx); err != nil {
			return nil, fmt.Errorf("reading ids in %s: %w", dir, err)
		}
	}
	return idx, nil
}

// commit finishes a part file; it becomes visible at the next publish.
func (l *lane) commit(pf *partFile) error {
	if err := pf.finish(); err != nil {
		return err
	}
	if t := pf.part.Table; pf.huge {
		// A huge record's buffers are not kept.
	} else if len(l.idle[t]) < maxIdle {
		l.idle[t] = append(l.idle[t], pf.w)
	} else {
		l.loader.opt.Writers.put(t, pf.w)
	}
	pf.w = nil
	l.finished = append(l.finished, pf)
	l.finishedBytes += pf.bytes
	if pf.index != nil {
		l.stats.Rows[layout.TablePostings] += pf.index.post.Written
	}
	if len(l.finished) >= publishFiles || l.finishedBytes >= publishBytes || time.Since(l.published) >= publishEvery {
		return l.publish()
	}
	return nil
}

// maxIdle bounds the closed writers a lane keeps per table for reuse.
const maxIdle = 2

// Finished files are published in batches: one sync of the file system for
// many files instead of one fsync each (a sync costs about as much
// whatever it covers). The count bounds the partitions whose ids stay in
// memory until then; files wait at most about publishEvery to be visible.
// An incremental load's files all go in the one publish at the end.
const (
	publishFiles = 256
	publishBytes = 256 << 20
	publishEvery = time.Second
)

// publish makes the lane's finished files durable, then renames them into
// place, then makes the renames durable. Until then a partition's ids stay
// in memory (the files are not where readIndex looks).
func (l *lane) publish() error {
	return publishLanes(l.loader.opt.Lake, []*lane{l})
}

// publishLanes publishes the finished files of the lanes with two syncs of
// the file system in all (each costs about as much whatever it covers).
func publishLanes(lake string, lanes []*lane) error {
	var paths []string
	for _, l := range lanes {
		for _, pf := range l.finished {
			paths = append(paths, pf.tmp)
			if pf.index != nil {
				paths = append(paths, pf.index.tmps()...)
			}
		}
	}
	for _, l := range lanes {
		l.published = time.Now()
	}
	if len(paths) == 0 {
		return nil
	}
	if err := durable.SyncFiles(lake, paths); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, l := range lanes {
		if err := l.rename(dirs); err != nil {
			return err
		}
	}
	return durable.SyncDirs(lake, dirs)
}

// rename puts the lane's finished (and synced) files in place and adds
// their directories to dirs.
func (l *lane) rename(dirs map[string]bool) error {
	for len(l.finished) > 0 {
		pf := l.finished[0]
		// A chunk's postings and vectors go in place before the chunk.
		if pf.index != nil {
			n, err := pf.index.publish()
			l.stats.Files += int64(n)
			if err != nil {
				return err
			}
			d := filepath.Dir(pf.index.post.Path)
			dirs[d] = dirs[d] || pf.index.post.Made
		}
		if err := os.Rename(pf.tmp, pf.path); err != nil {
			return fmt.Errorf("publishing %s: %w", pf.path, err)
		}
		l.stats.Files++
		dirs[pf.part.dir] = dirs[pf.part.dir] || pf.part.made
		if n := len(l.touched); n == 0 || l.touched[n-1] != pf.part.PartKey {
			l.touched = append(l.touched, pf.part.PartKey)
		}
		l.finishedBytes -= pf.bytes
		l.finished[0] = nil
		l.finished = l.finished[1:]
		// Forget the partition's ids: memory stays bounded by the
		// partitions being written; a later record for it reads them back
		// from the files, this one included.
		if l.open[pf.part.PartKey] == nil {
			delete(l.parts, pf.part.PartKey)
		}
	}
	l.finished, l.finishedBytes = nil, 0
	return nil
}

// closeIdle commits part files no record went to for a while, so a
// backfill that walks through many days keeps few files open.
func (l *lane) closeIdle() error {
	for k, pf := range l.open {
		if l.tick-pf.lastUse > 20_000 {
			delete(l.open, k)
			if err := l.commit(pf); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lane) closeLRU() error {
	var oldest *partFile
	var key layout.PartKey
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
