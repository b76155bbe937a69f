package scrub

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/keyword"
)

// A marker's label is a function of the secret's text alone, as its hash
// is: the token format the whole text is (github-pat, aws-access-token,
// private-key …), or genericLabel for any other secret, whichever rule
// found it and wherever. So one secret has one marker in every field and
// every record: "DB_PASSWORD=…" is not named after gitleaks' generic rule
// in one file and after the assignment rule in the next, nor a password
// after the URL it was in. The Report still counts findings by the rule
// that found them.

// genericLabel names every secret that is no published format by itself:
// a password, a key of random characters, a value assigned to a secret
// name.
const genericLabel = "secret"

// captureFormats are our expression rules whose secret is a group of the
// expression and yet a published format by itself (a Telegram bot token
// is found after /bot or alone; the group holds the whole token).
var captureFormats = map[string]bool{
	"telegram-bot-token-any": true,
	"discord-bot-token":      true,
	"azure-client-secret":    true,
}

// format is a rule whose secret is recognisable by its text alone.
type format struct {
	r     *rule
	whole *regexp.Regexp    // the secret, anchored at both ends
	is    func([]byte) bool // or code
}

func (f format) match(b []byte) bool {
	if f.is != nil {
		return f.is(b)
	}
	return f.whole.Match(b)
}

// addFormats collects the token formats: gitleaks' token rules (their
// expression without its boundaries, anchored at both ends), ours without a group or with a group that is the whole token, and
// private key blocks. A format is tried on a text only when one of its
// keywords is in it, so a format that needs no keyword in its match (40
// hex digits, once "sourcegraph" is in a file) names nothing alone.
func (rs *ruleSet) addFormats() error {
	kws := map[*rule][]string{}
	for _, t := range rs.triggers {
		kws[t.r] = append(kws[t.r], t.word)
	}
	var words []string
	var owners []int
	for _, r := range rs.rules {
		f := format{r: r}
		switch {
		case r.pii || r.generic:
			continue
		case r.id == "private-key-block":
			f.is = pemKeyHead
		case r.glConfig != nil:
			if r.class == classAssign || r.class == classLines || r.class == classBlock {
				continue
			}
			var src string
			for _, gr := range r.glConfig.Rules {
				if gr.RuleID == r.id {
					src = gr.Regex.String()
				}
			}
			if r.class == classLine && strings.Contains(src, assignOp) {
				continue // name = value: the value alone is no format
			}
			// The expression without what it says must surround the
			// token (a space or a ; after it is not part of it).
			re, err := syntax.Parse(src, syntax.Perl)
			if err != nil {
				return err
			}
			whole, err := regexp.Compile(`^(?:` + trimBoundaries(re).String() + `)$`)
			if err != nil {
				return fmt.Errorf("rule %s: whole-match form: %w", r.id, err)
			}
			f.whole = whole
		case r.re != nil:
			src := r.re.String()
			if r.re.NumSubexp() > 0 {
				if !captureFormats[r.id] {
					continue // the secret is a part of what the expression needs
				}
				re, err := syntax.Parse(src, syntax.Perl)
				if err != nil {
					return err
				}
				src = firstCapture(re).Sub[0].String()
			}
			whole, err := regexp.Compile(`^(?:` + src + `)$`)
			if err != nil {
				return fmt.Errorf("rule %s: whole-match form: %w", r.id, err)
			}
			f.whole = whole
		default:
			continue
		}
		for _, k := range kws[r] {
			words = append(words, k)
			owners = append(owners, len(rs.formats))
		}
		rs.formats = append(rs.formats, f)
	}
	var ids map[string]int
	rs.formatKW, ids = keyword.New(words)
	rs.formatsBy = make([][]int, len(rs.formatKW.Words()))
	for i, w := range words {
		id := ids[w]
		if !slices.Contains(rs.formatsBy[id], owners[i]) {
			rs.formatsBy[id] = append(rs.formatsBy[id], owners[i])
		}
	}
	return nil
}

// pemKeyHead reports whether b starts with the header of a PEM private
// key: a block cut short (private-key-block) is named as such.
func pemKeyHead(b []byte) bool {
	if !keyword.HasPrefixFold(b, "-----begin") {
		return false
	}
	line := b[:min(len(b), 120)]
	if i := indexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return indexFold(line, "private key") >= 0
}

// formatOf returns the rule of the first format (gitleaks' before ours)
// the whole of b is, or nil.
func (rs *ruleSet) formatOf(b []byte, cand []int) (*rule, []int) {
	cand = cand[:0]
	keyword.Each(rs.formatKW, b, func(_, id int) {
		for _, i := range rs.formatsBy[id] {
			if !slices.Contains(cand, i) {
				cand = append(cand, i)
			}
		}
	})
	slices.Sort(cand)
	for _, i := range cand {
		if rs.formats[i].match(b) {
			return rs.formats[i].r, cand
		}
	}
	return nil, cand
}

// labelCache bounds a scanner's cache of labels.
const labelCache = 1 << 12

// format returns the format rule the secret text b is (nil: none), as it
// reads unescaped.
func (sc *scanner) format(b []byte) *rule {
	if r, ok := sc.labels[string(b)]; ok {
		return r
	}
	var r *rule
	r, sc.cand = sc.s.rs.formatOf(plain(b), sc.cand)
	if len(sc.labels) >= labelCache {
		clear(sc.labels)
	}
	sc.labels[string(b)] = r
	return r
}

// label is the marker label of a settled span.
func (sc *scanner) label(text []byte, sp span) string {
	if sp.rule.pii {
		return sp.rule.id
	}
	if f := sc.format(text[sp.start:sp.end]); f != nil {
		return f.id
	}
	return genericLabel
}
