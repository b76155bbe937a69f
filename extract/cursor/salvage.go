package cursor

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pos-lake/pos/extract"
	"modernc.org/sqlite"
)

// A damaged database (cut short by a full disk or a crash, or with pages
// overwritten) cannot be copied whole: SQLite stops at the first page it
// cannot read. What is left is salvaged instead, into a new database of
// the whitelisted rows that still read, which is then read as any other.

// damaged reports whether an error is SQLite's for a damaged file.
func damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
		return true
	}
	return false
}

// lostRows is a stretch of a table that could not be read, or one row.
type lostRows struct {
	table    string
	after    int64 // the last rowid read before it (math.MinInt64: none)
	upTo     int64 // the first rowid read after it (math.MaxInt64: none)
	row      int64 // the row lost, when one row alone is (its page read, its value did not)
	single   bool
	cause    error
	rowsRead int64 // rows of the table read in all
}

func (l lostRows) Error() string {
	if l.single {
		return fmt.Sprintf("damaged database: the row with rowid %d could not be read (%v); the rows that read are kept", l.row, l.cause)
	}
	from := "the first row"
	if l.after != math.MinInt64 {
		from = fmt.Sprintf("rowid %d", l.after)
	}
	to := "the end of the table"
	if l.upTo != math.MaxInt64 {
		to = fmt.Sprintf("rowid %d", l.upTo)
	}
	return fmt.Sprintf("damaged database: the rows between %s and %s could not be read (%v); the rows that read are kept", from, to, l.cause)
}

