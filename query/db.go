package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

// ErrNoLake is wrapped by the error Open returns when the lake directory
// does not exist or holds no data yet.
var ErrNoLake = errors.New("no lake")

// DB is an open lake: an in-memory DuckDB database whose views read the
// lake's Parquet files. It is safe for concurrent use; queries run one at a
// time.
type DB struct {
	db   *sql.DB
	lake string
	// release lets go of the private scratch directory (layout.HoldScratch)
	// the views of a lake this process cannot write may read.
	release func()

	// lazy: views are defined when a lookup needs them (LazyViews); defined
	// lists those that are.
	lazy     bool
	vmu      sync.Mutex
	defined  map[string]bool
	noRollup bool // Stats reads the messages only (tests compare both ways)
	// Sessions reads the sessions view, not the session cache (tests compare)
	noSessionCache bool
	// Search describes its hits with DuckDB only (tests compare)
	describeSQL bool
	// Search scores every vector exactly, ruling no row out on its sign
	// code (tests compare)
	exactScan bool
	// The session cache's sources, kept while the lake's state stamp
	// (layout.StateStamp) stays the same: a lookup asks for them several
	// times, and each check lists every partition.
	smu     sync.Mutex
	sources struct{ stamp, parts, meta string }
	// The lake's search index, kept mapped between searches (see
	// search_index.go).
	ix searchIndexState
	// The partition directories' entries, kept while they do not change.
	listing *layout.Listing
	// What describing search hits read of the session cache.
	memo describeMemo
}

// An OpenOption changes how Open sets up the lake.
type OpenOption func(*DB)

// LazyViews defines no view at Open: each of the lookups Stats, Sessions,
// ResolveSession, Recent, Timeline, Files, Decisions and Capabilities
// defines the views it reads on first use, and SQL and Stream define them
// all. Defining a view reads its files' listing and a footer, so a command
// that reads few views starts faster. Without it, Open defines every view.
func LazyViews() OpenOption { return func(d *DB) { d.lazy = true } }

