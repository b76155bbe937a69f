package aider

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// Aider writes local wall-clock times without a zone: the session header
// to the second, the input history to the microsecond.
const (
	headerLayout = "2006-01-02 15:04:05"
	inputLayout  = "2006-01-02 15:04:05.999999"
)

// statusText is a status line without its "> " and its trailing spaces.
func statusText(l string) string {
	l = strings.TrimSuffix(l, "\r")
	switch {
	case strings.HasPrefix(l, "> "):
		l = l[2:]
	case l == ">" || strings.HasPrefix(l, ">  "):
		l = strings.TrimPrefix(l, ">")
	}
	return strings.TrimRight(l, " \t")
}

// promptLine is a prompt line without its "#### " and trailing spaces.
func promptLine(l string) string {
	l = strings.TrimSuffix(l, "\r")
	if strings.HasPrefix(l, "#### ") {
		l = l[5:]
	} else if l == "####" {
		l = ""
	}
	return strings.TrimRight(l, " \t")
}

// trimBlankLines drops the empty lines at both ends.
func trimBlankLines(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// promptKey identifies a prompt's text for matching it with an input
// history entry: lines without trailing blanks, no blank lines at the ends.
func promptKey(lines []string) uint64 {
	var b strings.Builder
	for i, l := range trimBlankLines(lines) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(l, " \t\r"))
	}
	return xxhash.Sum64String(b.String())
}

// tokens is what one "Tokens: … Cost: …" line says.
type tokens struct {
	usage       schema.Usage
	cost        float64 // this message's cost in USD
	sessionCost float64 // the session's cost so far
	hasCost     bool
	hasSession  bool
}

var (
	tokenItemRE = regexp.MustCompile(`^(\d[\d,]*(?:\.\d+)?)([kKmM]?) (.+)$`)
	costItemRE  = regexp.MustCompile(`^\$(\d[\d,]*(?:\.\d+)?|\.\d+) (\w+)$`)
)

// parseTokens reads Aider's usage report:
//
//	Tokens: 2.4k sent, 104 received. Cost: $0.00042 message, $0.00042 session.
//	Tokens: 15k sent, 3.1k cache write, 1.2k cache hit, 496 received. Cost: $0.07 message, $0.19 session.
//
// Aider rounds counts over 1000 ("2.4k", "10k"); they are read as written.
func parseTokens(s string) (tokens, bool) {
	var t tokens
	rest, ok := strings.CutPrefix(s, "Tokens: ")
	if !ok {
		return t, false
	}
	counts, costs, _ := strings.Cut(rest, ". Cost: ")
	counts = strings.TrimSuffix(strings.TrimSpace(counts), ".")
	seen := false
	for _, item := range strings.Split(counts, ", ") {
		m := tokenItemRE.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			continue
		}
		n := scaled(m[1], m[2])
		switch strings.TrimSpace(m[3]) {
		case "sent":
			t.usage.Input += n
		case "received":
			t.usage.Output += n
		case "cache write":
			t.usage.CacheCreation += n
		case "cache hit":
			t.usage.CacheRead += n
		default:
			continue
		}
		seen = true
	}
	for _, item := range strings.Split(strings.TrimSuffix(strings.TrimSpace(costs), "."), ", ") {
		m := costItemRE.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			continue
		}
		switch m[2] {
		case "message", "request":
			t.cost, t.hasCost = v, true
		case "session":
			t.sessionCost, t.hasSession = v, true
		}
	}
	return t, seen
}

// scaled reads "2.4" "k" as 2400.
func scaled(num, suffix string) int64 {
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return 0
	}
	switch suffix {
	case "k", "K":
		v *= 1e3
	case "m", "M":
		v *= 1e6
	}
	if v > math.MaxInt64/2 {
		return 0
	}
	return int64(math.Round(v))
}

