package scrub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// Options configure a Scrubber.
type Options struct {
	// Key keys the hash in each marker (HMAC-SHA256): at least MinKeyLen
	// bytes. A short key can be found by trying candidates, and with it
	// every marker checked against guesses of its secret.
	Key []byte
	// PII also redacts e-mail addresses, phone numbers, IP addresses, the
	// user name in home directory paths and the records' user field.
	PII bool
	// Off redacts nothing: records are passed on marked as not scrubbed
	// by the user's choice (schema.ScrubOff), so the lake can tell that
	// from a pipeline that left pos-scrub out.
	Off bool
	// Allowlist lists what is not redacted (false positives).
	Allowlist *Allowlist
	// Workers is the number of goroutines that scan records (default: 2, or
	// fewer CPUs). Output order is input order whatever it is.
	Workers int
	// Name is the input's name in diagnostics ("-" for stdin), for Scrub.
	Name string
	// OnSkip is told about each bad input line; its error stops the run.
	// Without it, the first bad line stops the run.
	OnSkip schema.SkipFunc
	// Fast decodes the records; nil decodes them in Go.
	Fast *jsontext.Fast
}

// A Scrubber redacts secrets (and, with Options.PII, personal data) in pos
// records. It is safe for concurrent use.
type Scrubber struct {
	opt      Options
	rs       *ruleSet
	off      []bool // by rule index: not applied
	allow    *Allowlist
	userRule *rule
	pf       *prefilter
	pool     sync.Pool
	mark     string // the schema.ScrubField value of the records it writes
}

// New returns a Scrubber. The rule set (gitleaks' default configuration and
// ours) is compiled once per process.
func New(opt Options) (*Scrubber, error) {
	if !opt.Off {
		if err := CheckKey(opt.Key); err != nil {
			return nil, err
		}
	}
	rs, err := rules()
	if err != nil {
		return nil, err
	}
	s := &Scrubber{opt: opt, rs: rs, off: make([]bool, len(rs.rules)), allow: opt.Allowlist, userRule: rs.byID[ruleUser]}
	switch {
	case opt.Off:
		s.mark = schema.ScrubOff
	case opt.PII:
		s.mark = schema.ScrubPII
	default:
		s.mark = schema.ScrubSecrets
	}
	for _, r := range rs.rules {
		s.off[r.idx] = r.pii && !opt.PII
	}
	if a := opt.Allowlist; a != nil {
		for _, id := range a.Rules {
			r, ok := rs.byID[id]
			if !ok {
				return nil, fmt.Errorf("allowlist: unknown rule %q (pos-scrub --rules lists them)", id)
			}
			s.off[r.idx] = true
		}
	}
	s.pf = rs.prefilter(s.off)
	s.pool.New = func() any { return newScanner(s) }
	return s, nil
}

// RuleIDs lists the rules a Scrubber applies: gitleaks' and ours.
func RuleIDs() ([]string, error) {
	rs, err := rules()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rs.rules))
	for i, r := range rs.rules {
		ids[i] = r.id
	}
	return ids, nil
}

// Scrub reads records from r and writes them to w with every secret
// redacted. It is New followed by Scrubber.Scrub.
func Scrub(ctx context.Context, r io.Reader, w io.Writer, opt Options) (Report, error) {
	s, err := New(opt)
	if err != nil {
		return Report{}, err
	}
	return s.Stream(ctx, r, w, opt.Name)
}

// lazyKinds are read without decoding: the scrubber reads every record as
// JSON itself, and writes a record it does not change as it was read.
var lazyKinds = []schema.Kind{schema.KindMessage, schema.KindRaw, schema.KindExchange, schema.KindSession,
	schema.KindDocument, schema.KindChunk, schema.KindCheckpoint}

// batch is a run of records scanned by one worker and written in order.
type batch struct {
	items []item
	size  int // input bytes
	out   []byte
	rep   Report
	err   error // the read error that ended the input
	done  chan struct{}
}

type item struct {
	rec  *schema.Record
	bad  *schema.BadInput
	line int64
	end  int // end of this item's output in batch.out
}

const (
	batchItems = 256
	batchBytes = 1 << 20
)

// Stream reads records from r and writes them to w; name is the input's
// name in diagnostics. Records are scanned by Options.Workers goroutines
// and written in input order; memory is bounded by a few batches of
// records and the longest record. Output is always a prefix of the
// complete result.
func (s *Scrubber) Stream(ctx context.Context, r io.Reader, w io.Writer, name string) (Report, error) {
	return s.StreamWith(ctx, r, w, name, s.opt.OnSkip)
}

