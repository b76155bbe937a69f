// Package loadtest builds small lakes for the tests of load's packages and
// reads lakes for them and the pipelines' tests: records, a run of
// pos-load's library over them, and a DuckDB connection with the lake's
// views.
package loadtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/schema"
)

// Msg is a user's text message of session in platform "test".
func Msg(id, session, text string, ts time.Time) *schema.Record {
	r := schema.New(schema.KindMessage)
	r.ID, r.Platform, r.SessionID, r.TS = id, "test", session, ts
	r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, text
	r.Usage = &schema.Usage{Input: 1, Output: 2}
	return r
}

// Load loads records into lake in one run.
func Load(t testing.TB, lake string, recs ...*schema.Record) load.Stats {
	t.Helper()
	return LoadWith(t, load.Options{Lake: lake}, recs...)
}

// LoadWith loads records in one run with opt.
func LoadWith(t testing.TB, opt load.Options, recs ...*schema.Record) load.Stats {
	t.Helper()
	var buf bytes.Buffer
	enc := schema.NewEncoder(&buf)
	for _, r := range recs {
		enc.Encode(r)
	}
	enc.Flush()
	st, err := load.Load(context.Background(), &buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Views is an in-memory DuckDB with lake's views, closed when t ends.
func Views(t testing.TB, lake string) *sql.DB {
	t.Helper()
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := catalog.DefineViews(context.Background(), db, lake); err != nil {
		t.Fatal(err)
	}
	return db
}

// One is the one value q returns, "" for NULL.
func One(t testing.TB, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

// DeadPid returns the id of a process that has ended; it skips t when the
// id is in use again.
func DeadPid(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		t.Skip("the killed process's id is in use again")
	}
	return pid
}

// LoadAt loads records into lake in one run whose clock says at.
func LoadAt(t testing.TB, lake string, at time.Time, recs ...*schema.Record) load.Stats {
	t.Helper()
	return LoadWith(t, load.Options{Lake: lake, Now: func() time.Time { return at }}, recs...)
}
