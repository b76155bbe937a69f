package chain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func lines(n int) Source {
	return func(ctx context.Context, w io.Writer) error {
		bw := bufio.NewWriter(w)
		for i := range n {
			fmt.Fprintf(bw, "line %d\n", i)
		}
		return bw.Flush()
	}
}

func upper(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if _, err := fmt.Fprintln(w, strings.ToUpper(sc.Text())); err != nil {
			return err
		}
	}
	return sc.Err()
}

func TestRunPassesEveryByteInOrder(t *testing.T) {
	var got bytes.Buffer
	sink := func(ctx context.Context, r io.Reader) error {
		_, err := io.Copy(&got, r)
		return err
	}
	if err := Run(context.Background(), lines(100000), []Filter{upper, upper}, sink); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := range 100000 {
		fmt.Fprintf(&want, "LINE %d\n", i)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got %d bytes, want %d", got.Len(), want.Len())
	}
}

// A filter that fails must not look like the end of the stream to the
// sink: a sink that commits at EOF would commit a cut stream.
func TestRunFailureReachesTheSinkAsAnError(t *testing.T) {
	boom := errors.New("boom")
	failing := func(ctx context.Context, r io.Reader, w io.Writer) error {
		buf := make([]byte, 100)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		w.Write(buf)
		return boom
	}
	var sinkErr error
	sink := func(ctx context.Context, r io.Reader) error {
		_, sinkErr = io.Copy(io.Discard, r)
		return sinkErr
	}
	err := Run(context.Background(), lines(100000), []Filter{failing}, sink)
	if !errors.Is(sinkErr, boom) {
		t.Fatalf("the sink read to %v, want the filter's error", sinkErr)
	}
	if err == nil || err.Error() != "boom" {
		t.Fatalf("Run: %v, want boom alone (the others only echo it)", err)
	}
}

// A sink that fails stops the stages before it: they must not block on a
// pipe nobody reads.
func TestRunSinkFailureStopsTheSource(t *testing.T) {
	full := errors.New("disk full")
	sink := func(ctx context.Context, r io.Reader) error {
		io.CopyN(io.Discard, r, 10)
		return full
	}
	err := Run(context.Background(), lines(1_000_000), []Filter{upper}, sink)
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("Run: %v, want the sink's error alone", err)
	}
}

func TestRunJoinsIndependentErrors(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	src := func(ctx context.Context, w io.Writer) error { return a }
	sink := func(ctx context.Context, r io.Reader) error { return b }
	err := Run(context.Background(), src, nil, sink)
	if !errors.Is(err, a) || !errors.Is(err, b) {
		t.Fatalf("Run: %v, want both", err)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := func(ctx context.Context, w io.Writer) error { return ctx.Err() }
	sink := func(ctx context.Context, r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if err := Run(ctx, src, []Filter{upper}, sink); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
}
