package scrub

import (
	"bytes"
	"fmt"
	"github.com/pos-lake/pos/internal/keyword"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Rule priorities: when findings overlap, the span is named after the
// highest. A service's own rule says more than a generic one, and a secret
// says more than PII.
const (
	priPII = iota
	priAssignment
	priGeneric
	priCustom
	priService
)

// window classes: how much text around a keyword a rule's expression needs.
type class uint8

const (
	classToken      class = iota // the match is one token holding the keyword: the token
	classAnchored                // the match starts with the keyword: from it to the rule's longest match
	classAssign                  // name = value with the keyword in the name: the line from a little before it
	classLine                    // anything else on one line: the line, up to 1 KB either side
	classLines                   // a few lines (curl … -H "Authorization: …" over continuation lines)
	classBlock                   // a YAML document (a Kubernetes Secret)
	classPrivateKey              // from BEGIN to END
)

// rule is one detection rule: a gitleaks rule run through a one-rule
// gitleaks detector (so its secret group, entropy and allowlists apply as
// gitleaks applies them), or one of ours (an expression, or code).
type rule struct {
	id       string
	idx      int // index in the rule set
	pri      int
	class    class
	min, max int                    // shortest and longest match of the expression's body (max -1: unbounded)
	minValue int                    // classAssign: shortest run of value characters after the operator
	pre      func(frag []byte) bool // an exact cheap check of the window before the expression
	generic  bool                   // gitleaks' generic-api-key
	// fragment: the rule's match need not hold its keyword (gitleaks runs
	// it over a whole file once the keyword is anywhere in it): it runs
	// over the whole record that holds the keyword.
	fragment bool
	entropy  float64 // the gitleaks rule's least entropy

	gl       *detect.Detector
	anchored map[string]*regexp.Regexp // keyword -> the body anchored at the keyword (classAnchored)
	re       *regexp.Regexp            // our expression rules: the secret is group 1, or the match
	find     finder                    // our code rules
	minEnt   float64                   // our expression rules: least entropy of the secret
	random   bool                      // our expression rules: the secret must look drawn at random
	// guard is an exact cheap check at a keyword, before any other work:
	// for keywords that are common words (path holds airtable's pat).
	guard func(text []byte, pos int) bool

	// wholeMatch: the gitleaks rule's secret is its whole match, not the
	// capture gitleaks reports (a group inside a repetition, one of named
	// alternatives): a rule never leaves part of its own match behind.
	wholeMatch bool
	// noCapture: the rule's secret is its match, with whatever character
	// its expression requires after the token.
	noCapture bool

	// body: classToken rules, their expression without what it says must
	// surround a token, leftmost-longest (classAnchored rules: anchored).
	// A token rule's window ends where the format's longest match does,
	// not at what is glued after it, so a rule that wants a space or a
	// quote after a token finds "AIza…&x=1", "…/next" or "…-foo" as it
	// finds the token before a space.
	body *regexp.Regexp
	// ext: token rules, the bytes that continue a token they found (what
	// the last part of their expression takes, letters and digits): a
	// finding that a letter or digit goes on after is extended over them,
	// so a token longer than its format's count is never left in part.
	ext *[256]bool

	pii bool
	// everywhere: the secret is also redacted wherever else it occurs in the
	// document (in another field, or JSON-escaped inside a string).
	everywhere bool
}

// finder is a rule written as code: given the scan text and a keyword
// occurrence, it appends the spans it finds.
type finder func(text []byte, pos, kwLen int, out []span) []span

// ruleSet is the compiled set of rules and the keywords that trigger them.
type ruleSet struct {
	rules    []*rule
	byID     map[string]*rule
	triggers []trigger

	// The token formats that name a secret by its text, and the keywords
	// that say which may.
	formats   []format
	formatKW  *keyword.Matcher
	formatsBy [][]int // keyword id -> formats
}

type trigger struct {
	word string // lower case
	r    *rule
}

// prefilter finds the keywords of the rules a Scrubber applies.
type prefilter struct {
	kw      *keyword.Matcher
	actions [][]action // keyword id -> rules it triggers
}

type action struct {
	rule  *rule
	kw    string // the rule's keyword (a matched keyword may extend it)
	kwLen int
}

// expansions narrow two-letter keywords that are everywhere in text (ask,
// they, files.) to the characters their rule requires after them, so the
// prefilter stops there less often. Each is exact: the rule's expression
// cannot match with anything else after the keyword.
var expansions = map[string]string{
	"twilio-api-key\x00sk":      "0123456789abcdef",                     // SK[0-9a-fA-F]{32}
	"vault-service-token\x00s.": "abcdefghijklmnopqrstuvwxyz0123456789", // s\.(?i:[a-z0-9]{24})
	"jwt\x00ey":                 "abcdefghijklmnopqrstuvwxyz0123456789", // ey[a-zA-Z0-9]{17,}
}

// prefilter returns the keyword matcher for the rules not switched off.
func (rs *ruleSet) prefilter(off []bool) *prefilter {
	var words []string
	var acts []action
	for _, t := range rs.triggers {
		if off[t.r.idx] {
			continue
		}
		a := action{rule: t.r, kw: t.word, kwLen: len(t.word)}
		if set, ok := expansions[t.r.id+"\x00"+t.word]; ok {
			for _, c := range []byte(set) {
				words = append(words, t.word+string(c))
				acts = append(acts, a)
			}
			continue
		}
		words = append(words, t.word)
		acts = append(acts, a)
	}
	pf := &prefilter{}
	var ids map[string]int
	pf.kw, ids = keyword.New(words)
	pf.actions = make([][]action, len(pf.kw.Words()))
	for i, w := range words {
		id := ids[w]
		if !slices.ContainsFunc(pf.actions[id], func(a action) bool { return a.rule == acts[i].rule }) {
			pf.actions[id] = append(pf.actions[id], acts[i])
		}
	}
	return pf
}

var (
	defaultOnce  sync.Once
	defaultRules *ruleSet
	defaultErr   error
)

// rules returns the default rule set, built once per process: the gitleaks
// default configuration (222 rules) and ours.
func rules() (*ruleSet, error) {
	defaultOnce.Do(func() {
		// gitleaks logs findings (secrets included) at trace level and
		// warnings at info level on stderr: a library must stay quiet, and
		// a secret must never reach a log.
		logging.Logger = zerolog.Nop()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			defaultErr = fmt.Errorf("gitleaks default config: %w", err)
			return
		}
		defaultRules, defaultErr = buildRules(d.Config)
	})
	return defaultRules, defaultErr
}

