package scrub

import (
	"bytes"
	"github.com/pos-lake/pos/internal/keyword"
	"math"
	"regexp"
	"strings"
)

// Our rules: formats the gitleaks default set lacks (or only finds next to
// a service's name), secrets inside URLs, private keys that were cut short,
// and name = value assignments whose value gitleaks' generic rule does not
// accept (short passwords, passwords with punctuation, "token <value>").
// They complement the maintained set; they do not replace it.

type custom struct {
	r        *rule
	keywords []string
}

// exprRules are published token formats, as expressions.
var exprRules = []struct {
	id, expr string
	keywords []string
	minEnt   float64
}{
	{"discord-webhook-url", `https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([A-Za-z0-9_-]{60,68})`,
		[]string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}, 0},
	{"azure-storage-account-key", `(?i)AccountKey=([A-Za-z0-9+/]{86}==)`, []string{"accountkey="}, 0},
	{"azure-sas-token", `(?i)(?:[?&]|\\u0026)sig=([A-Za-z0-9%+/]{43,64}(?:%3D|=){0,2})`, []string{"sig="}, 3},
	{"docker-hub-pat", `dckr_pat_[A-Za-z0-9_-]{27,}`, []string{"dckr_pat_"}, 0},
	{"bitbucket-app-password", `ATBB[A-Za-z0-9_=.-]{28,}`, []string{"atbb"}, 3},
	{"google-oauth-client-secret", `GOCSPX-[A-Za-z0-9_-]{28}`, []string{"gocspx-"}, 0},
	{"openai-project-key", `sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}`, []string{"sk-proj-", "sk-svcacct-", "sk-admin-"}, 3},
	{"anthropic-key", `sk-ant-(?:api|admin|oat|ort)[0-9]{2}-[A-Za-z0-9_-]{32,}`, []string{"sk-ant-"}, 3},
	{"mailgun-api-key", `key-[0-9a-f]{32}`, []string{"key-"}, 3},
	{"square-oauth-secret", `sq0csp-[A-Za-z0-9_-]{43}`, []string{"sq0csp-"}, 0},
	{"twilio-auth-token", `(?i)twilio[\w.-]{0,20}?(?:auth|token|secret)[\w.-]{0,20}["']?\s{0,3}[:=]{1,2}\s{0,3}["']?([0-9a-f]{32})`, []string{"twilio"}, 3},
	{"gitlab-token", `gl(?:pat|dt|ptt|rt|oas|cbt|ft|imt|agent|soat)-[A-Za-z0-9_.-]{20,}`, []string{"glpat-", "gldt-", "glptt-", "glrt-", "gloas-", "glcbt-", "glft-", "glimt-", "glagent-", "glsoat-"}, 3},
	{"github-token", `gh[pousr]_[A-Za-z0-9]{36,255}`, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, 3},
	{"npm-token", `npm_[A-Za-z0-9]{36}`, []string{"npm_"}, 3},
	{"pypi-token", `pypi-[A-Za-z0-9_-]{50,}`, []string{"pypi-"}, 3},
	{"heroku-api-key-hrku", `HRKU-[A-Za-z0-9_-]{20,}`, []string{"hrku-"}, 3},
	{"shopify-token", `shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`, []string{"shpat_", "shpss_", "shpca_", "shppa_"}, 2},
	{"slack-token", `xox[abposr]-[0-9A-Za-z-]{10,}`, []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"}, 3},
	{"slack-webhook", `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}`, []string{"hooks.slack.com/"}, 0},
	{"stripe-key", `(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}`, []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"}, 3},
	{"sendgrid-api-key", `SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`, []string{"sg."}, 3},
	{"digitalocean-token", `do[opr]_v1_[a-f0-9]{64}`, []string{"dop_v1_", "doo_v1_", "dor_v1_"}, 3},
	{"atlassian-token", `ATATT3[A-Za-z0-9_=-]{100,}`, []string{"atatt3"}, 3},
	{"telegram-bot-token-any", `(?:^|[^0-9A-Za-z_-]|/bot)([0-9]{8,10}:AA[0-9A-Za-z_-]{33})(?:$|[^0-9A-Za-z_-])`, []string{":aa"}, 3},
	{"xai-api-key", `xai-[A-Za-z0-9]{70,90}`, []string{"xai-"}, 3},
	{"groq-api-key", `gsk_[A-Za-z0-9]{48,56}`, []string{"gsk_"}, 3},
	{"replicate-api-token", `r8_[A-Za-z0-9]{37}`, []string{"r8_"}, 3},
	{"langsmith-api-key", `lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}`, []string{"lsv2_"}, 3},
	{"tailscale-key", `tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}`, []string{"tskey-"}, 3},
	// gitleaks finds sgp_ tokens only before a space or a quote.
	{"sourcegraph-token", `sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}`, []string{"sgp_"}, 3},
	{"supabase-token", `(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})`, []string{"sbp_", "sb_secret_"}, 3},
	{"resend-api-key", `re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}`, []string{"re_"}, 3},
	{"figma-token", `fig[dou]_[A-Za-z0-9_-]{40,}`, []string{"figd_", "figo_", "figu_"}, 3},
	{"buildkite-token", `bk(?:ua|ct)_[a-f0-9]{40}`, []string{"bkua_", "bkct_"}, 3},
	{"notion-integration-secret", `secret_[A-Za-z0-9]{43}`, []string{"secret_"}, 3.5},
	{"newrelic-key", `NR(?:AK|II|JS)-[A-Za-z0-9]{19,32}`, []string{"nrak-", "nrii-", "nrjs-"}, 3},
	// A PEM private key in base64 (kubeconfig client-key-data, Kubernetes
	// Secrets, CI variables): "-----BEGIN", then "PRIVATE KEY" at one of
	// its three alignments.
	{"private-key-base64", `LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,60}?(?:UFJJVkFURSBLRV|BSSVZBVEUgS0VZ|QUklWQVRFIEtFW)[A-Za-z0-9+/]{64,}={0,2}`, []string{"ls0tls1crudjt"}, 3},
	// Incoming-webhook URLs whose path is the secret (Mattermost, Zapier,
	// IFTTT, Google Chat's token, n8n and other /hooks/ endpoints).
	{"webhook-url", `https?://[A-Za-z0-9.-]+(?::[0-9]+)?/(?:[A-Za-z0-9_.-]+/)*?(?:hooks?|webhooks?|catch|with/key)/(?:[A-Za-z0-9_-]+/){0,3}([A-Za-z0-9_-]{20,})`, []string{"/hooks/", "/hook/", "/webhook/", "/webhooks/", "/catch/", "/with/key/"}, 3.3},
	{"airtable-pat", `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`, []string{"pat"}, 3},
	{"discord-bot-token", `(?:^|[^A-Za-z0-9_-])(MT[AEIMQUYcgk][A-Za-z0-9_-]{21,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})(?:$|[^A-Za-z0-9_-])`,
		[]string{"mta", "mte", "mti", "mtm", "mtq", "mtu", "mty", "mtc", "mtg", "mtk"}, 3},
	{"vault-token", `hv[sb]\.[A-Za-z0-9_-]{90,}`, []string{"hvs.", "hvb."}, 3},
	{"aws-secret-access-key", `(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?\s{0,3}[:=]{1,2}\s{0,3}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`,
		[]string{"aws_secret", "awssecret", "secret_access_key", "secretaccesskey"}, 3},
	// An AWS secret access key beside its key id, with no name: the CSV the
	// console hands out, "AKIA… wJal…" in prose or a table.
	{"aws-secret-beside-key-id", `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}[\s,;:|"'=]{1,6}([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`,
		[]string{"akia", "asia", "abia", "acca", "a3t"}, 3.5},
	{"azure-client-secret", `(?:^|[^A-Za-z0-9_~.-])([a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])`, []string{"q~"}, 3},
}

// guards check the byte a format fixes at its offset from the keyword:
// pat…, re_… and secret_… begin common words.
var guards = map[string]func(text []byte, pos int) bool{
	"airtable-pat":              byteAt(17, '.'), // pat + 14 + .
	"resend-api-key":            byteAt(11, '_'), // re_ + 8 + _
	"notion-integration-secret": func(text []byte, pos int) bool { return pos+50 <= len(text) && isAlnum(text[pos+49]) },
}

func byteAt(off int, c byte) func([]byte, int) bool {
	return func(text []byte, pos int) bool { return pos+off < len(text) && text[pos+off] == c }
}

// randomOnly are the expression rules whose secret must look drawn at
// random (digits among letters, not a name): a URL path of words is a page.
var randomOnly = map[string]bool{"webhook-url": true}

// drawn reports whether v looks drawn at random rather than written: at
// least two digits and two letters, and not a name made of words.
func drawn(v []byte) bool {
	var d, l int
	for _, c := range v {
		switch {
		case isDigit(c):
			d++
		case isAlnum(c):
			l++
		}
	}
	return d >= 2 && l >= 2 && !identifierLike(v)
}

func customRules() []custom {
	var cs []custom
	for _, e := range exprRules {
		r := &rule{id: e.id, pri: priCustom, minEnt: e.minEnt, everywhere: true, random: randomOnly[e.id], guard: guards[e.id]}
		r.re = regexp.MustCompile(e.expr)
		if err := r.classify(e.expr, e.keywords); err != nil {
			panic(err)
		}
		cs = append(cs, custom{r, e.keywords})
	}
	cs = append(cs,
		custom{&rule{id: "private-key-block", pri: priCustom, find: privateKeyBlock, everywhere: true}, []string{"-----begin"}},
		custom{&rule{id: "url-password", pri: priCustom, find: urlPassword, everywhere: true}, []string{"://"}},
		custom{&rule{id: "cli-user-password", pri: priCustom, find: cliUserPassword, everywhere: true}, []string{"curl", "wget", "http "}},
		custom{&rule{id: "cli-password", pri: priCustom, find: cliPassword, everywhere: true, guard: cliGuard}, cliKeywords},
		custom{&rule{id: "generic-assignment", pri: priAssignment, find: assignment, everywhere: true}, assignKeywords},
		custom{&rule{id: ruleUser, pri: priPII, find: homeUser, pii: true}, []string{"/home/", "/users/", `\users\`, "-home-", "-users-"}},
	)
	return cs
}

// ruleUser names a user name: in a home directory path, or the record's
// user field.
const ruleUser = "username"

// privateKeyBlock finds a PEM private key, with or without its END line
// (a key pasted or printed in part still gives most of itself away): the
// header, then the lines of base64 and armor headers that follow.
func privateKeyBlock(text []byte, pos, kwLen int, out []span) []span {
	n := len(text)
	i := pos + kwLen
	j := indexFold(text[i:min(n, i+110)], "private key")
	if j < 0 {
		return out
	}
	for _, c := range text[i : i+j] {
		if !(isAlnum(c) || c == ' ' || c == '_' || c == '-') {
			return out
		}
	}
	k := i + j + len("private key")
	if keyword.HasPrefixFold(text[k:], " block") {
		k += len(" block")
	}
	if !bytes.HasPrefix(text[k:], []byte("-----")) {
		return out
	}
	k += 5
	if e := privateKeyEnd(text, pos); e > 0 {
		return append(out, span{start: pos, end: e})
	}
	// No END: take the lines that look like the body of a key.
	e, body, headers := k, 0, 0
	for e < n && e < k+keyReach {
		ls := e
		le := e
		for le < n && text[le] != '\n' && !(text[le] == '\\' && le+1 < n && (text[le+1] == 'n' || text[le+1] == 'r')) {
			le++
		}
		line := bytes.TrimSpace(text[ls:le])
		switch {
		case len(line) == 0:
		case isBase64(line):
			body += len(line)
		case headers < 4 && bytes.Contains(line, []byte(": ")):
			headers++
		default:
			goto done
		}
		e = le
		if e < n && text[e] == '\\' {
			e++
		}
		if e < n {
			e++
		}
	}
done:
	for e > k && (isSpace(text[e-1]) || text[e-1] == '\\' || text[e-1] == 'n' && e-2 >= k && text[e-2] == '\\') {
		if text[e-1] == 'n' {
			e--
		}
		e--
	}
	if body < 64 {
		return out
	}
	return append(out, span{start: pos, end: e})
}

func isBase64(b []byte) bool {
	for _, c := range b {
		if !(isAlnum(c) || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// urlPassword finds the password of scheme://user:password@host URLs:
// database URLs, broker URLs, HTTP basic auth.
func urlPassword(text []byte, pos, kwLen int, out []span) []span {
	s := pos
	for s > 0 && pos-s < 32 && (isAlnum(text[s-1]) || text[s-1] == '+' || text[s-1] == '.' || text[s-1] == '-') {
		s--
	}
	if pos-s < 2 {
		return out
	}
	n := len(text)
	colon, at := -1, -1
	for i := pos + kwLen; i < n && i < pos+kwLen+512; i++ {
		c := text[i]
		if c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\' {
			break
		}
		switch c {
		case ':':
			if colon < 0 && at < 0 {
				colon = i
			}
		case '@':
			at = i
		}
	}
	if colon < 0 || at < colon+2 || at+1 >= n || !isAlnum(text[at+1]) && text[at+1] != '[' {
		return out
	}
	pw := text[colon+1 : at]
	if placeholder(pw) {
		return out
	}
	return append(out, span{start: colon + 1, end: at})
}

// placeholders are values that stand for a secret in documentation and
// templates rather than being one.
var placeholders = map[string]bool{
	"password": true, "pass": true, "passwd": true, "pwd": true, "pw": true, "secret": true,
	"changeme": true, "user": true, "username": true, "mypassword": true, "yourpassword": true,
	"your_password": true, "your-password": true, "token": true, "xxx": true, "xxxx": true,
	"***": true, "****": true, "...": true, "redacted": true,
}

func placeholder(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '$', '<', '{', '[':
		return true
	case '%':
		if len(v) > 1 && (v[1] == 's' || v[1] == '(' || v[1] == 'v' || v[1] == '[') {
			return true // %s, %(password)s, %v, %[1]s
		}
	}
	if placeholders[strings.ToLower(string(v))] {
		return true
	}
	same := true
	for _, c := range v[1:] {
		if c != v[0] {
			same = false
			break
		}
	}
	return same
}

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

// kebabLiteral reports whether an identifier-like value is a string of
// words joined by hyphens (test-jwt-secret-key-32-characters-long): no
// name in code is spelled so, and a secret made of words is still the
// secret.
func kebabLiteral(v []byte) bool {
	return len(v) >= 16 && bytes.Count(v, []byte("-")) >= 2 && bytes.IndexByte(v, '.') < 0
}

// wordRE is a name made of words: lower, upper, capitalised or camelCase
// (getUserID, XMLHttpRequest, SECRET), with at most four digits at the end.
var wordRE = regexp.MustCompile(`^(?:[a-z]+|[A-Z]+|(?:[A-Z]+|[a-z]+)?(?:[A-Z][a-z]+)+[A-Z]*)[0-9]{0,4}$`)

// identifierLike reports whether v reads as a name: words separated by
// _ . or - (user_password2, getToken, SECRET_KEY_1, v2, config.api_token).
func identifierLike(v []byte) bool {
	for _, seg := range bytes.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '.' || r == '-' }) {
		if !wordRE.Match(seg) && !(len(seg) <= 4 && isDigits(seg)) {
			return false
		}
	}
	return true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// randomLetters reports whether a value of letters alone looks drawn at
// random rather than spelled: long, mixed case, few vowels, case changing
// often.
func randomLetters(v []byte) bool {
	if len(v) < 20 {
		return false
	}
	var vowels, switches, up int
	for i, c := range v {
		if strings.IndexByte("aeiouAEIOU", c) >= 0 {
			vowels++
		}
		if c >= 'A' && c <= 'Z' {
			up++
		}
		if i > 0 && (c >= 'A' && c <= 'Z') != (v[i-1] >= 'A' && v[i-1] <= 'Z') {
			switches++
		}
	}
	n := float64(len(v))
	return up > 0 && up < len(v) && float64(vowels)/n < 0.3 && float64(switches)/n > 0.2
}

// pathLike reports whether v is a file path or URL path: segments between
// slashes that are names (a/b/c.txt, ./run/secrets/db).
func pathLike(v []byte) bool {
	if bytes.IndexByte(v, '/') < 0 || bytes.IndexByte(v, '+') >= 0 {
		return false
	}
	for _, seg := range bytes.Split(v, []byte("/")) {
		seg = bytes.Trim(seg, ".~")
		if len(seg) > 0 && !identifierLike(seg) {
			return false
		}
	}
	return true
}

// homeUser finds the user name in home directory paths: /home/NAME,
// /Users/NAME, C:\Users\NAME, and Claude Code's project directory names
// (-home-NAME-…).
func homeUser(text []byte, pos, kwLen int, out []span) []span {
	dash := text[pos] == '-'
	if pos > 0 {
		c := text[pos-1]
		if dash {
			if !(c == '/' || c == '\\' || c == '"' || c == '\'' || isSpace(c) || boundaryBefore(text, pos) && !isAlnum(c)) {
				return out
			}
		} else if !boundaryBefore(text, pos) || c == '.' || c == '_' || c == '-' {
			return out // part of a URL or a longer path (/api/users/…)
		}
	}
	s := pos + kwLen
	e := s
	for e < len(text) && e-s < 64 && (isAlnum(text[e]) || text[e] == '.' || text[e] == '_' || !dash && text[e] == '-') {
		e++
	}
	if e == s || e < len(text) && isAlnum(text[e]) {
		return out
	}
	if systemUsers[strings.ToLower(string(text[s:e]))] {
		return out
	}
	return append(out, span{start: s, end: e})
}

// systemUsers are account names that say nothing about a person, and
// placeholders written in their place.
var systemUsers = map[string]bool{
	"user": true, "username": true, "you": true, "your": true, "yourname": true, "your-name": true,
	"your_name": true, "me": true, "name": true, "someone": true, "runner": true, "ubuntu": true,
	"ec2-user": true, "vagrant": true, "node": true, "app": true, "root": true, "linuxbrew": true,
	"shared": true, "admin": true, "guest": true, "default": true, "public": true, "all": true,
	"jenkins": true, "www-data": true, "nobody": true, "example": true, "...": true,
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isWord(c byte) bool { return isAlnum(c) || c == '_' }

func isIdent(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// entropy is the Shannon entropy of b in bits per byte, as gitleaks
// computes it for ASCII.
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	inv := 1 / float64(len(b))
	e := 0.0
	for _, k := range counts {
		if k > 0 {
			f := float64(k) * inv
			e -= f * math.Log2(f)
		}
	}
	return e
}

func indexByte(b []byte, c byte) int     { return bytes.IndexByte(b, c) }
func lastIndexByte(b []byte, c byte) int { return bytes.LastIndexByte(b, c) }

// indexFold returns the index of the lower-case ASCII string s in b,
// ignoring case, or -1.
func indexFold(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if keyword.Lower[b[i]] == s[0] && keyword.HasPrefixFold(b[i:], s) {
			return i
		}
	}
	return -1
}

// cliUserPassword finds user:password given to -u/--user (curl, httpie)
// or --password/--http-password= (wget) on the command's line or its
// continuation lines: the password, whatever characters it holds.
func cliUserPassword(text []byte, pos, kwLen int, out []span) []span {
	if pos > 0 && isWord(text[pos-1]) || pos+kwLen < len(text) && isWord(text[pos+kwLen]) && text[pos+kwLen-1] != ' ' {
		return out
	}
	end := min(len(text), pos+2048)
	for i := pos + kwLen; i < end; i++ {
		if text[i] == '\n' && (i == 0 || text[i-1] != '\\') {
			break
		}
		if !isSpace(text[i]) || i+1 >= end {
			continue
		}
		o := text[i+1:]
		var n int
		switch {
		case bytes.HasPrefix(o, []byte("-u")) && len(o) > 2 && (o[2] == ' ' || o[2] == '='):
			n = 2
		case bytes.HasPrefix(o, []byte("--user")) && len(o) > 6 && (o[6] == ' ' || o[6] == '='):
			n = 6
		case bytes.HasPrefix(o, []byte("-a")) && len(o) > 2 && o[2] == ' ':
			n = 2
		default:
			continue
		}
		v := i + 1 + n
		for v < end && (text[v] == ' ' || text[v] == '=') {
			v++
		}
		if v >= end {
			break
		}
		vs, ve := v, v
		if q := text[v]; q == '"' || q == '\'' {
			vs = v + 1
			e := indexByte(text[vs:end], q)
			if e < 0 {
				continue
			}
			ve = vs + e
		} else {
			for ve < end && !isSpace(text[ve]) && text[ve] != '"' && text[ve] != '\'' {
				ve++
			}
		}
		if !(vs < ve && (text[vs-1] == '"' || text[vs-1] == '\'')) {
			for ve > vs && strings.IndexByte(",.;)", text[ve-1]) >= 0 {
				ve-- // prose: "curl -u user:password, then …"
			}
		}
		c := indexByte(text[vs:ve], ':')
		if c < 0 || placeholder(text[vs+c+1:ve]) {
			continue
		}
		out = append(out, span{start: vs + c + 1, end: ve})
	}
	return out
}

// cliTools are the commands that take a password as an argument, and how:
// attached (-pSECRET), as the next word (-a SECRET), after = (--password=),
// after a separator inside a word (-U user%SECRET), or positionally
// (htpasswd -b file user SECRET).
var cliTools = map[string]cliTool{
	"mysql":        {attached: []string{"-p"}, eq: []string{"--password"}},
	"mariadb":      {attached: []string{"-p"}, eq: []string{"--password"}},
	"sshpass":      {attached: []string{"-p"}, next: []string{"-p"}},
	"redis-cli":    {next: []string{"-a", "--pass", "--password"}},
	"login":        {next: []string{"-p", "--password"}, eq: []string{"--password"}}, // docker login, podman login, helm registry login
	"mongo":        {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongosh":      {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongodump":    {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongorestore": {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"smbclient":    {sep: map[string]byte{"-U": '%', "--user": '%'}},
	"sqlcmd":       {next: []string{"-P"}},
	"bcp":          {next: []string{"-P"}},
	"ldapsearch":   {next: []string{"-w"}},
	"ldapadd":      {next: []string{"-w"}},
	"ldapmodify":   {next: []string{"-w"}},
	"ldapdelete":   {next: []string{"-w"}},
	"htpasswd":     {batch: true},
}

type cliTool struct {
	attached, next, eq []string
	sep                map[string]byte
	batch              bool // htpasswd: with -b, the password is the last positional argument
}

// cliKeywords trigger cliPassword: the tools' names (mysql covers mysqldump,
// mysqladmin …).
var cliKeywords = []string{"mysql", "mariadb", "sshpass", "redis-cli", "login", "mongo", "smbclient", "sqlcmd", "bcp", "ldap", "htpasswd"}

// cliGuard lets cliPassword look only at a tool's name that a space
// follows, and at login only after a registry client's name (docker
// login, podman login, helm registry login …): login is a common word.
func cliGuard(text []byte, pos int) bool {
	e := pos
	for e < len(text) && e-pos < 24 && (isAlnum(text[e]) || text[e] == '-' || text[e] == '_') {
		e++
	}
	if e >= len(text) || text[e] != ' ' && text[e] != '\t' {
		return false
	}
	if !keyword.HasPrefixFold(text[pos:], "login") {
		return true
	}
	if pos < 2 || text[pos-1] != ' ' {
		return false
	}
	s := pos - 1
	for s > 0 && text[s-1] == ' ' {
		s--
	}
	ws := s
	for ws > 0 && (isAlnum(text[ws-1]) || text[ws-1] == '-') {
		ws--
	}
	return s > ws && loginClients[string(text[ws:s])]
}

// loginClients are the commands whose login subcommand takes -p PASSWORD.
var loginClients = map[string]bool{"docker": true, "podman": true, "registry": true, "nerdctl": true, "buildah": true,
	"skopeo": true, "oras": true, "crane": true, "cf": true, "finch": true}

// cliPassword finds a password given on the command line of a tool that
// takes one (mysql -pSECRET, sshpass -p SECRET, htpasswd -b f user SECRET,
// redis-cli -a SECRET, docker login -p SECRET …): the word, quoted or not,
// up to the end of the command.
func cliPassword(text []byte, pos, kwLen int, out []span) []span {
	if pos > 0 {
		if c := text[pos-1]; isIdent(c) || c == '.' {
			return out
		}
	}
	e := pos
	for e < len(text) && e-pos < 24 && (isAlnum(text[e]) || text[e] == '-' || text[e] == '_') {
		e++
	}
	name := strings.ToLower(string(text[pos:e]))
	tool, ok := cliTools[name]
	if !ok {
		switch {
		case strings.HasPrefix(name, "mysql"), strings.HasPrefix(name, "mariadb"):
			tool = cliTools["mysql"]
		case strings.HasPrefix(name, "ldap"):
			return out
		default:
			return out
		}
	}
	words := shellWords(text, e, min(len(text), e+2048))
	var positional []word
	var batch, noFile, skip bool
	for i, w := range words {
		raw := text[w.start:w.end]
		var vs, ve int = -1, -1
		for _, o := range tool.attached {
			if len(raw) > len(o) && bytes.HasPrefix(raw, []byte(o)) && raw[len(o)] != '-' {
				vs, ve = unquoteWord(text, w.start+len(o), w.end)
			}
		}
		for _, o := range tool.eq {
			if bytes.HasPrefix(raw, []byte(o+"=")) {
				vs, ve = unquoteWord(text, w.start+len(o)+1, w.end)
			}
		}
		for _, o := range tool.next {
			if string(raw) == o && i+1 < len(words) {
				vs, ve = unquoteWord(text, words[i+1].start, words[i+1].end)
			}
		}
		for o, sep := range tool.sep {
			v := w
			switch {
			case string(raw) == o && i+1 < len(words):
				v = words[i+1]
			case bytes.HasPrefix(raw, []byte(o+"=")):
				v.start += len(o) + 1
			default:
				continue
			}
			a, b := unquoteWord(text, v.start, v.end)
			if k := indexByte(text[a:b], sep); k >= 0 {
				vs, ve = a+k+1, b
			}
		}
		if tool.batch {
			switch {
			case skip:
				skip = false
			case len(raw) > 1 && raw[0] == '-':
				batch = batch || bytes.IndexByte(raw[1:], 'b') >= 0
				noFile = noFile || bytes.IndexByte(raw[1:], 'n') >= 0
				skip = string(raw) == "-C" || string(raw) == "-r" // options with a value
			default:
				positional = append(positional, w)
			}
		}
		if vs >= 0 && ve > vs && !placeholder(text[vs:ve]) && text[vs] != '$' && text[vs] != '`' && ve-vs >= 4 {
			out = append(out, span{start: vs, end: ve})
		}
	}
	// htpasswd -b[c…] file user password; htpasswd -nb user password.
	if at := 2; batch && (noFile && len(positional) > 1 || len(positional) > 2) {
		if noFile {
			at = 1
		}
		w := positional[at]
		if vs, ve := unquoteWord(text, w.start, w.end); ve-vs >= 4 && !placeholder(text[vs:ve]) && text[vs] != '$' {
			out = append(out, span{start: vs, end: ve})
		}
	}
	return out
}

// word is a shell word of the scan text: [start, end), quotes included.
type word struct{ start, end int }

// shellWords splits a command line from i to lim into words, quotes
// respected, up to the end of the command: a newline that no backslash
// continues, ; | & or a backquote outside quotes.
func shellWords(text []byte, i, lim int) []word {
	var out []word
	for i < lim {
		c := text[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\\' && i+1 < lim && text[i+1] == '\n':
			i += 2
			continue
		case c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&' || c == '`' || c == ')' || c == '<' || c == '>':
			return out
		}
		s := i
		for i < lim {
			c := text[i]
			if c == '"' && i+1 < lim && strings.IndexByte(",:]}", text[i+1]) >= 0 {
				// The end of the JSON string the command was written
				// in, in a scan text: "}, ", …
				if i > s {
					out = append(out, word{s, i})
				}
				return out
			}
			if c == '\'' || c == '"' {
				k := indexByte(text[i+1:lim], c)
				if k < 0 || indexByte(text[i+1:i+1+k], '\n') >= 0 {
					// An unclosed quote: the end of the string the
					// command was written in.
					if i > s {
						out = append(out, word{s, i})
					}
					return out
				}
				i += k + 2
				continue
			}
			if isSpace(c) || c == ';' || c == '|' || c == '&' || c == '`' || c == '<' || c == '>' {
				break
			}
			i++
		}
		out = append(out, word{s, i})
	}
	return out
}

// unquoteWord returns the content of a shell word [s, e): without the
// quotes around it (\"…\" in JSON held in a string).
func unquoteWord(text []byte, s, e int) (int, int) {
	if e-s >= 4 && text[s] == '\\' && text[s+1] == '"' && text[e-2] == '\\' && text[e-1] == '"' {
		return s + 2, e - 2
	}
	if e-s >= 2 && (text[s] == '\'' || text[s] == '"') && text[e-1] == text[s] {
		return s + 1, e - 1
	}
	return s, e
}