// StreamWith is Stream telling onSkip, not Options.OnSkip, about bad
// lines: one Scrubber, its rules and its scanners built once, serves
// streams that each have their own diagnostics.
func (s *Scrubber) StreamWith(ctx context.Context, r io.Reader, w io.Writer, name string, onSkip schema.SkipFunc) (Report, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := s.opt.Workers
	if workers <= 0 {
		workers = min(2, runtime.GOMAXPROCS(0))
	}
	todo := make(chan *batch, workers)
	order := make(chan *batch, 2*workers+2)
	go s.read(ctx, r, name, todo, order)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range todo {
				s.work(b, name)
				close(b.done)
			}
		}()
	}
	defer wg.Wait()
	// Each batch is written as it is done: a batch is the writes' buffer.
	rep := newReport()
	finish := func(err error) (Report, error) {
		rep.Elapsed = time.Since(start)
		cancel()
		return rep, err
	}
	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			return finish(ctx.Err())
		}
		prev := 0
		for _, it := range b.items {
			if it.bad == nil {
				continue
			}
			rep.Skipped++
			err := error(it.bad)
			if onSkip != nil {
				err = onSkip(it.bad)
			}
			if err != nil {
				// Stop at the bad line: what came before it is out.
				w.Write(b.out[prev:it.end])
				return finish(err)
			}
		}
		_, err := w.Write(b.out[prev:])
		putBuf(b.out)
		b.out = nil
		if err != nil {
			return finish(err)
		}
		rep.Add(b.rep)
		if b.err != nil {
			return finish(b.err)
		}
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
	}
	return finish(ctx.Err())
}

// read decodes the input into batches, which go to the workers and, in the
// same order, to the writer.
func (s *Scrubber) read(ctx context.Context, r io.Reader, name string, todo, order chan<- *batch) {
	defer close(order)
	defer close(todo)
	dec := schema.NewKeptDecoder(r) // records keep their lines
	dec.Lazy, dec.KeepLines, dec.Fast = lazyKinds, true, s.opt.Fast
	b, size := &batch{done: make(chan struct{})}, 0
	send := func() bool {
		select {
		case order <- b:
		case <-ctx.Done():
			return false
		}
		select {
		case todo <- b:
		case <-ctx.Done():
			return false
		}
		b, size = &batch{done: make(chan struct{})}, 0
		return true
	}
	for {
		rec := new(schema.Record)
		err := dec.Decode(rec)
		if errors.Is(err, io.EOF) {
			if len(b.items) > 0 {
				send()
			}
			return
		}
		var se *schema.SyntaxError
		switch {
		case errors.As(err, &se):
			b.items = append(b.items, item{bad: &schema.BadInput{Path: name, Line: se.Line, Err: se.Err}})
		case err != nil:
			b.err = err
			send()
			return
		default:
			b.items = append(b.items, item{rec: rec, line: dec.Line})
			size += len(rec.Line) + 1
			b.size = size
		}
		if len(b.items) >= batchItems || size >= batchBytes {
			if !send() {
				return
			}
		}
	}
}

// work scrubs a batch.
func (s *Scrubber) work(b *batch, name string) {
	sc := s.pool.Get().(*scanner)
	defer s.pool.Put(sc)
	b.rep = newReport()
	b.out = getBuf(b.size + b.size/8 + 64)
	for i := range b.items {
		it := &b.items[i]
		if it.bad == nil {
			var err error
			b.out, err = sc.record(it.rec, &b.rep, b.out)
			if err != nil {
				it.bad = &schema.BadInput{Path: name, Line: it.line, Err: err}
			}
			it.rec = nil
		}
		it.end = len(b.out)
	}
}

// record appends the scrubbed line of rec (and a newline) to out.
func (sc *scanner) record(rec *schema.Record, rep *Report, out []byte) ([]byte, error) {
	line := rec.Line
	if line == nil {
		if cap(sc.enc) > 64<<20 {
			sc.enc = nil
		}
		sc.enc = schema.AppendRecord(sc.enc[:0], rec)
		line = sc.enc
	}
	rep.Bytes += int64(len(line)) + 1
	if err := sc.doc.parse(line); err != nil {
		// A lazily read line was not decoded: decode it now, as the
		// decoder would have, to say what is wrong or to re-encode it.
		var full schema.Record
		if uerr := schema.UnmarshalWith(sc.s.opt.Fast, line, &full); uerr != nil {
			return out, uerr
		}
		sc.enc = schema.AppendRecord(sc.enc[:0], &full)
		line = sc.enc
		if err := sc.doc.parse(line); err != nil {
			return out, fmt.Errorf("record cannot be scanned: %w", err)
		}
	}
	platform := sc.doc.platform
	if platform == "" {
		platform = rec.Platform
	}
	pr := rep.platform(platform)
	pr.Records++
	rep.Records++
	if sc.s.opt.Off {
		return sc.appendMarked(out, line)
	}
	counts := pr.Rules
	before := sumCounts(counts)
	scrubbed, changed := sc.scrubDoc(counts)
	if !changed {
		return sc.appendMarked(out, line)
	}
	// The changed line is decoded into a record again, so the output is a
	// record in canonical form, and the record's Line (the line as read)
	// is gone with the old record.
	var nr schema.Record
	err := schema.UnmarshalWith(sc.s.opt.Fast, scrubbed, &nr)
	if cap(sc.out) > 64<<20 {
		sc.out, sc.body = nil, nil // do not keep one huge record's buffers
	}
	if err != nil {
		return out, fmt.Errorf("scrubbed record is not a record: %w", err)
	}
	nr.Line = nil
	sc.mark(&nr)
	n := sumCounts(counts) - before
	pr.Changed++
	pr.Redactions += n
	rep.Changed++
	rep.Redactions += n
	out = schema.AppendRecord(out, &nr)
	return append(out, '\n'), nil
}

