package cursor

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/watermark"
	_ "modernc.org/sqlite" // pure-Go SQLite: no cgo
)

// busyTimeout is how long a read waits for a writer's lock (ms). Without
// one, modernc.org/sqlite fails at once with SQLITE_BUSY while Cursor writes
// a database in rollback-journal mode.
const busyTimeout = 5000

// sqliteURI is the URI of a database file for sqlite3_open_v2: the path
// with '%', '?' and '#' escaped (they would end the path) and params after.
func sqliteURI(path, params string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" && !strings.HasPrefix(p, "//") {
		p = "/" + p // file:/C:/x
	}
	var b strings.Builder
	b.WriteString("file:")
	if strings.HasPrefix(p, "//") {
		b.WriteString("//") // an empty authority before a path that starts with //
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("?")
	b.WriteString(params)
	return b.String()
}

// openLive opens a live database read-only, waiting for writers' locks.
// It never opens it immutable: a live file may change under the reader.
func openLive(path string) (*sql.DB, error) {
	return sql.Open("sqlite", sqliteURI(path, "mode=ro&_pragma=busy_timeout("+strconv.Itoa(busyTimeout)+")"))
}

// openSnapshot opens a private copy made by snapshot: nothing else writes
// it, so SQLite may skip locking and the -wal/-shm files.
func openSnapshot(path string) (*sql.DB, error) {
	return sql.Open("sqlite", sqliteURI(path, "mode=ro&immutable=1"))
}

// snapshot copies a live database, consistently, into a new private
// temporary directory with VACUUM INTO, and returns the copy and a function
// that deletes it. A failed VACUUM INTO can leave a 0-byte file behind: the
// directory is removed on every path.
func snapshot(ctx context.Context, path, tmp string) (string, func(), error) {
	dir, err := os.MkdirTemp(tmp, "pos-cursor-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	snap := filepath.Join(dir, "snapshot.db")
	db, err := openLive(path)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", snap); err != nil {
		cleanup()
		return "", nil, err
	}
	return snap, cleanup, nil
}

// dbFile is a database and the fingerprint of its current version: the
// main file's and its -wal file's (writes land in the -wal first; the main
// file may not change for a long time).
type dbFile struct {
	path    string
	fp      watermark.Fingerprint
	walSize int64
	walTime time.Time
	mtime   time.Time // the later of the two
}

// statDB fingerprints a database. The error says why it is not read: gone
// since the walk, or no longer a regular file.
func statDB(opt *extract.Options, path string) (*dbFile, error) {
	f, fi, err := opt.OpenFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = extract.ErrVanished
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	d := &dbFile{path: path, fp: watermark.Stat(fi), mtime: fi.ModTime().UTC()}
	d.walSize = -1
	if wi, err := os.Stat(path + "-wal"); err == nil {
		d.walSize, d.walTime = wi.Size(), wi.ModTime().UTC()
		if d.walTime.After(d.mtime) {
			d.mtime = d.walTime
		}
	}
	return d, nil
}

// context is what the checkpoint keeps beyond the main file's fingerprint.
func (d *dbFile) context() map[string]string {
	c := map[string]string{"wal_size": strconv.FormatInt(d.walSize, 10)}
	if !d.walTime.IsZero() {
		c["wal_mtime"] = d.walTime.Format(time.RFC3339Nano)
	}
	return c
}

// wanted decides whether to read a database: not older than --since, and
// changed since its watermark (main file or -wal). An unchanged one counts
// in Stats.Unchanged.
func (r *run) wanted(d *dbFile) bool {
	if !r.opt.Since.IsZero() && d.mtime.Before(r.opt.Since) {
		return false
	}
	if c := r.opt.State.Get(r.opt.Platform, d.path); c != nil {
		same := c.Size == d.fp.Size && c.Mtime.Equal(d.fp.Mtime) &&
			(c.Inode == 0 || d.fp.Inode == 0 || c.Inode == d.fp.Inode)
		ctx := d.context()
		same = same && c.Context["wal_size"] == ctx["wal_size"] && c.Context["wal_mtime"] == ctx["wal_mtime"]
		if same {
			if r.opt.Stats != nil {
				r.opt.Stats.Unchanged.Add(1)
			}
			return false
		}
	}
	return true
}

