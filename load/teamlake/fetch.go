package teamlake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
)

// FetchReport is what bringing a table of the cache up to date did.
type FetchReport struct {
	Table      string `json:"table"`
	Snapshot   int64  `json:"snapshot"`          // the snapshot the cache now holds, 0: the table is empty
	Files      int    `json:"files"`             // data files of the snapshot
	Downloaded int    `json:"downloaded"`        // of those, fetched now
	Bytes      int64  `json:"bytes"`             // bytes fetched now
	Removed    int    `json:"removed"`           // cached files no longer in the snapshot
	Indexed    int    `json:"indexed,omitempty"` // chunks files given their postings and sidecar now
}

// Fetch brings cache, a directory laid out as a local lake, up to date
// with the current snapshot of each table (none: Tables): it downloads
// the data files it does not hold yet into the table's platform=/date=
// directory and removes those the snapshot no longer lists. Iceberg never
// rewrites a data file in place, so a file held under its name is the
// file the snapshot lists; a repeated Fetch of an unchanged lake reads
// the tables' metadata only.
func (l *Lake) Fetch(ctx context.Context, cache string, tables ...string) (out []FetchReport, err error) {
	if len(tables) == 0 {
		tables = Tables
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return nil, err
	}
	// The cache is a lake: one writer at a time, as pos-load keeps it.
	release, dirty, err := load.Lock(ctx, cache, lockTimeout)
	if err != nil {
		return nil, err
	}
	defer func() { release(err == nil) }()
	if dirty {
		if err := removeTemps(cache); err != nil {
			return nil, err
		}
	}
	scrub, err := load.ReadScrubState(cache)
	if err != nil {
		return nil, err
	}
	before := maps.Clone(scrub.Tables)
	versioned, err := layout.ReadVersioned(cache)
	if err != nil {
		return nil, err
	}
	wasVersioned := maps.Clone(versioned)
	// The tables' current metadata is asked for at once: a fetch that finds
	// everything cached costs one round trip to the catalog, not seven.
	tbls := make([]*table.Table, len(tables))
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, name := range tables {
		wg.Go(func() { tbls[i], errs[i] = l.Table(ctx, name) })
	}
	wg.Wait()
	for i, name := range tables {
		rep, err := l.fetchTable(ctx, cache, name, tbls[i], errs[i], scrub, versioned)
		if err != nil {
			return out, fmt.Errorf("fetching %s: %w", name, err)
		}
		out = append(out, rep)
	}
	if !maps.EqualFunc(before, scrub.Tables, maps.Equal) {
		if err := load.WriteScrubState(cache, scrub); err != nil {
			return out, err
		}
	}
	if !maps.Equal(wasVersioned, versioned) {
		if err := layout.WriteVersioned(cache, versioned); err != nil {
			return out, err
		}
	}
	// What the cache derives from its files is brought up to date when
	// they changed, or when the last fetch did not end and may have left
	// it behind them.
	changed := func(name string) bool {
		i := slices.Index(tables, name)
		return i >= 0 && (dirty || out[i].Downloaded+out[i].Removed > 0)
	}
	if changed(layout.TableMessages) || slices.Contains(tables, layout.TableMessages) && !maps.Equal(wasVersioned, versioned) {
		// pos-query stats reads the token sums a load keeps, not the
		// messages, where they are up to date.
		if err := rollup.UpdateRollup(ctx, cache); err != nil {
			return out, fmt.Errorf("the cache's usage rollup: %w", err)
		}
	}
	if changed(layout.TableChunks) {
		i := slices.Index(tables, layout.TableChunks)
		// Search reads a chunks file through its postings and sidecar,
		// which the shared lake does not hold: they are made here.
		n, err := load.IndexChunks(cache)
		out[i].Indexed = n
		if err != nil {
			return out, fmt.Errorf("indexing the fetched chunks: %w", err)
		}
	}
	return out, nil
}

