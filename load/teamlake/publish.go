package teamlake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/transform/scrub"
)

// maxAttempts bounds the commits a table's publish tries when other
// machines' commits keep landing first.
const maxAttempts = 10

// TableReport is what publishing one table did.
type TableReport struct {
	Table    string `json:"table"`
	Files    int    `json:"files"`    // local part files sent
	Rows     int64  `json:"rows"`     // their rows
	Added    int64  `json:"added"`    // rows committed: those the table did not hold
	Attempts int    `json:"attempts"` // commits tried (more than one: conflicts)
	Snapshot int64  `json:"snapshot"` // the table's snapshot after the commit, 0 if none was needed
	// OutOfScope counts the rows of the files sent that Options' projects
	// left out.
	OutOfScope int64 `json:"out_of_scope"`
	// Redactions counts what the publish's own scrub (Options.PII)
	// redacted in the rows sent.
	Redactions int64 `json:"redactions"`
	// Scrub counts the added rows by scrub mark, as added to the shared
	// table's ScrubProperty.
	Scrub map[string]int64 `json:"scrub,omitempty"`
}

// Publish sends the part files of the local lake's tables (none: Tables,
// and raw with Options.Raw) that this shared lake has not had from it,
// a commit for each group of files of up to groupBytes, and records them
// as sent in the local lake's _state after each commit. Only the rows of the projects in scope are sent, scrubbed again
// with Options.PII (scope.go). A file once sent is not sent again: rows a
// narrower scope left out of it are sent only if the record of what was
// sent (_state/teamlake) is removed.
func (l *Lake) Publish(ctx context.Context, local string, tables ...string) ([]TableReport, error) {
	if len(tables) == 0 {
		tables = Tables
		if l.opt.Raw {
			tables = append(slices.Clone(Tables), layout.TableRaw)
		}
	}
	if slices.Contains(tables, layout.TableRaw) && !l.opt.Raw {
		return nil, errors.New("the raw table holds the native records whole: it is published only when asked (--raw)")
	}
	if err := errors.Join(CheckProjectPatterns(l.opt.OnlyProjects), CheckProjectPatterns(l.opt.DenyProjects)); err != nil {
		return nil, err
	}
	var scr *scrub.Scrubber
	if l.opt.PII {
		var err error
		if scr, err = scrub.New(scrub.Options{Key: l.opt.ScrubKey, PII: true}); err != nil {
			return nil, err
		}
	}
	st, err := load.ReadScrubState(local)
	if err != nil {
		return nil, err
	}
	var sessions map[string][]string
	if l.opt.scoped() {
		if sessions, err = sessionProjects(ctx, local); err != nil {
			return nil, err
		}
	}
	if err := l.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	sent, err := l.readSent(local)
	if err != nil {
		return nil, err
	}
	var out []TableReport
	for _, name := range tables {
		rep := TableReport{Table: name}
		paths, keys, err := unsentFiles(local, name, sent[name])
		pub := tablePublish{name: name, scrubber: scr, state: st, sessions: sessions, held: &heldCache{}}
		for _, p := range paths {
			pub.platforms = append(pub.platforms, platformOf(p))
		}
		slices.Sort(pub.platforms)
		pub.platforms = slices.Compact(pub.platforms)
		for _, g := range fileGroups(paths, keys, groupBytes) {
			if err != nil {
				break
			}
			if err = l.publishFiles(ctx, pub, g.paths, &rep); err == nil {
				sent[name] = append(sent[name], g.keys...)
				slices.Sort(sent[name])
				err = l.writeSent(local, sent)
			}
		}
		out = append(out, rep)
		if err != nil {
			return out, fmt.Errorf("publishing %s: %w", name, err)
		}
	}
	if slices.Contains(tables, layout.TableChunks) {
		return out, l.publishEmbeddings(ctx, local)
	}
	return out, nil
}

// groupBytes bounds the local files one commit sends: what a killed
// publish or a lost commit race writes again.
const groupBytes = 32 << 20

// fileGroup is the local files one commit sends, and their keys.
type fileGroup struct{ paths, keys []string }

// fileGroups splits files (paths, and keys that end in their size) into
// groups of up to max bytes, a larger file alone.
func fileGroups(paths, keys []string, max int64) []fileGroup {
	var out []fileGroup
	var n int64
	for i, p := range paths {
		b, _ := strconv.ParseInt(keys[i][strings.LastIndexByte(keys[i], ' ')+1:], 10, 64)
		if len(out) == 0 || n+b > max && len(out[len(out)-1].paths) > 0 {
			out, n = append(out, fileGroup{}), 0
		}
		g := &out[len(out)-1]
		g.paths, g.keys = append(g.paths, p), append(g.keys, keys[i])
		n += b
	}
	return out
}

