// Package codex reads OpenAI Codex CLI session histories: the rollout
// files Codex writes under $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
// and $CODEX_HOME/archived_sessions/ (CODEX_HOME defaults to ~/.codex, the
// same relative layout on Linux, macOS and Windows).
//
// Every line becomes one raw record. Messages come from one text stream,
// the response items (what the model saw: developer, user and assistant
// messages, reasoning, tool calls and outputs). The event_msg copies of the
// same text (user_message, agent_message, agent_reasoning) stay raw only;
// a user_message event does one more thing: it marks the user-role item
// just before it as a prompt the person typed, since Codex also writes the
// context it injects (AGENTS.md, <environment_context>) as user-role items.
//
// Token usage comes from the token_count events. Their total_token_usage
// is cumulative and re-emitted unchanged (after each turn_context, with new
// rate limits): each request's usage is the difference between successive
// totals, attached once, to the last assistant item of the request the
// count closes. A total that is not larger than the previous one adds
// nothing. See usage for the field mapping.
//
// Forked sessions (and subagents spawned with the parent's context) start
// with a copy of the parent's rollout: after the fork's own session_meta
// comes the parent's session_meta and every line of the parent, written in
// one burst. Those replayed lines are kept raw but make no messages (the
// parent's file has them), and their token counts only move the cumulative
// baseline, so the fork's first own request is counted from the parent's
// last total and no replayed token is counted twice. See replayed.
package codex

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/codex/about"
	"github.com/pos-lake/pos/schema"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// Adapter is the Codex CLI extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// Home is the Codex home directory: $CODEX_HOME, else ~/.codex.
func Home(opt *extract.Options) string {
	if v := strings.TrimSpace(opt.Getenv("CODEX_HOME")); v != "" {
		return v
	}
	return opt.InHome(".codex")
}

// roots returns the directories to search. A root that is a Codex home (it
// has sessions/) is searched in sessions/ and archived_sessions/ only, never
// in the rest of it (history.jsonl, logs and caches are other formats).
func roots(opt *extract.Options) []string {
	if len(opt.Roots) == 0 {
		h := Home(opt)
		if h == "" {
			return nil
		}
		return []string{filepath.Join(h, "sessions"), filepath.Join(h, "archived_sessions")}
	}
	var out []string
	for _, r := range opt.Roots {
		if extract.IsDir(filepath.Join(r, "sessions")) {
			out = append(out, filepath.Join(r, "sessions"), filepath.Join(r, "archived_sessions"))
			continue
		}
		out = append(out, r)
	}
	return out
}

// Locations implements extract.Adapter.
func (Adapter) Locations(opt extract.Options) []string { return roots(&opt) }

// Extract implements extract.Adapter.
func (Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	match := extract.Match{
		Name:    func(path string) bool { return strings.HasSuffix(path, ".jsonl") },
		Content: func(path string) (bool, error) { return isRollout(&opt, path) },
	}
	var readers extract.LineReaders
	return opt.ReadChanged(ctx, roots(&opt), match, emit, func(ctx context.Context, sf extract.SourceFile, src *extract.Source, emit extract.Emit) error {
		r := &run{opt: &opt, emit: emit, lr: readers.Get()}
		defer func() { readers.Put(r.lr) }()
		return r.file(ctx, sf, src)
	})
}

// run reads files for one job.
type run struct {
	opt  *extract.Options
	emit extract.Emit
	lr   *schema.LineReader
}

// isRollout tells a Codex rollout: rollout-*.jsonl, or another .jsonl
// whose first line is a session_meta (a rollout copied under another name).
// Other tools' .jsonl files under the same root are left to their adapters.
func isRollout(opt *extract.Options, path string) (bool, error) {
	if !strings.HasSuffix(path, ".jsonl") {
		return false, nil
	}
	if strings.HasPrefix(filepath.Base(path), "rollout-") {
		return true, nil
	}
	first, err := opt.Head(path, 64<<10)
	if err != nil {
		return false, err
	}
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return bytes.Contains(first, []byte(`"type":"session_meta"`)) || bytes.Contains(first, []byte(`"type": "session_meta"`)), nil
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// sessionFromName is the session id in rollout-<time>-<uuid>.jsonl, or the
// file's base name.
func sessionFromName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if m := uuidRE.FindString(base); m != "" {
		return m
	}
	return base
}

func (r *run) file(ctx context.Context, sf extract.SourceFile, src *extract.Source) error {
	fp, plan := src.FP, src.Plan
	fs := newFileState(sf.Path, fp.Mtime)
	fs.restore(plan.Context)
	fs.resume, fs.resumeLines = plan.Start, plan.Lines
	lr, err := src.LineReader(r.lr, schema.NewLineReaderAt, plan.Start, plan.Lines)
	if err != nil {
		return err
	}
	r.lr = lr
	var (
		l   line
		p   payload
		odd error // a field the line was read without
	)
	read, err := r.opt.ReadLines(ctx, r.lr, sf.Path, false, extract.LineFuncs{
		Parse: func(raw []byte) (err error) {
			odd, err = parseLineOdd(raw, &l, &p)
			return err
		},
		Line: func(raw []byte, ln extract.Line) error {
			warn := errors.Join(odd, check(&l, &p))
			if err := r.line(fs, &l, &p, extract.OneLine(raw), ln); err != nil || warn == nil {
				return err
			}
			return r.opt.Warn(&schema.BadInput{Path: sf.Path, Line: ln.Num, Err: errors.New(strings.ReplaceAll(warn.Error(), "\n", "; "))})
		},
		RawOnly: func(raw []byte, ln extract.Line) error {
			l, p = line{}, payload{}
			return r.line(fs, &l, &p, raw, ln)
		},
	})
	if err != nil {
		return err
	}
	consumed := read.Consumed
	if err := r.finish(fs); err != nil {
		return err
	}
	if err := r.sessionRecord(fs); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	resume, resumeLines := read.Resume(fs.resume, fs.resumeLines)
	return src.EmitCheckpoint(r.emit, platform, consumed, resume, resumeLines, fs.context())
}
