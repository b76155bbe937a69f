package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	cursor "github.com/pos-lake/pos/extract/cursor/about"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// BenchmarkSearch1M measures pos-query search on a synthetic lake of one
// million 384-dimensional chunks: a year of three platforms' sessions, hash
// vectors of generated text, postings for every chunk. The lake is built
// once (a few minutes) in $POS_BENCH_LAKE or <tmp>/pos-bench-search-1m-v6 (v6: sidecars with postings)
// and reused by later runs. Each sub-benchmark reports the median and 95th
// percentile latency of a set of queries:
//
//	go test -run '^$' -bench BenchmarkSearch1M -benchtime 100x ./query
//
//	hybrid-30d   top 10, hybrid, the last 30 days (about 82k chunks)
//	vector-30d   the vector half alone
//	lexical-30d  the BM25 half alone
//	hybrid-all   hybrid over the whole year, no date filter
//	open         opening the lake (defining its views), as pos-query does per run
func BenchmarkSearch1M(b *testing.B) {
	lake := benchLake(b)
	ctx := context.Background()
	until := benchEnd
	since := until.AddDate(0, 0, -30)
	run := func(name string, opt query.SearchOptions) {
		b.Run(name, func(b *testing.B) {
			db := openDB(b, lake)
			opt.Embed = hashEmbedder
			opt.K = 10
			var times []time.Duration
			hits := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				opt.Query = benchQueries[i%len(benchQueries)]
				start := time.Now()
				res, err := db.Search(ctx, opt)
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				hits += len(res.Hits)
			}
			b.StopTimer()
			reportLatency(b, times)
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
	run("hybrid-30d", query.SearchOptions{Mode: query.SearchHybrid, Since: since})
	run("vector-30d", query.SearchOptions{Mode: query.SearchVector, Since: since})
	run("lexical-30d", query.SearchOptions{Mode: query.SearchLexical, Since: since})
	run("hybrid-all", query.SearchOptions{Mode: query.SearchHybrid})
	b.Run("open", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			db, err := query.Open(ctx, lake)
			if err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
			db.Close()
		}
		reportLatency(b, times)
	})
}

func reportLatency(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "ms-median")
	b.ReportMetric(ms(times[min(len(times)-1, len(times)*95/100)]), "ms-p95")
}

// The synthetic lake.
const (
	benchChunks   = 1_000_000
	benchDays     = 365
	benchLakeName = "pos-bench-search-1m-v6" // v6: sidecars with postings
)