// row is one key/value row as it was read.
type row struct {
	table, key string
	value      []byte // nil for SQL NULL
	null       bool
	number     bool // an INTEGER or REAL value
}

// sourceKey is the provenance key of a row: "<table>:<key>".
func (r *row) sourceKey() string { return r.table + ":" + r.key }

// scanRow reads a (key, value) result row.
func scanRow(rows *sql.Rows, table string) (*row, error) {
	var key sql.NullString
	var v any
	if err := rows.Scan(&key, &v); err != nil {
		return nil, err
	}
	r := &row{table: table, key: key.String}
	switch x := v.(type) {
	case nil:
		r.null = true
	case string:
		r.value = []byte(x)
	case []byte:
		r.value = x
	case int64:
		r.value, r.number = strconv.AppendInt(nil, x, 10), true
	case float64:
		r.value, r.number = strconv.AppendFloat(nil, x, 'g', -1, 64), true
	default:
		r.value = []byte(fmt.Sprint(x))
	}
	return r, nil
}

// raw returns the row's value as the raw record: the JSON value on one
// line, or a wrapper for a value that is not JSON ({"$sqlite":"null"},
// {"$sqlite":"text","value":"…"}, {"$sqlite":"blob","base64":"…"}), and
// whether the value is JSON.
func (r *row) raw() (json.RawMessage, bool) {
	switch {
	case r.null:
		return json.RawMessage(`{"$sqlite":"null"}`), false
	case r.number:
		return json.RawMessage(r.value), true
	case utf8.Valid(r.value) && json.Valid(r.value):
		return compactJSON(r.value), true
	case utf8.Valid(r.value):
		b, _ := json.Marshal(map[string]string{"$sqlite": "text", "value": string(r.value)})
		return b, false
	}
	b, _ := json.Marshal(map[string]string{"$sqlite": "blob", "base64": base64.StdEncoding.EncodeToString(r.value)})
	return b, false
}

// tables returns which of the key/value tables a database has.
func tables(ctx context.Context, db *sql.DB) (item, kv bool, err error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('ItemTable', 'cursorDiskKV')`)
	if err != nil {
		return false, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return false, false, err
		}
		item = item || n == "ItemTable"
		kv = kv || n == "cursorDiskKV"
	}
	return item, kv, rows.Err()
}

// The whitelist. Only these rows are ever read: the databases also hold
// credentials and settings that must not reach a record.
const (
	keyChatData     = "workbench.panel.aichat.view.aichat.chatdata" // ItemTable, 2023
	keyComposerData = "composer.composerData"                       // ItemTable, 2024-2025
	prefixComposer  = "composerData:"                               // cursorDiskKV, 2025
	prefixBubble    = "bubbleId:"                                   // cursorDiskKV, 2025
)

// itemRows reads the whitelisted ItemTable rows, in key order.
func itemRows(ctx context.Context, db *sql.DB) ([]*row, error) {
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM ItemTable WHERE key IN (?, ?) ORDER BY key`, keyChatData, keyComposerData)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*row
	for rows.Next() {
		r, err := scanRow(rows, "ItemTable")
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// prefixEnd is the first key after every key with the prefix: the prefix
// ends in ':', and ';' follows ':'. Range conditions let SQLite use the
// key's unique index (LIKE would not: it is case-insensitive).
func prefixEnd(prefix string) string { return prefix[:len(prefix)-1] + ";" }

// kvKeys calls fn with each cursorDiskKV key with the prefix, in key
// order, without reading values.
func kvKeys(ctx context.Context, db *sql.DB, prefix string, fn func(key string) error) error {
	rows, err := db.QueryContext(ctx, `SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key`, prefix, prefixEnd(prefix))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k sql.NullString
		if err := rows.Scan(&k); err != nil {
			return err
		}
		if err := fn(k.String); err != nil {
			return err
		}
	}
	return rows.Err()
}

// kvGet reads one cursorDiskKV row; nil if there is none.
func kvGet(ctx context.Context, stmt *sql.Stmt, key string) (*row, error) {
	rows, err := stmt.QueryContext(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	return scanRow(rows, "cursorDiskKV")
}
