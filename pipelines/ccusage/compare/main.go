// Command compare checks pos's token and cost figures against ccusage's,
// per day and model, and explains every difference by the transcript lines
// that cause it:
//
//	compare --ccusage daily.json --pos stats.json [--claude DIR] [--tolerance 0.005]
//
// daily.json is `ccusage claude daily --json --offline --timezone UTC`,
// stats.json is `pos-query stats --by day,model --format json`. With
// --claude (the folder both read: CLAUDE_CONFIG_DIR, or its projects/),
// compare also reads the transcripts and counts them twice, once by
// ccusage's rules and once by pos's (see README.md in this directory):
// each model must reproduce its tool's figures exactly, and every day and
// model where the tools differ must differ by exactly what the listed
// lines account for. Token counts must otherwise be equal, and costs
// within --tolerance (relative).
//
// It prints the rows that differ and a summary, and exits 1 when a
// difference is unexplained or a cost is out of tolerance.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bytedance/sonic"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "compare:", err)
		}
		os.Exit(1)
	}
}

var errFailed = errors.New("parity failed")

type tokens struct{ In, Out, CW, CR int64 }

func (t *tokens) add(o tokens) { t.In += o.In; t.Out += o.Out; t.CW += o.CW; t.CR += o.CR }
func (t tokens) sub(o tokens) tokens {
	return tokens{t.In - o.In, t.Out - o.Out, t.CW - o.CW, t.CR - o.CR}
}
func (t tokens) zero() bool   { return t == tokens{} }
func (t tokens) total() int64 { return t.In + t.Out + t.CW + t.CR }
func (t tokens) String() string {
	return fmt.Sprintf("in %d out %d cache_write %d cache_read %d", t.In, t.Out, t.CW, t.CR)
}

type rowKey struct{ Day, Model string }

type row struct {
	tokens
	Cost    float64
	HasCost bool
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("compare", flag.ContinueOnError)
	ccPath := fl.String("ccusage", "", "ccusage claude daily --json output")
	posPath := fl.String("pos", "", "pos-query stats --by day,model --format json output")
	claude := fl.String("claude", "", "the Claude folder both read, to explain differences line by line")
	tol := fl.Float64("tolerance", 0.005, "largest relative cost difference accepted")
	maxLines := fl.Int("lines", 5, "lines shown per cause of a difference")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *ccPath == "" || *posPath == "" {
		return errors.New("--ccusage and --pos are required")
	}
	cc, err := readCcusage(*ccPath)
	if err != nil {
		return err
	}
	ps, err := readPos(*posPath)
	if err != nil {
		return err
	}
	var expl *explanation
	if *claude != "" {
		if expl, err = explain(*claude); err != nil {
			return err
		}
	}
	return report(stdout, cc, ps, expl, *tol, *maxLines)
}

// ---------------------------------------------------------------------------
// The two tools' outputs