// tablePublish is what publishing one table needs.
type tablePublish struct {
	name     string
	scrubber *scrub.Scrubber     // with Options.PII
	state    *load.ScrubState    // the local lake's
	sessions map[string][]string // with a scope: sessionProjects
	// platforms are those of the table's files to send, whose keys held
	// reads.
	platforms []string
	held      *heldCache
}

// heldCache keeps, over the commits of one table's publish, the keys the
// table's snapshot holds on the platforms sent: a commit adds its own, so
// that the next one reads the table again only when another machine has
// committed since.
type heldCache struct {
	snapshot int64 // the snapshot keys are of, 0: none
	keys     map[string]bool
}

// at returns the keys tbl's current snapshot holds.
func (c *heldCache) at(ctx context.Context, tbl *table.Table, platforms []string) (map[string]bool, error) {
	cur := int64(0)
	if s := tbl.CurrentSnapshot(); s != nil {
		cur = s.SnapshotID
	}
	if c.keys == nil || c.snapshot != cur {
		keys, err := heldKeys(ctx, tbl, platforms)
		if err != nil {
			return nil, err
		}
		c.snapshot, c.keys = cur, keys
	}
	return c.keys, nil
}

// publishFiles sends a group of a table's local files in one commit,
// adding what it did to rep. The rows stream from one local file at a
// time into the Parquet files of the commit, so that a group holds in
// memory one local file's rows and the open output file, not the group.
func (l *Lake) publishFiles(ctx context.Context, pub tablePublish, paths []string, rep *TableReport) error {
	name := pub.name
	weakest, err := checkScrubbed(pub.state, name, pub.scrubber != nil)
	if err != nil {
		return err
	}
	sc, err := arrowSchema(name)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		rep.Attempts++
		tbl, err := l.table(ctx, name)
		if err != nil {
			return err
		}
		held, err := pub.held.at(ctx, tbl, pub.platforms)
		if err != nil {
			return err
		}
		var pass groupPass
		files, held, err := l.writeGroup(ctx, tbl, sc, pub, paths, held, weakest, &pass)
		if attempt == 1 {
			// What the group's files hold is counted once, however many
			// commits it takes.
			rep.Files += len(paths)
			rep.Rows += pass.rows
			rep.OutOfScope += pass.outOfScope
			rep.Redactions += pass.redactions
		}
		if err != nil {
			return err
		}
		if pass.added == 0 {
			return nil
		}
		record, err := mergeScrub(tbl.Properties(), pass.marks)
		if err != nil {
			return err
		}
		// The scrub record is set in the commit of the rows it counts. The
		// commit is pinned to the snapshot read: on a conflict iceberg-go
		// would otherwise replay it on the new snapshot, with the held keys
		// and the scrub record of the old one; it fails instead, and the
		// loop reads both again. The files written for a failed commit are
		// orphans, which maintain removes.
		txn := tbl.NewTransaction()
		err = txn.AssertRefSnapshotID("")
		if err == nil {
			// The files are new (their names hold the write's UUID) and carry
			// their field ids: neither the duplicate check nor a name mapping
			// is needed.
			err = txn.AddDataFiles(ctx, files, iceberg.Properties{"pos.machine": l.opt.Machine},
				table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping())
		}
		if err == nil {
			err = txn.SetProperties(iceberg.Properties{ScrubProperty: record})
		}
		var next *table.Table
		if err == nil {
			next, err = txn.Commit(ctx)
		}
		if err == nil {
			rep.Added += pass.added
			rep.Scrub = addMarks(rep.Scrub, pass.marks)
			if s := next.CurrentSnapshot(); s != nil {
				rep.Snapshot = s.SnapshotID
				pub.held.snapshot, pub.held.keys = s.SnapshotID, held
			}
			return nil
		}
		if !errors.Is(err, table.ErrCommitFailed) || attempt == maxAttempts {
			return err
		}
		// Another machine committed first: read what it added and try again.
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// groupPass is what one pass over a group's files found.
type groupPass struct {
	rows, outOfScope, redactions int64
	added                        int64            // rows written: in scope and not held
	marks                        map[string]int64 // their scrub marks
}

// writeGroup writes the rows of a group's files that are in scope and
// not in held (scrubbed with Options.PII) as data files of tbl; it returns
// them and a copy of held with their keys. The local files are each of one partition and come
// in partition order, so one output file is open at a time; input where
// that does not hold is written again with a writer per partition.
func (l *Lake) writeGroup(ctx context.Context, tbl *table.Table, sc *arrow.Schema, pub tablePublish, paths []string,
	held map[string]bool, weakest string, pass *groupPass) ([]iceberg.DataFile, map[string]bool, error) {
	with := maps.Clone(held)
	files, err := l.writeRecords(ctx, tbl, sc, pub, paths, with, weakest, pass, table.WithClusteredWrite())
	if err != nil && strings.Contains(err.Error(), "clustering assumption") {
		*pass, with = groupPass{}, maps.Clone(held)
		files, err = l.writeRecords(ctx, tbl, sc, pub, paths, with, weakest, pass, table.WithMaxWriteWorkers(1))
	}
	return files, with, err
}

func (l *Lake) writeRecords(ctx context.Context, tbl *table.Table, sc *arrow.Schema, pub tablePublish, paths []string,
	held map[string]bool, weakest string, pass *groupPass, opt table.WriteRecordOption) ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	for f, err := range table.WriteRecords(ctx, tbl, sc, l.groupRecords(ctx, pub, paths, held, weakest, pass), opt) {
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// groupRecords yields, one local file after another, the rows of paths
// that are in scope and not in held, scrubbed with Options.PII; it counts
// what it read and yielded in pass. The batches are the receiver's to
// release.
func (l *Lake) groupRecords(ctx context.Context, pub tablePublish, paths []string, held map[string]bool,
	weakest string, pass *groupPass) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, p := range paths {
			recs, err := l.fileRecords(ctx, pub, p, pass)
			if err != nil {
				yield(nil, err)
				return
			}
			fresh, added, err := withoutHeld(ctx, recs, held)
			release(recs)
			if err != nil {
				yield(nil, err)
				return
			}
			pass.added += added
			if added > 0 {
				pass.marks = addMarks(pass.marks, addedMarks(fresh, pub.scrubber != nil, weakest, added))
			}
			for i, r := range fresh {
				if !yield(r, nil) {
					release(fresh[i+1:])
					return
				}
			}
		}
	}
}

