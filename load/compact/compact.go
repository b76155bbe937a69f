package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/internal/durable"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// Which files are merged: only small ones, and so many bytes of them at once.
const (
	compactSmall = 8 << 20  // files under this size are merged; a backfill's big files stay as written
	compactMax   = 64 << 20 // bytes of small files merged at once
)

// compactFiles is how many small files a partition holds before they are
// merged (a variable for tests).
var compactFiles = 8

// Remove finishes or removes what a dead run's compaction left:
// staged directories not yet exchanged, or old ones not yet removed
// (neither is where readers look), and a chunks partition exchanged
// without its postings partition, or the reverse.
func Remove(lake string) error {
	dir := filepath.Join(lake, "_state", layout.CompactDir)
	if err := finishChunks(lake, dir); err != nil {
		return fmt.Errorf("finishing an unfinished compaction (see %s): %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing an unfinished compaction: %w", err)
	}
	return nil
}

// compactedTables are the tables whose partitions compaction merges:
// those pos-load writes (postings go with chunks). Summaries are written
// by pos-query without the lake's lock, so their partitions are left as
// written.
var compactedTables = []string{layout.TableRaw, layout.TableMessages, layout.TableExchanges, layout.TableSessions, layout.TableDocuments,
	layout.TableDecisions, layout.TableFileRefs, layout.TableChunks, layout.TableOther}

// AllPartitions lists every partition of the compacted tables.
func AllPartitions(lake string) ([]layout.PartKey, error) {
	var out []layout.PartKey
	for _, table := range compactedTables {
		parts, err := layout.TablePartitions(lake, table)
		if err != nil {
			return nil, err
		}
		out = append(out, parts...)
	}
	return out, nil
}

// A Run is the compaction of one load's partitions.
type Run struct {
	Lake string
	// Name names the next merged file: part-<run>-<sequence>.parquet, as
	// the load names the files it writes.
	Name func() string
	// NoteSchema records, before a merged file of the table is published,
	// the Parquet schema this build writes for it.
	NoteSchema func(table string) error

	Compacted int64 // partitions compacted
	Merged    int64 // files merged in them
}

// Partitions merges the small files of the given partitions.
func (c *Run) Partitions(ctx context.Context, parts []layout.PartKey) error {
	slices.SortFunc(parts, func(a, b layout.PartKey) int {
		return strings.Compare(a.Table+"/"+a.Platform+"/"+a.Date, b.Table+"/"+b.Platform+"/"+b.Date)
	})
	for _, key := range slices.Compact(parts) {
		if !slices.Contains(compactedTables, key.Table) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		merged, err := c.compactPartition(key)
		if errors.Is(err, errors.ErrUnsupported) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("compacting %s: %w", layout.Dir(c.Lake, key.Table, key.Platform, key.Date), err)
		}
		if merged > 0 {
			c.Compacted++
			c.Merged += int64(merged)
		}
	}
	return nil
}

// compactPartition merges the partition's small files if it has enough of
// them, and returns how many it merged.
func (c *Run) compactPartition(key layout.PartKey) (int, error) {
	if key.Table == layout.TableChunks {
		return c.compactChunks(key)
	}
	dir := layout.Dir(c.Lake, key.Table, key.Platform, key.Date)
	small, err := smallFiles(dir, parquet.SchemaOf(layout.RowType(key.Table)), nil)
	if err != nil || len(small) < compactFiles {
		return 0, err
	}
	st, err := c.newStage(key.Table, key.Platform, key.Date)
	if err != nil {
		return 0, err
	}
	defer st.remove()
	name := c.Name()
	if err := mergeParquet(filepath.Join(st.dir, name), dir, small, parquet.SchemaOf(layout.RowType(key.Table))); err != nil {
		return 0, err
	}
	if err := st.link(dir, small); err != nil {
		return 0, err
	}
	if err := durable.SyncFiles(c.Lake, []string{filepath.Join(st.dir, name)}); err != nil {
		return 0, err
	}
	// The merged file has this build's schema (the views read the table
	// with union_by_name unless all its files share one).
	if err := c.NoteSchema(key.Table); err != nil {
		return 0, err
	}
	if err := st.swap(c.Lake, dir); err != nil {
		return 0, err
	}
	return len(small), nil
}

