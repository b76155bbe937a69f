package teamlake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/cespare/xxhash/v2"
)

// CheckReport is what checking one table of the shared lake found.
type CheckReport struct {
	Table    string `json:"table"`
	Exists   bool   `json:"exists"`   // false: the catalog has no such table (nothing published)
	Format   int    `json:"format"`   // the metadata's format version
	Snapshot int64  `json:"snapshot"` // the current snapshot, 0 if none
	Files    int    `json:"files"`    // data files its manifests list
	Rows     int64  `json:"rows"`     // rows a scan of the snapshot read
	// SameID counts the ids held more than once with different content:
	// a record that changed between two publishes (a session that grew)
	// is held in each version, as publishing keeps (id, content_hash)
	// pairs, not ids, unique.
	SameID   int      `json:"same_id"`
	Problems []string `json:"problems"`
}

// ErrCheck is the error Check returns when a table has problems.
var ErrCheck = errors.New("the shared lake has problems")

// Check verifies each table (none: Tables) of the shared lake: its
// metadata file reads back, its schema and partition spec are those
// publishing creates, every data file its current snapshot's manifests
// list exists with the size and record count they give, a scan reads as
// many rows as the manifests and the snapshot summary count, and no
// (id, content_hash) pair is held twice. A table with problems makes the
// error wrap ErrCheck; the reports say what they are.
func (l *Lake) Check(ctx context.Context, tables ...string) ([]CheckReport, error) {
	if len(tables) == 0 {
		tables = Tables
	}
	var out []CheckReport
	var bad []string // each table's first problem
	for _, name := range tables {
		rep, err := l.checkTable(ctx, name)
		if err != nil {
			return out, fmt.Errorf("checking %s: %w", name, err)
		}
		out = append(out, rep)
		if n := len(rep.Problems); n > 0 {
			msg := name + ": " + rep.Problems[0]
			if n > 1 {
				msg += fmt.Sprintf(" (and %d more)", n-1)
			}
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("%w: %s", ErrCheck, strings.Join(bad, "; "))
	}
	return out, nil
}

// checkTable checks one table. Errors are the catalog's; what is wrong
// with the table itself, its files included, is a problem in the report.
func (l *Lake) checkTable(ctx context.Context, name string) (CheckReport, error) {
	rep := CheckReport{Table: name, Problems: []string{}}
	tbl, err := l.Table(ctx, name)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	rep.Exists = true
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	md := tbl.Metadata()
	rep.Format = md.Version()
	if rep.Format != table.DefaultFormatVersion {
		problem("format version %d, want %d", rep.Format, table.DefaultFormatVersion)
	}
	if err := sameSchema(name, tbl.Schema()); err != nil {
		problem("schema: %v", err)
	}
	if err := sameSpec(name, tbl.Schema(), tbl.Spec()); err != nil {
		problem("partition spec: %v", err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return rep, err
	}
	snap := tbl.CurrentSnapshot()
	if snap != nil {
		rep.Snapshot = snap.SnapshotID
	}
	if err := sameMetadataFile(fsys, tbl); err != nil {
		problem("metadata file %s: %v", tbl.MetadataLocation(), err)
	}
	if snap == nil {
		return rep, nil
	}

	manifests, err := snap.Manifests(fsys)
	if err != nil {
		problem("manifest list %s: %v", snap.ManifestList, err)
		return rep, nil
	}
	var listed int64
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			problem("manifest %s holds deletes, which pos does not write", m.FilePath())
		}
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			problem("manifest %s: %v", m.FilePath(), err)
			continue
		}
		for _, e := range entries {
			df := e.DataFile()
			rep.Files++
			listed += df.Count()
			if err := checkDataFile(fsys, df); err != nil {
				problem("data file %s: %v", df.FilePath(), err)
			}
		}
	}
	if v, ok := snap.Summary.Properties["total-records"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n != listed {
			problem("the snapshot summary's total-records is %s, the manifests list %d", v, listed)
		}
	} else if snap.Summary != nil {
		problem("the snapshot summary has no total-records")
	}

	rows, pairs, sameID, err := scanKeys(ctx, tbl)
	if err != nil {
		problem("scan: %v", err)
		return rep, nil
	}
	rep.Rows, rep.SameID = rows, sameID
	if rows != listed {
		problem("a scan reads %d rows, the manifests list %d", rows, listed)
	}
	if pairs != rows {
		problem("%d rows repeat an (id, content_hash) pair another row holds", rows-pairs)
	}
	return rep, nil
}