// fileRecords reads a local part file's rows in scope, scrubbed with
// Options.PII, counting them in pass.
func (l *Lake) fileRecords(ctx context.Context, pub tablePublish, path string, pass *groupPass) ([]arrow.RecordBatch, error) {
	recs, err := readRecords(ctx, path)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		pass.rows += r.NumRows()
	}
	if l.opt.scoped() {
		var left int64
		recs, left, err = l.opt.inScope(ctx, recs, pub.sessions)
		pass.outOfScope += left
		if err != nil {
			return nil, err
		}
	}
	if pub.scrubber != nil {
		for i, r := range recs {
			var n int64
			recs[i], n = scrubBatch(pub.scrubber, r)
			pass.redactions += n
			r.Release()
		}
	}
	return recs, nil
}

// table loads a table of the lake, creating it if it does not exist.
func (l *Lake) table(ctx context.Context, name string) (*table.Table, error) {
	id := l.ident(name)
	tbl, err := l.cat.LoadTable(ctx, id)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, err
	}
	sc, err := icebergSchema(name)
	if err != nil {
		return nil, err
	}
	spec, err := partitionSpec(name, sc)
	if err != nil {
		return nil, err
	}
	tbl, err = l.cat.CreateTable(ctx, id, sc, catalog.WithPartitionSpec(&spec))
	if !errors.Is(err, catalog.ErrTableAlreadyExists) {
		return tbl, err
	}
	// Another machine created it first; the catalog may take a moment to
	// show it.
	for attempt := 1; ; attempt++ {
		tbl, err = l.cat.LoadTable(ctx, id)
		if !errors.Is(err, catalog.ErrNoSuchTable) || attempt == maxAttempts {
			return tbl, err
		}
		if err := backoff(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// heldKeys are the (id, content hash) pairs a table's current snapshot
// holds on the given platforms.
func heldKeys(ctx context.Context, tbl *table.Table, platforms []string) (map[string]bool, error) {
	held := map[string]bool{}
	if tbl.CurrentSnapshot() == nil {
		return held, nil
	}
	scan := tbl.Scan(table.WithSelectedFields("id", "content_hash"),
		table.WithRowFilter(iceberg.IsIn(iceberg.Reference("platform"), platforms...)))
	_, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	for rec, err := range it {
		if err != nil {
			return nil, err
		}
		ids, hashes, err := keyColumns(rec)
		if err != nil {
			rec.Release()
			return nil, err
		}
		for i := range ids.Len() {
			held[key(ids.Value(i), hashes.Value(i))] = true
		}
		rec.Release()
	}
	return held, nil
}

// withoutHeld filters out of recs the records held already holds, and
// those a record before them in recs has; it returns the rest and their
// count. It adds the keys of what it returns to held.
func withoutHeld(ctx context.Context, recs []arrow.RecordBatch, held map[string]bool) ([]arrow.RecordBatch, int64, error) {
	return filterRows(ctx, recs, func(rec arrow.RecordBatch) (func(int) bool, error) {
		ids, hashes, err := keyColumns(rec)
		if err != nil {
			return nil, err
		}
		return func(i int) bool {
			k := key(ids.Value(i), hashes.Value(i))
			ok := !held[k]
			held[k] = true
			return ok
		}, nil
	})
}

// filterRows returns the rows of recs that pass, batch by batch, the test
// rowsOf makes for each batch, and their number.
func filterRows(ctx context.Context, recs []arrow.RecordBatch, rowsOf func(arrow.RecordBatch) (func(row int) bool, error)) ([]arrow.RecordBatch, int64, error) {
	var out []arrow.RecordBatch
	var n int64
	for _, rec := range recs {
		pass, err := rowsOf(rec)
		if err != nil {
			release(out)
			return nil, 0, err
		}
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		keep := int64(0)
		for i := range int(rec.NumRows()) {
			ok := pass(i)
			if ok {
				keep++
			}
			b.Append(ok)
		}
		mask := b.NewBooleanArray()
		b.Release()
		if keep == 0 {
			mask.Release()
			continue
		}
		f, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
		mask.Release()
		if err != nil {
			release(out)
			return nil, 0, err
		}
		out = append(out, f)
		n += keep
	}
	return out, n, nil
}

// keyColumns are a record batch's id and content_hash columns.
func keyColumns(rec arrow.RecordBatch) (ids, hashes *array.String, err error) {
	sc := rec.Schema()
	col := func(name string) (*array.String, error) {
		i := sc.FieldIndices(name)
		if len(i) != 1 {
			return nil, fmt.Errorf("no %s column", name)
		}
		s, ok := rec.Column(i[0]).(*array.String)
		if !ok {
			return nil, fmt.Errorf("column %s is %s, not a string", name, rec.Column(i[0]).DataType())
		}
		return s, nil
	}
	if ids, err = col("id"); err != nil {
		return nil, nil, err
	}
	hashes, err = col("content_hash")
	return ids, hashes, err
}

func key(id, hash string) string { return id + "\x00" + hash }

// readRecords reads a local part file's rows.
func readRecords(ctx context.Context, path string) ([]arrow.RecordBatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(ctx, f, nil, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<16)
	defer tr.Release()
	var out []arrow.RecordBatch
	for tr.Next() {
		r := tr.RecordBatch()
		r.Retain()
		out = append(out, r)
	}
	return out, tr.Err()
}

// unsentFiles lists a table's local part files whose keys are not in
// sent: each file's path below the lake and its size, which tell a file
// compaction replaced from the one it replaced.
func unsentFiles(local, name string, sent []string) (paths, keys []string, err error) {
	parts, err := layout.TablePartitions(local, name)
	if err != nil {
		return nil, nil, err
	}
	for _, pk := range parts {
		files, err := layout.PartFiles(local, name, pk.Platform, pk.Date)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			fi, err := os.Stat(f)
			if errors.Is(err, fs.ErrNotExist) {
				continue // compacted away since listed
			}
			if err != nil {
				return nil, nil, err
			}
			rel, err := filepath.Rel(local, f)
			if err != nil {
				return nil, nil, err
			}
			k := filepath.ToSlash(rel) + " " + strconv.FormatInt(fi.Size(), 10)
			if _, found := slices.BinarySearch(sent, k); !found {
				paths, keys = append(paths, f), append(keys, k)
			}
		}
	}
	return paths, keys, nil
}

// platformOf is the platform of a part file's partition directory.
func platformOf(path string) string {
	dir := filepath.Base(filepath.Dir(filepath.Dir(path)))
	p, _ := strings.CutPrefix(dir, "platform=")
	return p
}

// sentPath is the local lake's record of what it sent this shared lake.
func (l *Lake) sentPath(local string) string {
	h := sha256.Sum256([]byte(l.opt.Catalog + "\n" + l.opt.Lake))
	return filepath.Join(local, "_state", "teamlake", hex.EncodeToString(h[:8])+".json")
}

type sentFile struct {
	Catalog string              `json:"catalog"`
	Lake    string              `json:"lake"`
	Tables  map[string][]string `json:"tables"`
}

func (l *Lake) readSent(local string) (map[string][]string, error) {
	b, err := os.ReadFile(l.sentPath(local))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var s sentFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", l.sentPath(local), err)
	}
	if s.Tables == nil {
		s.Tables = map[string][]string{}
	}
	for _, v := range s.Tables {
		slices.Sort(v)
	}
	return s.Tables, nil
}

func (l *Lake) writeSent(local string, sent map[string][]string) error {
	return writeState(l.sentPath(local), sentFile{Catalog: l.opt.Catalog, Lake: l.opt.Lake, Tables: sent})
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