func buildRules(cfg config.Config) (*ruleSet, error) {
	rs := &ruleSet{byID: map[string]*rule{}}
	var triggers []trigger
	ids := make([]string, 0, len(cfg.Rules))
	for id := range cfg.Rules {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		gr := cfg.Rules[id]
		if gr.Regex == nil || gr.Path != nil || len(gr.Keywords) == 0 {
			continue // path rules need file names; a keyword-less rule would scan everything
		}
		r, err := glRule(cfg, gr)
		if err != nil {
			return nil, err
		}
		rs.add(r)
		for _, k := range gr.Keywords {
			triggers = append(triggers, trigger{strings.ToLower(k), r})
		}
	}
	for _, c := range customRules() {
		if _, dup := rs.byID[c.r.id]; dup {
			return nil, fmt.Errorf("rule %q defined twice", c.r.id)
		}
		rs.add(c.r)
		for _, k := range c.keywords {
			triggers = append(triggers, trigger{strings.ToLower(k), c.r})
		}
	}
	for _, id := range []string{"email", "phone", "ipv4", "ipv6"} {
		rs.add(piiRules[id])
	}
	rs.triggers = triggers
	if err := rs.addFormats(); err != nil {
		return nil, err
	}
	return rs, nil
}

func (rs *ruleSet) add(r *rule) {
	r.idx = len(rs.rules)
	rs.rules = append(rs.rules, r)
	rs.byID[r.id] = r
}

// fragmentRules are the gitleaks rules whose expression matches text
// without their keyword (sourcegraph-access-token takes any 40 hex digits
// once "sourcegraph" or "sgp_" is in the file; facebook-access-token and
// the Airtable rule match tokens without the service's name): gitleaks
// finds those anywhere in a file that holds the keyword, so they are run
// over the whole record.
var fragmentRules = map[string]bool{
	"sourcegraph-access-token":        true,
	"facebook-access-token":           true,
	"airtable-personnal-access-token": true,
}

