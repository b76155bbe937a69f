package load

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/schema"
)

// Compaction. Each incremental load adds a small part file to every
// partition it touches (an agent hook that syncs after each turn adds one
// to today's partitions and to those of the sessions it continues), and
// every query and every later load opens them all. Once a partition holds
// compactFiles small files, pos-load merges them into one.
//
// Readers never see a partition half-compacted: the merged file and links
// to the files that stay are put in a new directory beside the lake's
// files, which then takes the partition directory's place in one atomic
// exchange of the two (renameat2 RENAME_EXCHANGE); the old directory is
// removed after. A run that dies midway leaves only a directory under
// <lake>/_state/compact, which the next load removes. Where the exchange
// is not available, partitions are not compacted.
const (
	compactSmall = 8 << 20  // files under this size are merged; a backfill's big files stay as written
	compactMax   = 64 << 20 // bytes of small files merged at once
)

// compactFiles is how many small files a partition holds before they are
// merged (a variable for tests).
var compactFiles = 8

// compactDir is where partitions are staged, inside <lake>/_state.
const compactDir = "compact"

// compactable tells whether a table's partitions are compacted. A chunks
// file has postings and vectors files named after it; they stay as
// written.
func compactable(table string) bool { return table != TableChunks }

// removeCompactions removes what a dead run's compaction left: staged
// directories not yet exchanged, or old ones not yet removed. Neither is
// where readers look.
func removeCompactions(lake string) error {
	err := os.RemoveAll(filepath.Join(lake, "_state", compactDir))
	if err != nil {
		return fmt.Errorf("removing an unfinished compaction: %w", err)
	}
	return nil
}

// compact merges the small files of the partitions this run wrote to.
func (l *Loader) compact(parts []partKey) error {
	slices.SortFunc(parts, func(a, b partKey) int {
		return strings.Compare(a.table+"/"+a.platform+"/"+a.date, b.table+"/"+b.platform+"/"+b.date)
	})
	for _, key := range slices.Compact(parts) {
		if !compactable(key.table) {
			continue
		}
		if err := l.ctx.Err(); err != nil {
			return err
		}
		merged, err := l.compactPartition(key)
		if errors.Is(err, errors.ErrUnsupported) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("compacting %s: %w", Dir(l.opt.Lake, key.table, key.platform, key.date), err)
		}
		if merged > 0 {
			l.stats.Compacted++
			l.stats.Merged += int64(merged)
		}
	}
	return nil
}

// compactPartition merges the partition's small files if it has enough of
// them, and returns how many it merged.
func (l *Loader) compactPartition(key partKey) (int, error) {
	dir := Dir(l.opt.Lake, key.table, key.platform, key.date)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	var small []string
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return 0, nil // not a partition as pos-load writes them: left alone
		}
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return 0, err
		}
		if fi.Size() < compactSmall && total+fi.Size() <= compactMax {
			small = append(small, e.Name())
			total += fi.Size()
		}
	}
	if len(small) < compactFiles {
		return 0, nil
	}
	stage := filepath.Join(l.opt.Lake, "_state", compactDir, key.table+"."+key.platform+"."+key.date)
	if err := os.RemoveAll(stage); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return 0, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(stage)
		}
	}()
	name := fmt.Sprintf("part-%s-%05d.parquet", l.runID, l.seq.Add(1))
	merged, err := mergeParquet(filepath.Join(stage, name), dir, small, parquet.SchemaOf(rowType(key.table)))
	if err != nil || merged == nil {
		return 0, err
	}
	// Everything else in the partition stays: linked, not copied.
	for _, e := range ents {
		if !slices.Contains(merged, e.Name()) && e.Type().IsRegular() {
			if err := os.Link(filepath.Join(dir, e.Name()), filepath.Join(stage, e.Name())); err != nil {
				return 0, err
			}
		}
	}
	if err := syncFiles(l.opt.Lake, []string{filepath.Join(stage, name)}); err != nil {
		return 0, err
	}
	if err := exchangeDirs(stage, dir); err != nil {
		return 0, err
	}
	// The partition directory is the staged one now; the old one is at
	// stage, and goes.
	if err := syncDirs(l.opt.Lake, map[string]bool{dir: true, filepath.Dir(stage): true}); err != nil {
		return 0, err
	}
	done = true
	if err := os.RemoveAll(stage); err != nil {
		return 0, err
	}
	os.Remove(filepath.Dir(stage)) // when empty
	return len(merged), nil
}

// mergeParquet writes the rows of the named files of dir, in order, to
// path, and returns the names it merged: those with this build's schema of
// the table, sch, column for column (a file an older build wrote with other
// columns stays as it is). It returns nil when fewer than compactFiles
// files have it.
func mergeParquet(path, dir string, names []string, sch *parquet.Schema) ([]string, error) {
	type src struct {
		f    *os.File
		pf   *parquet.File
		name string
	}
	var srcs []src
	defer func() {
		for _, s := range srcs {
			s.f.Close()
		}
	}()
	for _, n := range names {
		f, pf, err := OpenParquet(filepath.Join(dir, n), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
		if err != nil {
			return nil, err
		}
		// Rows are copied column by column: the same columns, in the same
		// order, of the same types.
		if !parquet.EqualNodes(sch, pf.Schema()) {
			f.Close()
			continue
		}
		srcs = append(srcs, src{f, pf, n})
	}
	if len(srcs) < compactFiles {
		return nil, nil
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	w := parquet.NewWriter(out, sch,
		parquet.Compression(&pageCodec),
		parquet.CreatedBy("pos", schema.Version, ""),
		parquet.KeyValueMetadata("pos.schema", schema.Version),
		parquet.PageBufferSize(pageBytes),
	)
	var merged []string
	var groupRows int64
	for _, s := range srcs {
		for _, rg := range s.pf.RowGroups() {
			rows := rg.Rows()
			n, err := parquet.CopyRows(w, rows)
			rows.Close()
			if err != nil && !errors.Is(err, io.EOF) {
				out.Close()
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			if groupRows += n; groupRows >= rowGroupRows {
				if err := w.Flush(); err != nil {
					out.Close()
					return nil, err
				}
				groupRows = 0
			}
		}
		merged = append(merged, s.name)
	}
	err = w.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return merged, nil
}
