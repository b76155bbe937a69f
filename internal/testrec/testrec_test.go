package testrec

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	recs := Decode(t, strings.NewReader(`{"schema":"pos/1","kind":"raw","platform":"codex","raw":{"a":1}}`+"\n\n"+
		`{"schema":"pos/1","kind":"message","platform":"codex","text":"hi"}`+"\n"))
	if len(recs) != 2 || recs[1].Text != "hi" {
		t.Fatalf("decoded %d records: %+v", len(recs), recs)
	}
}
