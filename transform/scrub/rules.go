package scrub

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/pos-lake/pos/internal/keyword"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
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

	// glConfig is a gitleaks rule's configuration (nil for ours); its
	// detector is built the first time a window is scanned for the rule
	// (detector): most rules' keywords never occur in a sync's records.
	glConfig *config.Config
	glOnce   sync.Once
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
		cfg, err := defaultConfig()
		if err != nil {
			defaultErr = fmt.Errorf("gitleaks default config: %w", err)
			return
		}
		defaultRules, defaultErr = buildRules(cfg)
	})
	return defaultRules, defaultErr
}

// defaultConfig is gitleaks' default configuration, read as
// detect.NewDetectorDefaultConfig reads it, without the detector it would
// build over every rule's keywords: each rule gets a detector of its own
// (glRule), and the keyword search is ours (prefilter).
func defaultConfig() (config.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
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
	r := &rule{id: gr.RuleID, pri: priService, glConfig: &one, everywhere: true}
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

// detector is the gitleaks rule's detector, built once.
func (r *rule) detector() *detect.Detector {
	r.glOnce.Do(func() { r.gl = detect.NewDetector(*r.glConfig) })
	return r.gl
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
