package embed

import (
	"context"
	"errors"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// Options configure Embed.
type Options struct {
	// Name is the input's name in diagnostics ("-" for stdin).
	Name string
	// OnSkip is told about each bad input line; its error stops the run.
	OnSkip schema.SkipFunc
	// Provider makes the vectors.
	Provider Provider
	// Cache, when set, is asked before the provider and keeps what the
	// provider computed.
	Cache *Cache
	// Chunker sizes the chunks (zero: DefaultChunker).
	Chunker Chunker
	// Workers bounds the groups of records being embedded at once
	// (default 2): provider calls in flight, or cores for the hash
	// provider.
	Workers int
	// Types lists the content types to index (see Indexable); empty: all.
	Types []string
	// FlushEach flushes the output after every group of records (for a
	// terminal).
	FlushEach bool
	// Fast decodes the records and reads the tools' inputs; nil does it
	// in Go.
	Fast *jsontext.Fast
}

// Indexable lists the content types pos-embed makes chunks of: the units
// of what was said, then those of what was done (ToolTypes).
var Indexable = []string{
	schema.ContentExchange, schema.ContentUserPrompt, schema.ContentSummaryLabel,
	schema.ContentCompactSummary, schema.ContentSubagentSummary, schema.ContentPlan,
	schema.ContentCommand, schema.ContentToolOutput, schema.ContentToolError,
}

// Stats counts what a run did.
type Stats struct {
	In       int64 // records read
	Out      int64 // records written
	Units    int64 // units indexed (exchanges, prompts, labels, summaries, reports, plans, tool commands and results)
	Chunks   int64 // chunk records written
	Computed int64 // vectors the provider computed
	Reused   int64 // vectors taken from the cache, or from a chunk with the same text earlier in the run
	Skipped  int64 // units with nothing to embed (no letter or digit)
	BadLines int64 // input lines that were not records
}

func (s *Stats) add(o Stats) {
	s.In += o.In
	s.Out += o.Out
	s.Units += o.Units
	s.Chunks += o.Chunks
	s.Computed += o.Computed
	s.Reused += o.Reused
	s.Skipped += o.Skipped
}

// lazyKinds are passed on without being decoded.
var lazyKinds = []schema.Kind{schema.KindRaw, schema.KindFileRef, schema.KindDecision, schema.KindCheckpoint,
	schema.KindSession, schema.KindChunk}

// A group of consecutive records is embedded as one job; jobs run
// concurrently and are written in input order.
const (
	jobRecords = 256
	jobBytes   = 4 << 20
)

type job struct {
	recs  []*schema.Record
	size  int
	tools map[int][]*toolUnit // the tool units written after recs[i] (-1: after the last)
}

// maxInflight bounds the bytes of the jobs read but not yet written: a
// job larger than this (a huge record) is embedded alone, so memory is that
// of the largest record, not of every huge record the reader got ahead to.
const maxInflight = 64 << 20

// hugeJob is the size from which a job's garbage is collected as soon as
// it is written.
const hugeJob = 16 << 20

func (j *job) addTools(i int, us []*toolUnit) {
	if len(us) == 0 {
		return
	}
	if j.tools == nil {
		j.tools = map[int][]*toolUnit{}
	}
	j.tools[i] = append(j.tools[i], us...)
	for _, u := range us {
		j.size += len(u.text)
	}
}

type jobResult struct {
	out   []*schema.Record
	stats Stats
	held  int64 // bytes of the inflight budget, released once written
}

// Embed reads records from r and writes them to w, each indexable record
// followed by its chunk records (with their vectors). Every other record
// passes through unchanged.
func Embed(ctx context.Context, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	if opt.Provider == nil {
		return Stats{}, errors.New("no embedding provider")
	}
	workers := max(opt.Workers, 1)
	if opt.Workers == 0 {
		workers = 2
	}
	types := opt.Types
	if len(types) == 0 {
		types = Indexable
	}
	e := &embedder{opt: opt, types: types, chunker: opt.Chunker}
	if e.chunker.MaxTokens == 0 {
		e.chunker = DefaultChunker
	}
	var tracker *toolTracker
	if slices.ContainsFunc(types, IsToolType) {
		tracker = newToolTracker(opt.Fast)
	}
	enc := schema.NewEncoder(w)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers + 1) // the workers and the writer
	futures := make(chan chan jobResult, workers)
	inflight := semaphore.NewWeighted(maxInflight)
	var total Stats
	g.Go(func() error {
		for f := range futures {
			res, ok := <-f
			if !ok {
				continue // its worker failed; the group returns its error
			}
			for _, rec := range res.out {
				if err := enc.Encode(rec); err != nil {
					return err
				}
			}
			inflight.Release(res.held)
			if res.held >= hugeJob {
				// A huge record's copies are garbage now: collected at
				// once, they are not still there when the next huge
				// record is read.
				runtime.GC()
			}
			total.add(res.stats)
			if opt.FlushEach {
				if err := enc.Flush(); err != nil {
					return err
				}
			}
		}
		return enc.Flush()
	})
	submit := func(j *job) error {
		held := min(int64(j.size), maxInflight)
		if err := inflight.Acquire(gctx, held); err != nil {
			return err
		}
		f := make(chan jobResult, 1)
		g.Go(func() error {
			defer close(f)
			res, err := e.run(gctx, j)
			if err == nil {
				res.held = held
				f <- res
			}
			return err
		})
		select {
		case futures <- f:
		case <-gctx.Done():
			return gctx.Err()
		}
		if held < hugeJob {
			return nil
		}
		// The next line is read, and decoded, once the huge job is
		// written and its memory free.
		if err := inflight.Acquire(gctx, maxInflight); err != nil {
			return err
		}
		inflight.Release(maxInflight)
		return nil
	}
	cur := &job{}
	bad, err := schema.Each(gctx, r, schema.EachOptions{
		Name: opt.Name, OnSkip: opt.OnSkip, Lazy: lazyKinds, KeepLines: true, Fast: opt.Fast,
	}, func(rec *schema.Record) error {
		cur.recs = append(cur.recs, rec)
		cur.size += len(rec.Line) + len(rec.Text)
		if tracker != nil {
			cur.addTools(len(cur.recs)-1, tracker.add(rec))
		}
		if len(cur.recs) >= jobRecords || cur.size >= jobBytes {
			j := cur
			cur = &job{}
			return submit(j)
		}
		return nil
	})
	if err == nil && tracker != nil {
		// What is still held goes at the end.
		cur.addTools(-1, tracker.releaseAll())
	}
	if err == nil && (len(cur.recs) > 0 || len(cur.tools) > 0) {
		err = submit(cur)
	}
	close(futures)
	werr := g.Wait()
	total.BadLines = bad
	if err == nil || errors.Is(err, context.Canceled) && werr != nil {
		err = werr
	}
	return total, err
}