var (
	modelRE   = regexp.MustCompile(`^(?:Main model|Model): (\S+)(?: (?:with|using) (\S+) edit format)?`)
	versionRE = regexp.MustCompile(`^Aider v(\S+)$`)
	appliedRE = regexp.MustCompile(`^Applied edit to (.+)$`)
	commitRE  = regexp.MustCompile(`^Commit ([0-9a-f]{7,40}) (.*)$`)
)

// call is an edit or command the reply asked for, found in its text.
type call struct {
	name  string // edit (SEARCH/REPLACE or unified diff), write (whole file), shell
	file  string
	input any
}

// shellLangs are the fence languages Aider runs as shell commands.
var shellLangs = map[string]bool{
	"bash": true, "sh": true, "shell": true, "cmd": true, "batch": true, "powershell": true,
	"ps1": true, "zsh": true, "fish": true, "ksh": true, "csh": true, "tcsh": true,
}

// replyCalls finds what a reply asks Aider to do: SEARCH/REPLACE blocks
// (the file named on the lines before, or the previous block's file),
// unified diffs, whole files (edit format "whole": a fence after a file
// name) and shell commands (a fence in a shell language).
func replyCalls(lines []string, editFormat string) []call {
	var out []call
	last := ""
	fence, fenceStart := 0, -1
	lang := ""
	hadSR := false
	var body []string
	for i := 0; i < len(lines); i++ {
		c := strings.TrimSuffix(lines[i], "\r")
		if searchRE.MatchString(c) {
			file := findFilename(lines[max(0, i-3):i])
			if file == "" {
				file = last
			}
			last = file
			var search, replace []string
			inReplace, done := false, false
			j := i + 1
			for ; j < len(lines); j++ {
				cj := strings.TrimSuffix(lines[j], "\r")
				switch {
				case !inReplace && dividerRE.MatchString(cj):
					inReplace = true
					continue
				case replaceRE.MatchString(cj):
					done = true
				case inReplace:
					replace = append(replace, cj)
					continue
				default:
					search = append(search, cj)
					continue
				}
				break
			}
			in := editInput{Path: file, Search: strings.Join(search, "\n"), Replace: strings.Join(replace, "\n"), Incomplete: !done}
			out = append(out, call{name: "edit", file: file, input: in})
			hadSR = true
			i = j
			continue
		}
		t := strings.TrimLeft(c, " ")
		n := len(t) - len(strings.TrimLeft(t, "`"))
		if fence == 0 {
			if n >= 3 {
				fence, fenceStart, hadSR, body = n, i, false, body[:0]
				lang = strings.ToLower(strings.TrimSpace(t[n:]))
			}
			continue
		}
		if n >= fence && strings.TrimSpace(t) == strings.Repeat("`", n) {
			if !hadSR {
				out = append(out, fenceCalls(lines, fenceStart, body, lang, editFormat)...)
			}
			fence = 0
			continue
		}
		body = append(body, c)
	}
	return out
}

type editInput struct {
	Path       string `json:"path"`
	Search     string `json:"search"`
	Replace    string `json:"replace"`
	Incomplete bool   `json:"incomplete,omitempty"`
}

// fenceCalls is what a closed fence without SEARCH/REPLACE asks for.
func fenceCalls(lines []string, start int, body []string, lang, editFormat string) []call {
	text := strings.Join(body, "\n")
	switch {
	case shellLangs[lang]:
		if strings.TrimSpace(text) == "" {
			return nil
		}
		return []call{{name: "shell", input: map[string]string{"command": text}}}
	case lang == "diff" || strings.HasPrefix(editFormat, "udiff"):
		var out []call
		for i := 0; i+1 < len(body); i++ {
			if strings.HasPrefix(body[i], "--- ") && strings.HasPrefix(body[i+1], "+++ ") {
				p := strings.TrimSpace(strings.TrimPrefix(body[i+1], "+++ "))
				p = strings.TrimPrefix(p, "b/")
				if p == "" || p == "/dev/null" {
					continue
				}
				out = append(out, call{name: "edit", file: p, input: map[string]string{"path": p, "diff": text}})
			}
		}
		return out
	case editFormat == "whole" && start > 0:
		file := stripFilename(lines[start-1])
		if file == "" || !strings.ContainsAny(file, "./") {
			return nil
		}
		return []call{{name: "write", file: file, input: map[string]string{"path": file, "content": text}}}
	}
	return nil
}

