// Package testrec reads the record streams a test's stage wrote, so that
// the tests of the stages check records rather than bytes, and builds the
// streams the benchmarks of the stages feed them.
//
// It is imported by tests only.
package testrec

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// Decode returns every record of the NDJSON stream r; a line that is not a
// record fails the test.
func Decode(t testing.TB, r io.Reader) []*schema.Record {
	t.Helper()
	var recs []*schema.Record
	for rec, err := range schema.NewDecoder(r).All() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// HugePrompt is the stream pos-scrub hands pos-embed for one Claude Code
// prompt of at least size bytes of build-log text: its native line, the
// message and the exchange it opens, all of session s1. It returns the
// prompt's text with the stream.
func HugePrompt(size int) (text string, stream []byte) {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %d: compiled package p%d in %d ms, cache %x\n", i, i%97, i%1013, uint32(i)*2654435761)
	}
	text = b.String()
	add := func(kind schema.Kind, id string, mod func(*schema.Record)) {
		r := HugeBase(kind, id)
		mod(r)
		stream = append(schema.AppendRecord(stream, r), '\n')
	}
	add(schema.KindRaw, "r1", func(r *schema.Record) {
		r.Raw = append(jsontext.AppendString([]byte(`{"type":"user","message":{"role":"user","content":`), text), "}}"...)
	})
	add(schema.KindMessage, "m1", func(r *schema.Record) {
		r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, text
	})
	add(schema.KindExchange, "e1", func(r *schema.Record) {
		r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentExchange, text+"\n\nDone."
		r.Exchange = &schema.Exchange{Number: 1, Prompt: text, Response: "Done.", PromptID: "m1"}
	})
	return text, stream
}

// HugeBase is a record of kind of HugePrompt's session, at its time.
func HugeBase(kind schema.Kind, id string) *schema.Record {
	r := schema.New(kind)
	r.ID, r.Platform, r.SessionID = id, claudecode.Name, "s1"
	r.TS, r.TSPrecision = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), schema.PrecisionExact
	return r
}
