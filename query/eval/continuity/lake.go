package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/query/querytest"
)

// sourceText is what the transcripts under dir (the session before the
// boundary and its subagents) hold, as any pack of them could: the whole
// text, every string of every line decoded, for files; and stretches of
// reachWindow consecutive messages of one transcript for units, since a
// pack item states a decision, a pending task or an error from one place
// of the session, not from words scattered over all of it.
func sourceText(dir string) (whole string, windows []string, err error) {
	var b strings.Builder
	var walk func(w *strings.Builder, v any)
	walk = func(w *strings.Builder, v any) {
		switch x := v.(type) {
		case string:
			w.WriteString(x)
			w.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(w, e)
			}
		case map[string]any:
			for _, e := range x {
				walk(w, e)
			}
		}
	}
	err = querytest.EachTranscript(dir, func(path string, f io.Reader) error {
		var messages []string
		err := eachLine(f, func(n int, line []byte) error {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				return fmt.Errorf("%s:%d: %v", path, n, err)
			}
			walk(&b, v)
			if m, ok := v.(map[string]any); ok && (m["type"] == "user" || m["type"] == "assistant") {
				var w strings.Builder
				walk(&w, m["message"])
				messages = append(messages, w.String())
			}
			return nil
		})
		for i := range messages {
			windows = append(windows, strings.Join(messages[i:min(i+reachWindow, len(messages))], "\n"))
			if i+reachWindow >= len(messages) {
				break
			}
		}
		return err
	})
	return b.String(), windows, err
}

// reachWindow is how many consecutive messages of a transcript (a line
// each: an assistant's text or tool call, a tool's result, a prompt) a
// unit's words must stand within to count as reachable: a few tool calls
// with their results and what was said around them, about what one pack
// item (an error with what followed it, a part of a reply) draws on.
const reachWindow = 12

// markReachable marks the items the source holds: a file by its path or
// base name anywhere, a unit by DecisionThreshold of its content words
// within one window of the transcript, as a pack item would have to hold
// them.
func markReachable(files, decisions, pending, errs []Item, whole string, windows []string) {
	for i := range files {
		f := files[i].Text
		files[i].Reachable = strings.Contains(whole, f) || strings.Contains(whole, filepath.Base(f))
	}
	for _, list := range [][]Item{decisions, pending, errs} {
		texts := make([]string, len(list))
		for i, it := range list {
			texts[i] = it.Text
		}
		// What the pack carries the transcript holds, wherever the
		// pack's item drew it from.
		for i, r := range FindUnits(texts, windows) {
			list[i].Reachable = r.Found || list[i].Found
		}
	}
}

// truncateSession writes into dst the session's lines before the boundary
// and, from its subagent transcripts (<session>/subagents/ and legacy
// agent-*.jsonl beside it with the same sessionId), the lines written
// before the boundary's time. The compaction agent (agent-acompact-*) is
// left out: it is the summary being measured.
func truncateSession(c Compaction, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if err := copyLines(c.File, filepath.Join(dst, filepath.Base(c.File)), func(n int, _ []byte) (bool, error) {
		return n < c.Line, nil
	}); err != nil {
		return err
	}
	subdir := filepath.Join(strings.TrimSuffix(c.File, ".jsonl"), "subagents")
	subs, _ := filepath.Glob(filepath.Join(subdir, "agent-*.jsonl"))
	for _, sub := range subs {
		if strings.HasPrefix(filepath.Base(sub), "agent-acompact") {
			continue
		}
		out := filepath.Join(dst, c.SessionID, "subagents", filepath.Base(sub))
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return err
		}
		if err := copyLines(sub, out, func(n int, b []byte) (bool, error) {
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				return false, fmt.Errorf("%s:%d: %v", sub, n, err)
			}
			ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
			return err == nil && ts.Before(c.TS), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func copyLines(from, to string, keep func(n int, b []byte) (bool, error)) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	var out bytes.Buffer
	if err := eachLine(in, func(n int, b []byte) error {
		ok, err := keep(n, b)
		if ok {
			out.Write(b)
			out.WriteByte('\n')
		}
		return err
	}); err != nil {
		return err
	}
	return os.WriteFile(to, out.Bytes(), 0o600)
}

// buildLake runs the pipeline pos-extract --platform claude_code |
// pos-normalize | pos-scrub | pos-load in process over the transcripts
// under root, failing with every input record the extractor skips, so
// that the pack is made of scrubbed text as a user's is. The key keys the
// markers of the check's throwaway lakes.
func buildLake(ctx context.Context, root, lake string) error {
	p := querytest.Pipeline{User: "eval", Machine: "eval", CollectSkips: true,
		Key: []byte("continuity check: a key for lakes that are deleted after the check")}
	return p.Run(ctx, root, lake)
}
