// Package testlake builds small lakes with vectors for the tests of the
// commands that search them (pos-query, the MCP server): it runs the real
// pipeline in process over Claude Code transcripts, pos-embed included,
// with the hash provider so that no model or network is needed.
//
// It is imported by tests only.
package testlake

import (
	"bytes"
	"context"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
)

// Embedded runs extract (user dev on machine box) → normalize with every
// enrichment → embed with the hash provider → load over the Claude Code
// transcripts under root into lake, stamped with querytest.Now. With
// catalog, load also writes the lake's pos.duckdb.
func Embedded(ctx context.Context, root, lake string, catalog bool) error {
	now := func() time.Time { return querytest.Now }
	var extracted, normalized, embedded bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	opt := extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: now}
	if err := (claudecode.Adapter{}).Extract(ctx, opt, enc.Encode); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Enrich: enrich.All}); err != nil {
		return err
	}
	if _, err := embed.Embed(ctx, &normalized, &embedded, embed.Options{Provider: embed.NewHash(0)}); err != nil {
		return err
	}
	_, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: now, NoCatalog: !catalog})
	return err
}