// smallFiles lists the Parquet files of dir to merge: under compactSmall,
// up to compactMax in all, with this build's schema sch column for column
// (rows are copied by column: a file an older build wrote with other
// columns stays as it is), and accepted by ok. It returns nothing for a
// directory holding anything but files (not a partition as pos-load
// writes them).
func smallFiles(dir string, sch *parquet.Schema, ok func(name string) bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var small []string
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return nil, nil
		}
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		if fi.Size() < compactSmall && total+fi.Size() <= compactMax {
			small = append(small, e.Name())
			total += fi.Size()
		}
	}
	if len(small) < compactFiles {
		return nil, nil // the common case: no file opened
	}
	keep := small[:0]
	for _, name := range small {
		same, err := hasSchema(filepath.Join(dir, name), sch)
		if err != nil {
			return nil, err
		}
		if same && (ok == nil || ok(name)) {
			keep = append(keep, name)
		}
	}
	return keep, nil
}

func hasSchema(path string, sch *parquet.Schema) (bool, error) {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return false, err
	}
	defer f.Close()
	return parquet.EqualNodes(sch, pf.Schema()), nil
}

// stage is a directory where a partition's new contents are put together
// before it takes the partition's place.
type stage struct {
	dir     string
	swapped bool
}

func (c *Run) newStage(table, platform, date string) (*stage, error) {
	dir := filepath.Join(c.Lake, "_state", layout.CompactDir, table+"."+platform+"."+date)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &stage{dir: dir}, nil
}

// link adds every file of dir but the merged ones: they stay, linked, not
// copied.
func (st *stage) link(dir string, merged []string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		// A chunks file's merged sidecar is named after the merged file.
		base := strings.TrimSuffix(e.Name(), searchindex.VectorsExt) + ".parquet"
		if slices.Contains(merged, e.Name()) || strings.HasSuffix(e.Name(), searchindex.VectorsExt) && slices.Contains(merged, base) {
			continue
		}
		if err := os.Link(filepath.Join(dir, e.Name()), filepath.Join(st.dir, e.Name())); err != nil {
			if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EXDEV) {
				return errors.ErrUnsupported // a file system without hard links
			}
			return err
		}
	}
	return nil
}

// swap makes the stage the partition directory dir in one step; the old
// directory is then at the stage's path, and goes with remove.
func (st *stage) swap(lake, dir string) error {
	if err := durable.ExchangeDirs(st.dir, dir); err != nil {
		return err
	}
	st.swapped = true
	return durable.SyncDirs(lake, map[string]bool{dir: true, filepath.Dir(st.dir): true})
}

// remove removes the stage: the staged files if it was not swapped, the
// partition's old directory if it was.
func (st *stage) remove() {
	os.RemoveAll(st.dir)
	os.Remove(filepath.Dir(st.dir)) // when empty
}

// mergeParquet writes the rows of the named files of dir, in order, to
// path. Every file has the schema sch (smallFiles).
func mergeParquet(path, dir string, names []string, sch *parquet.Schema) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	// The schema is also an option of parquet.NewWriter: the files' schema.
	w := parquet.NewWriter(out, layout.PartWriterOptions(sch, sch)...)
	err = copyRows(w, dir, names)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func copyRows(w *parquet.Writer, dir string, names []string) error {
	var groupRows int64
	for _, n := range names {
		f, pf, err := layout.OpenParquet(filepath.Join(dir, n), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
		if err != nil {
			return err
		}
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			k, err := parquet.CopyRows(w, rows)
			rows.Close()
			if err != nil && !errors.Is(err, io.EOF) {
				f.Close()
				return fmt.Errorf("%s: %w", n, err)
			}
			if groupRows += k; groupRows >= layout.RowGroupRows {
				if err := w.Flush(); err != nil {
					f.Close()
					return err
				}
				groupRows = 0
			}
		}
		f.Close()
	}
	return nil
}

// chunksJournal says which chunks and postings partitions a compaction is
// exchanging with which staged directories (paths relative to the lake, so
// a lake moved since still reads it), and the merged file's name.
type chunksJournal struct {
	Chunks, Postings string
	StageC, StageP   string
	Merged           string
}

const journalFile = "chunks.json"

// finishChunks completes a chunks compaction a dead run left between its
// two exchanges: the partition not yet exchanged takes its staged
// directory, so both name the merged file.
func finishChunks(lake, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, journalFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var j chunksJournal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil // written atomically: never half a journal; a foreign file
	}
	for _, p := range []*string{&j.Chunks, &j.Postings, &j.StageC, &j.StageP} {
		if !filepath.IsLocal(*p) {
			return fmt.Errorf("%s: %q is not a path inside the lake", journalFile, *p)
		}
		*p = filepath.Join(lake, *p)
	}
	c := layout.FileExists(filepath.Join(j.Chunks, j.Merged))
	p := layout.FileExists(filepath.Join(j.Postings, j.Merged))
	switch {
	case c && !p:
		return durable.ExchangeDirs(j.StageP, j.Postings)
	case p && !c:
		return durable.ExchangeDirs(j.StageC, j.Chunks)
	}
	return nil
}