var benchEnd = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// benchQueries mix common, middling and rare words of the generated text.
var benchQueries = []string{
	"retry the request with exponential backoff",
	"parquet row group size",
	"migration rollback failed on the staging database",
	"flaky integration test timeout",
	"rate limit headers",
	"websocket reconnect after deploy",
	"cache invalidation bug",
	"schema validation error message",
	"memory leak in the worker pool",
	"oauth token refresh",
	"docker image build cache",
	"pagination cursor encoding",
	"zorvanel quistrade",
	"feature flag rollout plan",
	"index on the created at column",
	"graceful shutdown signal handling",
	"json decoder performance",
	"terminal scrollback mouse wheel",
	"permission denied writing the lock file",
	"how did we fix the race in the scheduler",
}

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func benchLake(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchDir = os.Getenv("POS_BENCH_LAKE")
		if benchDir == "" {
			benchDir = filepath.Join(os.TempDir(), benchLakeName)
		}
		if _, err := os.Stat(filepath.Join(benchDir, "complete")); err == nil {
			return
		}
		os.RemoveAll(benchDir)
		start := time.Now()
		fmt.Fprintf(os.Stderr, "building a synthetic lake of %d chunks in %s (once; later runs reuse it)\n", benchChunks, benchDir)
		if benchErr = buildBenchLake(benchDir); benchErr == nil {
			benchErr = os.WriteFile(filepath.Join(benchDir, "complete"), nil, 0o600)
		}
		fmt.Fprintf(os.Stderr, "built in %v\n", time.Since(start).Round(time.Second))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// benchWords is the vocabulary of the generated text: common English and
// engineering words first (the most frequent), then made-up words for a
// long tail.
var benchWords = func() []string {
	base := strings.Fields(`the to of and a in is it that for on with this we be as are not from at by or an
was have can will if but so use do which there all when file run test code function error change new
make add update check value data line set call return type need one more now get first also should
let fix read write build config server request user time name path output input list log check
first work case make them other into only then use just like over after before some what because
query table column index database schema migration rollback staging production deploy release
cache invalidation memory leak worker pool scheduler race lock thread goroutine channel timeout
retry backoff exponential request response header rate limit client token oauth refresh session
parquet row group size partition file writer reader compression page dictionary encoding footer
json decoder encoder performance benchmark profile allocation latency throughput median percentile
test flaky integration unit fixture mock assertion coverage suite ci pipeline docker image layer
websocket reconnect connection socket port proxy network dns tls certificate handshake
feature flag rollout plan experiment metric dashboard alert incident postmortem runbook
pagination cursor offset limit sort filter search ranking vector embedding lexical hybrid
terminal scrollback mouse wheel tmux xterm shell prompt signal shutdown graceful handling
permission denied lock directory path symlink mount volume disk space quota
validation message field required optional default enum string number boolean array object
created updated deleted column timestamp date zone utc local format parse`)
	seen := map[string]bool{}
	var out []string
	for _, w := range base {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	syll := strings.Fields("ka ro mi tu ze la vo ne qui stra del fin gor pal ven tor bel sar mun dax rel")
	r := rand.New(rand.NewPCG(7, 7))
	for len(out) < 40_000 {
		n := 2 + r.IntN(3)
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteString(syll[r.IntN(len(syll))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	// Two rare words the queries use.
	return append(out, "zorvanel", "quistrade")
}()

var benchPlatforms = []string{claudecode.Name, claudecode.Name, claudecode.Name, codex.Name, cursor.Name}

var benchTypes = []string{schema.ContentExchange, schema.ContentExchange, schema.ContentExchange, schema.ContentExchange,
	schema.ContentExchange, schema.ContentExchange, schema.ContentExchange, schema.ContentUserPrompt, schema.ContentUserPrompt,
	schema.ContentSubagentSummary, schema.ContentCompactSummary}

// benchChunk makes the i-th chunk: about 160 words drawn from a Zipf
// distribution, in sessions of 50 chunks, spread evenly over the year.
func benchChunk(i int, r *rand.Rand, z *rand.Zipf, h *embed.Hash) *schema.Record {
	session := i / 50
	day := session * 50 * benchDays / benchChunks
	ts := benchEnd.AddDate(0, 0, -benchDays+day).Add(time.Duration(r.Int64N(int64(24*time.Hour - time.Second))))
	var sb strings.Builder
	n := 120 + r.IntN(80)
	for w := 0; w < n; w++ {
		if w > 0 {
			sb.WriteByte(' ')
			if r.IntN(12) == 0 {
				sb.WriteString(". ")
			}
		}
		idx := int(z.Uint64())
		if i%20_000 == 0 && w == 5 {
			idx = len(benchWords) - 1 - r.IntN(2) // the rare words, now and then
		}
		sb.WriteString(benchWords[idx])
	}
	c := schema.New(schema.KindChunk)
	platform := benchPlatforms[session%len(benchPlatforms)]
	parent := schema.ID(platform, "bench-unit", fmt.Sprint(i/3))
	ctype := benchTypes[(i/3)%len(benchTypes)]
	c.ID = embed.ChunkID(platform, parent, ctype, i%3)
	c.Platform, c.SessionID, c.ParentID = platform, fmt.Sprintf("bench-session-%06d", session), parent
	c.TS, c.TSPrecision = ts, schema.PrecisionExact
	c.Role, c.ContentType = schema.RoleUser, ctype
	c.Text = sb.String()
	c.Project = fmt.Sprintf("/home/dev/project-%02d", session%23)
	c.User, c.Machine = "dev", "box"
	c.Completeness = schema.CompleteFull
	v := h.Vector(c.Text)
	c.Chunk = &schema.Chunk{Index: int64(i % 3), Model: embed.HashModel, Dim: int64(len(v)), Embedding: v}
	return c
}

// buildBenchLake generates the chunks on every core and loads them in
// order.
func buildBenchLake(dir string) error {
	ctx := context.Background()
	l, err := load.Open(ctx, load.Options{Lake: dir, NoCatalog: true, Now: func() time.Time { return benchEnd }})
	if err != nil {
		return err
	}
	const block = 2000
	workers := runtime.GOMAXPROCS(0)
	type batch struct {
		recs []*schema.Record
	}
	futures := make(chan chan batch, workers*2)
	go func() {
		defer close(futures)
		for start := 0; start < benchChunks; start += block {
			f := make(chan batch, 1)
			futures <- f
			go func(start int) {
				r := rand.New(rand.NewPCG(uint64(start), 1))
				z := rand.NewZipf(r, 1.07, 2, uint64(len(benchWords)-3))
				h := embed.NewHash(embed.DefaultDim)
				recs := make([]*schema.Record, 0, block)
				for i := start; i < min(start+block, benchChunks); i++ {
					recs = append(recs, benchChunk(i, r, z, h))
				}
				f <- batch{recs}
			}(start)
		}
	}()
	n := 0
	for f := range futures {
		for _, rec := range (<-f).recs {
			if err := l.Add(rec); err != nil {
				l.Abort()
				return err
			}
			n++
		}
		if n%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "  %d chunks\n", n)
		}
	}
	return l.Close()
}
