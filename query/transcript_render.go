package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/excerpt"
)

// TranscriptMarkdown writes t as Markdown: a heading per prompt, the
// replies as they are, each tool call as a list item with its input and
// the start of its output in fenced blocks, subagents as quoted sections.
// Text from the histories is written as it is, inside fences long enough
// that it cannot close them.
func TranscriptMarkdown(w io.Writer, t *Transcript) error {
	var b bytes.Buffer
	title := t.Session.Title
	if title == "" {
		title = "Session " + t.Session.SessionID
	}
	fmt.Fprintf(&b, "# %s\n\n", OneLine(title))
	fmt.Fprintf(&b, "- session: `%s` (%s)\n", t.Session.SessionID, t.Session.Platform)
	if t.Session.Project != "" {
		fmt.Fprintf(&b, "- project: %s\n", OneLine(t.Session.Project))
	}
	fmt.Fprintf(&b, "- from %s to %s\n", stamp(t.Session.FirstTS), stamp(t.Session.LastTS))
	fmt.Fprintf(&b, "- %d prompts, %d replies, %d tool calls, %d subagents\n", t.Prompts, t.Replies, t.Calls, t.Subagents)
	markdownThread(&b, t.Main.Entries, "")
	_, err := w.Write(b.Bytes())
	return err
}

func markdownThread(b *bytes.Buffer, entries []Entry, quote string) {
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		for _, l := range strings.Split(s, "\n") {
			b.WriteString(strings.TrimRight(quote+l, " "))
			b.WriteByte('\n')
		}
	}
	for _, e := range entries {
		line("")
		switch e.Kind {
		case EntryPrompt:
			line("## Prompt · %s", stamp(e.TS))
			line("")
			line("%s", e.Text)
		case EntryReply:
			head := "### Assistant"
			if e.Model != "" {
				head += " (" + OneLine(e.Model) + ")"
			}
			line("%s · %s", head, stamp(e.TS))
			if e.Thinking != "" {
				line("")
				line("*Thinking:*")
				line("")
				line("%s", fenced(e.Thinking, ""))
			}
			if e.Text != "" {
				line("")
				line("%s", e.Text)
			}
			for _, c := range e.Calls {
				line("")
				line("- **%s**%s", OneLine(c.Name), map[bool]string{true: " (failed)", false: ""}[c.IsError])
				line("%s", indent(fenced(inputText(c.Input), "json"), "  "))
				if c.Output != "" {
					line("  Output%s:", cutNote(c))
					line("%s", indent(fenced(c.Output, ""), "  "))
				}
			}
		case EntryCompaction:
			line("---")
			line("")
			line("**Context compacted** · %s", stamp(e.TS))
			if e.Summary != "" {
				line("")
				line("%s", fenced(e.Summary, ""))
			}
			line("")
			line("---")
		case EntryNote:
			line("*%s* · %s", OneLine(noteLabel(e)), stamp(e.TS))
			line("")
			line("%s", fenced(e.Text, ""))
		case EntrySubagent:
			line("> ## Subagent %s", OneLine(subagentName(e.Thread)))
			markdownThread(b, e.Thread.Entries, quote+"> ")
		}
	}
}