// keepScrub records in the cache's scrub state how the table's rows were
// scrubbed, as its publishers recorded it (ScrubRecord); a table that
// records nothing has rows of unknown scrubbing.
func keepScrub(st *load.ScrubState, name string, tbl *table.Table) error {
	marks, err := ScrubRecord(tbl.Properties())
	if err != nil {
		return err
	}
	if len(marks) == 0 {
		marks = map[string]int64{load.ScrubUnknown: 0}
	}
	st.Tables[name] = marks
	return nil
}

// lockTimeout is how long a fetch waits for another to finish with the
// same cache.
const lockTimeout = 10 * time.Minute

// removeTemps removes the files a killed fetch left half downloaded.
func removeTemps(cache string) error {
	return filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), tempPrefix) {
			return err
		}
		return os.Remove(path)
	})
}

// fetchTable brings one table of the cache up to date from tbl, loaded
// with err; it records in versioned whether the table holds some record
// in more than one version.
func (l *Lake) fetchTable(ctx context.Context, cache, name string, tbl *table.Table, err error,
	scrub *load.ScrubState, versioned map[string]bool) (FetchReport, error) {
	rep := FetchReport{Table: name}
	if errors.Is(err, catalog.ErrNoSuchTable) {
		delete(scrub.Tables, name)
		delete(versioned, name)
		return rep, removeStale(cache, name, nil, &rep)
	}
	if err != nil {
		return rep, err
	}
	if err := keepScrub(scrub, name, tbl); err != nil {
		return rep, err
	}
	if name == layout.TableChunks {
		ms, err := tableModels(tbl)
		if err != nil {
			return rep, err
		}
		if err := keepModels(cache, ms); err != nil {
			return rep, err
		}
	}
	want := map[string]string{} // cache path → data file
	if snap := tbl.CurrentSnapshot(); snap != nil {
		rep.Snapshot = snap.SnapshotID
		if n, ok := fetched(cache, name, snap.SnapshotID); ok {
			rep.Files = n // the snapshot the cache holds whole: no manifest to read
			if _, known := versioned[name]; known {
				return rep, nil
			}
			return rep, markVersioned(ctx, tbl, name, versioned)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return rep, err
		}
		plat, day, err := partitionFields(tbl)
		if err != nil {
			return rep, err
		}
		for _, t := range tasks {
			if len(t.DeleteFiles) > 0 {
				return rep, fmt.Errorf("%s has delete files, which pos does not write", t.File.FilePath())
			}
			p := t.File.Partition()
			dir := layout.Dir(cache, name, layout.PartValue(fmt.Sprint(p[plat])), dateOfDay(p[day]))
			want[filepath.Join(dir, path.Base(t.File.FilePath()))] = t.File.FilePath()
		}
	}
	rep.Files = len(want)
	if err := removeStale(cache, name, want, &rep); err != nil {
		return rep, err
	}
	if err := markVersioned(ctx, tbl, name, versioned); err != nil {
		return rep, err
	}
	var missing []string
	for local := range want {
		if _, err := os.Stat(local); err != nil {
			missing = append(missing, local)
		}
	}
	if len(missing) > 0 {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return rep, err
		}
		// Data files are many and small: a few downloads at a time keep the
		// connection busy while each waits on the server.
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(downloads)
		for _, local := range missing {
			g.Go(func() error {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				n, err := download(fsys, want[local], local)
				if err != nil {
					return err
				}
				mu.Lock()
				rep.Downloaded++
				rep.Bytes += n
				mu.Unlock()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return rep, err
		}
	}
	return rep, markFetched(cache, name, rep.Snapshot, want)
}

// markVersioned records whether the table's current snapshot holds an id
// in more than one version: two machines' copies of a session, or a record
// that changed between two publishes. The cache's views then keep the
// latest version of each record, as a local lake's do (layout.Versioned).
func markVersioned(ctx context.Context, tbl *table.Table, name string, versioned map[string]bool) error {
	if tbl.CurrentSnapshot() == nil {
		versioned[name] = false
		return nil
	}
	_, _, sameID, err := scanKeys(ctx, tbl)
	if err != nil {
		return err
	}
	versioned[name] = sameID > 0
	return nil
}

// fetchedState records, in the cache's _state, the snapshot each table's
// files were last brought up to date with, and those files.
type fetchedState struct {
	Snapshot int64    `json:"snapshot"`
	Files    []string `json:"files"` // below the cache
}

func fetchedPath(cache, name string) string {
	return filepath.Join(cache, "_state", "teamlake", "fetched-"+name+".json")
}

// fetched tells whether the cache holds every file of the table's
// snapshot, and how many there are.
func fetched(cache, name string, snapshot int64) (int, bool) {
	b, err := os.ReadFile(fetchedPath(cache, name))
	if err != nil {
		return 0, false
	}
	var st fetchedState
	if json.Unmarshal(b, &st) != nil || st.Snapshot != snapshot {
		return 0, false
	}
	for _, f := range st.Files {
		if _, err := os.Stat(filepath.Join(cache, filepath.FromSlash(f))); err != nil {
			return 0, false
		}
	}
	return len(st.Files), true
}

func markFetched(cache, name string, snapshot int64, files map[string]string) error {
	st := fetchedState{Snapshot: snapshot, Files: []string{}}
	for f := range files {
		rel, err := filepath.Rel(cache, f)
		if err != nil {
			return err
		}
		st.Files = append(st.Files, filepath.ToSlash(rel))
	}
	slices.Sort(st.Files)
	return writeState(fetchedPath(cache, name), st)
}

// keepModels records a table's embedding models as the cache's, unless it
// has them already.
func keepModels(cache string, ms []layout.EmbeddingModel) error {
	if len(ms) == 0 {
		return nil
	}
	have, err := layout.Embeddings(cache)
	if err == nil && slices.EqualFunc(have, ms, sameModel) {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(cache, "_state"), 0o700); err != nil {
		return err
	}
	return layout.WriteEmbeddings(cache, ms)
}

// writeState writes a state file of the package's as JSON, whole.
func writeState(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}

// downloads bounds the data files a fetch downloads at once.
const downloads = 8

// tempPrefix begins the names of files being downloaded.
const tempPrefix = ".fetch-"

// download copies a data file into the cache under a temporary name and
// renames it into place, so the cache never holds part of a file.
func download(fsys iceio.IO, remote, local string) (int64, error) {
	src, err := fsys.Open(remote)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), tempPrefix+"*")
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), local)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("%s: %w", remote, err)
	}
	return n, nil
}