// assignOp is the name = value operator of gitleaks' generated rules.
const assignOp = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// glRule wraps a gitleaks rule: a detector holding only this rule, and the
// window class its expression needs.
func glRule(cfg config.Config, gr config.Rule) (*rule, error) {
	one := config.Config{
		Rules:      map[string]config.Rule{gr.RuleID: gr},
		Keywords:   map[string]struct{}{},
		Allowlists: cfg.Allowlists,
	}
	for _, k := range gr.Keywords {
		one.Keywords[strings.ToLower(k)] = struct{}{}
	}
	for _, req := range gr.RequiredRules {
		if rr, ok := cfg.Rules[req.RuleID]; ok {
			one.Rules[rr.RuleID] = rr
		}
	}
	r := &rule{id: gr.RuleID, pri: priService, gl: detect.NewDetector(one), everywhere: true}
	if strings.Contains(gr.RuleID, "generic") {
		r.pri = priGeneric
	}
	r.generic, r.entropy = gr.RuleID == "generic-api-key", gr.Entropy
	r.fragment = fragmentRules[gr.RuleID]
	if err := r.classify(gr.Regex.String(), gr.Keywords); err != nil {
		return nil, err
	}
	if re, err := syntax.Parse(gr.Regex.String(), syntax.Perl); err == nil && gr.SecretGroup == 0 {
		// A capture gitleaks would report as the secret may be a piece of
		// the token the rule matches.
		r.wholeMatch = captureInRepeat(re, false) || hasNamedCapture(re)
		r.noCapture = gr.Regex.NumSubexp() == 0
	}
	return r, nil
}

// captureInRepeat reports whether re has a capture inside a repetition:
// gitleaks reports the capture's last iteration as the secret.
func captureInRepeat(re *syntax.Regexp, in bool) bool {
	if re.Op == syntax.OpCapture && in {
		return true
	}
	in = in || re.Op == syntax.OpRepeat || re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpQuest
	for _, s := range re.Sub {
		if captureInRepeat(s, in) {
			return true
		}
	}
	return false
}

func hasNamedCapture(re *syntax.Regexp) bool {
	if re.Op == syntax.OpCapture && re.Name != "" {
		return true
	}
	for _, s := range re.Sub {
		if hasNamedCapture(s) {
			return true
		}
	}
	return false
}

// classify sets the window class of a rule with expression src and its
// match lengths.
func (r *rule) classify(src string, keywords []string) error {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return fmt.Errorf("rule %s: %w", r.id, err)
	}
	body := trimBoundaries(re)
	r.min, r.max = matchLen(body)
	defer func() {
		switch r.class {
		case classToken, classAnchored, classLine:
			if !strings.Contains(src, assignOp) && !r.generic {
				r.ext = lastSet(body)
			}
		}
	}()
	switch {
	case r.id == "private-key":
		r.class = classPrivateKey
	case strings.HasPrefix(r.id, "curl-"):
		r.class = classLines
		switch r.id {
		case "curl-auth-user":
			r.pre = curlUser
		case "curl-auth-header":
			r.pre = curlHeader
		}
	case r.id == "kubernetes-secret-yaml":
		r.class = classBlock
	case strings.Contains(src, assignOp) && re.Op == syntax.OpAlternate:
		r.class = classLine // name = value or a bare token: both fit a line
	case strings.Contains(src, assignOp):
		r.class = classAssign
		r.minValue = 10
		if c := firstCapture(re); c != nil {
			l, _ := matchLen(c)
			r.minValue = max(1, min(10, l-2))
		}
	case runOnly(body):
		r.class = classToken
		var anchor *regexp.Regexp
		lits, _ := prefixes(body)
		for _, k := range keywords {
			k = strings.ToLower(k)
			if !slices.ContainsFunc(lits, func(l string) bool { return strings.HasPrefix(strings.ToLower(l), k) }) {
				continue
			}
			if anchor == nil {
				if anchor, err = regexp.Compile(`^(?:` + body.String() + `)`); err != nil {
					return fmt.Errorf("rule %s: anchored form: %w", r.id, err)
				}
				anchor.Longest()
				r.anchored = map[string]*regexp.Regexp{}
			}
			r.anchored[k] = anchor
		}
		if len(r.anchored) == len(keywords) {
			r.class = classAnchored
		} else {
			if r.body, err = regexp.Compile(body.String()); err != nil {
				return fmt.Errorf("rule %s: body: %w", r.id, err)
			}
			r.body.Longest()
		}
	default:
		r.class = classLine
	}
	return nil
}