// fenced puts s in a code fence longer than any run of backticks in it.
func fenced(s, lang string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// inputText is a tool call's input for reading: indented JSON, or the
// text of an input that is a JSON string.
func inputText(in json.RawMessage) string {
	var s string
	if json.Unmarshal(in, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Indent(&b, in, "", "  ") != nil {
		return string(in)
	}
	return b.String()
}

// cutNote says how much of a tool's output is shown when not all of it.
func cutNote(c ToolCall) string {
	if n := int64(utf8.RuneCountInString(c.Output)); c.OutputChars > n {
		return fmt.Sprintf(" (the first %d of %d characters)", n, c.OutputChars)
	}
	return ""
}

func noteLabel(e Entry) string {
	l := e.Role
	if e.Type != "" && e.Type != "text" {
		l += " " + strings.ReplaceAll(e.Type, "_", " ")
	}
	if e.Type == "interrupt" {
		return "interrupted"
	}
	return strings.TrimSpace(l)
}

func subagentName(th *Thread) string {
	name := th.AgentID
	if th.AgentType != "" {
		name = th.AgentType + " " + name
	}
	return name
}

// TranscriptPage is what the HTML of a transcript shows around it.
type TranscriptPage struct {
	T *Transcript
	// Back, when set, is a link above the transcript (to the page it was
	// opened from).
	Back string
}

// TranscriptHTML writes t as one self-contained HTML page: its style
// inline, no script, no link to anything outside it, every text from the
// histories escaped. Tool calls, thinking and system notes are folded
// (<details>); prompts and replies are shown.
func TranscriptHTML(w io.Writer, p TranscriptPage) error {
	return transcriptTmpl.ExecuteTemplate(w, "page", p)
}

// TranscriptStyle is the style sheet of a transcript page.
const TranscriptStyle = `
:root{--fg:#1d232b;--muted:#5f6b7a;--line:#d7dde5;--prompt:#e8f1ff;--reply:#ffffff;--tool:#f4f6f8;--err:#fdecec;--sub:#f7f3ff;--bg:#f6f7f9}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header.top{background:#1f2d3d;color:#fff;padding:10px 24px}
header.top a{color:#cfe3ff;margin-right:16px}
main{max-width:980px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}
.meta{color:var(--muted);font-size:13px;margin:0 0 16px}
.entry{border:1px solid var(--line);border-radius:8px;margin:12px 0;padding:10px 14px;background:var(--reply)}
.prompt{background:var(--prompt);border-color:#b8d0f5}
.who{font-size:12px;color:var(--muted);margin-bottom:4px;font-weight:600}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px;margin:4px 0;font:12.5px/1.45 ui-monospace,Menlo,Consolas,monospace;max-height:480px;overflow:auto}
details.tool{background:var(--tool);border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 10px}
details.tool.error{background:var(--err);border-color:#f0b4b4}
details>summary{cursor:pointer;font-size:13px}
details.tool>summary{font-family:ui-monospace,Menlo,Consolas,monospace}
.label{font-size:12px;color:var(--muted);margin-top:6px}
.compaction{background:#fff8e1;border-color:#f0d98a;border-style:dashed}
.note{background:var(--tool);color:var(--muted)}
details.subagent{background:var(--sub);border-color:#d6c8f5}
details.subagent>summary{font-weight:600}
.thinking{color:var(--muted)}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);font-size:13px;vertical-align:top}
th{background:#eef1f5}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.when{white-space:nowrap}
td.path{overflow-wrap:anywhere;color:var(--muted);font-size:12px}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0 16px}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:var(--muted)}
input,select,button{font:inherit;padding:4px 6px}
.hit{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:8px 0}
.chart{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px;margin:12px 0}
.chart h2{font-size:16px;margin:4px 8px}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
`

var transcriptTmpl = template.Must(template.New("transcript").Funcs(template.FuncMap{
	"stamp":    stamp,
	"input":    inputText,
	"cutnote":  cutNote,
	"note":     noteLabel,
	"oneline":  func(s string, n int) string { return cutRunes(OneLine(s), n) },
	"subagent": subagentName,
	"style":    func() template.CSS { return template.CSS(TranscriptStyle) },
}).Parse(`
{{define "page"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{with .T.Session.Title}}{{oneline . 80}}{{else}}Session {{.T.Session.SessionID}}{{end}} · pos</title>
<style>{{style}}</style></head>
<body>{{if .Back}}<header class="top"><a href="{{.Back}}">← sessions</a></header>{{end}}
<main>{{template "transcript" .T}}</main>
</body></html>
{{end}}

{{define "transcript"}}<h1 id="title">{{with .Session.Title}}{{oneline . 200}}{{else}}Session {{.Session.SessionID}}{{end}}</h1>
<p class="meta">{{.Session.Platform}} · {{.Session.SessionID}}{{with .Session.Project}} · {{.}}{{end}}<br>
{{stamp .Session.FirstTS}} – {{stamp .Session.LastTS}} · {{.Prompts}} prompts, {{.Replies}} replies, {{.Calls}} tool calls, {{.Subagents}} subagents</p>
{{template "thread" .Main}}{{end}}

{{define "thread"}}{{range .Entries}}{{if eq .Kind "prompt"}}<section class="entry prompt">
<div class="who">Prompt · {{stamp .TS}}</div><div class="text">{{.Text}}</div></section>
{{else if eq .Kind "reply"}}<section class="entry reply">
<div class="who">Assistant{{with .Model}} · {{.}}{{end}} · {{stamp .TS}}</div>
{{with .Thinking}}<details class="thinking"><summary>thinking</summary><div class="text">{{.}}</div></details>{{end}}
{{with .Text}}<div class="text">{{.}}</div>{{end}}
{{range .Calls}}<details class="tool{{if .IsError}} error{{end}}"><summary>{{.String}}</summary>
<div class="label">input</div><pre>{{input .Input}}</pre>
{{if .Output}}<div class="label">output{{cutnote .}}</div><pre>{{.Output}}</pre>{{end}}
</details>{{end}}</section>
{{else if eq .Kind "compaction"}}<section class="entry compaction">
<div class="who">{{with .Text}}{{oneline . 120}}{{else}}Context compacted{{end}} · {{stamp .TS}}</div>
{{with .Summary}}<details><summary>summary that replaced the earlier context</summary><div class="text">{{.}}</div></details>{{end}}</section>
{{else if eq .Kind "note"}}<details class="entry note"><summary>{{note .}} · {{oneline .Text 100}}</summary><div class="text">{{.Text}}</div></details>
{{else if eq .Kind "subagent"}}<details class="entry subagent" open><summary>Subagent {{subagent .Thread}} · {{len .Thread.Entries}} entries</summary>
{{template "thread" .Thread}}</details>
{{end}}{{end}}{{end}}
`))

// cutRunes cuts s to n runes, with an ellipsis when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return excerpt.PrefixRunes(s, n-1) + excerpt.Ellipsis
}
