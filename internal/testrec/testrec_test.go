package testrec

import (
	"bytes"
	"encoding/json"
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

// HugePrompt's stream decodes to its native line, message and exchange,
// each holding the whole text, which is at least the size asked for.
func TestHugePrompt(t *testing.T) {
	text, stream := HugePrompt(10_000)
	recs := Decode(t, bytes.NewReader(stream))
	if len(text) < 10_000 || len(recs) != 3 {
		t.Fatalf("text of %d bytes, %d records", len(text), len(recs))
	}
	var raw struct{ Message struct{ Content string } }
	if err := json.Unmarshal(recs[0].Raw, &raw); err != nil || raw.Message.Content != text {
		t.Fatalf("raw line: %v", err)
	}
	if recs[1].Text != text || recs[2].Exchange.Prompt != text || recs[2].SessionID != "s1" {
		t.Fatalf("message or exchange lacks the text: %+v", recs[1:])
	}
}