// findFilename is Aider's find_filename: the nearest of the lines before a
// SEARCH marker that names a file, looking past fence lines only.
func findFilename(before []string) string {
	for i := len(before) - 1; i >= 0; i-- {
		l := strings.TrimSpace(strings.TrimSuffix(before[i], "\r"))
		if f := stripFilename(l); f != "" {
			return f
		}
		if !strings.HasPrefix(l, "```") {
			break
		}
	}
	return ""
}

// stripFilename is Aider's strip_filename.
func stripFilename(l string) string {
	l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
	if l == "..." || l == "" {
		return ""
	}
	if strings.HasPrefix(l, "```") {
		c := strings.TrimLeft(l, "`")
		if c != "" && strings.ContainsAny(c, "./") && !strings.Contains(c, " ") {
			return c
		}
		return ""
	}
	l = strings.TrimRight(l, ":")
	l = strings.TrimLeft(l, "#")
	l = strings.TrimSpace(l)
	l = strings.Trim(l, "`")
	l = strings.Trim(l, "*")
	if len(l) > 256 || (strings.Contains(l, " ") && !strings.ContainsAny(l, "./")) {
		return ""
	}
	return l
}

// marshal encodes v as one line of JSON without HTML escaping.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// inputHistory is .aider.input.history: "# <time>" then "+<line>" entries,
// one per line the user entered (prompts, and answers to Aider's
// questions). Only each entry's time and a hash of its text are kept.
type inputHistory struct {
	entries []inputEntry
	byKey   map[uint64][]int
}

type inputEntry struct {
	t    time.Time
	ts   string // as written
	line int64
	key  uint64
}

// readInputHistory reads path, opened as opt.OpenFile opens a source file
// (never a link unless links are followed, never a pipe); a missing file
// is an empty history.
func readInputHistory(opt *extract.Options, path string, loc *time.Location, maxLine int) (*inputHistory, error) {
	h := &inputHistory{byKey: map[uint64][]int{}}
	f, _, err := opt.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := schema.NewLineReader(f)
	if maxLine > 0 {
		lr.MaxLine = maxLine
	}
	var cur *inputEntry
	var text []string
	finish := func() {
		if cur != nil && !cur.t.IsZero() {
			cur.key = promptKey(text)
			h.byKey[cur.key] = append(h.byKey[cur.key], len(h.entries))
			h.entries = append(h.entries, *cur)
		}
		cur, text = nil, text[:0]
	}
	for {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, schema.ErrLineTooLong) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !ln.Terminated {
			break // still being written
		}
		l := strings.TrimSuffix(string(ln.Bytes), "\r")
		switch {
		case strings.HasPrefix(l, "# "):
			finish()
			ts := strings.TrimSpace(l[2:])
			t, err := time.ParseInLocation(inputLayout, ts, loc)
			if err != nil {
				t = time.Time{}
			}
			cur = &inputEntry{t: t, ts: ts, line: ln.Num}
		case strings.HasPrefix(l, "+") && cur != nil:
			text = append(text, l[1:])
		}
	}
	finish()
	return h, nil
}

// match returns the first entry with the prompt's text written after after
// and not before notBefore.
func (h *inputHistory) match(key uint64, after, notBefore time.Time) (inputEntry, bool) {
	if h == nil {
		return inputEntry{}, false
	}
	idx := h.byKey[key]
	i := sort.Search(len(idx), func(i int) bool { return h.entries[idx[i]].t.After(after) })
	for ; i < len(idx); i++ {
		e := h.entries[idx[i]]
		if e.t.After(after) && !e.t.Before(notBefore) {
			return e, true
		}
	}
	return inputEntry{}, false
}