func readCcusage(path string) (map[rowKey]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Daily []struct {
			Date   string `json:"date"`
			Models []struct {
				Model string  `json:"modelName"`
				In    int64   `json:"inputTokens"`
				Out   int64   `json:"outputTokens"`
				CW    int64   `json:"cacheCreationTokens"`
				CR    int64   `json:"cacheReadTokens"`
				Cost  float64 `json:"cost"`
			} `json:"modelBreakdowns"`
		} `json:"daily"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[rowKey]row{}
	for _, d := range doc.Daily {
		for _, m := range d.Models {
			k := rowKey{d.Date, m.Model}
			r := out[k]
			r.add(tokens{m.In, m.Out, m.CW, m.CR})
			r.Cost += m.Cost
			r.HasCost = true
			out[k] = r
		}
	}
	return out, nil
}

func readPos(path string) (map[rowKey]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day   string   `json:"day"`
		Model string   `json:"model"`
		In    int64    `json:"input_tokens"`
		Out   int64    `json:"output_tokens"`
		CW    int64    `json:"cache_creation_tokens"`
		CR    int64    `json:"cache_read_tokens"`
		Cost  *float64 `json:"cost"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[rowKey]row{}
	for _, r := range rows {
		if r.Day == "" {
			return nil, fmt.Errorf("%s: rows without a day: run pos-query stats --by day,model --format json", path)
		}
		x := row{tokens: tokens{r.In, r.Out, r.CW, r.CR}}
		if r.Cost != nil {
			x.Cost, x.HasCost = *r.Cost, true
		}
		out[rowKey{r.Day, r.Model}] = x
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// The transcripts, counted by each tool's rules

// line is what both tools read of a transcript line that carries usage.
// Pointers tell an absent field from an empty one.
type line struct {
	Type      string  `json:"type"`
	Timestamp string  `json:"timestamp"`
	SessionID *string `json:"sessionId"`
	RequestID *string `json:"requestId"`
	Version   *string `json:"version"`
	UUID      string  `json:"uuid"`
	Sidechain bool    `json:"isSidechain"`
	AgentID   string  `json:"agentId"`
	Message   *struct {
		ID    *string `json:"id"`
		Model *string `json:"model"`
		Usage *struct {
			In  int64 `json:"input_tokens"`
			Out int64 `json:"output_tokens"`
			CW  int64 `json:"cache_creation_input_tokens"`
			CR  int64 `json:"cache_read_input_tokens"`
			// Speed "fast": both name the model <model>-fast.
			Speed string `json:"speed"`
			// Calls to an advisor model within the request: both count
			// them under the advisor's model, outside the usage above.
			Iterations []struct {
				Type  string `json:"type"`
				Model string `json:"model"`
				In    int64  `json:"input_tokens"`
				Out   int64  `json:"output_tokens"`
				CW    int64  `json:"cache_creation_input_tokens"`
				CR    int64  `json:"cache_read_input_tokens"`
			} `json:"iterations"`
		} `json:"usage"`
	} `json:"message"`
	Data *struct {
		Type    string          `json:"type"`
		AgentID string          `json:"agentId"`
		Message json.RawMessage `json:"message"`
	} `json:"data"`
}

// entry is one line with usage, where it is and what it says.
type entry struct {
	file      string
	n         int // 1-based line number
	ts        time.Time
	day       string
	model     string // "" when absent
	hasModel  bool
	msgID     string
	hasMsgID  bool
	reqID     string
	hasReqID  bool
	session   string
	uuid      string
	sidechain bool
	agent     string
	usage     tokens
	advisor   []advisorCall // usage.iterations of type advisor_message
	progress  bool          // usage embedded in a progress (agent_progress) line
	// pos reads a progress line's copy (an assistant line with a uuid, in
	// an agent_progress line naming its agent) when the agent has no
	// transcript beside the session: copyOf is that agent, "" otherwise.
	copyOf    string
	skip      string // why ccusage skips it, "" if it does not
	assistant bool   // a type "assistant" line, what pos reads usage from
	dropped   bool   // ccusage drops it as a sidechain replay
}

func (e *entry) where() string { return fmt.Sprintf("%s:%d", e.file, e.n) }

// advisorCall is one call of an advisor model within a request.
type advisorCall struct {
	model string
	usage tokens
}

var semverPrefix = regexp.MustCompile(`^\d+\.\d+\.\d+`)

func parseLine(b []byte, file string, n int) (*entry, bool) {
	var l line
	if err := sonic.Unmarshal(b, &l); err != nil {
		return nil, false
	}
	e := &entry{file: file, n: n, uuid: l.UUID, sidechain: l.Sidechain, agent: l.AgentID, assistant: l.Type == "assistant"}
	ts, sess, req, msg, version := l.Timestamp, l.SessionID, l.RequestID, l.Message, l.Version
	if msg == nil || msg.Usage == nil {
		// A progress line may carry a subagent's assistant message.
		if l.Data == nil || len(l.Data.Message) == 0 {
			return nil, false
		}
		var inner line
		if err := sonic.Unmarshal(l.Data.Message, &inner); err != nil || inner.Message == nil || inner.Message.Usage == nil {
			return nil, false
		}
		ts, req, msg, version = inner.Timestamp, inner.RequestID, inner.Message, nil
		e.sidechain, e.progress, e.assistant = inner.Sidechain, true, false
		if l.Data.Type == "agent_progress" && l.Data.AgentID != "" && inner.Type == "assistant" && inner.UUID != "" {
			e.copyOf, e.uuid, e.agent = l.Data.AgentID, inner.UUID, l.Data.AgentID
		}
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return nil, false
	}
	e.ts = t.UTC()
	e.day = e.ts.Format(time.DateOnly)
	u := msg.Usage
	e.usage = tokens{u.In, u.Out, u.CW, u.CR}
	for _, it := range u.Iterations {
		if it.Type == "advisor_message" && it.Model != "" {
			e.advisor = append(e.advisor, advisorCall{it.Model, tokens{it.In, it.Out, it.CW, it.CR}})
		}
	}
	if msg.Model != nil {
		e.model, e.hasModel = *msg.Model, true
		if u.Speed == "fast" && e.model != "" {
			e.model += "-fast"
		}
	}
	if msg.ID != nil {
		e.msgID, e.hasMsgID = *msg.ID, true
	}
	if req != nil {
		e.reqID, e.hasReqID = *req, true
	}
	if sess != nil {
		e.session = *sess
	}
	switch {
	case version != nil && !semverPrefix.MatchString(*version):
		e.skip = fmt.Sprintf("version %q is not semver", *version)
	case sess != nil && *sess == "":
		e.skip = "empty sessionId"
	case req != nil && *req == "":
		e.skip = "empty requestId"
	case msg.ID != nil && *msg.ID == "":
		e.skip = "empty message.id"
	case msg.Model != nil && *msg.Model == "":
		e.skip = "empty model"
	}
	return e, true
}

var usageMarker = []byte(`"usage":{`)

func scan(dir string) ([][]*entry, map[string]bool, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(files)
	present := make(map[string]bool, len(files))
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		present[filepath.ToSlash(rel)] = true
	}
	out := make([][]*entry, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = scanFile(files[i], dir)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, present, errors.Join(errs...)
}

func scanFile(p, dir string) ([]*entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rel, _ := filepath.Rel(dir, p)
	br := bufio.NewReaderSize(f, 1<<20)
	var out []*entry
	var acc []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, b...)
			b, err = br.ReadSlice('\n')
		}
		if len(acc) > 0 {
			b = append(acc, b...)
			acc = acc[:0]
		}
		if len(b) > 0 && bytes.Contains(b, usageMarker) {
			if e, ok := parseLine(bytes.TrimSpace(b), rel, n); ok {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// contribution is what one API message adds to each day and model.
type contribution map[rowKey]tokens

func (c contribution) add(k rowKey, t tokens) {
	x := c[k]
	x.add(t)
	c[k] = x
}

// item is one message (or line) counted differently by the two tools.
type item struct {
	cause string
	where string
	delta contribution // pos minus ccusage
}

type explanation struct {
	cc, pos map[rowKey]tokens // the transcripts counted by each tool's rules
	items   []item
	lines   int
	// longContext lists, per row, pos's messages whose prompt (input +
	// cache writes + cache reads) is above 200k tokens: Anthropic bills
	// such a request whole at its long-context rates, ccusage prices only
	// the tokens of each kind above 200k higher.
	longContext map[rowKey][]string
}

const (
	causeShrink    = "a later line of a message carries less usage than an earlier one: pos keeps the last line's usage, ccusage the largest"
	causeMidnight  = "the lines of a message straddle midnight UTC: pos dates the message by its first line, ccusage by the line it keeps"
	causeSkipped   = "ccusage skips the line (non-semver version, or an empty sessionId, requestId, message.id or model)"
	causeNoReq     = "lines without requestId: ccusage counts each line (its key needs requestId), pos merges the lines of one message.id"
	causeTwice     = "one message.id+requestId counted twice by pos (its lines are not contiguous in one thread, or were copied into another session with new line uuids); ccusage counts it once"
	causeProgress  = "usage only in a progress (agent_progress) line whose message the subagent's transcript lacks: ccusage counts it, pos reads a progress copy only when the subagent has no transcript"
	causeSidechain = "a sidechain line replays a message with another requestId: ccusage keeps the main-thread copy, pos counts both"
	causeOther     = "counted differently (see the lines)"
)

// explain counts the transcripts under dir by both tools' rules.
func explain(dir string) (*explanation, error) {
	if fi, err := os.Stat(filepath.Join(dir, "projects")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, "projects")
	}
	files, present, err := scan(dir)
	if err != nil {
		return nil, err
	}
	// hasTranscript mirrors the Claude Code adapter: a subagent's
	// transcript is <session>/subagents/agent-<id>.jsonl or
	// agent-<id>.jsonl beside the session file.
	hasTranscript := func(e *entry) bool {
		dir := filepath.ToSlash(filepath.Dir(e.file))
		name := "agent-" + e.copyOf + ".jsonl"
		return present[path.Join(dir, strings.TrimSuffix(path.Base(filepath.ToSlash(e.file)), ".jsonl"), "subagents", name)] ||
			present[path.Join(dir, name)]
	}
	x := &explanation{cc: map[rowKey]tokens{}, pos: map[rowKey]tokens{}, longContext: map[rowKey][]string{}}

	// ccusage: every line with usage; duplicates by message.id+requestId
	// (message.id+session+timestamp without a requestId) collapse to the
	// main-thread line with the most tokens; a line without message.id is
	// never a duplicate.
	type ccKey struct{ msg, req, sess, ts string }
	ccEntries := map[ccKey]*entry{}
	var ccOrder []ccKey
	nolink := 0
	for _, fe := range files {
		for _, e := range fe {
			x.lines++
			if e.skip != "" {
				continue
			}
			var k ccKey
			switch {
			case !e.hasMsgID:
				nolink++
				k = ccKey{msg: fmt.Sprintf("\x00%d", nolink)}
			case e.hasReqID:
				k = ccKey{msg: e.msgID, req: e.reqID}
			default:
				k = ccKey{msg: e.msgID, sess: e.session, ts: e.ts.Format(time.RFC3339Nano)}
			}
			old, ok := ccEntries[k]
			if !ok {
				ccEntries[k] = e
				ccOrder = append(ccOrder, k)
				continue
			}
			if old.sidechain != e.sidechain {
				if old.sidechain {
					ccEntries[k] = e
				}
				continue
			}
			if e.usage.total() > old.usage.total() {
				ccEntries[k] = e
			}
		}
	}

	// A sidechain line that replays a message of the same session with
	// another requestId (/btw) is a duplicate of it; the main-thread copy
	// wins.
	type route struct{ msg, sess string }
	routes := map[route][]ccKey{}
	for _, k := range ccOrder {
		e := ccEntries[k]
		if e.hasMsgID && e.msgID != "" {
			r := route{e.msgID, e.session}
			routes[r] = append(routes[r], k)
		}
	}
	for _, ks := range routes {
		if len(ks) < 2 {
			continue
		}
		anySide := false
		for _, k := range ks {
			anySide = anySide || ccEntries[k].sidechain
		}
		if !anySide {
			continue
		}
		keep := ks[0]
		for _, k := range ks[1:] {
			a, b := ccEntries[keep], ccEntries[k]
			if (a.sidechain && !b.sidechain) || (a.sidechain == b.sidechain && b.usage.total() > a.usage.total()) {
				keep = k
			}
		}
		for _, k := range ks {
			if k != keep {
				ccEntries[k].dropped = true
			}
		}
	}

	// pos: assistant lines only; a line whose uuid was seen is a replay;
	// the lines of one message (message.id+requestId, contiguous among the
	// assistant lines of a thread) merge: the first line's day and model,
	// the last line's usage.
	type posMsg struct {
		first, last *entry
		model       string
		advisor     []advisorCall // of the last line that has any
	}
	var posMsgs []*posMsg
	seenUUID := map[string]bool{}
	for _, fe := range files {
		open := map[string]*posMsg{} // thread -> open message
		for _, e := range fe {
			if !e.assistant && (e.copyOf == "" || hasTranscript(e)) {
				continue
			}
			if e.uuid != "" {
				if seenUUID[e.uuid] {
					continue
				}
				seenUUID[e.uuid] = true
			}
			thread := e.agent
			if o := open[thread]; o != nil && e.hasMsgID && e.msgID != "" && o.first.msgID == e.msgID && o.first.reqID == e.reqID {
				o.last = e
				if o.model == "" {
					o.model = e.model
				}
				if len(e.advisor) > 0 {
					o.advisor = e.advisor
				}
				continue
			}
			m := &posMsg{first: e, last: e, model: e.model, advisor: e.advisor}
			posMsgs = append(posMsgs, m)
			open[thread] = m
		}
	}

	// Each tool's contribution per API message, keyed alike.
	type msgKey struct{ msg, req string }
	keyOf := func(e *entry) msgKey {
		if !e.hasMsgID || e.msgID == "" {
			return msgKey{msg: "\x00" + e.where()}
		}
		return msgKey{e.msgID, e.reqID}
	}
	type side struct {
		c       contribution
		entries []*entry // ccusage: the kept lines; pos: first and last lines
		n       int
	}
	ccSide, posSide := map[msgKey]*side{}, map[msgKey]*side{}
	get := func(m map[msgKey]*side, k msgKey) *side {
		s := m[k]
		if s == nil {
			s = &side{c: contribution{}}
			m[k] = s
		}
		return s
	}
	var keys []msgKey
	seenKey := map[msgKey]bool{}
	addKey := func(k msgKey) {
		if !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range ccOrder {
		e := ccEntries[k]
		if e.dropped {
			continue
		}
		mk := keyOf(e)
		if !e.hasMsgID {
			mk = msgKey{msg: "\x00" + e.where()}
		}
		s := get(ccSide, mk)
		s.n++
		s.entries = append(s.entries, e)
		if e.model != "<synthetic>" {
			s.c.add(rowKey{e.day, e.model}, e.usage)
			x.cc[rowKey{e.day, e.model}] = addT(x.cc[rowKey{e.day, e.model}], e.usage)
		}
		for _, a := range e.advisor {
			rk := rowKey{e.day, a.model}
			s.c.add(rk, a.usage)
			x.cc[rk] = addT(x.cc[rk], a.usage)
		}
		addKey(mk)
	}
	for _, m := range posMsgs {
		mk := keyOf(m.first)
		s := get(posSide, mk)
		s.n++
		s.entries = append(s.entries, m.first, m.last)
		if m.model != "<synthetic>" {
			rk := rowKey{m.first.day, m.model}
			s.c.add(rk, m.last.usage)
			x.pos[rk] = addT(x.pos[rk], m.last.usage)
			if u := m.last.usage; u.In+u.CW+u.CR > 200_000 {
				x.longContext[rk] = append(x.longContext[rk], m.last.where())
			}
		}
		for _, a := range m.advisor {
			rk := rowKey{m.first.day, a.model}
			s.c.add(rk, a.usage)
			x.pos[rk] = addT(x.pos[rk], a.usage)
			if u := a.usage; u.In+u.CW+u.CR > 200_000 {
				x.longContext[rk] = append(x.longContext[rk], m.last.where()+" (advisor)")
			}
		}
		addKey(mk)
	}

	for _, k := range keys {
		c, p := ccSide[k], posSide[k]
		var cc, pc contribution
		if c != nil {
			cc = c.c
		}
		if p != nil {
			pc = p.c
		}
		d := diff(pc, cc)
		if len(d) == 0 {
			continue
		}
		it := item{delta: d}
		var where []string
		switch {
		case p == nil && c != nil && c.entries[0].progress:
			it.cause = causeProgress
			where = append(where, c.entries[0].where())
		case p == nil && c != nil && c.entries[0].sidechain:
			it.cause = causeSidechain
			where = append(where, c.entries[0].where())
		case c == nil && p != nil && p.entries[0].sidechain && p.entries[0].skip == "":
			it.cause = causeSidechain
			where = append(where, p.entries[0].where())
		case c == nil && p != nil:
			it.cause = causeSkipped
			for _, e := range p.entries {
				if e.skip != "" {
					it.cause = causeSkipped + ": " + e.skip
					break
				}
			}
			where = append(where, p.entries[0].where())
		case p != nil && p.n > 1:
			it.cause = causeTwice
			for i := 0; i < len(p.entries); i += 2 {
				where = append(where, p.entries[i].where())
			}
		case c != nil && c.n > 1:
			it.cause = causeNoReq
			for _, e := range c.entries {
				where = append(where, e.where())
			}
		case p != nil && c != nil:
			pf, pl, ck := p.entries[0], p.entries[1], c.entries[0]
			switch {
			case pl.usage != ck.usage:
				it.cause = causeShrink
				where = append(where, "pos keeps "+pl.where(), "ccusage keeps "+ck.where())
			case pf.day != ck.day:
				it.cause = causeMidnight
				where = append(where, "pos dates by "+pf.where()+" ("+pf.ts.Format(time.RFC3339)+")", "ccusage by "+ck.where()+" ("+ck.ts.Format(time.RFC3339)+")")
			default:
				it.cause = causeOther
				where = append(where, pf.where(), ck.where())
			}
		default:
			it.cause = causeOther
		}
		it.where = strings.Join(where, "; ")
		x.items = append(x.items, it)
	}
	return x, nil
}

func addT(a, b tokens) tokens { a.add(b); return a }

func diff(a, b contribution) contribution {
	out := contribution{}
	for k, v := range a {
		out.add(k, v)
	}
	for k, v := range b {
		out.add(k, tokens{}.sub(v))
	}
	for k, v := range out {
		if v.zero() {
			delete(out, k)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// The report

func report(w io.Writer, cc, ps map[rowKey]row, x *explanation, tol float64, maxLines int) error {
	keys := map[rowKey]bool{}
	for k := range cc {
		keys[k] = true
	}
	for k := range ps {
		keys[k] = true
	}
	sorted := make([]rowKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b rowKey) int { return strings.Compare(a.Day+"\x00"+a.Model, b.Day+"\x00"+b.Model) })

	explained := map[rowKey]tokens{}
	byCause := map[string][]item{}
	if x != nil {
		for _, it := range x.items {
			for k, d := range it.delta {
				explained[k] = addT(explained[k], d)
			}
			byCause[it.cause] = append(byCause[it.cause], it)
		}
	}
	var (
		rows, equalRows, explainedRows, badTokens, badCost, costRows, lcRows int
		ccCost, posCost, worst                                               float64
		worstKey                                                             rowKey
		totCC, totPos                                                        tokens
	)
	for _, k := range sorted {
		c, p := cc[k], ps[k]
		if c.tokens.zero() && p.tokens.zero() && (!c.HasCost || c.Cost == 0) {
			continue // a model with no tokens that day (e.g. only empty lines)
		}
		rows++
		totCC.add(c.tokens)
		totPos.add(p.tokens)
		d := p.tokens.sub(c.tokens)
		switch {
		case d.zero():
			equalRows++
		case x != nil && d == explained[k]:
			explainedRows++
			fmt.Fprintf(w, "explained  %s %-32s pos-ccusage %s\n", k.Day, k.Model, d)
		default:
			badTokens++
			fmt.Fprintf(w, "DIFFERS    %s %-32s pos %s | ccusage %s | explained %s\n", k.Day, k.Model, p.tokens, c.tokens, explained[k])
		}
		if d.zero() && c.HasCost {
			costRows++
			ccCost += c.Cost
			if p.HasCost {
				posCost += p.Cost
			}
			rel := relDiff(p.Cost, c.Cost)
			if !p.HasCost {
				rel = math.Inf(1)
			}
			switch {
			case rel <= tol:
			case x != nil && len(x.longContext[k]) > 0:
				lcRows++
				fmt.Fprintf(w, "explained  %s %-32s cost pos $%.6f ccusage $%.6f (%.3f%%): %d requests above 200k prompt tokens, e.g. %s\n",
					k.Day, k.Model, p.Cost, c.Cost, 100*rel, len(x.longContext[k]), x.longContext[k][0])
				continue
			default:
				badCost++
				fmt.Fprintf(w, "COST       %s %-32s pos $%.6f ccusage $%.6f (%.3f%%)\n", k.Day, k.Model, p.Cost, c.Cost, 100*rel)
			}
			if rel > worst {
				worst, worstKey = rel, k
			}
		}
	}
	if x != nil {
		causes := make([]string, 0, len(byCause))
		for c := range byCause {
			causes = append(causes, c)
		}
		slices.Sort(causes)
		for _, c := range causes {
			its := byCause[c]
			var d tokens
			for _, it := range its {
				for _, v := range it.delta {
					d.add(v)
				}
			}
			fmt.Fprintf(w, "cause: %s: %d messages, pos-ccusage %s\n", c, len(its), d)
			for i, it := range its {
				if i == maxLines {
					fmt.Fprintf(w, "  … %d more\n", len(its)-maxLines)
					break
				}
				fmt.Fprintf(w, "  %s\n", it.where)
			}
		}
		// Each model must reproduce its tool.
		modelCC, modelPos := 0, 0
		for _, k := range sorted {
			if cc[k].tokens != x.cc[k] {
				modelCC++
				fmt.Fprintf(w, "MODEL      ccusage's rules miss %s %s: ccusage %s, model %s\n", k.Day, k.Model, cc[k].tokens, x.cc[k])
			}
			if ps[k].tokens != x.pos[k] {
				modelPos++
				fmt.Fprintf(w, "MODEL      pos's rules miss %s %s: pos %s, model %s\n", k.Day, k.Model, ps[k].tokens, x.pos[k])
			}
		}
		fmt.Fprintf(w, "model      %d usage lines read; ccusage's rules reproduce ccusage on %d of %d rows, pos's rules reproduce pos on %d of %d rows\n",
			x.lines, rows-modelCC, rows, rows-modelPos, rows)
		if modelCC+modelPos > 0 {
			badTokens += modelCC + modelPos
		}
	}
	fmt.Fprintf(w, "tokens     %d day×model rows: %d equal, %d differ by explained lines, %d unexplained; totals pos %s | ccusage %s\n",
		rows, equalRows, explainedRows, badTokens, totPos, totCC)
	worstRow := "none"
	if worst > 0 {
		worstRow = fmt.Sprintf("%s %s %.4f%%", worstKey.Day, worstKey.Model, 100*worst)
	}
	fmt.Fprintf(w, "cost       %d rows with equal tokens: pos $%.4f, ccusage $%.4f (%.4f%%); largest row difference: %s; %d beyond %.2f%%, %d more explained by long-context pricing\n",
		costRows, posCost, ccCost, 100*relDiff(posCost, ccCost), worstRow, badCost, 100*tol, lcRows)
	if badTokens > 0 || badCost > 0 {
		fmt.Fprintln(w, "result     FAIL")
		return errFailed
	}
	fmt.Fprintln(w, "result     ok")
	return nil
}

func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(b), 1e-12)
}
