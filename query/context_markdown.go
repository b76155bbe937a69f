package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/pos-lake/pos/internal/excerpt"
)

var kindTitles = map[string]string{
	"plan": "Plan", "subagent_report": "Subagent report", "compaction_summary": "Compaction summary",
	"first_prompt": "Prompt", "prompt": "Prompt", "labels": "Chapter labels", "exchange": "Exchange",
	"reply": "Reply", "decisions": "Decisions (confidence)", "files_changed": "Files changed", "files_read": "Files read",
	"stopped": "Where the work stopped", "errors": "Errors met, and what followed",
	"records": "Work recorded: commits, closed tasks", "tasks": "Task tracker: what it last listed",
}

// renderItem is an item as the markdown pack prints it.
func renderItem(it ContextItem) string {
	title := kindTitles[it.Kind]
	if it.Title != "" && it.Title != title {
		title += ": " + it.Title
	}
	if !it.TS.IsZero() && it.Kind != "labels" {
		title += " (" + it.TS.UTC().Format("2006-01-02 15:04") + " UTC)"
	}
	return "### " + title + "\n\n" + strings.TrimSpace(it.Text) + "\n\n"
}

func (p *ContextPack) header() string {
	return fmt.Sprintf("# Context from previous sessions\n\nMode %s. Token budget: %s | Used: %s | Remaining: %s\n\n",
		p.Mode, humanize.Comma(int64(p.Budget)), humanize.Comma(int64(p.Used)), humanize.Comma(int64(p.Remaining)))
}

func sessionHeader(s ContextSession, now time.Time) string {
	var b strings.Builder
	title := s.Title
	if title == "" {
		title = s.SessionID
	}
	fmt.Fprintf(&b, "## Session: %s\n\n%s session %s", title, s.Platform, s.SessionID)
	if s.Project != "" {
		fmt.Fprintf(&b, " in %s", s.Project)
	}
	if !s.LastTS.IsZero() {
		fmt.Fprintf(&b, ", last active %s", humanize.RelTime(s.LastTS, now, "ago", "from now"))
	}
	fmt.Fprintf(&b, ". Tokens used: %s; items left out: %d.\n\n", humanize.Comma(int64(s.Used)), s.Dropped)
	if s.Staleness != "" {
		b.WriteString("> " + s.Staleness + "\n\n")
	}
	return b.String()
}

// Markdown renders the pack for a model or a person.
func (p *ContextPack) Markdown() string {
	var b strings.Builder
	b.WriteString(p.header())
	for _, w := range p.Warnings {
		b.WriteString(warningLine(w))
	}
	for _, s := range p.Sessions {
		b.WriteString(sessionHeader(s, p.now))
		for _, it := range s.Items {
			if it.Included {
				b.WriteString(renderItem(it))
			}
		}
	}
	b.WriteString(endLine)
	return b.String()
}

// DryRun lists what the pack would include and leave out, without texts.
func (p *ContextPack) DryRun() *Table {
	t := &Table{Columns: []Column{{"session_id", "VARCHAR"}, {"kind", "VARCHAR"}, {"priority", "BIGINT"}, {"ts", "TIMESTAMP WITH TIME ZONE"},
		{"title", "VARCHAR"}, {"tokens", "BIGINT"}, {"included", "BOOLEAN"}}}
	for _, s := range p.Sessions {
		for _, it := range s.Items {
			title := it.Title
			if title == "" {
				title = firstLineOf(it.Text, 80)
			}
			t.Rows = append(t.Rows, []any{s.SessionID, it.Kind, int64(it.Priority), it.TS, title, int64(it.Tokens), it.Included})
		}
	}
	return t
}

// JSON renders the pack with the texts of the included items only.
func (p *ContextPack) JSON() ([]byte, error) {
	c := *p
	c.Sessions = slices.Clone(p.Sessions)
	for i := range c.Sessions {
		items := slices.Clone(c.Sessions[i].Items)
		for j := range items {
			if !items[j].Included {
				items[j].Text = ""
			}
		}
		c.Sessions[i].Items = items
	}
	return json.MarshalIndent(c, "", "  ")
}

// replyTitle names the prompt a reply answers (none for a reply without
// a prompt).
func replyTitle(prompt string) string {
	if p := firstLineOf(prompt, 60); p != "" {
		return "to “" + p + "”"
	}
	return ""
}

func firstLineOf(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > max {
		s = excerpt.PrefixRunes(s, max) + excerpt.Ellipsis
	}
	return s
}