// Open checks that lake holds data and defines the views over it.
func Open(ctx context.Context, lake string, opts ...OpenOption) (*DB, error) {
	if lake == "" {
		return nil, fmt.Errorf("%w: no lake directory given", ErrNoLake)
	}
	abs, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	build := "build it with: " + BuildHint(lake)
	switch fi, err := os.Stat(abs); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w at %s: the directory does not exist; %s", ErrNoLake, lake, build)
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%w at %s: not a directory", ErrNoLake, lake)
	}
	if !hasData(abs) {
		return nil, fmt.Errorf("%w at %s: the directory holds no data yet; %s", ErrNoLake, lake, build)
	}
	// Temporary files a killed writer left (best effort: the lake may be
	// read-only to this process).
	layout.SweepTemps(abs)
	db, err := catalog.OpenDB("")
	if err != nil {
		return nil, err
	}
	d := &DB{db: db, lake: abs, defined: map[string]bool{}, release: layout.HoldScratch(), listing: layout.NewListing()}
	for _, o := range opts {
		o(d)
	}
	if !d.lazy {
		if err := catalog.DefineViews(ctx, db, abs); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// BuildHint is the pipeline that builds or brings up to date the lake at
// lake, secrets scrubbed: every hint that suggests one names this.
func BuildHint(lake string) string {
	return "pos-extract --lake " + shellQuote(lake) + " | pos-normalize | pos-scrub | pos-embed --lake " + shellQuote(lake) + " | pos-load --lake " + shellQuote(lake)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// need defines the views given (none: all) and those they read, unless
// they are defined already.
func (d *DB) need(ctx context.Context, views ...string) error {
	if !d.lazy {
		return nil
	}
	d.vmu.Lock()
	defer d.vmu.Unlock()
	all, err := catalog.ViewClosure(views...)
	if err != nil {
		return err
	}
	var missing []string
	for _, v := range all {
		if !d.defined[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := catalog.DefineViews(ctx, d.db, d.lake, missing...); err != nil {
		return err
	}
	all, _ = catalog.ViewClosure(missing...)
	for _, v := range all {
		d.defined[v] = true
	}
	return nil
}

// hasData reports whether any table of the lake has a Parquet file.
func hasData(lake string) bool {
	for _, t := range layout.Tables {
		found := false
		filepath.WalkDir(layout.TableDir(lake, t), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		if found {
			return true
		}
	}
	return false
}

// Lake is the lake's absolute path.
func (d *DB) Lake() string { return d.lake }

// Close releases the database.
func (d *DB) Close() error {
	err := d.db.Close()
	d.release()
	d.ix.close()
	return err
}

// SQLError is a DuckDB error, with its message on one line.
type SQLError struct {
	Msg string
	Err error
}

func (e *SQLError) Error() string { return e.Msg }
func (e *SQLError) Unwrap() error { return e.Err }

// sqlErr turns a DuckDB error into a SQLError. DuckDB's messages span
// lines: "Parser Error: …\n\nLINE 1: SELEC 1\n        ^". The caret
// drawing means nothing on one line, so it is dropped.
// eachRow calls scan for each row of rows, then closes rows. The first
// error, scan's or the rows', comes back through sqlErr; scan returns
// errors as it gets them, unwrapped.
func eachRow(rows *sql.Rows, scan func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(); err != nil {
			return sqlErr(err)
		}
	}
	return sqlErr(rows.Err())
}

// scanSet adds the first and only column of each row of rows to set, and
// closes rows.
func scanSet[K comparable](rows *sql.Rows, set map[K]bool) error {
	return eachRow(rows, func() error {
		var k K
		if err := rows.Scan(&k); err != nil {
			return err
		}
		set[k] = true
		return nil
	})
}

// scanAll reads the rows of rows into a list with scan, which fills a T
// from the current row, and closes rows; no rows give an empty list, not
// nil, so that JSON shows [].
func scanAll[T any](rows *sql.Rows, scan func(*T) error) ([]T, error) {
	out := []T{}
	if err := eachRow(rows, func() error {
		var v T
		if err := scan(&v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func sqlErr(err error) error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return err
	}
	msg := de.Error()
	if i := strings.Index(msg, "\n\nLINE "); i >= 0 {
		msg = msg[:i]
	}
	return &SQLError{Msg: strings.Join(strings.Fields(msg), " "), Err: err}
}

// FileVanished tells whether a lookup failed because a file it had listed
// was gone when read: pos-load compacted the partition in between (the
// lake holds the same rows in the merged file), so running the lookup
// again answers it.
func FileVanished(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || strings.Contains(strings.ToLower(err.Error()), "no such file or directory"))
}

// ArgError reports an argument the lake cannot answer for: an unknown
// grouping key, a session prefix that matches no session or several.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErrorf(format string, args ...any) error {
	return &ArgError{Msg: fmt.Sprintf(format, args...)}
}

// RowWriter receives a result: its columns once, then each row.
type RowWriter interface {
	Begin(cols []Column) error
	Row(vals []any) error
}

// SQL runs an arbitrary query and returns its whole result.
func (d *DB) SQL(ctx context.Context, q string, args ...any) (*Table, error) {
	t := &Table{}
	if err := d.Stream(ctx, t, q, args...); err != nil {
		return nil, err
	}
	return t, nil
}

// ErrWrites is wrapped by the error ReadStream returns for a statement
// that is not a query.
var ErrWrites = errors.New("only queries run here")

// ReadStream is Stream for a query a user wrote, which must not change the
// lake or write any file: every statement of q must be a query — SELECT,
// or DESCRIBE, SHOW, SUMMARIZE, FROM …, WITH …, VALUES, TABLE, which DuckDB
// parses as one. Anything else (COPY, EXPORT DATABASE, ATTACH, CREATE,
// INSERT, SET, INSTALL, LOAD, PRAGMA, EXPLAIN …) is refused before any
// statement runs. DuckDB's own parser decides, through json_serialize_sql,
// which serializes select statements only; it parses without binding, so
// even a refused statement does nothing (preparing one would: a prepared
// EXPORT DATABASE creates its directory).
func (d *DB) ReadStream(ctx context.Context, w RowWriter, q string) error {
	var res []byte
	if err := d.db.QueryRowContext(ctx, `SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)`, q).Scan(&res); err != nil {
		return sqlErr(err)
	}
	var parsed struct {
		Error     bool   `json:"error"`
		ErrorType string `json:"error_type"`
		Message   string `json:"error_message"`
	}
	if err := json.Unmarshal(res, &parsed); err != nil {
		return fmt.Errorf("parsing the query: %w", err)
	}
	if parsed.Error {
		if parsed.ErrorType == "parser" {
			// A syntax error: DuckDB says what it is when it runs the
			// query, which then fails before doing anything.
			return d.Stream(ctx, w, q)
		}
		return &SQLError{Msg: "the lake is read-only here: " + ErrWrites.Error() + " (SELECT, DESCRIBE, SHOW, SUMMARIZE, FROM, WITH, VALUES); " +
			"COPY, EXPORT, ATTACH, CREATE, SET, INSTALL, PRAGMA, EXPLAIN and the like are refused", Err: ErrWrites}
	}
	return d.Stream(ctx, w, q)
}

// Stream runs an arbitrary query and hands its rows to w as they come, so
// a large result need not fit in memory. Values are converted to plain Go
// types: string, int64 (or *big.Int beyond its range), float64, bool,
// time.Time (UTC) for timestamps, "2006-01-02" strings for dates,
// json.Number for decimals, []any and map[string]any for nested values.
func (d *DB) Stream(ctx context.Context, w RowWriter, q string, args ...any) error {
	if err := d.need(ctx, viewsIn(q)...); err != nil {
		return err
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return sqlErr(err)
	}
	cols := make([]Column, len(cts))
	for i, ct := range cts {
		cols[i] = Column{Name: ct.Name(), Type: ct.DatabaseTypeName()}
	}
	if err := w.Begin(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return sqlErr(err)
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = convert(v, cols[i].Type)
		}
		if err := w.Row(row); err != nil {
			return err
		}
	}
	return sqlErr(rows.Err())
}

// convert turns a value from the DuckDB driver into a plain Go value that
// every output format can print.
func convert(v any, typ string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		switch {
		case typ == "DATE":
			return x.UTC().Format(time.DateOnly)
		case strings.HasPrefix(typ, "TIME") && !strings.HasPrefix(typ, "TIMESTAMP"):
			return x.Format("15:04:05.999999")
		}
		return x.UTC()
	case int8, int16, int32:
		return reflect.ValueOf(x).Int()
	case uint8, uint16, uint32:
		return int64(reflect.ValueOf(x).Uint())
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
		return new(big.Int).SetUint64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		return x
	case float32:
		return float64(x)
	case duckdb.Decimal:
		return json.Number(decimal(x))
	case []byte:
		if typ == "UUID" && len(x) == 16 {
			var u duckdb.UUID
			copy(u[:], x)
			return u.String()
		}
		return x
	case duckdb.UUID:
		return x.String()
	case duckdb.Interval:
		return interval(x)
	case duckdb.OrderedMap:
		b, err := json.Marshal(x)
		if err != nil {
			return x.String()
		}
		return json.RawMessage(b)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = convert(e, "")
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = convert(e, "")
		}
		return out
	}
	return v
}

// decimal formats a DECIMAL exactly, with all its scale's digits: 1.50.
func decimal(d duckdb.Decimal) string {
	if d.Value == nil {
		return "0"
	}
	digits := new(big.Int).Abs(d.Value).String()
	sign := ""
	if d.Value.Sign() < 0 {
		sign = "-"
	}
	if d.Scale == 0 {
		return sign + digits
	}
	sc := int(d.Scale)
	if len(digits) <= sc {
		digits = strings.Repeat("0", sc-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-sc] + "." + digits[len(digits)-sc:]
}

func interval(iv duckdb.Interval) string {
	var parts []string
	if iv.Months != 0 {
		parts = append(parts, fmt.Sprintf("%d months", iv.Months))
	}
	if iv.Days != 0 {
		parts = append(parts, fmt.Sprintf("%d days", iv.Days))
	}
	if iv.Micros != 0 || len(parts) == 0 {
		parts = append(parts, (time.Duration(iv.Micros) * time.Microsecond).String())
	}
	return strings.Join(parts, " ")
}

// bytesString shows a BLOB: as text when it is UTF-8, else as hex.
func bytesString(b []byte) string {
	if isUTF8(b) {
		return string(b)
	}
	return `\x` + hex.EncodeToString(b)
}