// trimBoundaries drops the leading and trailing elements of a concatenation
// that only say what may surround a match ((?:^|[\s'"]) before a token,
// (?:[\s'";]|\\[nr]|$) after it), leaving the body of the match.
func trimBoundaries(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return re
	}
	subs := re.Sub
	for len(subs) > 0 && isBoundary(subs[0]) {
		subs = subs[1:]
	}
	for len(subs) > 0 && isBoundary(subs[len(subs)-1]) {
		subs = subs[:len(subs)-1]
	}
	if len(subs) == len(re.Sub) {
		return re
	}
	c := *re
	c.Sub = subs
	return &c
}

func isBoundary(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpBeginLine, syntax.OpEndLine:
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			switch s.Op {
			case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
				return true
			}
		}
	}
	return false
}

const unbounded = -1

// matchLen returns the shortest and longest match of re in bytes
// (unbounded: -1).
func matchLen(re *syntax.Regexp) (lo, hi int) {
	add := func(a, b int) int {
		if a == unbounded || b == unbounded {
			return unbounded
		}
		return a + b
	}
	mul := func(a, n int) int {
		if a == unbounded || n == unbounded {
			if a == 0 {
				return 0
			}
			return unbounded
		}
		return a * n
	}
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
		}
		return n, n
	case syntax.OpCharClass:
		hi := 1
		if len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] >= utf8.RuneSelf {
			hi = utf8.UTFMax
		}
		return 1, hi
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, utf8.UTFMax
	case syntax.OpCapture:
		return matchLen(re.Sub[0])
	case syntax.OpStar:
		_, h := matchLen(re.Sub[0])
		return 0, mul(h, unbounded)
	case syntax.OpPlus:
		l, h := matchLen(re.Sub[0])
		return l, mul(h, unbounded)
	case syntax.OpQuest:
		_, h := matchLen(re.Sub[0])
		return 0, h
	case syntax.OpRepeat:
		l, h := matchLen(re.Sub[0])
		return l * re.Min, mul(h, re.Max)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			l, h := matchLen(s)
			lo, hi = lo+l, add(hi, h)
		}
		return lo, hi
	case syntax.OpAlternate:
		for i, s := range re.Sub {
			l, h := matchLen(s)
			if i == 0 || l < lo {
				lo = l
			}
			if i == 0 || hi != unbounded && (h == unbounded || h > hi) {
				hi = h
			}
		}
		return lo, hi
	}
	return 0, 0
}

// runOnly reports whether every character re can match is a token
// character: the match then lies within one token of the text.
func runOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf || !isRun(byte(r)) {
				return false
			}
		}
		return true
	case syntax.OpCharClass:
		// Non-ASCII members come from case folding (K, ſ): a token
		// holding one is split there, and no format contains them.
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				if !isRun(byte(c)) {
					return false
				}
			}
		}
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, s := range re.Sub {
		if !runOnly(s) {
			return false
		}
	}
	return true
}

// prefixes returns strings every match of re starts with (one of), and
// whether they are all re can match. It gives up (returning "") past 64
// strings.
func prefixes(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginText, syntax.OpBeginLine:
		return []string{""}, true
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			p, full := prefixes(sub)
			if len(acc)*len(p) > 64 {
				return acc, false
			}
			var next []string
			for _, a := range acc {
				for _, b := range p {
					next = append(next, a+b)
				}
			}
			acc = next
			if !full {
				return acc, false
			}
		}
		return acc, true
	case syntax.OpAlternate:
		var all []string
		full := true
		for _, sub := range re.Sub {
			p, f := prefixes(sub)
			all = append(all, p...)
			full = full && f
		}
		if len(all) > 64 {
			return []string{""}, false
		}
		return all, full
	}
	return []string{""}, false
}

