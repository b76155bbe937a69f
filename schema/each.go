package schema

import (
	"context"
	"errors"
	"io"

	"github.com/pos-lake/pos/internal/jsontext"
)

// EachOptions configure Each.
type EachOptions struct {
	// Name is the stream's name in diagnostics.
	Name string
	// OnSkip is told about each bad line; its error stops the loop.
	// Without it, the first bad line stops the loop.
	OnSkip SkipFunc
	// Lazy, KeepLines and Fast are the Decoder's.
	Lazy      []Kind
	KeepLines bool
	Fast      *jsontext.Fast
}

// Each decodes the records of an NDJSON stream and calls fn with each, in
// order. Decoding runs in its own goroutine, a bounded batch ahead of fn, so
// a filter's decoding and its work use two cores. A bad line is reported to
// OnSkip as a *BadInput naming the stream and the line. Each returns the
// number of bad lines.
func Each(ctx context.Context, r io.Reader, opt EachOptions, fn func(*Record) error) (int64, error) {
	name, onSkip := opt.Name, opt.OnSkip
	type item struct {
		rec *Record
		err error
	}
	const (
		batchItems = 256
		batchBytes = 4 << 20 // a batch closes after this much input
		ahead      = 4       // batches decoded ahead of fn
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []item, ahead)
	go func() {
		defer close(batches)
		var dec *Decoder
		if opt.KeepLines || len(opt.Lazy) > 0 {
			// Records keep their lines: read them into blocks that
			// are not written over, instead of copying each.
			dec = NewKeptDecoder(r)
		} else {
			dec = NewDecoder(r)
		}
		dec.Lazy, dec.KeepLines, dec.Fast = opt.Lazy, opt.KeepLines, opt.Fast
		var batch []item
		size := 0
		send := func() bool {
			if len(batch) == 0 {
				return true
			}
			select {
			case batches <- batch:
				batch, size = make([]item, 0, batchItems), 0
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			rec := new(Record)
			start := dec.lr.Offset()
			err := dec.Decode(rec)
			if errors.Is(err, io.EOF) {
				send()
				return
			}
			var se *SyntaxError
			if err != nil && !errors.As(err, &se) {
				batch = append(batch, item{err: err})
				send()
				return
			}
			if err != nil {
				rec = nil
			}
			batch = append(batch, item{rec: rec, err: err})
			size += int(dec.lr.Offset() - start)
			if len(batch) >= batchItems || size >= batchBytes {
				if !send() {
					return
				}
			}
		}
	}()
	var skipped int64
	for batch := range batches {
		for _, it := range batch {
			if err := ctx.Err(); err != nil {
				return skipped, err
			}
			var se *SyntaxError
			if errors.As(it.err, &se) {
				skipped++
				bad := &BadInput{Path: name, Line: se.Line, Err: se.Err}
				if onSkip == nil {
					return skipped, bad
				}
				if err := onSkip(bad); err != nil {
					return skipped, err
				}
				continue
			}
			if it.err != nil {
				return skipped, it.err
			}
			if err := fn(it.rec); err != nil {
				return skipped, err
			}
		}
	}
	return skipped, ctx.Err()
}
