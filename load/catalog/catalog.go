package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/layout"
)

// dsnOptions keep DuckDB from ever reaching for the network: every
// extension pos needs (parquet, json, icu) is built in.
const dsnOptions = "autoinstall_known_extensions=false&autoload_known_extensions=false"

// OpenDB opens a DuckDB database: path "" is in memory. Times are shown in
// UTC. The database starts on the first statement, not here: a command
// that answers from files alone (pos-query stats from the usage rollup)
// never pays DuckDB's start-up.
func OpenDB(path string) (*sql.DB, error) {
	db := sql.OpenDB(&lazyConnector{dsn: path + "?" + dsnOptions})
	// One connection: session settings (time zone, views) hold for every
	// query.
	db.SetMaxOpenConns(1)
	return db, nil
}

// lazyConnector creates the DuckDB connector on the first connection.
type lazyConnector struct {
	dsn  string
	once sync.Once
	c    *duckdb.Connector
	err  error
}

func (l *lazyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	l.once.Do(func() {
		l.c, l.err = duckdb.NewConnector(l.dsn, func(ex driver.ExecerContext) error {
			_, err := ex.ExecContext(context.Background(), `SET TimeZone = 'UTC'`, nil)
			return err
		})
	})
	if l.err != nil {
		return nil, l.err
	}
	return l.c.Connect(ctx)
}

func (l *lazyConnector) Driver() driver.Driver { return duckdb.Driver{} }

// Close closes the database if it was started; sql.DB.Close calls it.
func (l *lazyConnector) Close() error {
	l.once.Do(func() { l.err = errors.New("closed") })
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}

// schemaFile is a zero-row Parquet file with a table's columns, so a view
// over a table with no data yet still has its columns. It lives in
// <lake>/_schema, or, for a lake this process cannot write (pos-query on a
// read-only lake) and when private allows it, in this process's private
// scratch directory: never in a shared one, where another local user could
// have put a file of that name holding rows of their choosing.
func schemaFile(lake, table string, private bool) (string, error) {
	// Named by the schema's fingerprint (a newer build writes its own), in
	// a hive layout like the data's so both can be read together.
	rel := filepath.Join(layout.SchemaFingerprint(table), table, "platform=_", "date=1970-01-01", "empty.parquet")
	p, err := writeSchemaFile(filepath.Join(lake, "_schema", rel), table)
	if err == nil || !private {
		return p, err
	}
	dir, serr := layout.ScratchDir()
	if serr != nil {
		return "", errors.Join(err, serr)
	}
	return writeSchemaFile(filepath.Join(dir, rel), table)
}

func writeSchemaFile(path, table string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), layout.TempPattern(table))
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	// No rows: the file's schema and metadata, as a part file of the
	// table's has them.
	sch := parquet.SchemaOf(layout.RowType(table))
	err = parquet.NewWriter(f, layout.PartWriterOptions(sch, sch)...).Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return path, err
}

// lakeSQL renders the paths of a lake's files as SQL expressions for
// read_parquet, made safe from DuckDB's glob (see layout.GlobLiteral).
type lakeSQL struct {
	abs string // the lake's absolute path
	// root, when set, is an SQL expression for the lake's directory
	// (escaped for the glob, ending in a separator) that the paths are
	// relative to: the catalog's views compute it each time they are read,
	// so pos.duckdb reads the lake it is in, wherever that lake was copied,
	// moved or mounted.
	root string
}

// file is the expression of a file in the lake (in-process views: any
// file).
func (l lakeSQL) file(path string) (string, error) {
	if l.root == "" {
		return layout.SQLString(layout.GlobLiteral(path)), nil
	}
	rel, err := l.rel(path)
	if err != nil {
		return "", err
	}
	return "(" + l.root + " || " + layout.SQLString(layout.GlobEscape(rel)) + ")", nil
}

// glob is the expression of the files matching pattern (pattern
// characters of its own, "/"-separated) below dir.
func (l lakeSQL) glob(dir, pattern string) (string, error) {
	if l.root == "" {
		return layout.SQLString(layout.GlobPrefix(dir) + string(filepath.Separator) + filepath.FromSlash(pattern)), nil
	}
	rel, err := l.rel(dir)
	if err != nil {
		return "", err
	}
	return "(" + l.root + " || " + layout.SQLString(layout.GlobEscape(rel)+"/"+pattern) + ")", nil
}

func (l lakeSQL) rel(path string) (string, error) {
	rel, err := filepath.Rel(l.abs, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the lake %s", path, l.abs)
	}
	return filepath.ToSlash(rel), nil
}

