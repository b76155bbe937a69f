package scrub

import (
	"bytes"
	"math"
	"regexp"
	"strings"
)

// assignKeywords name a secret in name = value assignments.
var assignKeywords = []string{
	"password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "apikey", "api_key", "api-key",
	"accesskey", "access_key", "access-key", "credential", "bearer", "authkey", "auth_key", "private_key", "privatekey",
	"encryption_key", "signing_key", "master_key", "secret_key_base", "authorization",
}

// authSchemes are the HTTP authentication schemes whose credentials follow
// them in an Authorization header.
var authSchemes = map[string]bool{
	"bearer": true, "basic": true, "token": true, "digest": true, "apikey": true, "api-key": true,
	"sso-key": true, "negotiate": true, "ntlm": true, "hmac": true,
}

// isUpperRun reports whether b is upper case letters and digits (PGPASS).
func isUpperRun(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// spaceKeywords may be followed by their value after a space alone
// ("Authorization: token …", "--password …").
var spaceKeywords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "secret": true, "token": true, "bearer": true,
	"apikey": true, "api_key": true, "api-key": true,
}

// keySuffixes may follow a keyword inside a name that still names a secret
// (DB_PASSWORD, secret_key, api_key_secret, passwords); any other suffix
// names something else (token_count, password_reset_url, tokenizer).
var keySuffixes = map[string]bool{
	"": true, "s": true, "key": true, "_key": true, "-key": true, "_value": true, "value": true, "_string": true,
	"_str": true, "str": true, "_b64": true, "_base64": true, "_hex": true, "_secret": true, "secret": true,
	"_access_key": true, "_token": true, "token": true, "_plain": true, "_raw": true,
	"_encoded": true, "_clear": true, "_cleartext": true, "_key_base": true, "_base": true,
}

// assignment finds name = value where the name holds a keyword and the
// value looks like a secret: not a word, an identifier, a variable, a
// number or a placeholder, with enough entropy for its length.
func assignment(text []byte, pos, kwLen int, out []span) []span {
	n := len(text)
	kw := strings.ToLower(string(text[pos : pos+kwLen]))
	ks, ke := pos, pos+kwLen
	for ks > 0 && pos-ks < 48 && isIdent(text[ks-1]) {
		ks--
	}
	for ke < n && ke-pos < 48 && isIdent(text[ke]) {
		ke++
	}
	suffix := strings.ToLower(string(text[pos+kwLen : ke]))
	suffix = strings.TrimRight(suffix, "0123456789")
	if kw == "pass" {
		// PASS, SMTP_PASS, db_pass, PASS_WORD; not bypass_cache, passthrough.
		if suffix != "" && suffix != "_word" && suffix != "-word" || ks < pos && isAlnum(text[pos-1]) && !isUpperRun(text[ks:pos]) {
			return out
		}
	} else if !keySuffixes[suffix] {
		return out
	}
	i := ke
	for k := 0; k < 3 && i < n && (text[i] == '"' || text[i] == '\'' || text[i] == '`' || text[i] == ']' || text[i] == '\\'); k++ {
		i++
	}
	sp := i
	for i < n && i-sp < 3 && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	spaced := i > sp
	mode := modeAssign
	switch {
	case i+1 < n && text[i] == ':' && text[i+1] == '=' && !(i+2 < n && text[i+2] == '='):
		i += 2 // Go's :=
	case i+1 < n && text[i] == '=' && text[i+1] == '=',
		i+1 < n && text[i] == '!' && text[i+1] == '=':
		return out // a comparison
	case i+1 < n && text[i] == ':' && text[i+1] == ':':
		return out // a path (Rust, C++)
	case i+1 < n && text[i] == '=' && text[i+1] == '>':
		i += 2
	case i < n && (text[i] == '=' || text[i] == ':'):
		i++
	case spaced && (spaceKeywords[kw] || kw == "bearer"):
		mode = modeSpaced
	default:
		return out
	}
	if kw == "authorization" {
		// Authorization: <scheme> <credentials>
		for i < n && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		s := i
		for i < n && isAlnum(text[i]) || i < n && text[i] == '-' {
			i++
		}
		if !authSchemes[strings.ToLower(string(text[s:i]))] || i >= n || text[i] != ' ' {
			return out
		}
		mode = modeCredential
	}
	for k := 0; k < 3 && i < n && (text[i] == ' ' || text[i] == '\t'); k++ {
		i++
	}
	if i >= n {
		return out
	}
	vs, ve := i, i
	if text[i] == '\\' && i+1 < n && text[i+1] == '"' {
		i++ // \" opens a value inside a JSON string held in a string
	}
	if q := text[i]; q == '"' || q == '\'' || q == '`' {
		vs = i + 1
		e := indexByte(text[vs:min(n, vs+257)], q)
		if e < 0 {
			return out
		}
		ve = vs + e
		if indexByte(text[vs:ve], '\n') >= 0 {
			return out
		}
	} else {
		var sep byte
		switch {
		case ks > 0 && strings.IndexByte("?&;,", text[ks-1]) >= 0:
			sep = text[ks-1]
		case bytes.HasSuffix(text[:ks], []byte(`\u0026`)):
			sep = '&' // a query in JSON held in a string
		}
		ve = unquotedEnd(text, vs, sep)
		// eyJhbGciOi... and sk-... stand for a value in documentation.
		if rest := text[ve:min(n, ve+3)]; bytes.HasPrefix(rest, []byte("...")) || bytes.HasPrefix(rest, []byte("…")) {
			return out
		}
	}
	quoted := vs > i
	if quoted && ve > vs && text[ve-1] == '\\' {
		ve-- // \" closes a value inside a JSON string held in a string
	}
	if kw == "bearer" && mode == modeSpaced {
		mode = modeCredential
	}
	if !plausibleSecret(text[vs:ve], mode, quoted) {
		return out
	}
	return append(out, span{start: vs, end: ve})
}

