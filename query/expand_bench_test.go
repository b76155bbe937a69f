package query_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/transform/embed"
)

// BenchmarkSearchExpansion measures what query expansion adds to a hybrid
// search: the same queries with and without it, over a synthetic lake of
// 32k chunks (the size of the 1 GB bench home's), built in a temporary
// directory (about half a minute):
//
//	go test -run '^$' -bench BenchmarkSearchExpansion -benchtime 60x ./query
func BenchmarkSearchExpansion(b *testing.B) {
	const chunks = 32_000
	ctx := context.Background()
	lake := b.TempDir()
	l, err := load.Open(ctx, load.Options{Lake: lake, NoCatalog: true, Now: func() time.Time { return benchEnd }})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(benchWords)-3))
	h := embed.NewHash(embed.DefaultDim)
	for i := range chunks {
		if err := l.Add(benchChunk(i*(benchChunks/chunks), r, z, h)); err != nil {
			l.Abort()
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		noExpand bool
	}{{"hybrid-expanded", false}, {"hybrid-plain", true}} {
		b.Run(c.name, func(b *testing.B) {
			db := openDB(b, lake)
			var times []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_, err := db.Search(ctx, query.SearchOptions{Query: benchQueries[i%len(benchQueries)], Embed: hashEmbedder, NoExpand: c.noExpand})
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportLatency(b, times)
		})
	}
}
