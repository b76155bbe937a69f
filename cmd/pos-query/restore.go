package main

import (
	"fmt"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// restore writes the files opt selects and prints each one's path on
// stdout; what a file lacks goes to stderr as name: place: what, and ends
// the command with exit 3, as a stage that skipped input does.
func restore(c *cli.Context, e *lookup.Env, opt query.RestoreOptions) error {
	errw := c.App.ErrWriter
	opt.Note = func(n query.RestoreNote) { fmt.Fprintf(errw, "%s: %s\n", c.App.Name, n) }
	res, err := e.DB.Restore(c.Context, opt)
	if res == nil {
		return err
	}
	var lines, bytes int64
	var incomplete, exist int64
	for _, f := range res.Files {
		if f.Exists {
			exist++
			fmt.Fprintf(errw, "%s: %s exists: left as it was (--force replaces it)\n", c.App.Name, f.Path)
			continue
		}
		if _, werr := fmt.Fprintln(c.App.Writer, f.Path); werr != nil {
			return werr
		}
		lines, bytes = lines+f.Lines, bytes+f.Bytes
		if f.Missing > 0 {
			incomplete++
		}
	}
	for _, s := range res.NotRestorable {
		fmt.Fprintf(errw, "%s: %s session %s is not restorable: pos restores JSONL histories only (Claude Code, Codex CLI, Gemini CLI's .jsonl, pushed logs)\n",
			c.App.Name, s.Platform, s.SessionID)
	}
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(errw, "%s: restore: %d files, %d lines, %s written under %s (secrets stay redacted)\n",
			c.App.Name, int64(len(res.Files))-exist, lines, cmdio.HumanBytes(bytes), opt.Dir)
	}
	switch {
	case exist > 0:
		return fmt.Errorf("%d files exist and were not replaced (--force replaces them)", exist)
	case incomplete > 0:
		return incompleteError{incomplete}
	case len(res.Files) == 0:
		return fmt.Errorf("nothing to restore: no session selected has a JSONL file")
	}
	return nil
}

// incompleteError ends a restore that wrote files lacking lines the raw
// layer does not hold: exit 3, as a stage that skipped input records.
type incompleteError struct{ files int64 }

func (e incompleteError) Error() string {
	return fmt.Sprintf("%d restored files lack lines the raw layer does not hold (named above)", e.files)
}

func (e incompleteError) As(target any) bool {
	if p, ok := target.(*cmdio.SkippedError); ok {
		*p = cmdio.SkippedError{N: e.files}
		return true
	}
	return false
}