// unquotedEnd returns where an unquoted value starting at vs ends: at a
// space, a quote, the end of the line, an escape of text held in a string
// (\n, \"). Symbols inside the value (& ) ( # !) are part of it: a
// password is redacted to its end. A value whose name is one of a list of
// pairs (sep: the character before the name) ends where the next pair
// starts: in a query string (?key=…&user=…) at & or #, in a connection
// string (;Password=…;Database=…) at the separator before the next
// name= (in JSON held in a string, a query's & may read \u0026). What
// follows a value in prose or code — a full stop, a comma, a
// closing bracket it did not open — is not part of it.
func unquotedEnd(text []byte, vs int, sep byte) int {
	query := sep == '?' || sep == '&'
	n := len(text)
	ve := vs
	for ve < n && ve-vs < 257 {
		c := text[ve]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '`' {
			break
		}
		if c == '\\' && ve+1 < n && strings.IndexByte("nrt\"\\", text[ve+1]) >= 0 {
			break
		}
		if query && (c == '&' || c == '#' || c == '\\' && bytes.HasPrefix(text[ve:], []byte(`\u0026`))) || sep != 0 && (c == ';' || c == ',') && c == sep && nextPair(text[ve+1:]) {
			break
		}
		ve++
	}
	for ve > vs {
		c := text[ve-1]
		if strings.IndexByte(",;.:!?*`", c) >= 0 { // punctuation, Markdown's ** and `
			ve--
			continue
		}
		if k := strings.IndexByte(")]}>", c); k >= 0 && bytes.Count(text[vs:ve], []byte{"([{<"[k]}) < bytes.Count(text[vs:ve], []byte{c}) {
			ve--
			continue
		}
		break
	}
	return ve
}

// nextPair reports whether b starts with name= (a name of letters, digits,
// _ . - and spaces).
func nextPair(b []byte) bool {
	if len(b) == 0 || !(isAlnum(b[0]) || b[0] == '_') {
		return false
	}
	for i := 1; i < len(b) && i < 32; i++ {
		switch c := b[i]; {
		case c == '=':
			return true
		case isAlnum(c) || c == '_' || c == '.' || c == '-' || c == ' ':
		default:
			return false
		}
	}
	return false
}

// isCall reports whether an unquoted value is a function call or an index
// in code: a name of words (os.getenv, secrets.token_hex, get_password)
// followed by ( or [ and arguments made of names, numbers and the syntax
// between them — none of the symbols passwords are made of.
func isCall(v []byte) bool {
	i := bytes.IndexAny(v, "([")
	if i <= 0 || !identifierLike(v[:i]) {
		return false
	}
	for _, c := range v[i+1:] {
		if !(isIdent(c) || strings.IndexByte(".,:()[]'\"", c) >= 0) {
			return false
		}
	}
	return true
}

