package cmdio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/urfave/cli/v2"
)

// WhenStuck calls stuck only when the context is done and the run has not
// ended within the time given.
func TestWhenStuck(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stuck := make(chan struct{})
	done := WhenStuck(ctx, 10*time.Millisecond, func() { close(stuck) })
	cancel()
	select {
	case <-stuck:
	case <-time.After(5 * time.Second):
		t.Fatal("stuck was not called")
	}
	done()

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	called := make(chan struct{}, 1)
	done = WhenStuck(ctx, 10*time.Millisecond, func() { called <- struct{}{} })
	done() // the run ended first
	cancel()
	time.Sleep(50 * time.Millisecond)
	if len(called) > 0 {
		t.Error("stuck was called after the run ended")
	}
}

type lines int

func (n *lines) Add(m lines) { *n += m }

// A Stage app ends its flags with --strict and --quiet and is marked for
// the batch schedule; Sum adds what each input's run counted, in the
// order given.
func TestStageSum(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("1\n2\n"), 0o644)
	os.WriteFile(b, []byte("3\n"), 0o644)
	var total lines
	app := Stage(fstest.MapFS{"help/t.txt": {Data: []byte("long text\n")}}, &cli.App{
		Name:  "t",
		Flags: []cli.Flag{OutputFlag},
		Action: func(c *cli.Context) error {
			var err, closeErr error
			total, err, closeErr = Sum(c, func(_ context.Context, r io.Reader, w io.Writer, name string) (lines, error) {
				b, err := io.ReadAll(r)
				fmt.Fprintf(w, "%s:%s", filepath.Base(name), b)
				return lines(bytes.Count(b, []byte("\n"))), err
			})
			return FirstErr(err, closeErr)
		},
	})
	if !isStage(app) || app.Description != "long text" {
		t.Fatalf("stage %v, description %q", isStage(app), app.Description)
	}
	var names []string
	for _, f := range app.Flags {
		names = append(names, f.Names()[0])
	}
	if got := strings.Join(names, " "); got != "output strict quiet" {
		t.Errorf("flags %q", got)
	}
	var out, errb bytes.Buffer
	if code := Run(context.Background(), app, []string{"t", a, b}, strings.NewReader(""), &out, &errb); code != OK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.String() != "a:1\n2\nb:3\n" || total != 3 {
		t.Errorf("out %q, total %d", out.String(), total)
	}
	if isStage(&cli.App{}) {
		t.Error("an app not made by Stage is a stage")
	}
}
