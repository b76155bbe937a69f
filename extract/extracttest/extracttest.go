// Package extracttest holds what the adapters' tests share: fixtures copied
// with fixed times, a run that round-trips every record through the wire
// format, checkpoints committed to a state and the run that must then read
// nothing, lines appended to a log, an in-process pos-normalize, golden
// files and runs over the real corpus.
package extracttest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/normalize"
)

// Now is the ingestion time of every test run, so outputs are stable.
var Now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// FixtureTime is the mtime the adapters' fixture trees are copied with.
var FixtureTime = time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)

// Testdata joins elem to the repository's testdata directory as an
// adapter's tests see it from their package directory, extract/<adapter>.
func Testdata(elem ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...)
}

// Fixture copies the testdata tree src (a slash-separated path below
// Testdata) into a new temporary directory, as its subdirectory name or,
// when name is "", as the directory itself, every file with mtime
// FixtureTime, and returns the copy.
func Fixture(t testing.TB, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	CopyTree(t, Testdata(filepath.FromSlash(src)), dst, FixtureTime)
	return dst
}

// CopyTree copies the fixture tree src to dst, giving every file mtime, so
// the adapters' file order and file_mtime times do not depend on the
// checkout.
func CopyTree(t testing.TB, src, dst string, mtime time.Time) {
	t.Helper()
	files, err := testfs.CopyTree(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.Chtimes(f, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// Result is what an extraction emitted and reported.
type Result struct {
	Recs  []*schema.Record
	Skips []*schema.BadInput
	Stats *extract.Stats
}

// Run extracts with fixed time, user and machine, collecting the records
// after a round trip through the wire format (as a pipe would carry them)
// and the bad input reported.
func Run(t testing.TB, a extract.Adapter, opt extract.Options) Result {
	t.Helper()
	var res Result
	res.Stats = &extract.Stats{}
	opt.Stats = res.Stats
	opt.Now = func() time.Time { return Now }
	opt.User, opt.Machine = "dev", "box"
	opt.OnSkip = func(b *schema.BadInput) error { res.Skips = append(res.Skips, b); return nil }
	err := a.Extract(context.Background(), opt, func(r *schema.Record) error {
		var got schema.Record
		if err := schema.Unmarshal(schema.AppendRecord(nil, r), &got); err != nil {
			t.Fatalf("record does not round-trip: %v", err)
		}
		res.Recs = append(res.Recs, &got)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// BenchmarkCorpus measures a over the real corpus of platform, encoding its
// records to NDJSON as pos-extract does; MB/s is of source bytes.
func BenchmarkCorpus(b *testing.B, a extract.Adapter, platform string) {
	dir := corpus.Platform(b, platform)
	var size int64
	st := &extract.Stats{}
	enc := schema.NewEncoder(io.Discard)
	opt := extract.Options{Roots: []string{dir}, Stats: st, OnSkip: func(*schema.BadInput) error { return nil }}
	for b.Loop() {
		st.Bytes.Store(0)
		if err := a.Extract(context.Background(), opt, enc.Encode); err != nil {
			b.Fatal(err)
		}
		size = st.Bytes.Load()
	}
	b.SetBytes(size)
}

// FixedPoint fails t unless rec, encoded as the wire format carries it,
// decodes to a record that encodes to the same bytes: what an adapter
// emits passes through every stage after it unchanged. It returns the
// encoding.
func FixedPoint(t testing.TB, rec *schema.Record) []byte {
	t.Helper()
	enc := schema.AppendRecord(nil, rec)
	var back schema.Record
	if err := schema.Unmarshal(enc, &back); err != nil {
		t.Fatalf("record does not round-trip: %v\n%s", err, enc)
	}
	if again := schema.AppendRecord(nil, &back); !bytes.Equal(again, enc) {
		t.Fatalf("record is not a fixed point of the wire format:\n%s\n%s", enc, again)
	}
	return enc
}

// SeedLines adds every line of the testdata files the patterns match
// (filepath.Glob patterns below Testdata, in order) to f's seed corpus.
func SeedLines(f *testing.F, patterns ...string) {
	for _, p := range patterns {
		matches, _ := filepath.Glob(Testdata(filepath.FromSlash(p)))
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				f.Add(append([]byte(nil), sc.Bytes()...))
			}
		}
	}
}

// DefaultRoots checks that a finds records below home when given no roots
// (where names what it looks for there, "~/.codex/sessions"), and as many
// when there is no home but the environment variable key is set to value.
// It returns the run over home.
func DefaultRoots(t testing.TB, a extract.Adapter, home, where, key, value string) Result {
	t.Helper()
	res := Run(t, a, extract.Options{Home: home})
	if len(res.Recs) == 0 {
		t.Fatal(where + " not discovered")
	}
	env := map[string]string{key: value}
	res2 := Run(t, a, extract.Options{Home: "/nonexistent", Env: func(k string) string { return env[k] }})
	if len(res2.Recs) != len(res.Recs) {
		t.Fatalf("%s: %d records, want %d", key, len(res2.Recs), len(res.Recs))
	}
	return res
}

// Unchanged runs a again with opt, whose State holds the watermarks of a
// run over the same files, and fails unless nothing is read: no record, no
// bad input reported again, and files files passed over as unchanged.
func Unchanged(t testing.TB, a extract.Adapter, opt extract.Options, files int64) {
	t.Helper()
	res := Run(t, a, opt)
	if len(res.Recs) != 0 || len(res.Skips) != 0 || res.Stats.Unchanged.Load() != files {
		for _, r := range res.Recs {
			t.Logf("%s %+v", r.Kind, r.Source)
		}
		t.Fatalf("unchanged run: %d records, %d skips, %d files unchanged, want %d", len(res.Recs), len(res.Skips), res.Stats.Unchanged.Load(), files)
	}
}

// Since runs a with opt, whose Since is set, and fails if a record made
// of the native data is older than --since: every one but the checkpoints
// and the session records, which stand for whole files and sessions.
func Since(t testing.TB, a extract.Adapter, opt extract.Options) Result {
	t.Helper()
	res := Run(t, a, opt)
	for _, r := range res.Recs {
		if r.Kind != schema.KindCheckpoint && r.Kind != schema.KindSession && r.TS.Before(opt.Since) {
			t.Fatalf("record older than --since: %s %s %v", r.Kind, r.ID, r.TS)
		}
	}
	return res
}

// FirstRun runs a with opt and a new watermark state, commits the
// checkpoints it emits to that state, and checks with Unchanged that a
// second run reads nothing, files files passed over as unchanged. It
// returns the first run and the state, for the runs after a change.
func FirstRun(t testing.TB, a extract.Adapter, opt extract.Options, files int64) (Result, *watermark.State) {
	t.Helper()
	opt.State = watermark.NewState()
	res := Run(t, a, opt)
	Commit(opt.State, res.Recs)
	Unchanged(t, a, opt, files)
	return res, opt.State
}

// AppendFile appends the strings to the file at path, creating it if
// absent, as an agent writing on to its log does.
func AppendFile(t testing.TB, path string, s ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(strings.Join(s, ""))
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
}

// Corpus runs a over the real corpus of platform, skipping t when the
// corpus is absent, and fails if any of it is passed over as bad input or
// left as a partial line. It returns the corpus directory and the run.
func Corpus(t testing.TB, a extract.Adapter, platform string) (string, Result) {
	t.Helper()
	dir := corpus.Platform(t, platform)
	res := Run(t, a, extract.Options{Roots: []string{dir}})
	if len(res.Skips) != 0 || res.Stats.Partial.Load() != 0 {
		t.Fatalf("skipped in the corpus: %v, %d partial", res.Skips, res.Stats.Partial.Load())
	}
	return dir, res
}

// Ignores fails unless a finds no record below roots, which hold other
// tools' files only.
func Ignores(t testing.TB, a extract.Adapter, roots ...string) {
	t.Helper()
	if res := Run(t, a, extract.Options{Roots: roots}); len(res.Recs) != 0 {
		t.Fatalf("%d records from other tools' files, first from %s", len(res.Recs), res.Recs[0].Source.Path)
	}
}

// Contract checks what every adapter promises of the records it emits,
// in order: a raw record holds the native record, its source line and the
// id schema.RawID gives it; a message holds no raw data and follows the
// raw record of its source line, behind at most perRaw-1 other messages
// made from that line. It returns the number of raw records.
func Contract(t testing.TB, recs []*schema.Record, perRaw int) int {
	t.Helper()
	raws := 0
	for i, r := range recs {
		switch r.Kind {
		case schema.KindRaw:
			raws++
			if len(r.Raw) == 0 || r.Source == nil || r.Source.Line == 0 || r.ID != schema.RawID(r) {
				t.Fatalf("raw record without raw or provenance: %+v", r)
			}
		case schema.KindMessage:
			j := i - 1
			for j > 0 && i-j < perRaw && recs[j].Kind == schema.KindMessage {
				j-- // a line may make several messages
			}
			if len(r.Raw) > 0 || j < 0 || recs[j].Kind != schema.KindRaw || *recs[j].Source != *r.Source {
				t.Fatalf("message %s does not follow its line's raw record", r.ID)
			}
		}
	}
	return raws
}

// Checkpoint returns the last checkpoint among recs of a file whose path
// contains part, or nil.
func Checkpoint(recs []*schema.Record, part string) *schema.Checkpoint {
	var c *schema.Checkpoint
	for _, r := range recs {
		if r.Kind == schema.KindCheckpoint && strings.Contains(r.Checkpoint.Path, part) {
			c = r.Checkpoint
		}
	}
	return c
}

// IDs returns the set of the records' ids.
func IDs(recs []*schema.Record) map[string]bool {
	ids := make(map[string]bool, len(recs))
	for _, r := range recs {
		ids[r.ID] = true
	}
	return ids
}

// Messages returns the message records among recs.
func Messages(recs []*schema.Record) []*schema.Record {
	return Find(recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
}

// Find returns the records pred accepts.
func Find(recs []*schema.Record, pred func(*schema.Record) bool) []*schema.Record {
	var out []*schema.Record
	for _, r := range recs {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// Encode returns the records as an NDJSON stream.
func Encode(recs []*schema.Record) []byte {
	var buf []byte
	for _, r := range recs {
		buf = append(schema.AppendRecord(buf, r), '\n')
	}
	return buf
}

// Commit puts the checkpoints among recs into st, as the pipeline does
// once the records before them are loaded.
func Commit(st *watermark.State, recs []*schema.Record) {
	for _, r := range recs {
		if r.Kind == schema.KindCheckpoint {
			st.Put(r.Checkpoint)
		}
	}
}

// Normalize runs recs through pos-normalize in process and returns what it
// emitted and counted. The normalizer may enrich recs in place, as it does
// the records a pipe hands it.
func Normalize(t testing.TB, opt normalize.Options, recs []*schema.Record) ([]*schema.Record, normalize.Stats) {
	t.Helper()
	var out []*schema.Record
	n := normalize.New(opt, func(r *schema.Record) error { out = append(out, r); return nil })
	for _, r := range recs {
		if err := n.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	return out, n.Stats()
}

// GoldenRecords compares recs, encoded as NDJSON with the fixture's
// temporary directory tmp written as $ROOT, with the golden file at path,
// so the file does not depend on where the test ran.
func GoldenRecords(t testing.TB, path string, recs []*schema.Record, tmp string, update bool) {
	t.Helper()
	Golden(t, path, bytes.ReplaceAll(Encode(recs), []byte(tmp), []byte("$ROOT")), update)
}

// Golden compares got with the golden file at path, rewriting it first
// when update is set; a difference names the first differing line.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\n got: %.400s\nwant: %.400s\n(go test -update rewrites it)", filepath.Base(path), i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d (go test -update rewrites it)", filepath.Base(path), len(gl), len(wl))
}
