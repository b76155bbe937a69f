// Command continuity measures how much of what a compaction summary
// carries over a smart context pack would have carried instead (issue 6).
//
// For every Claude Code session in the corpus with a compaction (a
// system/compact_boundary line followed by a user line with
// isCompactSummary: true) it copies the session's lines from before the
// boundary (and the lines of its subagent transcripts written before it,
// leaving out the compaction agent agent-acompact-*, which holds the
// summary itself) into a temporary directory, builds a lake from them with
// the real pipeline (the Claude Code extractor, normalize with every
// enrichment, load), builds the smart pack with a 15,000-token budget
// exactly as `pos-query context SESSION --mode smart --max-tokens 15000`
// does, and counts how many of the files, decisions, pending tasks and
// errors fixed the compaction summary mentions the pack contains (see
// Parse, FindFiles and FindUnits for the rules).
//
//	go run ./query/eval/continuity [-corpus DIR] [-max-tokens N] [-v]
//
// It exits non-zero on errors only, never on low figures.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pos-lake/pos/query"
)

func main() {
	corpus := flag.String("corpus", defaultCorpus(), "the corpus directory ($POS_CORPUS); its claude/ folder is searched")
	budget := flag.Int("max-tokens", query.DefaultContextTokens, "the pack's token budget")
	verbose := flag.Bool("v", false, "list every item of each summary and whether the pack has it")
	flag.StringVar(&KeepDir, "keep", "", "keep each session's lake and pack under this `DIR` (DIR/SESSION/lake, DIR/SESSION/pack.md)")
	flag.Float64Var(&DecisionThreshold, "threshold", DecisionThreshold, "the share of a decision's content words one pack item must hold")
	flag.Parse()
	if DecisionThreshold <= 0 || DecisionThreshold > 1 {
		fmt.Fprintf(os.Stderr, "continuity: -threshold %v: give a share above 0 and at most 1\n", DecisionThreshold)
		os.Exit(2)
	}
	root := filepath.Join(*corpus, "claude")
	if _, err := os.Stat(root); err != nil {
		fmt.Fprintf(os.Stderr, "continuity: %v (set -corpus or POS_CORPUS)\n", err)
		os.Exit(1)
	}
	rep, err := Run(context.Background(), root, *budget)
	if err != nil {
		fmt.Fprintln(os.Stderr, "continuity:", err)
		os.Exit(1)
	}
	rep.Print(os.Stdout, *verbose)
}

// defaultCorpus is $POS_CORPUS, or shared/corpus beside the repository
// (as for go run ./query/eval).
func defaultCorpus() string {
	if d := os.Getenv("POS_CORPUS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "corpus")
}

// Compaction is one compaction found in a session file.
type Compaction struct {
	File      string    // the session's transcript
	SessionID string    // from the boundary line
	Line      int       // the boundary's line number (1-based)
	TS        time.Time // the boundary's time
	Summary   string    // the text of the isCompactSummary line
}

// Item is a file, decision, pending task or error a summary mentions, and
// whether the pack has it.
type Item struct {
	Text  string
	Found bool
	Score float64 // all but files: the best share of content words in one pack item
	// Reachable: the transcript before the boundary holds the item (a
	// file's name, DecisionThreshold of a unit's content words), so that a
	// pack can carry it. A summary also names what it learnt elsewhere
	// (an earlier transcript the session resumed, the compaction agent's
	// own reading); no pack of the transcript can carry that.
	Reachable bool
}

// SessionResult is the check of one compaction.
type SessionResult struct {
	Compaction
	Platform   string
	PackTokens int
	Budget     int
	PackItems  int
	// packTexts are the pack's included items, as the units are matched
	// against them.
	packTexts []string
	Files     []Item
	Decisions []Item
	Pending   []Item
	Errors    []Item
}

// Report is the check of every compaction.
type Report struct {
	Budget   int
	Sessions []SessionResult
	// Control is how many of each summary's units the packs of the other
	// sessions would be credited with: what the matching credits a pack
	// that does not carry a unit, from the words a project's sessions
	// share (its names, its commands). A pack's own figure means as much
	// as it stands above this one.
	Control Tallies
}

// control counts each session's units against the other sessions' packs
// (see Report.Control).
func control(sessions []SessionResult) Tallies {
	var t Tallies
	for i, s := range sessions {
		for j, o := range sessions {
			if i == j {
				continue
			}
			for _, p := range []struct {
				tally *Tally
				items []Item
			}{{&t.Decisions, s.Decisions}, {&t.Pending, s.Pending}, {&t.Errors, s.Errors}} {
				units := make([]string, len(p.items))
				for k, it := range p.items {
					units[k] = it.Text
				}
				p.tally.add(FindUnits(units, o.packTexts))
			}
		}
	}
	return t
}

// Run checks every compaction under root (a directory of Claude Code
// transcripts) with packs of the given budget.
func Run(ctx context.Context, root string, budget int) (*Report, error) {
	comps, err := FindCompactions(root)
	if err != nil {
		return nil, err
	}
	rep := &Report{Budget: budget}
	for _, c := range comps {
		r, err := Check(ctx, root, c, budget)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", c.SessionID, err)
		}
		rep.Sessions = append(rep.Sessions, *r)
	}
	rep.Control = control(rep.Sessions)
	return rep, nil
}