// isRun reports whether c can be part of a token: printable ASCII other
// than quotes, brackets and separators.
func isRun(c byte) bool { return runChar[c] }

var runChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune("\"'`<>()[]{},;|", rune(c))
	}
	return t
}()

// window is a span of the scan text handed to one rule. cutStart/cutEnd
// say the window was cut inside a token, so a finding that touches the cut
// is extended to the token's end rather than leaving its tail behind.
type window struct {
	start, end       int
	cutStart, cutEnd bool
}

const (
	lineReach  = 1024     // classLine: text either side of a keyword
	tokenReach = 4096     // an unbounded token is read this far from its keyword
	keyReach   = 64 << 10 // a private key's END is looked for this far
)

// window returns the text rule r needs around a keyword at pos, or false
// when the cheap checks say the rule cannot match there.
func (r *rule) window(text []byte, pos, kwLen int, kw string) (window, bool) {
	n := len(text)
	if r.fragment {
		return window{start: 0, end: n}, true
	}
	reach := r.max
	if reach == unbounded || reach > tokenReach {
		reach = tokenReach
	}
	switch r.class {
	case classAnchored:
		a := r.anchored[kw]
		e := pos + kwLen
		for e < n && e < pos+reach && tokenByte(text, e) {
			e++
		}
		if a == nil {
			return window{}, false
		}
		loc := a.FindIndex(text[pos:e])
		if loc == nil {
			return window{}, false
		}
		return tokenWindow(text, max(0, pos-2), pos+loc[1], e, false), true
	case classToken:
		s, e := pos, pos+kwLen
		for s > 0 && s > pos-reach && isRun(text[s-1]) {
			s--
		}
		for e < n && e < pos+reach && tokenByte(text, e) {
			e++
		}
		if e-s < r.min {
			return window{}, false
		}
		cutStart := s > 0 && isRun(text[s-1])
		for _, loc := range r.body.FindAllIndex(text[s:e], -1) {
			if s+loc[0] <= pos && pos+kwLen <= s+loc[1] {
				return tokenWindow(text, max(0, s-2), s+loc[1], e, cutStart), true
			}
		}
		return window{start: max(0, s-2), end: min(n, e+2), cutStart: cutStart, cutEnd: e < n && isRun(text[e])}, true
	case classAssign:
		v, ok := assignmentAfter(text, pos+kwLen, r.minValue)
		if !ok {
			return window{}, false
		}
		ls, le := lineBounds(text, pos, 64, 400)
		// The expressions start with [\w.-]{0,50}? before the keyword:
		// the name the keyword is part of, no more.
		s := pos
		for s > ls && pos-s < 50 && (isWord(text[s-1]) || text[s-1] == '.' || text[s-1] == '-') {
			s--
		}
		if r.generic {
			// generic-api-key, the rule whose keywords are everywhere:
			// check its value part exactly before running the expression.
			e, ok := genericValue(text, v, r.entropy)
			if !ok {
				return window{}, false
			}
			return window{start: s, end: min(n, e+2)}, true
		}
		e := le
		for e < n && e < le+tokenReach && isRun(text[e]) {
			e++ // a long value: read it whole
		}
		return window{start: s, end: min(n, e+2), cutEnd: e < n && isRun(text[e])}, true
	case classLines:
		ls, _ := lineBounds(text, pos, lineReach, 0)
		e := pos
		for lines := 0; e < n && e < pos+4*lineReach && lines < 6; e++ {
			if text[e] == '\n' {
				lines++
			}
		}
		return window{start: ls, end: e}, true
	case classBlock:
		ls, _ := lineBounds(text, pos, 400, 0)
		return window{start: ls, end: min(n, pos+1600)}, true
	case classPrivateKey:
		end := privateKeyEnd(text, pos)
		if end < 0 {
			return window{}, false
		}
		return window{start: pos, end: end}, true
	default:
		ls, le := lineBounds(text, pos, lineReach, lineReach)
		return window{start: ls, end: le}, true
	}
}

