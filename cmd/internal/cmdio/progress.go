package cmdio

import (
	"context"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
)

// Progress shows, on stderr when it is a terminal (and not with --quiet),
// a spinner with the bytes done so far and the rate, polling done every
// 200 ms. The returned stop clears it; call it before printing the summary.
func Progress(c *cli.Context, description string, done func() int64) (stop func()) {
	if c.Bool("quiet") || !IsTerminal(c.App.ErrWriter) {
		return func() {}
	}
	return progress(c.Context, c.App.ErrWriter, description, done)
}

func progress(ctx context.Context, w io.Writer, description string, done func() int64) func() {
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	// The clock starts now, not at the first update: the rate of the first
	// frame was the bytes of 200 ms over a few microseconds ("266 GB/s").
	bar.StartWithoutRender()
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				bar.Set64(done())
			}
		}
	}()
	return func() {
		cancel()
		<-finished
		bar.Finish()
		bar.Clear()
	}
}
