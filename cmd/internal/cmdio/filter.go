package cmdio

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/pos-lake/pos/schema"
	"github.com/urfave/cli/v2"
)

// EachInput calls fn with each input the command names (stdin when none;
// .zst is decompressed), closing each after, and stops at the first error.
func EachInput(c *cli.Context, fn func(r io.Reader, name string) error) error {
	for _, in := range Inputs(c) {
		r, err := schema.Open(in, c.App.Reader)
		if err != nil {
			return err
		}
		err = fn(r, in)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Filter runs a filter stage: fn reads each input in turn and writes to the
// command's --output (stdout for "-"), which is closed at the end. It
// returns the run's error and, apart, the output's close error: a run that
// failed may or may not report both.
func Filter(c *cli.Context, fn func(ctx context.Context, r io.Reader, w io.Writer, name string) error) (err, closeErr error) {
	out, err := schema.Create(c.String("output"), c.App.Writer)
	if err != nil {
		return err, nil
	}
	err = EachInput(c, func(r io.Reader, name string) error { return fn(c.Context, r, out, name) })
	return err, out.Close()
}

// FirstErr is err, or else closeErr: a filter's result when the close
// error of a failed run goes unsaid.
func FirstErr(err, closeErr error) error {
	if err != nil {
		return err
	}
	return closeErr
}

// WhenStuck calls stuck if ctx is done and the returned function has not
// been called within d: a run that a signal interrupted but that cannot
// end by itself (a write to a reader that stopped reading) is ended so.
func WhenStuck(ctx context.Context, d time.Duration, stuck func()) func() {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			stuck()
		}
	})
	return func() {
		stop()
		close(done)
	}
}

// ExitWhenStuck ends the process (exit 130) when c's run was interrupted
// and has not ended after d: every wait of a run ends at a signal, but a
// write to a reader that stopped reading does not. Only a process that
// Main runs exits so, never a test that calls Run. Call the returned
// function when the run ends.
func ExitWhenStuck(c *cli.Context, d time.Duration) func() {
	if !ownProcess {
		return func() {}
	}
	return WhenStuck(c.Context, d, func() {
		fmt.Fprintf(c.App.ErrWriter, "%s: interrupted while the output was blocked; exiting\n", c.App.Name)
		os.Exit(Interrupted)
	})
}

// OutputFlag is the --output of a stage that writes records (see Filter).
var OutputFlag = &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write to this file (.zst: compressed) instead of stdout"}

// Stage fills in what the app of every pipeline stage shares: what App
// takes from the help files in files, --strict and --quiet after its
// flags, and the mark that makes Main run it under SCHED_BATCH where there
// is one (see batchSchedule; POS_SCHED=normal keeps the default). A stage is CPU-bound
// and waited on as a whole; pos-query and pos-mcp answer people and agents
// turn by turn and keep the default policy.
func Stage(files fs.FS, app *cli.App) *cli.App {
	App(files, app)
	app.Flags = append(app.Flags, StrictFlag, QuietFlag)
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[stageKey] = true
	return app
}

// stageKey marks a Stage app in its Metadata.
const stageKey = "stage"

func isStage(app *cli.App) bool {
	b, _ := app.Metadata[stageKey].(bool)
	return b
}

// Sum runs a filter stage (see Filter) whose fn counts what it did with
// each input, and returns the counts summed over the inputs with the
// run's error and, apart, the output's close error.
func Sum[S any, P interface {
	*S
	Add(S)
}](c *cli.Context, fn func(ctx context.Context, r io.Reader, w io.Writer, name string) (S, error)) (total S, err, closeErr error) {
	err, closeErr = Filter(c, func(ctx context.Context, r io.Reader, w io.Writer, name string) error {
		s, err := fn(ctx, r, w, name)
		P(&total).Add(s)
		return err
	})
	return total, err, closeErr
}