// tokenByte reports whether text[i] can be part of a token: a run byte
// that does not start a JSON escape (\" \n \u0026 … in JSON held in a
// string end a token as what they stand for does; \/ does not).
func tokenByte(text []byte, i int) bool {
	return isRun(text[i]) && !(text[i] == '\\' && i+1 < len(text) && strings.IndexByte(`"\bfnrtu`, text[i+1]) >= 0)
}

// tokenWindow is the window of a token rule whose format's longest match
// around the keyword ends at m, in a run of token bytes ending at e. When
// a letter or a digit goes on after m, the token is longer than the
// format and the window is the run and two bytes more (a rule that wants
// the token to end there does not match; one that does not is extended
// over the rest); otherwise the window ends at m, and what is glued after
// the token is not seen.
func tokenWindow(text []byte, start, m, e int, cutStart bool) window {
	n := len(text)
	if m < n && isAlnum(text[m]) {
		return window{start: start, end: min(n, e+2), cutStart: cutStart, cutEnd: e < n && isRun(text[e])}
	}
	return window{start: start, end: m, cutStart: cutStart}
}

// lineBounds returns the line around pos, at most back bytes before it and
// fwd bytes after it.
func lineBounds(text []byte, pos, back, fwd int) (int, int) {
	s := max(0, pos-back)
	if i := lastIndexByte(text[s:pos], '\n'); i >= 0 {
		s += i + 1
	}
	e := min(len(text), pos+fwd)
	if i := indexByte(text[pos:e], '\n'); i >= 0 {
		e = pos + i
	}
	return s, e
}

// assignmentAfter reports whether the text after a keyword can be the
// operator part of gitleaks' name = value rules:
// (?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,).
func assignmentAfter(text []byte, i, minValue int) (int, bool) {
	n := len(text)
	for k := 0; k < 20 && i < n && (isWord(text[i]) || text[i] == ' ' || text[i] == '\t' || text[i] == '.' || text[i] == '-'); k++ {
		i++
	}
	for k := 0; k < 3 && i < n && (isSpace(text[i]) || text[i] == '\'' || text[i] == '"'); k++ {
		i++
	}
	if i >= n || strings.IndexByte("=>:|?,", text[i]) < 0 {
		return 0, false
	}
	// The value: [\x60'"\s=]{0,5} then the secret, which starts with a
	// run of at least minValue of these characters (generic-api-key:
	// ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})).
	i++
	for k := 0; k < 3 && i < n && strings.IndexByte(":=>|", text[i]) >= 0; k++ {
		i++
	}
	for k := 0; k < 5 && i < n && (isSpace(text[i]) || strings.IndexByte("`'\"=", text[i]) >= 0); k++ {
		i++
	}
	op := i
	v := i
	for i < n && i-v < minValue && (isWord(text[i]) || strings.IndexByte(".=-+/", text[i]) >= 0) {
		i++
	}
	return op, i-v >= minValue
}

// genericValue reports whether generic-api-key can match a value at i
// (just past the first operator character): after [\x60'"\s=]{0,5}, a
// secret ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3}) whose entropy
// is above ent, then (?:[\x60'"\s;]|\\[nr]|$). It returns where the
// value ends.
func genericValue(text []byte, i int, ent float64) (int, bool) {
	n := len(text)
	// The rest of a multi-character operator (:=, ::=, ||, =>, ?=).
	for k := 0; k < 3 && i < n && strings.IndexByte(":=>|", text[i]) >= 0; k++ {
		i++
	}
	for k := 0; k <= 5 && i+k <= n; k++ {
		if k > 0 {
			if c := text[i+k-1]; !(isSpace(c) || c == '`' || c == '\'' || c == '"' || c == '=') {
				break
			}
		}
		v := i + k
		e := v
		for e < n && e-v <= 150 && (isWord(text[e]) || text[e] == '.' || text[e] == '=' || text[e] == '-') {
			e++
		}
		if e-v >= 10 && e-v <= 150 && tailAt(text, e) && entropy(text[v:e]) > ent {
			return e, true
		}
		if v < n && isAlnum(text[v]) {
			e = v + 1
			for e < n && (isAlnum(text[e]) || text[e] == '+' || text[e] == '/') {
				e++
			}
			for p := 0; p < 3 && e < n && text[e] == '='; p++ {
				e++
			}
			if e-v >= 12 && tailAt(text, e) && entropy(text[v:e]) > ent {
				return e, true
			}
		}
	}
	return 0, false
}

