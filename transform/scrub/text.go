package scrub

import (
	"encoding/json"

	"github.com/pos-lake/pos/internal/jsontext"
)

// Field scrubs value as Record scrubs the top-level member name of a
// record holding it: a value that holds JSON is scanned as JSON too (the
// raw record, meta, a tool's input), and with Options.PII the member
// "user" is redacted whole. It returns the scrubbed value and the number
// of redactions; value itself when nothing was found. It is for text kept
// outside records, such as the columns of a table read back from Parquet.
func (s *Scrubber) Field(name, value string) (string, int) {
	if s.opt.Off || value == "" {
		return value, 0
	}
	sc := s.pool.Get().(*scanner)
	defer s.pool.Put(sc)
	doc := append(jsontext.AppendString([]byte{'{'}, name), ':')
	doc = append(jsontext.AppendString(doc, value), '}')
	if err := sc.doc.parse(doc); err != nil {
		return s.Text(value) // not reached: doc is JSON as built
	}
	counts := map[string]int64{}
	out, changed := sc.scrubDoc(counts)
	if !changed {
		return value, 0
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		return s.Text(value) // not reached: a redaction keeps the JSON valid
	}
	return m[name], int(sumCounts(counts))
}