// salvage copies what can still be read of a damaged database into a new
// database in a new private temporary directory: the file's bytes up to
// its last whole page (its header told to expect no more pages than that),
// then, table by table in rowid order, each whitelisted row that reads,
// stepping over the stretches of pages that do not. It returns the new
// database, a function that deletes it, and the stretches lost.
func salvage(ctx context.Context, opt *extract.Options, path, tmp string) (string, func(), []lostRows, error) {
	dir, err := os.MkdirTemp(tmp, "pos-cursor-")
	if err != nil {
		return "", nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	fail := func(err error) (string, func(), []lostRows, error) {
		cleanup()
		return "", nil, nil, err
	}
	cp := filepath.Join(dir, "damaged.db")
	if err := copyPages(opt, path, cp); err != nil {
		return fail(err)
	}
	src, err := openSnapshot(cp)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	item, kv, err := tables(ctx, src)
	if err != nil {
		return fail(fmt.Errorf("its table list cannot be read: %w", err))
	}
	out := filepath.Join(dir, "salvaged.db")
	dst, err := sql.Open("sqlite", sqliteURI(out, "_pragma=journal_mode(off)&_pragma=synchronous(off)"))
	if err != nil {
		return fail(err)
	}
	defer dst.Close()
	var lost []lostRows
	copyTable := func(table string, keep func(string) bool) error {
		if _, err := dst.ExecContext(ctx, `CREATE TABLE `+table+` (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`); err != nil {
			return err
		}
		l, err := salvageTable(ctx, src, dst, table, keep)
		lost = append(lost, l...)
		return err
	}
	if item {
		if err := copyTable("ItemTable", func(k string) bool { return k == keyChatData || k == keyComposerData }); err != nil {
			return fail(err)
		}
	}
	if kv {
		if err := copyTable("cursorDiskKV", func(k string) bool {
			return strings.HasPrefix(k, prefixComposer) || strings.HasPrefix(k, prefixBubble)
		}); err != nil {
			return fail(err)
		}
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	return out, cleanup, lost, nil
}

// copyPages copies the database at path (opened as the adapter opens its
// files) to cp, cut to its last whole page, with the page count in its
// header no larger than the pages copied: SQLite refuses a file shorter
// than its header says.
func copyPages(opt *extract.Options, path, cp string) error {
	f, _, err := opt.OpenFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := os.OpenFile(cp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	b, err := os.OpenFile(cp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer b.Close()
	head := make([]byte, 100)
	if _, err := b.ReadAt(head, 0); err != nil {
		return errors.New("shorter than a database header")
	}
	if string(head[:16]) != "SQLite format 3\x00" {
		return errors.New("not a database (no SQLite header)")
	}
	size := int64(binary.BigEndian.Uint16(head[16:18]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size&(size-1) != 0 {
		return fmt.Errorf("damaged header (page size %d)", size)
	}
	pages := n / size
	if pages == 0 {
		return errors.New("not one whole page")
	}
	if err := b.Truncate(pages * size); err != nil {
		return err
	}
	if int64(binary.BigEndian.Uint32(head[28:32])) > pages {
		binary.BigEndian.PutUint32(head[28:32], uint32(pages))
		if _, err := b.WriteAt(head[28:32], 28); err != nil {
			return err
		}
	}
	return b.Close()
}

// salvageTable copies the rows of table that keep accepts from src to dst,
// in rowid order. Where a page cannot be read, the copy goes on at the
// next row that can (nextReadable); each stretch passed over is returned.
func salvageTable(ctx context.Context, src, dst *sql.DB, table string, keep func(string) bool) ([]lostRows, error) {
	tx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO `+table+` (key, value) VALUES (?, ?)`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	var (
		lost []lostRows
		read int64
		last = int64(math.MinInt64) // the last rowid handled
	)
	for {
		err := scanFrom(ctx, src, table, last, func(id int64, key sql.NullString, value any) error {
			last = id
			read++
			if key.Valid && keep(key.String) {
				_, err := ins.ExecContext(ctx, key, value)
				return err
			}
			return nil
		})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var werr writeError
		if errors.As(err, &werr) {
			return nil, werr.err
		}
		next, direct, ok := nextReadable(ctx, src, table, last)
		switch {
		case !ok:
			lost = append(lost, lostRows{table: table, after: last, upTo: math.MaxInt64, cause: err})
		case direct:
			// The next row's page reads, the row does not (its overflow
			// pages): it alone is lost.
			lost = append(lost, lostRows{table: table, row: next, single: true, cause: err})
			last = next
			continue
		default:
			lost = append(lost, lostRows{table: table, after: last, upTo: next, cause: err})
			last = next - 1
			continue
		}
		break
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range lost {
		lost[i].rowsRead = read
	}
	return lost, tx.Commit()
}

// writeError is a failed write to the new database, which ends the
// salvage (a read error only ends a stretch).
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// scanFrom calls fn with each row of table after rowid last, in order,
// until the end (nil) or a row that cannot be read (its error).
func scanFrom(ctx context.Context, db *sql.DB, table string, last int64, fn func(int64, sql.NullString, any) error) error {
	q := `SELECT rowid, key, value FROM ` + table + ` WHERE rowid > ? ORDER BY rowid`
	if last == math.MinInt64 {
		q = `SELECT rowid, key, value FROM ` + table + ` ORDER BY rowid`
	}
	rows, err := db.QueryContext(ctx, q, last)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  int64
			key sql.NullString
			v   any
		)
		if err := rows.Scan(&id, &key, &v); err != nil {
			return err
		}
		if err := fn(id, key, v); err != nil {
			return writeError{err}
		}
	}
	return rows.Err()
}

// nextReadable finds the first row after rowid last that SQLite can reach
// (the b-tree pages down to it read), whether it is the very next row
// (direct), and whether there is one. A seek past a stretch of unreadable
// pages succeeds; one into it fails: the distance is doubled until a seek
// succeeds, then halved back to the first that does.
func nextReadable(ctx context.Context, db *sql.DB, table string, last int64) (id int64, direct, ok bool) {
	seek := func(x int64) (id int64, found bool, err error) {
		err = db.QueryRowContext(ctx, `SELECT rowid FROM `+table+` WHERE rowid > ? ORDER BY rowid LIMIT 1`, x).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return id, err == nil, err
	}
	if id, found, err := seek(last); err == nil {
		return id, true, found
	}
	lo, hi := last, last // seek(lo) fails; seek(hi) succeeds once found
	for step := int64(1); ; step *= 2 {
		if ctx.Err() != nil || step <= 0 || last > math.MaxInt64-step {
			return 0, false, false
		}
		hi = last + step
		if _, _, err := seek(hi); err == nil {
			break
		}
		lo = hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, _, err := seek(mid); err == nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	id, found, err := seek(hi)
	return id, false, found && err == nil
}