// tailAt reports whether a secret may end at e: (?:[\x60'"\s;]|\\[nr]|$).
func tailAt(text []byte, e int) bool {
	if e >= len(text) {
		return true
	}
	switch c := text[e]; c {
	case '`', '\'', '"', ';', ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	case '\\':
		return e+1 < len(text) && (text[e+1] == 'n' || text[e+1] == 'r')
	}
	return false
}

// firstCapture returns the first capturing group of re.
func firstCapture(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		return re
	}
	for _, s := range re.Sub {
		if c := firstCapture(s); c != nil {
			return c
		}
	}
	return nil
}

// privateKeyEnd returns the end of the PEM block starting at pos: just
// past "-----END … KEY-----", or -1 when there is none near.
func privateKeyEnd(text []byte, pos int) int {
	lim := min(len(text), pos+keyReach)
	i := indexFold(text[pos+10:lim], "-----end")
	if i < 0 {
		return -1
	}
	i += pos + 10 + 8
	j := indexByte(text[i:min(lim, i+120)], '-')
	if j < 0 {
		return -1
	}
	e := i + j
	for e < lim && text[e] == '-' {
		e++
	}
	return e
}

// detect runs the rule on a window and appends the findings' offsets in
// the window (start, end pairs) to hits.
func (r *rule) detect(frag []byte, hits []int32) []int32 {
	if r.pre != nil && !r.pre(frag) {
		return hits
	}
	if r.gl != nil {
		s := unsafe.String(unsafe.SliceData(frag), len(frag))
		for _, f := range r.gl.DetectString(s) {
			secret := f.Secret
			if secret == "" {
				continue
			}
			if r.wholeMatch {
				if m := strings.Index(s, f.Match); m >= 0 {
					a, b := trimMatch(s, m, m+len(f.Match))
					if a < b {
						hits = append(hits, int32(a), int32(b))
						continue
					}
				}
			}
			at := -1
			if m := strings.Index(s, f.Match); m >= 0 {
				if k := strings.LastIndex(f.Match, secret); k >= 0 {
					at = m + k
				}
			}
			if at < 0 {
				at = strings.Index(s, secret)
			}
			if at >= 0 {
				end := at + len(secret)
				if r.noCapture {
					_, end = trimMatch(s, at, end)
					for end > at+1 && !tokenEnd(s[end-1]) {
						end--
					}
				}
				hits = append(hits, int32(at), int32(end))
			}
		}
		return hits
	}
	for _, m := range r.re.FindAllSubmatchIndex(frag, -1) {
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		if r.minEnt > 0 && entropy(frag[s:e]) < r.minEnt || r.random && !drawn(frag[s:e]) {
			continue
		}
		hits = append(hits, int32(s), int32(e))
	}
	return hits
}

// trimMatch trims from a gitleaks match [a, b) of s what its expression
// only requires around a token: spaces, quotes, a semicolon, a \n or \r
// escape.
func trimMatch(s string, a, b int) (int, int) {
	for a < b && (isSpace(s[a]) || strings.IndexByte("'\"`;", s[a]) >= 0) {
		a++
	}
	for a < b {
		switch c := s[b-1]; {
		case isSpace(c) || strings.IndexByte("'\"`;", c) >= 0:
			b--
			continue
		case (c == 'n' || c == 'r') && b-2 >= a && s[b-2] == '\\':
			b -= 2
			continue
		}
		break
	}
	return a, b
}

// tokenEnd reports whether a token may end with c: an alphanumeric
// character, or base64 padding and the separators of token alphabets.
func tokenEnd(c byte) bool { return isAlnum(c) || strings.IndexByte("=-_+/", c) >= 0 }