// scrubKey starts the ScrubField member of a JSON object; inside a JSON
// string its quotes would be escaped, so only a member matches.
var scrubKey = []byte(`"` + schema.ScrubField + `":`)

// appendMarked appends line, a record in which nothing was redacted, with
// the scrubber's mark (and a newline). A line without a ScrubField member,
// the usual case, has the member spliced in before its closing brace: it
// stays as read otherwise, and is not encoded again. One that has it (a
// record scrubbed twice) is decoded and keeps the stronger mark.
func (sc *scanner) appendMarked(out, line []byte) ([]byte, error) {
	if !bytes.Contains(line, scrubKey) {
		if end := bytes.LastIndexByte(line, '}'); end > 0 {
			out = append(out, line[:end]...)
			if len(bytes.TrimSpace(line[1:end])) > 0 {
				out = append(out, ',')
			}
			out = append(out, scrubKey...)
			out = jsontext.AppendString(out, sc.s.mark)
			out = append(out, line[end:]...)
			return append(out, '\n'), nil
		}
	}
	var rec schema.Record
	if err := schema.UnmarshalWith(sc.s.opt.Fast, line, &rec); err != nil {
		return out, err
	}
	if schema.ScrubRank(rec.ScrubMark()) >= schema.ScrubRank(sc.s.mark) {
		out = append(out, line...) // marked already: as read
		return append(out, '\n'), nil
	}
	sc.mark(&rec)
	out = schema.AppendRecord(out, &rec)
	return append(out, '\n'), nil
}

// mark sets the scrubber's mark on rec, unless it has a stronger one.
func (sc *scanner) mark(rec *schema.Record) {
	if schema.ScrubRank(rec.ScrubMark()) < schema.ScrubRank(sc.s.mark) {
		rec.SetScrubMark(sc.s.mark)
	}
}

func sumCounts(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// Record scrubs one record in place and reports whether a redaction
// changed it; either way it gets the scrubber's mark (schema.ScrubField). A
// changed record is decoded again from its scrubbed form, so every field
// (the raw record, unknown fields and meta included) is the scrubbed one,
// and its Line is cleared.
func (s *Scrubber) Record(rec *schema.Record) (bool, error) {
	sc := s.pool.Get().(*scanner)
	defer s.pool.Put(sc)
	rep := newReport()
	out, err := sc.record(rec, &rep, nil)
	if err != nil {
		return false, err
	}
	if rep.Changed == 0 {
		// Unchanged but for the scrubber's mark.
		if schema.ScrubRank(rec.ScrubMark()) < schema.ScrubRank(s.mark) {
			rec.SetScrubMark(s.mark)
			rec.Line = nil
		}
		return false, nil
	}
	var nr schema.Record
	if err := schema.UnmarshalWith(s.opt.Fast, out[:len(out)-1], &nr); err != nil {
		return false, err
	}
	*rec = nr
	return true, nil
}

// Text scrubs a plain text (not JSON) and returns it with the number of
// redactions.
func (s *Scrubber) Text(text string) (string, int) {
	sc := s.pool.Get().(*scanner)
	defer s.pool.Put(sc)
	counts := map[string]int64{}
	out, changed := sc.scrubText([]byte(text), counts)
	if !changed {
		return text, 0
	}
	return string(out), int(sumCounts(counts))
}

// bufs recycles the output buffers of batches: they are as large as a
// batch of input, and zeroing a new one for every batch costs more than
// scanning some of them.
var bufs sync.Pool

func getBuf(n int) []byte {
	if p, ok := bufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

func putBuf(b []byte) {
	if cap(b) > 16<<20 {
		return // one huge record's: do not keep it
	}
	bufs.Put(&b)
}
