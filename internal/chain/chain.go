// Package chain runs the stages of a pipeline in one process: a source
// writing a stream, filters each reading the stream before it and writing
// the next, and a sink reading the last, connected by in-memory pipes
// instead of the shell's. The stages are the same functions the pos-*
// binaries run, on the same bytes, so a chain's result is the shell
// pipeline's; what it saves is a process start, and its package
// initialisation, for each stage.
//
// A stage that fails ends the chain: the pipes on both sides of it are
// closed with its error, so the stage before it fails its next write and
// the one after it its next read; the sink then sees an error, not the end
// of its input, and commits nothing of a cut stream. Run returns every
// stage's error.
package chain

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Source writes a stream to w. It need not close w.
type Source func(ctx context.Context, w io.Writer) error

// Filter reads a stream from r and writes one to w.
type Filter func(ctx context.Context, r io.Reader, w io.Writer) error

// Sink reads the last stream.
type Sink func(ctx context.Context, r io.Reader) error

// Run runs src, each filter and sink at once, each in a goroutine of its
// own, and waits for all of them. Its error joins the stages' errors, the
// first stage's first; a stage that only failed because a neighbour closed
// its pipe (io.ErrClosedPipe, or the context cancelled) adds nothing.
func Run(ctx context.Context, src Source, filters []Filter, sink Sink) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := len(filters) + 2
	errs := make([]error, n)
	readers := make([]*io.PipeReader, n-1)
	writers := make([]*io.PipeWriter, n-1)
	for i := range readers {
		readers[i], writers[i] = io.Pipe()
	}
	var wg sync.WaitGroup
	stage := func(i int, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn()
			errs[i] = err
			// The pipe after the stage ends with its end; the one before it,
			// when the stage failed, with its error, so the writer before
			// it stops too.
			if i < n-1 {
				writers[i].CloseWithError(err)
			}
			if i > 0 && err != nil {
				readers[i-1].CloseWithError(err)
			}
			if err != nil {
				cancel(err)
			}
		}()
	}
	stage(0, func() error { return src(ctx, writers[0]) })
	for k, f := range filters {
		i := k + 1
		stage(i, func() error { return f(ctx, readers[i-1], writers[i]) })
	}
	stage(n-1, func() error { return sink(ctx, readers[n-2]) })
	wg.Wait()
	return joinErrs(ctx, errs)
}

// joinErrs keeps each stage's own error: one that only echoes another
// stage's failure (a closed pipe, the cancelled context, or the very error
// a neighbour closed the pipe with, wrapped or not) is left out, unless no
// other is left.
func joinErrs(ctx context.Context, errs []error) error {
	cause := context.Cause(ctx)
	var own, echoes []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		echo := errors.Is(err, io.ErrClosedPipe) ||
			errors.Is(err, context.Canceled) && cause != nil && !errors.Is(cause, context.Canceled)
		for j, other := range errs {
			if j != i && other != nil && (other != err && errors.Is(err, other) || other == err && j < i) {
				echo = true
			}
		}
		if echo {
			echoes = append(echoes, err)
		} else {
			own = append(own, err)
		}
	}
	if len(own) == 0 {
		return errors.Join(echoes...)
	}
	return errors.Join(own...)
}