type embedder struct {
	opt     Options
	types   []string
	chunker Chunker
}

// pending is a chunk waiting for its vector.
type pending struct {
	rec   *schema.Record
	key   Key
	input string // what is embedded: the chunk, after its unit's heading
}

// run embeds one job: chunks its units, takes what the cache has and asks
// the provider for the rest.
func (e *embedder) run(ctx context.Context, j *job) (jobResult, error) {
	var res jobResult
	res.out = make([]*schema.Record, 0, len(j.recs))
	var todo []pending
	tools := func(us []*toolUnit) {
		n, skipped := e.toolChunks(us, func(c *schema.Record, head string) {
			res.out = append(res.out, c)
			in := c.Text
			if head != "" {
				in = head + "\n\n" + in
			}
			todo = append(todo, pending{rec: c, key: KeyOf(in), input: in})
		})
		res.stats.Units += n
		res.stats.Skipped += skipped
	}
	for idx, rec := range j.recs {
		res.stats.In++
		res.out = append(res.out, rec)
		tools(j.tools[idx])
		ctype, text, ok := Unit(rec)
		if !ok || !slices.Contains(e.types, ctype) {
			continue
		}
		res.stats.Units++
		if !hasWord(text) {
			res.stats.Skipped++
			continue
		}
		head := heading(rec)
		for i, sp := range e.chunker.Split(text) {
			c := chunkRecord(rec, ctype, i, strings.TrimSpace(text[sp.Start:sp.End]))
			res.out = append(res.out, c)
			// The vector is of the chunk under its unit's heading; the
			// chunk's text (and the lexical index) is the chunk alone.
			in := c.Text
			if head != "" && !strings.HasPrefix(in, head) {
				in = head + "\n\n" + in
			}
			todo = append(todo, pending{rec: c, key: KeyOf(in), input: in})
		}
	}
	tools(j.tools[-1])
	res.stats.Out = int64(len(res.out))
	res.stats.Chunks = int64(len(todo))
	// The cache first; texts repeated within the job are asked once.
	var miss []string
	missIdx := map[Key]int{}
	wait := map[Key][]*schema.Record{}
	for _, p := range todo {
		if e.opt.Cache != nil {
			if v, ok := e.opt.Cache.Get(p.key); ok {
				e.setVector(p.rec, v)
				res.stats.Reused++
				continue
			}
		}
		if _, ok := missIdx[p.key]; !ok {
			missIdx[p.key] = len(miss)
			miss = append(miss, p.input)
		} else {
			res.stats.Reused++
		}
		wait[p.key] = append(wait[p.key], p.rec)
	}
	if len(miss) == 0 {
		return res, nil
	}
	keys := make([]Key, len(miss))
	for k, i := range missIdx {
		keys[i] = k
	}
	batch := max(e.opt.Provider.MaxBatch(), 1)
	for start := 0; start < len(miss); start += batch {
		end := min(start+batch, len(miss))
		vs, err := e.opt.Provider.Embed(ctx, miss[start:end])
		if err != nil {
			return res, err
		}
		for i, v := range vs {
			// Unit length, once, before it is shared and cached: then
			// the inner product of two vectors is their cosine
			// similarity, which is what search computes.
			normalize(v)
			k := keys[start+i]
			for _, c := range wait[k] {
				e.setVector(c, v)
			}
			res.stats.Computed++
			if e.opt.Cache != nil {
				if err := e.opt.Cache.Put(k, v); err != nil {
					return res, err
				}
			}
		}
	}
	return res, nil
}

