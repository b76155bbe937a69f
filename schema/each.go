package schema

import (
	"context"
	"errors"
	"io"
)

// Each decodes the records of an NDJSON stream and calls fn with each, in
// order. Decoding runs in its own goroutine, a bounded batch ahead of fn, so
// a filter's decoding and its work use two cores. A bad line is reported to
// onSkip as a *BadInput naming the stream (name) and the line; onSkip's error
// (or, without onSkip, the BadInput itself) stops the loop. It returns the
// number of bad lines. Records of the lazy kinds are not decoded (see
// Decoder.Lazy).
func Each(ctx context.Context, r io.Reader, name string, onSkip SkipFunc, fn func(*Record) error, lazy ...Kind) (int64, error) {
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
		dec := NewDecoder(r)
		dec.Lazy = lazy
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
