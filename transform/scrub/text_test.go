package scrub

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Field redacts what Record redacts in the same member: secrets in plain
// text and in text holding JSON, with PII e-mail addresses, home
// directories' user names and the user member whole; scrubbing its output
// again changes nothing.
func TestFieldPIIIdempotent(t *testing.T) {
	s := newScrubber(t, Options{PII: true})
	cases := []struct {
		name, in string
		gone     []string // must not be in the output
	}{
		{"text", "export GITHUB_TOKEN=" + ghp + " and mail jane.roe@acme-corp.io", []string{ghp, "jane.roe@acme-corp.io"}},
		{"input", `{"command":"curl -H 'Authorization: Bearer ` + bearer + `' https://api.example.com","cwd":"/home/alice/src"}`, []string{bearer, "alice"}},
		{"raw", `{"type":"user","message":{"content":"aws_secret_access_key = ` + awsSec + `"},"email":"bob.smith@acme-corp.io"}`, []string{awsSec, "bob.smith@acme-corp.io"}},
		{"user", "alice", []string{"alice"}},
		{"cwd", "/home/alice/src/pos", []string{"alice"}},
		{"title", "psql postgres://app:" + pgPass + "@db.internal/app", []string{pgPass}},
		{"meta", pem, []string{pemBody}},
	}
	for _, tc := range cases {
		once, n := s.Field(tc.name, tc.in)
		if n == 0 {
			t.Errorf("%s: nothing redacted in %q", tc.name, tc.in)
		}
		for _, g := range tc.gone {
			if strings.Contains(once, g) {
				t.Errorf("%s: %q still in %q", tc.name, g, once)
			}
		}
		if twice, n2 := s.Field(tc.name, once); twice != once || n2 != 0 {
			t.Errorf("%s: scrubbing again changed %q into %q (%d redactions)", tc.name, once, twice, n2)
		}
	}
	// Without PII, an e-mail address stays; a secret goes.
	plain := newScrubber(t, Options{})
	out, _ := plain.Field("text", "GITHUB_TOKEN="+ghp+" jane.roe@acme-corp.io")
	if strings.Contains(out, ghp) || !strings.Contains(out, "jane.roe@acme-corp.io") {
		t.Errorf("without PII: %q", out)
	}
	// Nothing to redact: the value itself.
	if out, n := s.Field("text", "nothing to hide here"); out != "nothing to hide here" || n != 0 {
		t.Errorf("clean text: %q, %d", out, n)
	}
}

// Scrubbing the corpus's native lines that mention an address, a key or a
// token with Field twice gives what once gives: the markers of a
// redaction are never redacted again.
func TestFieldIdempotentCorpus(t *testing.T) {
	var files []string
	filepath.WalkDir("../../../shared/corpus", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus")
	}
	s := newScrubber(t, Options{PII: true})
	var lines, changed, size int
	start := time.Now()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if lines >= 2000 || !strings.Contains(line, "@") && !strings.Contains(line, "token") && !strings.Contains(line, "key") {
				continue
			}
			lines++
			size += len(line)
			once, n := s.Field("raw", line)
			if n > 0 {
				changed++
			}
			if twice, n2 := s.Field("raw", once); twice != once || n2 != 0 {
				t.Errorf("%s: scrubbing again redacted %d more", f, n2)
			}
		}
	}
	t.Logf("%d lines (%d bytes), %d changed, %v", lines, size, changed, time.Since(start))
	if changed == 0 {
		t.Error("nothing redacted in the corpus's lines")
	}
}