// LakeVariable is the DuckDB variable that tells pos.duckdb's views where
// the lake is when they cannot tell it themselves: SET VARIABLE pos_lake =
// '/path/to/lake'.
const LakeVariable = "pos_lake"

// catalogRoot is the SQL expression of the lake's directory that the views
// in pos.duckdb read their files under, resolved when a query binds them:
//   - the variable pos_lake, when set (the override);
//   - else the directory of pos.duckdb itself: for a database opened as
//     X/pos.duckdb (read-only or not) DuckDB's temp_directory setting is
//     X/pos.duckdb.tmp, X absolute or as given (relative to the working
//     directory, which the paths then are too). A table function's
//     arguments take no subquery, so duckdb_databases() cannot be asked,
//     but a setting can;
//   - else (pos.duckdb ATTACHed from another database, or temp_directory
//     SET to another place) the lake's path when pos.duckdb was written.
//
// The directory is escaped for DuckDB's glob as layout.GlobLiteral escapes.
func catalogRoot(abs string) string {
	esc := func(x string) string {
		e := "regexp_replace(" + x + `, '([\[*?])', '[\1]', 'g')`
		// Where paths start with "/", a backslash is part of a name and
		// only "?" matches it in a glob (see layout.GlobEscape).
		return "CASE WHEN starts_with(" + x + ", '/') THEN replace(" + e + `, '\', '?') ELSE ` + e + " END"
	}
	v := "CAST(getvariable('" + LakeVariable + "') AS VARCHAR)"
	t := "current_setting('temp_directory')"
	return "(CASE WHEN coalesce(" + v + ", '') <> '' THEN " + esc("rtrim("+v+`, '/\') || '/'`) +
		" WHEN regexp_matches(" + t + `, '(^|[/\\])pos\.duckdb\.tmp$') THEN ` + esc("regexp_replace("+t+`, 'pos\.duckdb\.tmp$', '')`) +
		" ELSE " + layout.SQLString(layout.GlobPrefix(abs+string(filepath.Separator))) + " END)"
}