var placeholderWords = []string{
	"example", "placeholder", "your", "****", "changeme", "redacted", "dummy", "sample",
	"fake", "mock", "<", "...", "…", "{{", "}}", "://", "todo", "replace", "change-me", "change_me",
	"changeit", "-here", "_here", "goes-here",
}

// templateRE is a reference to a variable or a command in a value:
// ${DB_PASSWORD}, ${VAR:-x}, $(cat /run/secrets/db).
var templateRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*[}:?-]|\$\([a-z][a-z0-9 _./-]*\)`)

// placeholderValue reports whether a value stands for a secret in
// documentation or a template rather than being one: YOUR_TOKEN, <token>,
// ${TOKEN}, sk-xxxx, eyJhbGciOi..., changeme.
func placeholderValue(v []byte) bool {
	lv := strings.ToLower(string(v))
	for _, w := range placeholderWords {
		if !isAlnum(w[0]) {
			if strings.Contains(lv, w) {
				return true
			}
			continue
		}
		// A word, not letters inside a random string (…kfakee…).
		for i := 0; ; {
			k := strings.Index(lv[i:], w)
			if k < 0 {
				break
			}
			a, b := i+k, i+k+len(w)
			if (a == 0 || !isLetter(v[a-1]) || isUpper(v[a])) && (b == len(v) || !isLetter(v[b]) || isUpper(v[b]) && !isUpper(v[b-1])) {
				return true
			}
			i = a + 1
		}
	}
	if templateRE.Match(v) {
		return true
	}
	return bytes.HasSuffix(v, []byte("xxx")) || bytes.HasSuffix(v, []byte("XXX")) ||
		bytes.Contains(v, []byte("xxxx")) || bytes.Contains(v, []byte("XXXX"))
}

// How sure the context is that a value is a credential.
type valueMode uint8

const (
	modeAssign     valueMode = iota // name = value, name: value
	modeSpaced                      // name value ("token abc…", "--password abc…")
	modeCredential                  // after an authentication scheme (Authorization: Bearer …)
)

// plausibleSecret tells a secret from what else stands after "password =":
// types, identifiers, expressions, words, numbers, paths, templates.
func plausibleSecret(v []byte, mode valueMode, quoted bool) bool {
	n := len(v)
	if n < 8 || n > 256 || mode == modeSpaced && n < 12 {
		return false
	}
	if bytes.HasPrefix(v, []byte(markerPrefix)) {
		return false
	}
	switch v[0] {
	case '$', '<', '{', '(', '[':
		return false // a variable, a template, an expression
	case '%':
		if n > 1 && (v[1] == 's' || v[1] == '(' || v[1] == 'v' || v[1] == '{' || v[1] == '[') {
			return false // a format verb
		}
	case '@', '#', '~', '.', '*', '&', '-':
		if mode == modeSpaced && !quoted {
			return false // a decorator, a comment, a home path, a pointer, an option
		}
	}
	var lowerN, upperN, digitN, sepN, symN int
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z':
			lowerN++
		case c >= 'A' && c <= 'Z':
			upperN++
		case c >= '0' && c <= '9':
			digitN++
		case c == '_' || c == '-' || c == '.':
			sepN++
		case c == ' ' || c == '\t' || c >= 0x7f:
			return false
		default:
			symN++
		}
	}
	letters := lowerN + upperN
	switch {
	case letters == 0: // numbers, dates, versions, IPs
		return false
	case symN == 0 && identifierLike(v) && !(mode != modeSpaced && kebabLiteral(v)): // user_password2, getToken, SECRET_KEY_1, a word
		return false
	case digitN == 0 && symN == 0 && mode != modeCredential && !randomLetters(v):
		return false // words and names that identifierLike let through
	case mode == modeSpaced && (letters < 4 || digitN == 0):
		return false // prose: "the token is …", "**Token Expiration:**"
	case pathLike(v):
		return false
	}
	if !quoted && (isCall(v) || bytes.ContainsAny(v, "{}<>") || symN > 0 && bytes.HasSuffix(v, []byte("()"))) {
		return false // an expression, a call, a type (map[string]…), an index
	}
	if t := bytes.TrimRight(v, "!?;,:="); len(t) < n && identifierLike(t) {
		return false // process.env.JWT_SECRET!, config.token;
	}
	if placeholderValue(v) {
		return false
	}
	thr := math.Min(3.0, math.Log2(float64(n))-0.5)
	if mode == modeSpaced {
		thr = math.Min(3.2, math.Log2(float64(n))-0.3)
	}
	return entropy(v) >= thr
}