// FindCompactions returns the compactions of the main session files under
// root (subagent transcripts are not sessions of their own), in path order.
func FindCompactions(root string) ([]Compaction, error) {
	var out []Compaction
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") || isSubagent(path) {
			return nil
		}
		cs, err := scanFile(path)
		out = append(out, cs...)
		return err
	})
	return out, err
}

func isSubagent(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-") || filepath.Base(filepath.Dir(path)) == "subagents"
}

type line struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	SessionID        string          `json:"sessionId"`
	Timestamp        string          `json:"timestamp"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Message          json.RawMessage `json:"message"`
}

// scanFile finds the compactions of one transcript. Only lines that can
// be a boundary or a summary are decoded; a bad one is an error naming the
// file and line.
func scanFile(path string) ([]Compaction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Compaction
	var open *Compaction
	err = eachLine(f, func(n int, b []byte) error {
		boundary := bytes.Contains(b, []byte(`"compact_boundary"`))
		summary := bytes.Contains(b, []byte(`"isCompactSummary"`))
		if !boundary && !summary {
			return nil
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch {
		case l.Type == "system" && l.Subtype == "compact_boundary":
			ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
			if err != nil {
				return fmt.Errorf("%s:%d: compact_boundary without a valid timestamp: %v", path, n, err)
			}
			open = &Compaction{File: path, SessionID: l.SessionID, Line: n, TS: ts}
		case l.Type == "user" && l.IsCompactSummary && open != nil:
			text, err := messageText(l.Message)
			if err != nil {
				return fmt.Errorf("%s:%d: compact summary: %v", path, n, err)
			}
			open.Summary = text
			out = append(out, *open)
			open = nil
		}
		return nil
	})
	return out, err
}

// eachLine calls fn with every line of r (without its newline), numbered
// from 1; lines may be of any length.
func eachLine(r io.Reader, fn func(n int, b []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			if err := fn(n, bytes.TrimRight(b, "\r\n")); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// messageText is the text of a message whose content is a string or an
// array of blocks.
func messageText(raw json.RawMessage) (string, error) {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", fmt.Errorf("content is neither a string nor blocks: %v", err)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// KeepDir, when set, is where Check keeps each session's lake and pack
// for a look with pos-query (-keep).
var KeepDir string

// Check builds the lake of the session before the compaction, its smart
// pack, and compares the pack with the summary.
func Check(ctx context.Context, root string, c Compaction, budget int) (*SessionResult, error) {
	dir, err := os.MkdirTemp("", "pos-continuity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if KeepDir != "" {
		dir = filepath.Join(KeepDir, c.SessionID)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	src := filepath.Join(dir, "claude")
	if err := truncateSession(c, src); err != nil {
		return nil, err
	}
	lake := filepath.Join(dir, "lake")
	if err := buildLake(ctx, src, lake); err != nil {
		return nil, err
	}
	db, err := query.Open(ctx, lake)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ref, err := db.ResolveSession(ctx, c.SessionID, "", "")
	if err != nil {
		return nil, err
	}
	pack, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: query.ModeSmart, MaxTokens: budget, Now: c.TS})
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, s := range pack.Sessions {
		for _, it := range s.Items {
			if it.Included {
				texts = append(texts, it.Title+"\n"+it.Text)
			}
		}
	}
	if KeepDir != "" {
		if err := os.WriteFile(filepath.Join(dir, "pack.md"), []byte(pack.Markdown()), 0o600); err != nil {
			return nil, err
		}
	}
	res := &SessionResult{Compaction: c, Platform: ref.Platform, PackTokens: pack.Used, Budget: budget, PackItems: len(texts), packTexts: texts}
	sum := Parse(c.Summary)
	res.Files = FindFiles(sum.Files, pack.Markdown())
	res.Decisions = FindUnits(sum.Decisions, texts)
	res.Pending = FindUnits(sum.Pending, texts)
	res.Errors = FindUnits(sum.Errors, texts)
	whole, windows, err := sourceText(src)
	if err != nil {
		return nil, err
	}
	markReachable(res.Files, res.Decisions, res.Pending, res.Errors, whole, windows)
	return res, nil
}
