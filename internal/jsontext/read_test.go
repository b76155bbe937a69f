package jsontext

import (
	"fmt"
	"strings"
	"testing"
)

func TestSkipJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`"a\"b",1`, 6}, {`{"a":[1,{"b":"}"}]} ,`, 19}, {`  true}`, 6}, {`-1.5e3]`, 6}, {`[1,2`, -1}, {`{"a"}`, -1}, {`nul`, -1}, {`"abc`, -1},
	} {
		got := testFast.SkipJSON([]byte(c.in))
		slow := testFast.skipPortable([]byte(c.in))
		if got != c.want || slow != c.want {
			t.Errorf("testFast.SkipJSON(%q) = %d (portable %d), want %d", c.in, got, slow, c.want)
		}
	}
}

// Bulk counts the bytes it is asked about up to BulkAfter, each Fast its
// own.
func TestBulk(t *testing.T) {
	f := &Fast{Unmarshal: func([]byte, any) error { return nil }}
	f.decoded.Store(BulkAfter - 10)
	if f.Bulk(10) || f.decoded.Load() != BulkAfter {
		t.Fatalf("Bulk said yes within the budget, or counted %d", f.decoded.Load())
	}
	if !f.Bulk(10) || f.decoded.Load() != BulkAfter {
		t.Fatalf("Bulk said no past the budget, or counted %d", f.decoded.Load())
	}
	g := &Fast{Unmarshal: f.Unmarshal}
	if g.Bulk(10) || g.decoded.Load() != 10 {
		t.Fatalf("another Fast counted %d", g.decoded.Load())
	}
	if (*Fast)(nil).Bulk(1) || (&Fast{}).Bulk(1) {
		t.Fatal("Bulk said yes without Unmarshal")
	}
}

// dump reads one value with the reader's exported methods and writes what
// it read, so that two readers can be compared.
func dump(r *Reader, out *strings.Builder) error {
	switch c := r.Next(); {
	case c == '{':
		out.WriteString("{")
		return r.Object(func(key string) error {
			fmt.Fprintf(out, "%q:", key)
			return dump(r, out)
		})
	case c == '[':
		out.WriteString("[")
		return r.Array(func() error { return dump(r, out) })
	case c == '"':
		s, err := r.Str()
		fmt.Fprintf(out, "%q,", s)
		return err
	case c == 't' || c == 'f':
		b, err := r.Bool()
		fmt.Fprintf(out, "%v,", b)
		return err
	case c == 'n':
		if !r.Null() {
			return r.SkipValid()
		}
		out.WriteString("null,")
		return nil
	default:
		v, err := r.ValidRaw()
		fmt.Fprintf(out, "%s,", v)
		return err
	}
}

// FuzzReader: any bytes read the same with sonic's skipper and validator
// and without, and never panic.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,{"b":"}"}],"c":"\u00e9\"","d":null,"e":true}`,
		"{\"s\":\"a\x00b\",\"n\":-1.5e3}",
		`[1,2`, `{"a"}`, `nul`, `"abc`, `{"a":"\0"}`, `[[[[[]]]]] x`,
	} {
		f.Add([]byte(s))
	}
	// Deeper than sonic goes: read again in Go.
	f.Add([]byte(`{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var with, without strings.Builder
		errWith := testFast.Walk(b, func(r *Reader) error { return dump(r, &with) })
		errWithout := Walk(b, func(r *Reader) error { return dump(r, &without) })
		if (errWith == nil) != (errWithout == nil) || errWith == nil && with.String() != without.String() {
			t.Fatalf("%q: with sonic %q, %v; without %q, %v", b, with.String(), errWith, without.String(), errWithout)
		}
	})
}