// checkDataFile checks that a data file exists with the size and the
// record count its manifest entry gives, the count read from its Parquet
// footer. Opening the object reads its size from the response, with no
// HEAD request, which SeaweedFS answers for a missing key with a 403 on
// the directory marker gocloud tries next.
func checkDataFile(fsys iceio.IO, df iceberg.DataFile) error {
	f, err := fsys.Open(df.FilePath())
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("missing from the bucket")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != df.FileSizeBytes() {
		return fmt.Errorf("%d bytes, the manifest says %d", fi.Size(), df.FileSizeBytes())
	}
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("reading its Parquet footer: %w", err)
	}
	defer pr.Close()
	if n := pr.NumRows(); n != df.Count() {
		return fmt.Errorf("%d rows, the manifest says %d", n, df.Count())
	}
	return nil
}

// sameMetadataFile reads the table's current metadata file back from the
// bucket with iceberg-go's parser and checks it is the metadata the
// catalog served.
func sameMetadataFile(fsys iceio.IO, tbl *table.Table) error {
	f, err := fsys.Open(tbl.MetadataLocation())
	if err != nil {
		return err
	}
	defer f.Close()
	md, err := table.ParseMetadata(f)
	if err != nil {
		return err
	}
	want := tbl.Metadata()
	if md.TableUUID() != want.TableUUID() {
		return fmt.Errorf("table uuid %s, the catalog's is %s", md.TableUUID(), want.TableUUID())
	}
	snapID := func(m table.Metadata) int64 {
		if s := m.CurrentSnapshot(); s != nil {
			return s.SnapshotID
		}
		return 0
	}
	if a, b := snapID(md), snapID(want); a != b {
		return fmt.Errorf("current snapshot %d, the catalog's is %d", a, b)
	}
	if !md.CurrentSchema().Equals(want.CurrentSchema()) {
		return errors.New("its schema is not the catalog's")
	}
	return nil
}

// sameSchema compares a table's schema with the one publishing creates, by
// field names, types and nullability (not ids, which are assigned fresh).
func sameSchema(name string, got *iceberg.Schema) error {
	want, err := icebergSchema(name)
	if err != nil {
		return err
	}
	g, w := structShape(got.Fields()), structShape(want.Fields())
	if g != w {
		return fmt.Errorf("%s, want %s", g, w)
	}
	return nil
}

// typeShape renders a type without its field ids.
func typeShape(t iceberg.Type) string {
	switch t := t.(type) {
	case *iceberg.StructType:
		return structShape(t.FieldList)
	case *iceberg.ListType:
		return "list<" + optional(!t.ElementRequired) + typeShape(t.Element) + ">"
	case *iceberg.MapType:
		return "map<" + typeShape(t.KeyType) + ", " + optional(!t.ValueRequired) + typeShape(t.ValueType) + ">"
	default:
		return t.String()
	}
}

func structShape(fields []iceberg.NestedField) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Name + ": " + optional(!f.Required) + typeShape(f.Type)
	}
	return "struct<" + strings.Join(parts, ", ") + ">"
}

func optional(yes bool) string {
	if yes {
		return "optional "
	}
	return ""
}

// sameSpec compares a table's partition spec with the one publishing
// creates: the same fields, by name, source column and transform.
func sameSpec(name string, sc *iceberg.Schema, got iceberg.PartitionSpec) error {
	want, err := partitionSpec(name, sc)
	if err != nil {
		return err
	}
	g, w := specShape(sc, got), specShape(sc, want)
	if g != w {
		return fmt.Errorf("%s, want %s", g, w)
	}
	return nil
}

func specShape(sc *iceberg.Schema, spec iceberg.PartitionSpec) string {
	var parts []string
	for _, f := range spec.Fields() {
		src, _ := sc.FindColumnName(f.SourceID())
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", f.Name, f.Transform, src))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// scanKeys scans a table's current snapshot for its id and content_hash
// columns: the rows read, the distinct (id, content_hash) pairs and the
// ids held with more than one content hash. It keeps each id with a
// 64-bit hash of its content hash, and a set of hashes only for the few
// ids held in more than one version.
func scanKeys(ctx context.Context, tbl *table.Table) (rows, pairs int64, sameID int, err error) {
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "content_hash")).ToArrowRecords(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	first := map[string]uint64{}
	more := map[string]map[uint64]bool{}
	for rec, err := range it {
		if err != nil {
			return 0, 0, 0, err
		}
		ids, hs, err := keyColumns(rec)
		if err != nil {
			rec.Release()
			return 0, 0, 0, err
		}
		for i := range ids.Len() {
			rows++
			id, h := ids.Value(i), xxhash.Sum64String(hs.Value(i))
			f, seen := first[id]
			switch {
			case !seen:
				first[id] = h
				pairs++
			case f == h:
			case more[id] == nil:
				more[id] = map[uint64]bool{f: true, h: true}
				pairs++
			case !more[id][h]:
				more[id][h] = true
				pairs++
			}
		}
		rec.Release()
	}
	return rows, pairs, len(more), nil
}
