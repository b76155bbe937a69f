package scrub

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
)

// An Allowlist says what is not redacted: false positives a person has
// reviewed. Its file has one entry per line; '#' starts a comment:
//
//	rule generic-api-key            # a rule that is not applied at all
//	regex ^sk-test-[0-9a-f]{16}$    # a finding whose text matches is kept
//	stopword example                # a finding containing this word is kept (case-insensitive)
//	path **/testdata/**             # records whose source path matches are not scrubbed
//
// A path pattern is a glob over the record's source path ('*' does not
// cross '/', '**' does); a pattern without '/' matches the file's name.
// Exchanges and sessions have no source path: an allowed file's messages
// are kept, while the exchanges built from them are still scrubbed.
type Allowlist struct {
	Rules     []string
	Regexes   []*regexp.Regexp
	StopWords []string
	Paths     []string
	paths     []*regexp.Regexp
	names     []string
}

// ParseAllowlist reads an allowlist file.
func ParseAllowlist(r io.Reader) (*Allowlist, error) {
	a := &Allowlist{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || line[0] == '#' {
			continue
		}
		kind, val, ok := strings.Cut(line, " ")
		kind = strings.TrimSuffix(strings.TrimSpace(kind), ":")
		val = strings.TrimSpace(val)
		if !ok || val == "" {
			return nil, fmt.Errorf("allowlist line %d: want KIND VALUE (rule, regex, stopword, path)", n)
		}
		if err := a.Add(kind, val); err != nil {
			return nil, fmt.Errorf("allowlist line %d: %w", n, err)
		}
	}
	return a, sc.Err()
}

// Add adds one entry: kind is rule, regex, stopword or path.
func (a *Allowlist) Add(kind, val string) error {
	switch kind {
	case "rule":
		a.Rules = append(a.Rules, val)
	case "regex":
		re, err := regexp.Compile(val)
		if err != nil {
			return err
		}
		a.Regexes = append(a.Regexes, re)
	case "stopword":
		a.StopWords = append(a.StopWords, strings.ToLower(val))
	case "path":
		a.Paths = append(a.Paths, val)
		if !strings.Contains(val, "/") {
			if _, err := path.Match(val, ""); err != nil {
				return err
			}
			a.names = append(a.names, val)
			return nil
		}
		re, err := globRE(val)
		if err != nil {
			return err
		}
		a.paths = append(a.paths, re)
	default:
		return fmt.Errorf("unknown entry %q (want rule, regex, stopword or path)", kind)
	}
	return nil
}

// globRE translates a path glob into an expression.
func globRE(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				if i+1 < len(g) && g[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// allowed reports whether a finding's text is allowed.
func (a *Allowlist) allowed(secret []byte) bool {
	if a == nil {
		return false
	}
	for _, re := range a.Regexes {
		if re.Match(secret) {
			return true
		}
	}
	if len(a.StopWords) > 0 {
		s := strings.ToLower(string(secret))
		for _, w := range a.StopWords {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	return false
}

// pathAllowed reports whether records from this source path are allowed.
func (a *Allowlist) pathAllowed(p string) bool {
	if a == nil || p == "" || len(a.Paths) == 0 {
		return false
	}
	p = strings.ReplaceAll(p, `\`, "/")
	for _, re := range a.paths {
		if re.MatchString(p) {
			return true
		}
	}
	base := path.Base(p)
	for _, g := range a.names {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}
