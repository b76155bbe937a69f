// Package testrec reads the record streams a test's stage wrote, so that
// the tests of the stages check records rather than bytes.
//
// It is imported by tests only.
package testrec

import (
	"io"
	"testing"

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