// source is the FROM clause that reads a table's files with hive
// partitioning (platform, date), so filters on them prune files. When every
// file of the table has this build's schema (the lake's state says so), the
// files are read as they are; otherwise a zero-row file with this build's
// schema is read with them, by name, so every column a view names exists
// even in a lake an older build wrote.
func source(l lakeSQL, table string, schemas map[string][]string) (string, error) {
	sf, err := schemaFile(l.abs, table, l.root == "")
	if err != nil {
		return "", err
	}
	f, err := l.file(sf)
	if err != nil {
		return "", err
	}
	dir := layout.TableDir(l.abs, table)
	if l.root == "" && filepath.Separator == '/' && strings.Contains(l.abs, `\`) {
		// A backslash in the lake's path: DuckDB's glob matches it only
		// with "?", which could match a neighbour's name too. The files
		// are listed here and named one by one, which DuckDB reads as
		// they are.
		return l.listed(table, f, schemas)
	}
	if !layout.HasParquet(dir) {
		return schemaOnly(f), nil
	}
	// Files lie exactly two levels down (platform=/date=): a fixed-depth
	// glob is expanded faster than "**", which walks the whole tree, and
	// DuckDB expands it again on every query.
	glob, err := l.glob(dir, "*/*/*.parquet")
	if err != nil {
		return "", err
	}
	return readFiles(table, f, []string{glob}, schemas), nil
}

// listed is source with the table's files listed now, not globbed.
func (l lakeSQL) listed(table, f string, schemas map[string][]string) (string, error) {
	parts, err := layout.TablePartitions(l.abs, table)
	if err != nil {
		return "", err
	}
	var files []string
	for _, p := range parts {
		if files, err = layout.AppendParquetFiles(files, layout.Dir(l.abs, table, p.Platform, p.Date)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	if len(files) == 0 {
		return schemaOnly(f), nil
	}
	for i, p := range files {
		if files[i], err = l.file(p); err != nil {
			return "", err
		}
	}
	return readFiles(table, f, files, schemas), nil
}

// hiveOpts are the options every read of the lake's tables passes.
const hiveOpts = "hive_partitioning = true, hive_types = {'platform': VARCHAR, 'date': DATE}"

// schemaOnly reads a table's schema file alone (f, its SQL expression): no
// rows, every column.
func schemaOnly(f string) string { return fmt.Sprintf("read_parquet(%s, %s)", f, hiveOpts) }

// readFiles reads a table's files (or globs), given as SQL expressions,
// with its schema file f when not every file has this build's schema.
func readFiles(table, f string, files []string, schemas map[string][]string) string {
	if fps := schemas[table]; len(fps) == 1 && fps[0] == layout.SchemaFingerprint(table) {
		if len(files) == 1 {
			return fmt.Sprintf("read_parquet(%s, %s)", files[0], hiveOpts)
		}
		return fmt.Sprintf("read_parquet([%s], %s)", strings.Join(files, ", "), hiveOpts)
	}
	return fmt.Sprintf("read_parquet([%s, %s], union_by_name = true, %s)", f, strings.Join(files, ", "), hiveOpts)
}

// PartitionSource is a source of the rows of view (messages or
// exchange_rows) in the given partitions only, as the view has them. Its
// files are listed here and named one by one: DuckDB expands a table's
// glob, and prunes by partition, on every query: on a lake of thousands
// of partitions, a lookup of a few files would list them all.
func PartitionSource(lake, view string, parts []layout.Partition) (string, error) {
	var table string
	switch view {
	case "messages":
		table = layout.TableMessages
	case "exchange_rows":
		table = layout.TableExchanges
	default:
		return "", fmt.Errorf("load: no partition source for view %q", view)
	}
	lake, err := filepath.Abs(lake)
	if err != nil {
		return "", err
	}
	sf, err := schemaFile(lake, table, true)
	if err != nil {
		return "", err
	}
	l := lakeSQL{abs: lake}
	f, _ := l.file(sf)
	var files []string
	for _, p := range parts {
		files, err = layout.AppendParquetFiles(files, layout.Dir(lake, table, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	src := schemaOnly(f)
	if len(files) > 0 {
		for i, p := range files {
			files[i], _ = l.file(p)
		}
		src = readFiles(table, f, files, layout.ReadSchemas(lake))
	}
	q := viewSelect(view) + src
	if layout.Versioned(lake)[table] {
		q += latest
	}
	return "(" + q + ")", nil
}

// CatalogFile is the DuckDB database in the lake that holds the views for
// ad-hoc SQL: duckdb <lake>/pos.duckdb.
const CatalogFile = "pos.duckdb"

// WriteCatalog (re)defines the views in <lake>/pos.duckdb. It fails when
// another process has the database open for writing. The views read their
// tables by glob, so new files need no new definition: when the
// statements are those pos.duckdb was last written with (the lake's state
// records their hash), it is left as it is.
//
// The views name no absolute path: they read the lake pos.duckdb is in
// (catalogRoot), so a lake copied, moved or mounted elsewhere is read where
// it is.
func WriteCatalog(ctx context.Context, lake string) error {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return err
	}
	path := filepath.Join(lake, CatalogFile)
	stmts, err := CatalogSQL(lake)
	if err != nil {
		return err
	}
	stamp := filepath.Join(lake, "_state", catalogStamp)
	sum := strconv.FormatUint(xxhash.Sum64String(strings.Join(stmts, ";\n")), 16)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == sum && layout.FileExists(path) {
		return nil
	}
	// The database is attached to an in-memory one, not opened by a DSN:
	// a DSN ends the path at its first "?" and must parse as a URL, and a
	// lake's path may hold anything.
	db, err := sql.Open("duckdb", "?"+dsnOptions)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	attach := path
	if strings.ContainsRune(lake, '?') {
		// DuckDB reads what follows a "?" in a database's path as options
		// (it would write the WAL to "a.wal?b/…", links resolved): the
		// database is written in a private directory, then copied into
		// place.
		tmp, err := os.MkdirTemp("", "pos-catalog-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		attach = filepath.Join(tmp, CatalogFile)
		if err := copyFile(path, attach); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// Attached as "pos", the name DuckDB gives the file when it is opened
	// itself, so views over views find each other either way.
	setup := []string{"ATTACH " + layout.SQLString(attach) + " AS pos", "USE pos"}
	for _, s := range append(setup, stmts...) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("defining views: %w", err)
		}
	}
	for _, s := range []string{"CHECKPOINT pos", "USE memory", "DETACH pos"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if attach != path {
		tmp := layout.TempName(path)
		if err := copyFile(attach, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	for _, p := range []string{path, path + ".wal"} {
		if _, err := os.Stat(p); err == nil {
			os.Chmod(p, 0o600)
		}
	}
	os.MkdirAll(filepath.Dir(stamp), 0o700)
	return atomicfile.Write(stamp, []byte(sum))
}

// copyFile copies the file from to a new file to, the user's alone.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// CatalogSQL returns the statements that define the views of
// <lake>/pos.duckdb: every view, reading the files below the directory
// pos.duckdb is in when it is read (see catalogRoot).
func CatalogSQL(lake string) ([]string, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	return viewSQL(lakeSQL{abs: lake, root: catalogRoot(lake)})
}

// catalogStamp is the file in <lake>/_state with the hash of the
// statements pos.duckdb was last written with.
const catalogStamp = "catalog.hash"
