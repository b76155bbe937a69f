package scrubtest

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
)

// A credType is a credential format, from its publisher's documentation
// (prefixes, lengths, alphabets). gen makes a fake but format-valid
// credential, the text it appears in (an env line, a config entry, a
// header) and the strings that must not survive scrubbing.
type credType struct {
	name string
	// bare: the credential alone, with no name = value around it, is
	// recognisable by its format (a token with a published prefix, a URL).
	bare bool
	gen  func(r *rng) (snippet string, secrets []string)
}

type rng struct{ *rand.Rand }

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
	hexLow = "0123456789abcdef"
	b32    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64    = alnum + "+/"
	b64url = alnum + "-_"
	pwSym  = "!#%^*-_+=.~"
)

// str returns n characters from set. The generator makes sure none is a
// run of one character or an alphabet in order (gitleaks ignores those as
// examples).
func (r *rng) str(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func (r *rng) pick(s ...string) string { return s[r.IntN(len(s))] }

func (r *rng) uuid() string {
	return fmt.Sprintf("%s-%s-4%s-%s%s-%s", r.str(hexLow, 8), r.str(hexLow, 4), r.str(hexLow, 3),
		r.pick("8", "9", "a", "b"), r.str(hexLow, 3), r.str(hexLow, 12))
}

// password is a password as people make them: letters, digits and some
// punctuation, 12 to 20 characters.
func (r *rng) password() string {
	n := 12 + r.IntN(9)
	s := []byte(r.str(alnum, n))
	for k := 0; k < 2+r.IntN(2); k++ {
		s[r.IntN(n)] = pwSym[r.IntN(len(pwSym))]
	}
	s[1+r.IntN(n-1)] = digits[r.IntN(10)]
	if s[0] == '=' {
		s[0] = 'x' // DB_PASSWORD==x… reads as a comparison
	}
	return string(s)
}

// urlPassword is a password that needs no escaping in a URL.
func (r *rng) urlPassword() string {
	n := 12 + r.IntN(12)
	s := []byte(r.str(alnum, n))
	for k := 0; k < 2; k++ {
		s[r.IntN(n)] = "-_.~!*"[r.IntN(6)]
	}
	return string(s)
}

// env returns one of the ways a named credential is written down.
func (r *rng) env(name, value string) string {
	switch r.IntN(5) {
	case 0:
		return "export " + name + "=" + value
	case 1:
		return name + "=" + value
	case 2:
		return strings.ToLower(name) + ": " + value
	case 3:
		return `"` + name + `": "` + value + `"`
	}
	return name + ` = "` + value + `"`
}

// token returns a token in one of its usual contexts, bare included.
func (r *rng) token(name, tok string) (string, []string) {
	switch r.IntN(3) {
	case 0:
		return tok, []string{tok}
	case 1:
		return "here is the token " + tok + " for CI", []string{tok}
	}
	return r.env(name, tok), []string{tok}
}

// pem wraps DER-like random bytes (starting with the published prefix of
// the key type) in a PEM block.
func (r *rng) pem(label, prefix string, size, width int) (string, []string) {
	raw := make([]byte, size)
	for i := range raw {
		raw[i] = byte(r.IntN(256))
	}
	body := prefix + base64.StdEncoding.EncodeToString(raw)
	var lines []string
	for len(body) > 0 {
		n := min(width, len(body))
		lines = append(lines, body[:n])
		body = body[n:]
	}
	text := "-----BEGIN " + label + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + label + "-----"
	return text, lines
}

func jwtPart(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }

var types = []credType{
	{"aws-access-key-id", true, func(r *rng) (string, []string) {
		return r.token("AWS_ACCESS_KEY_ID", r.pick("AKIA", "ASIA")+r.str("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
	}},
	{"aws-secret-access-key", false, func(r *rng) (string, []string) {
		s := r.str(b64, 40)
		return r.pick("aws_secret_access_key = "+s, "AWS_SECRET_ACCESS_KEY="+s, `"SecretAccessKey": "`+s+`"`), []string{s}
	}},
	{"gcp-service-account-key", false, func(r *rng) (string, []string) {
		key, lines := r.pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1150, 64)
		id := r.str(hexLow, 40)
		doc := fmt.Sprintf(`{"type": "service_account", "project_id": "demo-proj-%d", "private_key_id": "%s", "private_key": %q, "client_email": "deployer@demo-proj.iam.gserviceaccount.com", "client_id": "1%s", "token_uri": "https://oauth2.googleapis.com/token"}`,
			r.IntN(1000), id, key+"\n", r.str(digits, 20))
		return doc, lines // the private_key_id names the key; it is not secret
	}},
	{"gcp-api-key", true, func(r *rng) (string, []string) {
		return r.token("GOOGLE_API_KEY", "AIza"+r.str(b64url, 35))
	}},
	{"google-oauth-client-secret", true, func(r *rng) (string, []string) {
		return r.token("GOOGLE_CLIENT_SECRET", "GOCSPX-"+r.str(b64url, 28))
	}},
	{"azure-storage-account-key", false, func(r *rng) (string, []string) {
		k := r.str(b64, 86) + "=="
		return "DefaultEndpointsProtocol=https;AccountName=acme" + r.str(lower, 6) + ";AccountKey=" + k + ";EndpointSuffix=core.windows.net", []string{k}
	}},
	{"azure-ad-client-secret", true, func(r *rng) (string, []string) {
		s := r.str(alnum, 3) + r.str(digits, 1) + "Q~" + r.str(alnum+"_~.-", 34)
		return r.token("AZURE_CLIENT_SECRET", s)
	}},
	{"github-pat-classic", true, func(r *rng) (string, []string) { return r.token("GITHUB_TOKEN", "ghp_"+r.str(alnum, 36)) }},
	{"github-pat-fine-grained", true, func(r *rng) (string, []string) {
		return r.token("GH_TOKEN", "github_pat_"+r.str(alnum, 22)+"_"+r.str(alnum, 59))
	}},
	{"github-oauth-token", true, func(r *rng) (string, []string) { return r.token("GITHUB_OAUTH_TOKEN", "gho_"+r.str(alnum, 36)) }},
	{"github-app-token", true, func(r *rng) (string, []string) {
		return r.token("GITHUB_APP_TOKEN", r.pick("ghs_", "ghu_")+r.str(alnum, 36))
	}},
	{"github-refresh-token", true, func(r *rng) (string, []string) {
		return r.token("GITHUB_REFRESH_TOKEN", "ghr_"+r.str(alnum, 76))
	}},
	{"gitlab-pat", true, func(r *rng) (string, []string) { return r.token("GITLAB_TOKEN", "glpat-"+r.str(b64url, 20)) }},
	{"bitbucket-app-password", true, func(r *rng) (string, []string) {
		return r.token("BITBUCKET_APP_PASSWORD", "ATBB"+r.str(alnum, 32))
	}},
	{"slack-bot-token", true, func(r *rng) (string, []string) {
		return r.token("SLACK_BOT_TOKEN", "xoxb-"+r.str(digits, 11)+"-"+r.str(digits, 13)+"-"+r.str(alnum, 24))
	}},
	{"slack-user-token", true, func(r *rng) (string, []string) {
		return r.token("SLACK_USER_TOKEN", "xoxp-"+r.str(digits, 11)+"-"+r.str(digits, 12)+"-"+r.str(digits, 13)+"-"+r.str(hexLow, 32))
	}},
	{"slack-webhook-url", true, func(r *rng) (string, []string) {
		u := "https://hooks.slack.com/services/T" + r.str(upper+digits, 8) + "/B" + r.str(upper+digits, 10) + "/" + r.str(alnum, 24)
		return r.token("SLACK_WEBHOOK_URL", u)
	}},
	{"discord-webhook-url", true, func(r *rng) (string, []string) {
		u := "https://discord.com/api/webhooks/" + r.str(digits, 19) + "/" + r.str(b64url, 68)
		return r.token("DISCORD_WEBHOOK", u)
	}},
	{"teams-webhook-url", true, func(r *rng) (string, []string) {
		u := "https://acme" + r.str(lower, 4) + ".webhook.office.com/webhookb2/" + r.uuid() + "@" + r.uuid() + "/IncomingWebhook/" + r.str(hexLow, 32) + "/" + r.uuid()
		return r.token("TEAMS_WEBHOOK_URL", u)
	}},
	{"stripe-live-secret-key", true, func(r *rng) (string, []string) {
		return r.token("STRIPE_SECRET_KEY", "sk_live_51"+r.str(alnum, 97))
	}},
	{"stripe-restricted-key", true, func(r *rng) (string, []string) {
		return r.token("STRIPE_RESTRICTED_KEY", "rk_live_51"+r.str(alnum, 97))
	}},
	{"twilio-api-key", true, func(r *rng) (string, []string) { return r.token("TWILIO_API_KEY", "SK"+r.str(hexLow, 32)) }},
	{"twilio-auth-token", false, func(r *rng) (string, []string) {
		s := r.str(hexLow, 32)
		return r.env("TWILIO_AUTH_TOKEN", s), []string{s}
	}},
	{"sendgrid-api-key", true, func(r *rng) (string, []string) {
		return r.token("SENDGRID_API_KEY", "SG."+r.str(b64url, 22)+"."+r.str(b64url, 43))
	}},
	{"mailgun-api-key", true, func(r *rng) (string, []string) { return r.token("MAILGUN_API_KEY", "key-"+r.str(hexLow, 32)) }},
	{"openai-project-key", true, func(r *rng) (string, []string) {
		return r.token("OPENAI_API_KEY", "sk-proj-"+r.str(b64url, 74)+"T3BlbkFJ"+r.str(b64url, 74))
	}},
	{"openai-legacy-key", true, func(r *rng) (string, []string) {
		return r.token("OPENAI_API_KEY", "sk-"+r.str(alnum, 20)+"T3BlbkFJ"+r.str(alnum, 20))
	}},
	{"anthropic-api-key", true, func(r *rng) (string, []string) {
		return r.token("ANTHROPIC_API_KEY", "sk-ant-api03-"+r.str(b64url, 93)+"AA")
	}},
	{"atlassian-api-token", true, func(r *rng) (string, []string) {
		return r.token("JIRA_API_TOKEN", "ATATT3xFfGF0"+r.str(b64url, 171)+"="+r.str(upper+digits, 8))
	}},
	{"npm-token", true, func(r *rng) (string, []string) { return r.token("NPM_TOKEN", "npm_"+r.str(alnum, 36)) }},
	{"pypi-token", true, func(r *rng) (string, []string) {
		return r.token("TWINE_PASSWORD", "pypi-AgEIcHlwaS5vcmc"+r.str(b64url, 70))
	}},
	{"docker-hub-pat", true, func(r *rng) (string, []string) { return r.token("DOCKERHUB_TOKEN", "dckr_pat_"+r.str(b64url, 27)) }},
	{"heroku-api-key", false, func(r *rng) (string, []string) {
		u := r.uuid()
		return r.pick("HEROKU_API_KEY="+u, "heroku_api_key: "+u, `"heroku_token": "`+u+`"`), []string{u}
	}},
	{"heroku-api-key-v2", true, func(r *rng) (string, []string) {
		return r.token("HEROKU_API_KEY", "HRKU-AA"+r.str(b64url, 58))
	}},
	{"digitalocean-pat", true, func(r *rng) (string, []string) {
		return r.token("DIGITALOCEAN_TOKEN", "dop_v1_"+r.str(hexLow, 64))
	}},
	{"shopify-access-token", true, func(r *rng) (string, []string) {
		return r.token("SHOPIFY_ACCESS_TOKEN", "shpat_"+r.str(hexLow, 32))
	}},
	{"square-access-token", true, func(r *rng) (string, []string) {
		return r.token("SQUARE_ACCESS_TOKEN", "EAAA"+r.str(b64url, 60))
	}},
	{"huggingface-token", true, func(r *rng) (string, []string) { return r.token("HF_TOKEN", "hf_"+r.str(upper+lower, 34)) }},
	{"vault-token", true, func(r *rng) (string, []string) { return r.token("VAULT_TOKEN", "hvs."+r.str(b64url, 90)) }},
	{"databricks-token", true, func(r *rng) (string, []string) {
		return r.token("DATABRICKS_TOKEN", "dapi"+r.str(hexLow, 32))
	}},
	{"age-secret-key", true, func(r *rng) (string, []string) {
		return r.token("SOPS_AGE_KEY", "AGE-SECRET-KEY-1"+r.str("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
	}},
	{"telegram-bot-token", false, func(r *rng) (string, []string) {
		t := r.str(digits, 10) + ":AA" + r.str(b64url, 33)
		return r.env("TELEGRAM_BOT_TOKEN", t), []string{t}
	}},
	{"private-key-rsa", false, func(r *rng) (string, []string) {
		return r.pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1180, 64)
	}},
	{"private-key-ec", false, func(r *rng) (string, []string) { return r.pem("EC PRIVATE KEY", "MHcCAQEEI", 110, 64) }},
	{"private-key-openssh", false, func(r *rng) (string, []string) {
		return r.pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 300, 70)
	}},
	{"private-key-pgp", false, func(r *rng) (string, []string) {
		k, lines := r.pem("PGP PRIVATE KEY BLOCK", "lQdGBF", 1500, 64)
		k = strings.Replace(k, "-----\n", "-----\nVersion: GnuPG v2\n\n", 1)
		k = strings.Replace(k, "\n-----END", "\n="+r.str(b64, 4)+"\n-----END", 1)
		return k, lines
	}},
	{"jwt", true, func(r *rng) (string, []string) {
		payload := fmt.Sprintf(`{"sub":"%s","name":"%s","iat":%d,"exp":%d}`, r.uuid(), r.str(lower, 8), 1700000000+r.IntN(1e8), 1800000000+r.IntN(1e8))
		t := jwtPart(`{"alg":"HS256","typ":"JWT"}`) + "." + jwtPart(payload) + "." + r.str(b64url, 43)
		switch r.IntN(3) {
		case 0:
			return "Authorization: Bearer " + t, []string{t}
		case 1:
			return `"id_token": "` + t + `"`, []string{t}
		}
		return t, []string{t}
	}},
	{"postgres-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return r.env("DATABASE_URL", "postgres://app_user:"+pw+"@db-"+r.str(lower, 5)+".internal:5432/app?sslmode=require"), []string{pw}
	}},
	{"mysql-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return r.env("MYSQL_URL", "mysql://root:"+pw+"@127.0.0.1:3306/shop"), []string{pw}
	}},
	{"mongodb-srv-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return r.env("MONGODB_URI", "mongodb+srv://admin:"+pw+"@cluster0."+r.str(lower+digits, 5)+".mongodb.net/prod?retryWrites=true&w=majority"), []string{pw}
	}},
	{"redis-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return r.env("REDIS_URL", r.pick("redis://:", "rediss://default:")+pw+"@cache-"+r.str(lower, 4)+".example.net:6379/0"), []string{pw}
	}},
	{"amqp-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return r.env("BROKER_URL", "amqps://worker:"+pw+"@mq.internal:5671/vhost"), []string{pw}
	}},
	{"https-basic-auth-url", true, func(r *rng) (string, []string) {
		pw := r.urlPassword()
		return "git clone https://deploy:" + pw + "@git.internal.net/team/app.git", []string{pw}
	}},
	{"generic-password", false, func(r *rng) (string, []string) {
		pw := r.password()
		return r.pick("DB_PASSWORD="+pw, `password: "`+pw+`"`, "mysql -u root --password='"+pw+"' shop", `{"password": "`+pw+`"}`, "SMTP_PASS_WORD="+pw, "admin_password = '"+pw+"'"), []string{pw}
	}},
	{"generic-secret", false, func(r *rng) (string, []string) {
		s := r.str(alnum, 32)
		return r.pick("client_secret: "+s, "APP_SECRET="+s, `"secret": "`+s+`"`, "jwt_secret = '"+s+"'"), []string{s}
	}},
	{"generic-api-key", false, func(r *rng) (string, []string) {
		s := r.str(alnum, 32)
		return r.pick(`{"api_key": "`+s+`"}`, "API_KEY="+s, "x-api-key: "+s, "apiKey = \""+s+"\""), []string{s}
	}},
	{"generic-token", false, func(r *rng) (string, []string) {
		s := r.str(hexLow, 40)
		return r.pick("Authorization: token "+s, "deploy --token "+s, "auth_token="+s, "ACCESS_TOKEN: "+s), []string{s}
	}},
	{"generic-bearer", false, func(r *rng) (string, []string) {
		s := r.str(alnum, 36)
		return r.pick("Authorization: Bearer "+s, `curl -H "Authorization: Bearer `+s+`" https://api.internal.net/v1/items`), []string{s}
	}},
	{"curl-basic-auth", false, func(r *rng) (string, []string) {
		pw := r.password()
		return "curl -u deploy:" + pw + " https://ci.internal.net/api/build", []string{pw}
	}},
	{"hex-secret-key", false, func(r *rng) (string, []string) {
		raw := make([]byte, 32)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		s := hex.EncodeToString(raw)
		return r.pick("SECRET_KEY_BASE="+s, "encryption_key: "+s, `"signing_secret": "`+s+`"`), []string{s}
	}},
}

// Types lists the credential types of the set.
func Types() []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.name
	}
	return names
}