// span makes a span of a finding. A token rule's finding goes on over
// the bytes that continue its token (a token longer than its format's
// count is never left in part) and stops at anything else, so that what
// is glued after a token is not part of its marker; the full stop or
// comma of prose after a token is not part of it either. Another rule's
// finding is extended over the rest of its token when the window cut the
// token.
func (r *rule) span(text []byte, w window, s, e int) span {
	if r.re != nil {
		for e > s+1 && strings.IndexByte(".,:;!?", text[e-1]) >= 0 {
			e-- // a full stop after the token, not part of it
		}
	}
	e0 := e
	switch {
	case r.ext != nil && (e < len(text) && isAlnum(text[e]) || w.cutEnd && e >= w.end-2):
		for e < len(text) && r.ext[text[e]] {
			e++
		}
	case r.ext == nil && w.cutEnd && e >= w.end-2:
		for e < len(text) && isRun(text[e]) {
			e++
		}
	}
	// Not the full stop, comma or colon that follows the token in prose.
	for e > e0 && strings.IndexByte(".,:;!?", text[e-1]) >= 0 {
		e--
	}
	if w.cutStart && s <= w.start+2 {
		for s > 0 && isRun(text[s-1]) {
			s--
		}
	}
	return span{start: s, end: e, rule: r}
}

// lastSet returns the bytes that continue a token of re's format: what
// the last character of a match can be, and ASCII letters and digits.
func lastSet(re *syntax.Regexp) *[256]bool {
	set := new([256]bool)
	addLast(re, set)
	for c := range 256 {
		set[c] = set[c] && isRun(byte(c)) || isAlnum(byte(c))
	}
	return set
}

// addLast adds to set the bytes the last character of a match of re can
// be, and reports whether re can match the empty string (then what comes
// before it can end a match too).
func addLast(re *syntax.Regexp, set *[256]bool) (empty bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true
		}
		addRune(set, re.Rune[len(re.Rune)-1], re.Flags&syntax.FoldCase != 0)
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				set[c] = true
			}
		}
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return addLast(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		addLast(re.Sub[0], set)
		return true
	case syntax.OpRepeat:
		return addLast(re.Sub[0], set) || re.Min == 0
	case syntax.OpConcat:
		for i := len(re.Sub) - 1; i >= 0; i-- {
			if !addLast(re.Sub[i], set) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if addLast(sub, set) {
				empty = true
			}
		}
		return empty
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	return true // empty matches and assertions
}

func addRune(set *[256]bool, c rune, fold bool) {
	if c >= utf8.RuneSelf {
		return
	}
	set[c] = true
	if fold && c >= 'a' && c <= 'z' {
		set[c-'a'+'A'] = true
	}
	if fold && c >= 'A' && c <= 'Z' {
		set[c-'A'+'a'] = true
	}
}

// curlOption calls fn with the text after each whitespace-preceded
// occurrence of one of opts and its [= \t]{0,5}, until fn says yes.
func curlOption(frag []byte, fn func(v []byte) bool, opts ...string) bool {
	for _, o := range opts {
		for i := 0; ; {
			k := bytes.Index(frag[i:], []byte(o))
			if k < 0 {
				break
			}
			p := i + k
			i = p + len(o)
			if p == 0 || !isSpace(frag[p-1]) {
				continue
			}
			v := i
			if v < len(frag) && frag[v] == '=' {
				v++
			} else {
				for k := 0; k < 5 && v < len(frag) && (frag[v] == ' ' || frag[v] == '\t'); k++ {
					v++
				}
			}
			if fn(frag[v:]) {
				return true
			}
		}
	}
	return false
}

// curlHeader: -H "Authorization: …", or a header named …key or …token.
func curlHeader(frag []byte) bool {
	return curlOption(frag, func(v []byte) bool {
		if len(v) == 0 || v[0] != '"' && v[0] != '\'' {
			return false
		}
		v = v[1:]
		c := indexByte(v[:min(len(v), 48)], ':')
		if c < 0 {
			return false
		}
		name := strings.ToLower(string(v[:c]))
		return name == "authorization" || strings.HasSuffix(name, "key") || strings.HasSuffix(name, "token")
	}, "-H", "--header")
}

// curlUser: -u user:password.
func curlUser(frag []byte) bool {
	return curlOption(frag, func(v []byte) bool {
		e := 0
		for e < len(v) && e < 512 && !isSpace(v[e]) {
			e++
		}
		return indexByte(v[:e], ':') >= 0
	}, "-u", "--user")
}
