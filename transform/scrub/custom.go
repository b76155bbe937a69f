package scrub

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/pos-lake/pos/internal/keyword"
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
