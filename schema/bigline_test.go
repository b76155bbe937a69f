package schema

import (
	"bytes"
	"strings"
	"testing"
)

// A line over bigLine is decoded with its strings copied one by one (no
// copy of the whole line kept alive by its small fields): the record must
// not share the line's memory, which the reader reuses for the next line.
func TestUnmarshalBigLineOwnsItsStrings(t *testing.T) {
	rec := New(KindExchange)
	rec.ID, rec.Platform, rec.SessionID, rec.Title = "e1", "claude_code", "s1", "a title"
	rec.Text = strings.Repeat("plain text without escapes ", (2*bigLine)/27)
	rec.Exchange = &Exchange{Number: 1, Prompt: "line one\nline two", Response: rec.Text[:1000], PromptID: "m1"}
	line := AppendRecord(nil, rec)
	if len(line) <= bigLine {
		t.Fatal("the line is not big")
	}
	var got Record
	if err := UnmarshalWith(testFast, line, &got); err != nil {
		t.Fatal(err)
	}
	want := AppendRecord(nil, &got)
	for i := range line {
		line[i] = 'x'
	}
	if again := AppendRecord(nil, &got); !bytes.Equal(again, want) || got.ID != "e1" || got.Text != rec.Text || got.Exchange.Prompt != rec.Exchange.Prompt {
		t.Fatal("the decoded record changed with the line's memory")
	}
}