// removeStale removes the table's cached files that are not in want.
func removeStale(cache, name string, want map[string]string, rep *FetchReport) error {
	parts, err := layout.TablePartitions(cache, name)
	if err != nil {
		return err
	}
	for _, pk := range parts {
		files, err := layout.PartFiles(cache, name, pk.Platform, pk.Date)
		if err != nil {
			return err
		}
		for _, f := range files {
			if _, ok := want[f]; ok {
				continue
			}
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			rep.Removed++
		}
	}
	return nil
}

// partitionFields are the field ids of a table's platform and day
// partitions.
func partitionFields(tbl *table.Table) (plat, day int, err error) {
	plat, day = -1, -1
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		switch f.Name {
		case "platform":
			plat = f.FieldID
		case "day":
			day = f.FieldID
		}
	}
	if plat < 0 || day < 0 {
		return 0, 0, fmt.Errorf("%s is not partitioned by platform and day", strings.Join(tbl.Identifier(), "."))
	}
	return plat, day, nil
}

// dateOfDay is the local lake's date partition of an Iceberg day
// partition value (days since 1970-01-01); a record with no time, which
// the local lake files under 1970-01-01, has a day before that.
func dateOfDay(v any) string {
	rv := reflect.ValueOf(v) // an int32 kind: iceberg.Date or a plain int32
	if !rv.IsValid() || !rv.CanInt() || rv.Int() < 0 {
		return layout.DateOf(time.Time{})
	}
	return time.Unix(rv.Int()*86400, 0).UTC().Format("2006-01-02")
}