// compactChunks merges a chunks partition's small files, their vector
// sidecars and their postings files.
func (c *Run) compactChunks(key layout.PartKey) (int, error) {
	lake := c.Lake
	dirC, dirP := layout.Dir(lake, layout.TableChunks, key.Platform, key.Date), layout.Dir(lake, layout.TablePostings, key.Platform, key.Date)
	postingsSchema := parquet.SchemaOf(searchindex.PostingRow{})
	dim, lex := -1, lexical.Version
	small, err := smallFiles(dirC, parquet.SchemaOf(layout.ChunkRow{}), func(name string) bool {
		// Every file merged has its sidecar and its postings, the
		// sidecars one dimension (or none: no vectors), and the postings
		// the current tokenizer's terms (a merged file has one version).
		v, err := searchindex.ReadVectors(filepath.Join(dirC, name), false)
		if err != nil || v.Lexical != lex {
			return false
		}
		if v.Dim != 0 {
			if dim >= 0 && v.Dim != dim {
				return false
			}
			dim = v.Dim
		}
		same, err := hasSchema(filepath.Join(dirP, name), postingsSchema)
		return err == nil && same
	})
	if err != nil || len(small) < compactFiles {
		return 0, err
	}
	stC, err := c.newStage(layout.TableChunks, key.Platform, key.Date)
	if err != nil {
		return 0, err
	}
	defer stC.remove()
	stP, err := c.newStage(layout.TablePostings, key.Platform, key.Date)
	if err != nil {
		return 0, err
	}
	defer stP.remove()
	name := c.Name()
	merged := filepath.Join(stC.dir, name)
	if err := mergeParquet(merged, dirC, small, parquet.SchemaOf(layout.ChunkRow{})); err != nil {
		return 0, err
	}
	post, err := mergePostings(filepath.Join(stP.dir, name), dirP, small)
	if err != nil {
		return 0, err
	}
	if err := searchindex.MergeSidecars(merged, dirC, small, max(dim, 0), post); err != nil {
		return 0, err
	}
	if err := stC.link(dirC, small); err != nil {
		return 0, err
	}
	if err := stP.link(dirP, small); err != nil {
		return 0, err
	}
	vec := strings.TrimSuffix(merged, ".parquet") + searchindex.VectorsExt
	if err := durable.SyncFiles(lake, []string{merged, vec, filepath.Join(stP.dir, name)}); err != nil {
		return 0, err
	}
	for _, t := range []string{layout.TableChunks, layout.TablePostings} {
		if err := c.NoteSchema(t); err != nil {
			return 0, err
		}
	}
	rel := func(p string) string { r, _ := filepath.Rel(lake, p); return r }
	j, _ := json.Marshal(chunksJournal{Chunks: rel(dirC), Postings: rel(dirP), StageC: rel(stC.dir), StageP: rel(stP.dir), Merged: name})
	if err := atomicfile.Write(filepath.Join(lake, "_state", layout.CompactDir, journalFile), j); err != nil {
		return 0, err
	}
	if err := stP.swap(lake, dirP); err != nil {
		return 0, err
	}
	if err := stC.swap(lake, dirC); err != nil {
		// Put the postings back: both partitions as they were.
		if uerr := durable.ExchangeDirs(stP.dir, dirP); uerr != nil {
			return 0, fmt.Errorf("%w (and putting %s back: %v)", err, dirP, uerr)
		}
		return 0, err
	}
	os.Remove(filepath.Join(lake, "_state", layout.CompactDir, journalFile))
	return len(small), nil
}

// mergePostings writes the postings of the named files, sorted by term,
// and returns them.
func mergePostings(path, dir string, names []string) ([]searchindex.PostingRow, error) {
	pf := &layout.PostingsFile{Tmp: path, Path: path}
	for _, n := range names {
		rows, err := parquet.ReadFile[searchindex.PostingRow](filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, n), err)
		}
		pf.Rows = append(pf.Rows, rows...)
	}
	rows := pf.Sorted()
	return rows, pf.Write()
}