func (e *embedder) setVector(c *schema.Record, v []float32) {
	c.Chunk.Model = e.opt.Provider.Model()
	c.Chunk.Provider = e.opt.Provider.Name()
	if ep, ok := e.opt.Provider.(interface{ Endpoint() string }); ok {
		c.Chunk.BaseURL = ep.Endpoint()
	}
	c.Chunk.Dim = int64(len(v))
	c.Chunk.Embedding = v
}

// Unit returns what a record contributes to the index: its content type
// as a chunk and the text to chunk. Exchanges, the prompts that open them,
// summary labels, compaction summaries, subagent reports and plans are
// indexed; other records are not.
func Unit(rec *schema.Record) (ctype, text string, ok bool) {
	switch rec.Kind {
	case schema.KindExchange:
		text = rec.Text
		if rec.Agent != nil && rec.Agent.Type == "compact" && rec.Exchange != nil {
			// A compaction agent's prompt is the same boilerplate every
			// time; its answer is the summary.
			text = rec.Exchange.Response
		}
		return schema.ContentExchange, text, true
	case schema.KindMessage:
		switch rec.ContentType {
		case schema.ContentText, schema.ContentCommand:
			if rec.Role == schema.RoleUser {
				return schema.ContentUserPrompt, rec.Text, true
			}
		case schema.ContentSummaryLabel, schema.ContentCompactSummary, schema.ContentPlan, schema.ContentSubagentSummary:
			return rec.ContentType, rec.Text, true
		}
	case schema.KindDocument:
		ctype = rec.ContentType
		if ctype == "" {
			ctype = schema.ContentPlan
		}
		text = rec.Text
		if t := excerpt.Title(rec); t != "" && !strings.HasPrefix(strings.TrimSpace(text), t) {
			text = t + "\n\n" + text
		}
		return ctype, text, true
	}
	return "", "", false
}

// ChunkID is the id of a unit's i-th chunk: the same unit, chunked the same
// way, always gives the same ids, so a unit re-derived with more text adds
// new versions of its chunks, not duplicates.
func ChunkID(platform, parentID, ctype string, i int) string {
	return schema.ID(platform, "chunk", parentID, ctype, strconv.Itoa(i))
}

func chunkRecord(rec *schema.Record, ctype string, i int, text string) *schema.Record {
	c := schema.New(schema.KindChunk)
	c.ID = ChunkID(rec.Platform, rec.ID, ctype, i)
	c.ParentID = rec.ID
	c.Platform, c.SessionID = rec.Platform, rec.SessionID
	c.TS, c.TSPrecision = rec.TS, rec.TSPrecision
	c.Role, c.ContentType = rec.Role, ctype
	c.Title = excerpt.Title(rec)
	c.Text = text
	c.Agent = rec.Agent
	c.Cwd, c.GitBranch, c.Project, c.User, c.Machine = rec.Cwd, rec.GitBranch, rec.Project, rec.User, rec.Machine
	c.Completeness = rec.Completeness
	c.Adapter = rec.Adapter
	c.Chunk = &schema.Chunk{Index: int64(i)}
	// A chunk's text is its unit's: scrubbed as the unit was.
	c.SetScrubMark(rec.ScrubMark())
	return c
}

// heading is what a unit's chunks are embedded under, so that a chunk from
// the middle of a long answer still says what the unit is about: the first
// line of the prompt of an exchange, the title of a document.
func heading(rec *schema.Record) string {
	var s string
	switch {
	case rec.Kind == schema.KindExchange && rec.Exchange != nil && (rec.Agent == nil || rec.Agent.Type != "compact"):
		s = rec.Exchange.Prompt
	case rec.Kind == schema.KindDocument:
		s = rec.Title
	}
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return excerpt.Prefix(s, 200)
}

func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
