package extract

import (
	"context"

	"github.com/pos-lake/pos/schema"
	"golang.org/x/sync/errgroup"
)

// Ordered runs work(0) … work(n-1) on up to workers goroutines and hands
// the records each emits to emit, all of job 0's first, then job 1's, so
// the output is the same as running the jobs one after another. Each job
// keeps at most a few batches of records ahead of the consumer: memory is
// bounded by workers, not by the size of a job.
func Ordered(ctx context.Context, workers, n int, work func(ctx context.Context, i int, emit Emit) error, emit Emit) error {
	if workers <= 1 || n <= 1 {
		for i := range n {
			if err := work(ctx, i, emit); err != nil {
				return err
			}
		}
		return nil
	}
	const (
		batchRecords = 256
		batchBytes   = 4 << 20
		ahead        = 4 // batches a job may have waiting
	)
	type job chan []*schema.Record
	g, ctx := errgroup.WithContext(ctx)
	jobs := make(chan job, workers) // in job order: the consumer's queue
	sem := make(chan struct{}, workers)
	g.Go(func() error {
		defer close(jobs)
		for i := range n {
			out := make(job, ahead)
			select {
			case jobs <- out:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				// The consumer may already wait on this job: it ends
				// empty.
				close(out)
				return ctx.Err()
			}
			g.Go(func() error {
				defer func() { <-sem }()
				defer close(out)
				var batch []*schema.Record
				size := 0
				send := func() error {
					if len(batch) == 0 {
						return nil
					}
					select {
					case out <- batch:
						batch, size = nil, 0
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				err := work(ctx, i, func(r *schema.Record) error {
					batch = append(batch, r)
					size += len(r.Raw) + len(r.Text) + 256
					if len(batch) >= batchRecords || size >= batchBytes {
						return send()
					}
					return nil
				})
				if err == nil {
					err = send()
				}
				return err
			})
		}
		return nil
	})
	g.Go(func() error {
		for out := range jobs {
			for {
				var batch []*schema.Record
				var ok bool
				select {
				case batch, ok = <-out:
				case <-ctx.Done():
					return ctx.Err()
				}
				if !ok {
					break
				}
				for _, r := range batch {
					if err := emit(r); err != nil {
						return err
					}
				}
			}
		}
		return ctx.Err()
	})
	return g.Wait()
}
