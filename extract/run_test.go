package extract_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/schema"
)

func TestParsePlatforms(t *testing.T) {
	for _, tc := range []struct {
		specs []string
		want  string // platforms, comma-separated, or the error
	}{
		{[]string{"claude"}, "claude_code"},
		{[]string{"codex, gemini", "aider"}, "codex,gemini,aider"},
		{[]string{"all"}, strings.Join(extract.PlatformNames(), ",")},
		{[]string{"vim"}, `unknown platform "vim" (known: ` + strings.Join(extract.PlatformNames(), ", ") + `, all)`},
	} {
		got, err := extract.ParsePlatforms(tc.specs)
		var names []string
		for _, a := range got {
			names = append(names, a.Platform())
		}
		s := strings.Join(names, ",")
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("%q: %s, want %s", tc.specs, s, tc.want)
		}
	}
}

// A file-level skip (no line, no key) is passed on once; line-level ones
// every time.
func TestOnceEach(t *testing.T) {
	n := 0
	skip := extract.OnceEach(func(*schema.BadInput) error { n++; return nil })
	file := &schema.BadInput{Path: "/h/p.jsonl", Err: errors.New("not a regular file")}
	line := &schema.BadInput{Path: "/h/a.jsonl", Line: 2, Err: errors.New("invalid JSON")}
	for range 3 {
		skip(file)
		skip(line)
	}
	if n != 4 {
		t.Errorf("%d skips passed on, want 4", n)
	}
}

func TestWriteCapabilities(t *testing.T) {
	chosen, _ := extract.ParsePlatforms([]string{"claude"})
	var md, js bytes.Buffer
	if err := extract.WriteCapabilities(&md, chosen, "markdown"); err != nil || !strings.Contains(md.String(), "claude_code") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
	if err := extract.WriteCapabilities(&js, chosen, "json"); err != nil || !strings.HasPrefix(js.String(), "[\n  {\n    \"platform\": \"claude_code\",") {
		t.Errorf("json: %v\n%s", err, js.String())
	}
	err := extract.WriteCapabilities(&js, chosen, "xml")
	if !errors.Is(err, extract.ErrFormat) || err.Error() != `"xml" is not markdown or json` {
		t.Errorf("xml: %v", err)
	}
}
