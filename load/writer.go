package load

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/pos-lake/pos/load/internal/durable"
	"os"
	"path/filepath"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/layout"
)

// Limits that bound pos-load's memory and file sizes.
const (
	rowGroupBytes = 8 << 20             // flush a row group after this many bytes of rows
	rowGroupRows  = layout.RowGroupRows // … or this many rows
	fileBytes     = 512 << 20           // start a new part file after this many bytes
	fileRows      = 2_000_000           // … or this many rows
	batchRows     = 128                 // rows handed to parquet-go at a time
)

// rowWriter writes one part file of one partition.
type rowWriter interface {
	add(row any, size int) error
	flushRowGroup() error
	close() error // finishes the file; the caller renames it
	// reset makes a closed writer write a new file to f: its buffers are
	// reused instead of allocated again for each part file.
	reset(f *os.File)
}

type typedWriter[T any] struct {
	w     *parquet.GenericWriter[T]
	batch []T
}

func newTypedWriter[T any](f *os.File) *typedWriter[T] {
	return &typedWriter[T]{
		w:     parquet.NewGenericWriter[T](f, layout.PartWriterOptions(parquet.SchemaOf(new(T)))...),
		batch: make([]T, 0, batchRows),
	}
}

func (t *typedWriter[T]) add(row any, _ int) error {
	t.batch = append(t.batch, row.(T))
	if len(t.batch) == cap(t.batch) {
		return t.writeBatch()
	}
	return nil
}

func (t *typedWriter[T]) writeBatch() error {
	if len(t.batch) == 0 {
		return nil
	}
	err := layout.WriteRows(t.w, t.batch)
	clear(t.batch)
	t.batch = t.batch[:0]
	return err
}

func (t *typedWriter[T]) flushRowGroup() error {
	if err := t.writeBatch(); err != nil {
		return err
	}
	return t.w.Flush()
}

func (t *typedWriter[T]) reset(f *os.File) {
	clear(t.batch)
	t.batch = t.batch[:0]
	t.w.Reset(f)
}

func (t *typedWriter[T]) close() error {
	if err := t.writeBatch(); err != nil {
		return err
	}
	return t.w.Close()
}

func newRowWriter(table string, f *os.File) rowWriter { return rowsFor(table).newWriter(f) }

// partFile is an open part file of a partition, written under a temporary
// name and renamed into place only when complete.
type partFile struct {
	part      *partition
	tmp, path string
	f         *os.File
	w         rowWriter
	rows      int64
	bytes     int64
	groupRows int64
	groupSize int64
	lastUse   int64 // record counter at last write
	huge      bool  // it holds a huge record (see hugeRecord)
	// index is the lexical index and the vector sidecar of a chunks
	// file's rows, written beside it (chunks files only).
	index *chunkIndex
}

// newRunID names this run's files: time first so names sort by run.
func newRunID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

func (l *lane) openPart(p *partition) (*partFile, error) {
	made, err := durable.MkdirAll(p.dir)
	if err != nil {
		return nil, err
	}
	p.made = p.made || made
	if err := l.loader.noteSchema(p.Table); err != nil {
		return nil, err
	}
	name := l.loader.partName()
	path := filepath.Join(p.dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	pf := &partFile{part: p, tmp: tmp, path: path, f: f}
	if idle := l.idle[p.Table]; len(idle) > 0 {
		pf.w = idle[len(idle)-1]
		l.idle[p.Table] = idle[:len(idle)-1]
		pf.w.reset(f)
	} else if w := l.loader.opt.Writers.get(p.Table); w != nil {
		pf.w = w
		pf.w.reset(f)
	} else {
		pf.w = newRowWriter(p.Table, f)
	}
	if p.Table == layout.TableChunks {
		if err := l.loader.noteSchema(layout.TablePostings); err != nil {
			pf.abort()
			return nil, err
		}
		pf.index = newChunkIndex(l.loader.opt.Lake, p, name)
	}
	return pf, nil
}

func (pf *partFile) add(row any, size int, tick int64) error {
	if err := pf.w.add(row, size); err != nil {
		return err
	}
	pf.rows++
	pf.groupRows++
	pf.bytes += int64(size)
	pf.groupSize += int64(size)
	pf.lastUse = tick
	if pf.groupSize >= rowGroupBytes || pf.groupRows >= rowGroupRows {
		pf.groupSize, pf.groupRows = 0, 0
		return pf.w.flushRowGroup()
	}
	return nil
}

func (pf *partFile) full() bool {
	return pf.bytes >= fileBytes || pf.rows >= fileRows || pf.index != nil && pf.index.full()
}

// finish completes the file under its temporary name. It is published
// (synced, then renamed into place) with others, by Loader.publish.
func (pf *partFile) finish() error {
	err := pf.w.close()
	if cerr := pf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(pf.tmp)
		return fmt.Errorf("writing %s: %w", pf.path, err)
	}
	if pf.index != nil {
		if err := pf.index.write(); err != nil {
			os.Remove(pf.tmp)
			return err
		}
	}
	return nil
}

// abort drops an unfinished file.
func (pf *partFile) abort() {
	pf.f.Close()
	os.Remove(pf.tmp)
	if pf.index != nil {
		pf.index.abort()
	}
}
