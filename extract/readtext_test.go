package extract

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pos-lake/pos/schema"
)

// ReadText hands every line to its function but one too long, which it
// reports and passes over; a line the function stops at is not consumed.
func TestReadText(t *testing.T) {
	in := "# head\n\n" + strings.Repeat("x", 40) + "\nlast\npartial"
	var skipped []int64
	stats := &Stats{}
	o := &Options{Stats: stats, OnSkip: func(b *schema.BadInput) error {
		skipped = append(skipped, b.Line)
		if !errors.Is(b.Err, schema.ErrLineTooLong) || b.Path != "f" {
			t.Errorf("skipped %v", b)
		}
		return nil
	}}
	lr := schema.NewLineReaderAt(strings.NewReader(in), 0, 0)
	lr.MaxLine = 20
	var got []string
	read, err := o.ReadText(context.Background(), lr, "f", func(ln schema.Line) error {
		if !ln.Terminated {
			return StopText
		}
		got = append(got, string(ln.Bytes))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"# head", "", "last"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	if len(skipped) != 1 || skipped[0] != 3 {
		t.Errorf("skipped lines %v, want [3]", skipped)
	}
	if want := int64(len(in) - len("partial")); read.Consumed != want || read.Lines != 4 {
		t.Errorf("consumed %d bytes, %d lines; want %d, 4", read.Consumed, read.Lines, want)
	}
	// The bytes of every line handed on, the partial one too; not the
	// long line's.
	if want := int64(len(in) - 41); stats.Bytes.Load() != want {
		t.Errorf("bytes %d, want %d", stats.Bytes.Load(), want)
	}

	// The function's error ends the reading; so does a cancelled context.
	boom := errors.New("boom")
	if _, err := o.ReadText(context.Background(), schema.NewLineReader(strings.NewReader("a\nb\n")), "f",
		func(schema.Line) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.ReadText(ctx, schema.NewLineReader(strings.NewReader("a\n")), "f",
		func(schema.Line) error { t.Error("a line read after cancel"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
