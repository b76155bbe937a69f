package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
)

type readLine struct {
	Line
	err string
}

// readAll reads every line of in, in as many inputs as cuts makes of it
// (Reset between them, as a reader kept across files is), with the reader
// mk returns, and wraps each input in wrap. It returns the lines with
// copies of their bytes, and the lines' bytes as the reader returned them.
func readAll(t *testing.T, inputs []string, maxLine int, kept bool, wrap func(io.Reader) io.Reader) ([]readLine, [][]byte) {
	t.Helper()
	var lr *LineReader
	var lines []readLine
	var held [][]byte
	for i, in := range inputs {
		r := wrap(strings.NewReader(in))
		off, num := int64(1000*i), int64(10*i)
		switch {
		case lr == nil && kept:
			lr = NewKeptLineReader(r, off, num)
		case lr == nil:
			lr = NewLineReaderAt(r, off, num)
		default:
			lr.Reset(r, off, num)
		}
		lr.MaxLine = maxLine
		failed := false
		for {
			l, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			rl := readLine{Line: l}
			rl.Bytes = bytes.Clone(l.Bytes)
			if err != nil {
				rl.err = err.Error()
			}
			lines = append(lines, rl)
			held = append(held, l.Bytes)
			if err != nil && !errors.Is(err, ErrLineTooLong) {
				failed = true
				break
			}
		}
		if !failed && lr.Offset() != int64(1000*i+len(in)) {
			t.Fatalf("input %d: offset %d after the end, want %d", i, lr.Offset(), 1000*i+len(in))
		}
	}
	return lines, held
}

// checkKept reads inputs with both readers and requires the same lines,
// and the kept reader's lines unchanged at the end.
func checkKept(t *testing.T, inputs []string, maxLine int, wrap func(io.Reader) io.Reader) {
	t.Helper()
	want, _ := readAll(t, inputs, maxLine, false, wrap)
	got, held := readAll(t, inputs, maxLine, true, wrap)
	if len(got) != len(want) {
		t.Fatalf("kept reader: %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Num != w.Num || g.Offset != w.Offset || g.Terminated != w.Terminated || g.err != w.err || !bytes.Equal(g.Bytes, w.Bytes) {
			t.Fatalf("line %d: kept reader gave %+v (%q), want %+v (%q)", i, g.Line, g.err, w.Line, w.err)
		}
		if !bytes.Equal(held[i], w.Bytes) {
			t.Fatalf("line %d: changed after later reads: %q, want %q", i, held[i], w.Bytes)
		}
	}
}

func TestKeptLineReader(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	line := func() string {
		switch rng.Intn(8) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("x", keptBlock+rng.Intn(3*keptMinRead)) // past a block
		case 2:
			return strings.Repeat("y", keptMinRead-rng.Intn(64)) + "\r"
		default:
			return fmt.Sprintf(`{"n":%d,"s":%q}`, rng.Int(), strings.Repeat("z", rng.Intn(3000)))
		}
	}
	wraps := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"half":    iotest.HalfReader,
		"onebyte": iotest.OneByteReader,
	}
	for name, wrap := range wraps {
		t.Run(name, func(t *testing.T) {
			for trial := range 20 {
				var inputs []string
				for range 1 + rng.Intn(3) {
					var b strings.Builder
					n := 1 + rng.Intn(40)
					if name == "onebyte" {
						n = 1 + rng.Intn(4)
					}
					for i := range n {
						b.WriteString(line())
						if i < n-1 || rng.Intn(2) == 0 {
							b.WriteByte('\n')
						}
					}
					inputs = append(inputs, b.String())
				}
				maxLine := DefaultMaxLine
				if trial%3 == 0 {
					maxLine = 2000 // some lines are too long
				}
				checkKept(t, inputs, maxLine, wrap)
			}
		})
	}
	// A read error other than EOF ends both readers alike.
	checkKept(t, []string{"a\nb\nc"}, DefaultMaxLine, func(r io.Reader) io.Reader {
		return iotest.TimeoutReader(iotest.OneByteReader(r))
	})
}

func FuzzKeptLineReader(f *testing.F) {
	f.Add("a\nb\n", "c", 3)
	f.Add("\n\n\r\n", "", 0)
	f.Add(strings.Repeat("long", 40)+"\nshort\n", "x\ny", 10)
	f.Fuzz(func(t *testing.T, a, b string, maxLine int) {
		if maxLine <= 0 || maxLine > 1<<16 {
			maxLine = DefaultMaxLine
		}
		checkKept(t, []string{a, b}, maxLine, iotest.HalfReader)
	})
}
