// Package querytest builds small lakes for tests and evaluations by
// running the real pipeline (the Claude Code extractor, normalize, scrub,
// load) over transcripts, and reads transcripts the way checks made
// without pos do.
package querytest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

// Fixture is the directory of the synthetic Claude Code transcripts in
// query/testdata: sessions 11111111-… (project /home/dev/alpha, with a
// subagent, two models, tool calls, a failed call and a <synthetic> reply,
// 2026-03-01 and 03-02), 11112222-… (alpha, 2026-02-27) and 22222222-…
// (/home/dev/beta, 2026-03-03).
func Fixture() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "claude")
}

// Now is the ingestion time stamped on the fixture lake's records.
var Now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// FixtureLake copies the fixture into dir and builds a lake from it in
// dir/lake, which it returns.
func FixtureLake(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "claude")
	if err := copyTree(Fixture(), src); err != nil {
		return "", err
	}
	lake := filepath.Join(dir, "lake")
	return lake, Build(ctx, src, lake)
}

// Build runs extract → normalize → scrub → load over the Claude Code
// transcripts under root into lake, for user dev on machine box, stamped
// with Now.
func Build(ctx context.Context, root, lake string) error {
	p := Pipeline{User: "dev", Machine: "box", Now: func() time.Time { return Now },
		Key: []byte("querytest key of 32 bytes or more")}
	return p.Run(ctx, root, lake)
}

// Pipeline is what a lake built by Run is stamped and keyed with.
type Pipeline struct {
	// User and Machine name where the records come from, as pos-extract's
	// flags do.
	User, Machine string
	// Now is the ingestion clock of extract and load; nil is the wall
	// clock.
	Now func() time.Time
	// Key keys the scrub markers.
	Key []byte
	// CollectSkips lets the extractor read on past bad input records and
	// fails the build afterwards, naming them all; otherwise the first one
	// stops the build with its error.
	CollectSkips bool
	// SkipBad reads on past bad input records and loads the rest, as
	// pos-extract does without --strict.
	SkipBad bool
	// Adapter extracts the records; nil: Claude Code's.
	Adapter extract.Adapter
	// More are other platforms' histories extracted after the first
	// adapter's, in the same run.
	More []Source
}

// Source is a platform's histories: its adapter and the root it reads.
type Source struct {
	Adapter extract.Adapter
	Root    string
}

// Run runs the pipeline pos-extract --platform claude_code | pos-normalize |
// pos-scrub | pos-load in process over the Claude Code transcripts under
// root into lake: extract, normalize with every enrichment, scrub, load
// (which requires scrubbed records), so that the lake holds scrubbed text
// as a user's does.
func (p Pipeline) Run(ctx context.Context, root, lake string) error {
	var extracted, normalized bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	var skipped []string
	opt := extract.Options{Roots: []string{root}, User: p.User, Machine: p.Machine, Now: p.Now}
	if p.CollectSkips {
		opt.OnSkip = func(b *schema.BadInput) error { skipped = append(skipped, b.Error()); return nil }
	}
	if p.SkipBad {
		opt.OnSkip = func(*schema.BadInput) error { return nil }
	}
	var ad extract.Adapter = claudecode.Adapter{}
	if p.Adapter != nil {
		ad = p.Adapter
	}
	if err := ad.Extract(ctx, opt, enc.Encode); err != nil {
		return err
	}
	for _, m := range p.More {
		o := opt
		o.Roots = []string{m.Root}
		if err := m.Adapter.Extract(ctx, o, enc.Encode); err != nil {
			return err
		}
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return errors.New("bad input: " + strings.Join(skipped, "; "))
	}
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Name: root, Enrich: enrich.All}); err != nil {
		return err
	}
	var scrubbed bytes.Buffer
	if _, err := scrub.Scrub(ctx, &normalized, &scrubbed, scrub.Options{Key: p.Key}); err != nil {
		return err
	}
	_, err := load.Load(ctx, &scrubbed, load.Options{Lake: lake, Now: p.Now, RequireScrubbed: true})
	return err
}

// EachTranscript calls fn with each transcript (.jsonl file) under root,
// open for reading, in path order.
func EachTranscript(root string, fn func(path string, r io.Reader) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return fn(path, f)
	})
}

// copyTree copies the fixture and gives its files modification times in
// path order, so the extractor (which reads files oldest first) reads them
// in the same order wherever the test runs.
func copyTree(from, to string) error {
	files, err := testfs.CopyTree(from, to)
	if err != nil {
		return err
	}
	for i, f := range files {
		t := Now.Add(time.Duration(i-len(files)) * time.Minute)
		if err := os.Chtimes(f, t, t); err != nil {
			return err
		}
	}
	return nil
}

// LoadRecords loads recs into lake in one run, as pos-load would load
// their stream (no catalog).
func LoadRecords(ctx context.Context, lake string, recs []*schema.Record) error {
	var buf bytes.Buffer
	enc := schema.NewEncoder(&buf)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	_, err := load.Load(ctx, &buf, load.Options{Lake: lake, NoCatalog: true})
	return err
}
