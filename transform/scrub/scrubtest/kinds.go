package scrubtest

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
)

// A Kind is a credential format as its publisher documents it (prefix,
// alphabet, length, checksum). Gen makes a fake credential of the kind.
type Kind struct {
	Name string
	// Var is the name a user would keep the credential under
	// (GITHUB_TOKEN); every assignment context writes it in its own case.
	Var string
	// Bare: the credential is recognisable alone, in prose, by its format.
	Bare bool
	// Bearer: it is sent as an HTTP bearer token.
	Bearer bool
	gen    func(r *rng) Cred
}

// A Cred is one generated credential.
type Cred struct {
	Kind  string
	Value string // as written: a token, a URL, a PEM block, a command line
	// Random are the parts of Value drawn at random: what must not survive
	// scrubbing, in full or in any run of 20 characters.
	Random []string
	// Command: Value is a whole command line (mysql -p…), not a value to
	// assign.
	Command bool
	// JSONDoc: Value is a JSON document (a service-account key file).
	JSONDoc bool
}

// Multiline reports whether the credential spans lines.
func (c Cred) Multiline() bool { return strings.Contains(c.Value, "\n") }

// Rand is the generator's random source.
type Rand = rng

// NewRand returns the generator's random source for seed.
func NewRand(seed uint64) *rng { return &rng{rand.New(rand.NewPCG(seed, seed^0x5bd1e9955bd1e995))} }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// crc62 is the checksum GitHub and npm append to their tokens: CRC32 of
// the random part, in base 62, six characters.
func crc62(s string) string {
	n := crc32.ChecksumIEEE([]byte(s))
	b := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b)
}

// checksummed makes prefix + 30 random base-62 characters + their CRC32.
func (r *rng) checksummed(prefix string) Cred {
	body := r.str(alnum, 30)
	return Cred{Value: prefix + body + crc62(body), Random: []string{body}}
}

// tok makes prefix + random characters; the random part is what follows
// the prefix.
func (r *rng) tok(prefix, set string, n int, suffix string) Cred {
	s := r.str(set, n)
	return Cred{Value: prefix + s + suffix, Random: []string{s}}
}

func (r *rng) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

// pemCred is a PEM private key whose body starts with the DER prefix of
// its type; its random part is every body line.
func (r *rng) pemCred(label, prefix string, size, width int) Cred {
	text, lines := r.pem(label, prefix, size, width)
	var random []string
	for _, l := range lines {
		if l = strings.TrimPrefix(l, prefix); len(l) >= 20 {
			random = append(random, l)
		}
	}
	return Cred{Value: text, Random: random}
}

// symPassword is a password with the symbols people put in them,
// & and ) included (they end values in shell and URLs).
func (r *rng) symPassword() string {
	n := 16 + r.IntN(10)
	s := []byte(r.str(alnum, n))
	for k := 0; k < 3+r.IntN(3); k++ {
		s[1+r.IntN(n-2)] = "!#%^*&()-_+=.~@$"[r.IntN(16)]
	}
	s[2+r.IntN(n-3)] = digits[r.IntN(10)]
	s[0] = alnum[r.IntN(len(alnum))]
	return string(s)
}

// shellPassword is a password that needs no quoting in a shell word.
func (r *rng) shellPassword() string {
	n := 14 + r.IntN(10)
	s := []byte(r.str(alnum, n))
	for k := 0; k < 2; k++ {
		s[1+r.IntN(n-2)] = "-_.%+@,:"[r.IntN(8)]
	}
	s[2+r.IntN(n-3)] = digits[r.IntN(10)]
	return string(s)
}

func pw(c string, random ...string) Cred { return Cred{Value: c, Random: random, Command: true} }

// Kinds is the generated set's credential kinds.
var Kinds = []Kind{
	{"aws-access-key-id", "AWS_ACCESS_KEY_ID", true, false, func(r *rng) Cred {
		return r.tok(r.pick("AKIA", "ASIA"), b32, 16, "")
	}},
	{"aws-secret-access-key", "AWS_SECRET_ACCESS_KEY", false, false, func(r *rng) Cred { return r.tok("", b64, 40, "") }},
	{"aws-credentials-csv", "", false, false, func(r *rng) Cred {
		s := r.str(b64, 40)
		return Cred{Value: "User name,Password,Access key ID,Secret access key\ndeploy,,AKIA" + r.str(b32, 16) + "," + s, Random: []string{s}, Command: true}
	}},
	{"github-pat-classic", "GITHUB_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("ghp_") }},
	{"github-pat-fine-grained", "GH_TOKEN", true, true, func(r *rng) Cred {
		a, b := r.str(alnum, 22), r.str(alnum, 59)
		return Cred{Value: "github_pat_" + a + "_" + b, Random: []string{a, b}}
	}},
	{"github-oauth", "GITHUB_OAUTH_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("gho_") }},
	{"github-app-installation", "GITHUB_APP_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("ghs_") }},
	{"github-app-user", "GITHUB_USER_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("ghu_") }},
	{"github-refresh", "GITHUB_REFRESH_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("ghr_") }},
	{"gitlab-pat", "GITLAB_TOKEN", true, true, func(r *rng) Cred { return r.tok("glpat-", b64url, 20, "") }},
	{"gitlab-deploy-token", "GITLAB_DEPLOY_TOKEN", true, false, func(r *rng) Cred { return r.tok("gldt-", b64url, 20, "") }},
	{"gitlab-runner-token", "CI_RUNNER_TOKEN", true, false, func(r *rng) Cred { return r.tok("glrt-", b64url, 20, "") }},
	{"slack-bot-token", "SLACK_BOT_TOKEN", true, true, func(r *rng) Cred {
		s := r.str(alnum, 24)
		return Cred{Value: "xoxb-" + r.str(digits, 11) + "-" + r.str(digits, 13) + "-" + s, Random: []string{s}}
	}},
	{"slack-user-token", "SLACK_USER_TOKEN", true, true, func(r *rng) Cred {
		s := r.str(hexLow, 32)
		return Cred{Value: "xoxp-" + r.str(digits, 11) + "-" + r.str(digits, 12) + "-" + r.str(digits, 13) + "-" + s, Random: []string{s}}
	}},
	{"slack-app-token", "SLACK_APP_TOKEN", true, true, func(r *rng) Cred {
		s := r.str(hexLow, 64)
		return Cred{Value: "xapp-1-A0" + r.str(upper+digits, 9) + "-" + r.str(digits, 13) + "-" + s, Random: []string{s}}
	}},
	{"slack-webhook", "SLACK_WEBHOOK_URL", true, false, func(r *rng) Cred {
		s := r.str(alnum, 24)
		return Cred{Value: "https://hooks.slack.com/services/T" + r.str(upper+digits, 8) + "/B" + r.str(upper+digits, 10) + "/" + s, Random: []string{s}}
	}},
	{"stripe-secret-key", "STRIPE_SECRET_KEY", true, true, func(r *rng) Cred { return r.tok("sk_live_51", alnum, 97, "") }},
	{"stripe-restricted-key", "STRIPE_RESTRICTED_KEY", true, true, func(r *rng) Cred { return r.tok("rk_live_51", alnum, 97, "") }},
	{"stripe-test-key", "STRIPE_TEST_KEY", true, true, func(r *rng) Cred { return r.tok("sk_test_51", alnum, 97, "") }},
	{"twilio-api-key", "TWILIO_API_KEY", true, false, func(r *rng) Cred { return r.tok("SK", hexLow, 32, "") }},
	{"twilio-auth-token", "TWILIO_AUTH_TOKEN", false, false, func(r *rng) Cred { return r.tok("", hexLow, 32, "") }},
	{"sendgrid-api-key", "SENDGRID_API_KEY", true, true, func(r *rng) Cred {
		a, b := r.str(b64url, 22), r.str(b64url, 43)
		return Cred{Value: "SG." + a + "." + b, Random: []string{a, b}}
	}},
	{"openai-project-key", "OPENAI_API_KEY", true, true, func(r *rng) Cred {
		a, b := r.str(b64url, 74), r.str(b64url, 74)
		return Cred{Value: "sk-proj-" + a + "T3BlbkFJ" + b, Random: []string{a, b}}
	}},
	{"openai-legacy-key", "OPENAI_API_KEY", true, true, func(r *rng) Cred {
		a, b := r.str(alnum, 20), r.str(alnum, 20)
		return Cred{Value: "sk-" + a + "T3BlbkFJ" + b, Random: []string{a + "T3BlbkFJ" + b}}
	}},
	{"anthropic-api-key", "ANTHROPIC_API_KEY", true, true, func(r *rng) Cred { return r.tok("sk-ant-api03-", b64url, 93, "AA") }},
	{"anthropic-admin-key", "ANTHROPIC_ADMIN_KEY", true, true, func(r *rng) Cred { return r.tok("sk-ant-admin01-", b64url, 93, "AA") }},
	{"google-api-key", "GOOGLE_API_KEY", true, false, func(r *rng) Cred { return r.tok("AIza", b64url, 35, "") }},
	{"google-oauth-client-secret", "GOOGLE_CLIENT_SECRET", true, false, func(r *rng) Cred { return r.tok("GOCSPX-", b64url, 28, "") }},
	{"gcp-service-account", "GOOGLE_APPLICATION_CREDENTIALS_JSON", false, false, func(r *rng) Cred {
		key := r.pemCred("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1150, 64)
		doc := fmt.Sprintf("{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-%s\",\n  \"private_key_id\": \"%s\",\n  \"private_key\": %q,\n  \"client_email\": \"deployer@demo.iam.gserviceaccount.com\",\n  \"client_id\": \"1%s\",\n  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}",
			r.str(lower, 6), r.str(hexLow, 40), key.Value+"\n", r.str(digits, 20))
		return Cred{Value: doc, Random: key.Random, JSONDoc: true}
	}},
	{"azure-storage-key", "AZURE_STORAGE_CONNECTION_STRING", false, false, func(r *rng) Cred {
		k := r.str(b64, 86)
		return Cred{Value: "DefaultEndpointsProtocol=https;AccountName=acme" + r.str(lower, 6) + ";AccountKey=" + k + "==;EndpointSuffix=core.windows.net", Random: []string{k}}
	}},
	{"azure-ad-client-secret", "AZURE_CLIENT_SECRET", true, false, func(r *rng) Cred {
		s := r.str(alnum+"_~.-", 34)
		return Cred{Value: r.str(alnum, 3) + r.str(digits, 1) + "Q~" + s, Random: []string{s}}
	}},
	{"azure-sas-token", "AZURE_SAS_URL", false, false, func(r *rng) Cred {
		s := r.str(alnum+"+/", 43)
		return Cred{Value: "https://acme.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01T00:00:00Z&sig=" + strings.NewReplacer("+", "%2B", "/", "%2F").Replace(s) + "%3D", Random: []string{strings.NewReplacer("+", "%2B", "/", "%2F").Replace(s)}}
	}},
	{"npm-token", "NPM_TOKEN", true, true, func(r *rng) Cred { return r.checksummed("npm_") }},
	{"pypi-token", "PYPI_API_TOKEN", true, false, func(r *rng) Cred { return r.tok("pypi-AgEIcHlwaS5vcmc", b64url, 70, "") }},
	{"docker-hub-pat", "DOCKERHUB_TOKEN", true, false, func(r *rng) Cred { return r.tok("dckr_pat_", b64url, 27, "") }},
	{"huggingface-token", "HF_TOKEN", true, true, func(r *rng) Cred { return r.tok("hf_", upper+lower, 34, "") }},
	{"huggingface-org-token", "HF_ORG_TOKEN", true, true, func(r *rng) Cred { return r.tok("api_org_", upper+lower, 34, "") }},
	{"discord-bot-token", "DISCORD_BOT_TOKEN", true, false, func(r *rng) Cred {
		id := base64.RawStdEncoding.EncodeToString([]byte("1" + r.str(digits, 18)))
		a, b := r.str(b64url, 6), r.str(b64url, 38)
		return Cred{Value: id + "." + a + "." + b, Random: []string{b}}
	}},
	{"discord-webhook", "DISCORD_WEBHOOK_URL", true, false, func(r *rng) Cred {
		s := r.str(b64url, 68)
		return Cred{Value: "https://discord.com/api/webhooks/" + r.str(digits, 19) + "/" + s, Random: []string{s}}
	}},
	{"telegram-bot-token", "TELEGRAM_BOT_TOKEN", false, false, func(r *rng) Cred {
		s := r.str(b64url, 33)
		return Cred{Value: r.str(digits, 10) + ":AA" + s, Random: []string{s}}
	}},
	{"telegram-bot-url", "TELEGRAM_API_URL", true, false, func(r *rng) Cred {
		s := r.str(b64url, 33)
		return Cred{Value: "https://api.telegram.org/bot" + r.str(digits, 10) + ":AA" + s + "/sendMessage?chat_id=-100" + r.str(digits, 10), Random: []string{s}}
	}},
	{"teams-webhook", "TEAMS_WEBHOOK_URL", true, false, func(r *rng) Cred {
		s := r.str(hexLow, 32)
		return Cred{Value: "https://acme.webhook.office.com/webhookb2/" + r.uuid() + "@" + r.uuid() + "/IncomingWebhook/" + s + "/" + r.uuid(), Random: []string{s}}
	}},
	{"shopify-access-token", "SHOPIFY_ACCESS_TOKEN", true, true, func(r *rng) Cred { return r.tok("shpat_", hexLow, 32, "") }},
	{"shopify-shared-secret", "SHOPIFY_API_SECRET", true, false, func(r *rng) Cred { return r.tok("shpss_", hexLow, 32, "") }},
	{"mailgun-api-key", "MAILGUN_API_KEY", true, false, func(r *rng) Cred { return r.tok("key-", hexLow, 32, "") }},
	{"mailchimp-api-key", "MAILCHIMP_API_KEY", false, false, func(r *rng) Cred {
		return r.tok("", hexLow, 32, "-us"+r.str(digits, 2))
	}},
	{"digitalocean-pat", "DIGITALOCEAN_TOKEN", true, true, func(r *rng) Cred { return r.tok("dop_v1_", hexLow, 64, "") }},
	{"digitalocean-oauth", "DO_OAUTH_TOKEN", true, true, func(r *rng) Cred { return r.tok("doo_v1_", hexLow, 64, "") }},
	{"heroku-api-key", "HEROKU_API_KEY", false, false, func(r *rng) Cred {
		u := r.uuid()
		return Cred{Value: u, Random: []string{u}}
	}},
	{"heroku-api-key-v2", "HEROKU_API_KEY", true, true, func(r *rng) Cred { return r.tok("HRKU-AA", b64url, 58, "") }},
	{"databricks-token", "DATABRICKS_TOKEN", true, true, func(r *rng) Cred { return r.tok("dapi", hexLow, 32, "") }},
	{"atlassian-api-token", "JIRA_API_TOKEN", true, false, func(r *rng) Cred {
		s := r.str(b64url, 171)
		return Cred{Value: "ATATT3xFfGF0" + s + "=" + r.str(upper+digits, 8), Random: []string{s}}
	}},
	{"linear-api-key", "LINEAR_API_KEY", true, true, func(r *rng) Cred { return r.tok("lin_api_", alnum, 40, "") }},
	{"notion-token", "NOTION_TOKEN", true, true, func(r *rng) Cred {
		s := r.str(alnum, 35)
		return Cred{Value: "ntn_" + r.str(digits, 11) + s, Random: []string{s}}
	}},
	{"notion-legacy-secret", "NOTION_API_KEY", true, true, func(r *rng) Cred { return r.tok("secret_", alnum, 43, "") }},
	{"postman-api-key", "POSTMAN_API_KEY", true, false, func(r *rng) Cred {
		a, b := r.str(hexLow, 24), r.str(hexLow, 34)
		return Cred{Value: "PMAK-" + a + "-" + b, Random: []string{a, b}}
	}},
	{"sentry-user-token", "SENTRY_AUTH_TOKEN", true, true, func(r *rng) Cred { return r.tok("sntryu_", hexLow, 64, "") }},
	{"sentry-org-token", "SENTRY_AUTH_TOKEN", true, true, func(r *rng) Cred {
		payload := base64.RawStdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"iat":%d.%d,"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"acme-%s"}`, 1700000000+r.IntN(1e8), r.IntN(1e6), r.str(lower, 5))))
		s := r.str(b64[:62]+"+/", 43)
		return Cred{Value: "sntrys_" + payload + "_" + s, Random: []string{s}}
	}},
	{"sentry-dsn-auth-token", "SENTRY_TOKEN", false, true, func(r *rng) Cred { return r.tok("", hexLow, 64, "") }},
	{"doppler-token", "DOPPLER_TOKEN", true, true, func(r *rng) Cred { return r.tok("dp.pt.", alnum, 43, "") }},
	{"vault-service-token", "VAULT_TOKEN", true, true, func(r *rng) Cred { return r.tok("hvs.", b64url, 90, "") }},
	{"vault-batch-token", "VAULT_BATCH_TOKEN", true, true, func(r *rng) Cred { return r.tok("hvb.", b64url, 140, "") }},
	{"jwt", "ID_TOKEN", true, true, func(r *rng) Cred {
		payload := jwtPart(fmt.Sprintf(`{"sub":"%s","nonce":"%s","iat":%d,"exp":%d}`, r.uuid(), r.str(alnum, 24), 1700000000+r.IntN(1e8), 1800000000+r.IntN(1e8)))
		sig := r.str(b64url, 43)
		return Cred{Value: jwtPart(`{"alg":"HS256","typ":"JWT"}`) + "." + payload + "." + sig, Random: []string{sig, payload[len(payload)-40:]}}
	}},
	{"private-key-rsa", "RSA_PRIVATE_KEY", false, false, func(r *rng) Cred {
		return r.pemCred("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1180, 64)
	}},
	{"private-key-ec", "EC_PRIVATE_KEY", false, false, func(r *rng) Cred { return r.pemCred("EC PRIVATE KEY", "MHcCAQEEI", 110, 64) }},
	{"private-key-openssh", "SSH_PRIVATE_KEY", false, false, func(r *rng) Cred {
		return r.pemCred("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 300, 70)
	}},
	{"private-key-pkcs8", "PRIVATE_KEY", false, false, func(r *rng) Cred {
		return r.pemCred("PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 1150, 64)
	}},
	{"private-key-pgp", "PGP_PRIVATE_KEY", false, false, func(r *rng) Cred {
		c := r.pemCred("PGP PRIVATE KEY BLOCK", "lQdGBF", 1500, 64)
		c.Value = strings.Replace(c.Value, "-----\n", "-----\nVersion: GnuPG v2\n\n", 1)
		c.Value = strings.Replace(c.Value, "\n-----END", "\n="+r.str(b64, 4)+"\n-----END", 1)
		return c
	}},
	{"age-secret-key", "SOPS_AGE_KEY", true, false, func(r *rng) Cred {
		return r.tok("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, "")
	}},
	{"1password-secret-key", "OP_SECRET_KEY", true, false, func(r *rng) Cred {
		a, b, c, d := r.str(upper+digits, 11), r.str(upper+digits, 5), r.str(upper+digits, 5), r.str(upper+digits, 5)
		return Cred{Value: "A3-" + r.str(upper+digits, 6) + "-" + a + "-" + b + "-" + c + "-" + d, Random: []string{a + "-" + b + "-" + c + "-" + d}}
	}},
	{"1password-service-token", "OP_SERVICE_ACCOUNT_TOKEN", true, true, func(r *rng) Cred { return r.tok("ops_eyJ", alnum, 260, "") }},
	{"grafana-service-account", "GRAFANA_TOKEN", true, true, func(r *rng) Cred {
		s := r.str(alnum, 32)
		return Cred{Value: "glsa_" + s + "_" + r.str(hexLow, 8), Random: []string{s}}
	}},
	{"grafana-cloud-token", "GRAFANA_CLOUD_TOKEN", true, true, func(r *rng) Cred { return r.tok("glc_", alnum, 120, "") }},
	{"pulumi-token", "PULUMI_ACCESS_TOKEN", true, true, func(r *rng) Cred { return r.tok("pul-", hexLow, 40, "") }},
	{"rubygems-key", "GEM_HOST_API_KEY", true, false, func(r *rng) Cred { return r.tok("rubygems_", hexLow, 48, "") }},
	{"planetscale-password", "PLANETSCALE_PASSWORD", true, false, func(r *rng) Cred { return r.tok("pscale_pw_", alnum, 43, "") }},
	{"newrelic-user-key", "NEW_RELIC_API_KEY", true, false, func(r *rng) Cred { return r.tok("NRAK-", upper+digits, 27, "") }},
	{"flyio-token", "FLY_API_TOKEN", true, true, func(r *rng) Cred { return r.tok("fo1_", b64url, 43, "") }},
	{"terraform-cloud-token", "TFE_TOKEN", true, true, func(r *rng) Cred {
		a, b := r.str(lower+digits, 14), r.str(alnum, 66)
		return Cred{Value: a + ".atlasv1." + b, Random: []string{b}}
	}},
	{"dynatrace-token", "DT_API_TOKEN", true, true, func(r *rng) Cred {
		a, b := r.str(upper+digits, 24), r.str(upper+digits, 64)
		return Cred{Value: "dt0c01." + a + "." + b, Random: []string{a, b}}
	}},
	{"square-access-token", "SQUARE_ACCESS_TOKEN", true, true, func(r *rng) Cred { return r.tok("EAAA", b64url, 60, "") }},
	{"okta-api-token", "OKTA_API_TOKEN", false, false, func(r *rng) Cred { return r.tok("00", alnum+"-_", 40, "") }},
	{"cloudflare-api-token", "CLOUDFLARE_API_TOKEN", false, true, func(r *rng) Cred { return r.tok("", alnum+"_-", 40, "") }},
	{"datadog-api-key", "DD_API_KEY", false, false, func(r *rng) Cred { return r.tok("", hexLow, 32, "") }},
	{"algolia-admin-key", "ALGOLIA_ADMIN_KEY", false, false, func(r *rng) Cred { return r.tok("", hexLow, 32, "") }},
	{"sourcegraph-token", "SRC_ACCESS_TOKEN", true, true, func(r *rng) Cred { return r.tok("sgp_", hexLow, 40, "") }},
	{"airtable-pat", "AIRTABLE_TOKEN", true, true, func(r *rng) Cred {
		a, b := r.str(alnum, 14), r.str(hexLow, 64)
		return Cred{Value: "pat" + a + "." + b, Random: []string{b}}
	}},
	{"perplexity-key", "PERPLEXITY_API_KEY", true, true, func(r *rng) Cred { return r.tok("pplx-", alnum, 48, "") }},
	{"groq-key", "GROQ_API_KEY", true, true, func(r *rng) Cred { return r.tok("gsk_", alnum, 52, "") }},
	{"xai-key", "XAI_API_KEY", true, true, func(r *rng) Cred { return r.tok("xai-", alnum, 80, "") }},
	{"replicate-token", "REPLICATE_API_TOKEN", true, true, func(r *rng) Cred { return r.tok("r8_", alnum, 37, "") }},
	{"langsmith-key", "LANGSMITH_API_KEY", true, true, func(r *rng) Cred {
		a, b := r.str(hexLow, 32), r.str(hexLow, 10)
		return Cred{Value: "lsv2_pt_" + a + "_" + b, Random: []string{a}}
	}},
	{"tailscale-key", "TS_AUTHKEY", true, false, func(r *rng) Cred {
		a, b := r.str(alnum, 12), r.str(alnum, 33)
		return Cred{Value: "tskey-auth-" + a + "CNTRL-" + b, Random: []string{b}}
	}},
	{"supabase-token", "SUPABASE_ACCESS_TOKEN", true, true, func(r *rng) Cred { return r.tok("sbp_", hexLow, 40, "") }},
	{"resend-key", "RESEND_API_KEY", true, true, func(r *rng) Cred {
		a, b := r.str(alnum, 8), r.str(alnum, 24)
		return Cred{Value: "re_" + a + "_" + b, Random: []string{b}}
	}},
	{"figma-token", "FIGMA_TOKEN", true, true, func(r *rng) Cred { return r.tok("figd_", b64url, 40, "") }},
	{"buildkite-token", "BUILDKITE_API_TOKEN", true, true, func(r *rng) Cred { return r.tok("bkua_", hexLow, 40, "") }},
	{"mattermost-webhook", "MATTERMOST_WEBHOOK_URL", true, false, func(r *rng) Cred {
		s := r.str(lower+digits, 26)
		return Cred{Value: "https://chat.acme-corp.io/hooks/" + s, Random: []string{s}}
	}},
	{"kubeconfig-client-key", "", false, false, func(r *rng) Cred {
		key := r.pemCred("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 600, 64)
		b := base64.StdEncoding.EncodeToString([]byte(key.Value + "\n"))
		return Cred{Value: "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: " + b, Random: []string{b[80:]}, Command: true}
	}},
	{"postgres-url", "DATABASE_URL", true, false, func(r *rng) Cred {
		p := r.urlPassword()
		return Cred{Value: "postgres://app_user:" + p + "@db-" + r.str(lower, 5) + ".internal:5432/app?sslmode=require", Random: []string{p}}
	}},
	{"mysql-url", "MYSQL_URL", true, false, func(r *rng) Cred {
		p := r.urlPassword()
		return Cred{Value: "mysql://root:" + p + "@127.0.0.1:3306/shop", Random: []string{p}}
	}},
	{"mongodb-url", "MONGODB_URI", true, false, func(r *rng) Cred {
		p := r.urlPassword()
		return Cred{Value: "mongodb+srv://admin:" + p + "@cluster0." + r.str(lower+digits, 5) + ".mongodb.net/prod?retryWrites=true&w=majority", Random: []string{p}}
	}},
	{"redis-url", "REDIS_URL", true, false, func(r *rng) Cred {
		p := r.urlPassword()
		return Cred{Value: r.pick("redis://:", "rediss://default:") + p + "@cache.example.net:6379/0", Random: []string{p}}
	}},
	{"amqp-url", "BROKER_URL", true, false, func(r *rng) Cred {
		p := r.urlPassword()
		return Cred{Value: "amqps://worker:" + p + "@mq.internal:5671/vhost", Random: []string{p}}
	}},
	{"db-password", "DB_PASSWORD", false, false, func(r *rng) Cred {
		p := r.symPassword()
		return Cred{Value: p, Random: []string{p}}
	}},
	{"django-secret-key", "SECRET_KEY", false, false, func(r *rng) Cred {
		p := "django-insecure-" + r.str(lower+digits+"!@#$%^&*(-_=+)", 50)
		return Cred{Value: p, Random: []string{p[16:]}}
	}},
	{"generic-api-key", "API_KEY", false, true, func(r *rng) Cred { return r.tok("", alnum, 32, "") }},
	{"generic-client-secret", "CLIENT_SECRET", false, false, func(r *rng) Cred { return r.tok("", alnum+"-_", 40, "") }},
	{"hex-signing-key", "SIGNING_KEY", false, false, func(r *rng) Cred {
		s := hex.EncodeToString(r.bytes(32))
		return Cred{Value: s, Random: []string{s}}
	}},
	{"basic-auth-header", "", false, false, func(r *rng) Cred {
		s := base64.StdEncoding.EncodeToString([]byte("deploy:" + r.shellPassword()))
		return Cred{Value: "Authorization: Basic " + s, Random: []string{s}, Command: true}
	}},
	{"curl-user-password", "", false, false, func(r *rng) Cred {
		p := r.shellPassword()
		return pw("curl -fsS -u deploy:"+p+" https://ci.internal.net/api/build", p)
	}},
}

// cliForms are the ways a password is given on a command line; %s is a
// password that needs no quoting, %q one with symbols, quoted.
var cliForms = []struct{ name, form string }{
	{"mysql-p-attached", "mysql -u root -p%s shop -e 'select 1'"},
	{"mysql-p-quoted", "mysql -uroot -p'%q' shop"},
	{"mysqldump-password-opt", "mysqldump --user=admin --password=%s --all-databases > dump.sql"},
	{"mysql-password-quoted", `mysql -h db.internal -u app --password="%q" app`},
	{"sshpass-quoted", "sshpass -p '%q' ssh deploy@10.0.0.5 uptime"},
	{"sshpass-plain", "sshpass -p %s scp build.tgz deploy@web1:/srv"},
	{"htpasswd-batch", "htpasswd -b -c /etc/nginx/.htpasswd admin %s"},
	{"pgpassword-env", "PGPASSWORD=%s psql -h db.internal -U app -d app -c 'select 1'"},
	{"pgpassword-quoted", "PGPASSWORD='%q' pg_dump -h db -U app app > app.sql"},
	{"redis-cli-auth", "redis-cli -h cache.internal -a %s ping"},
	{"docker-login-p", "docker login -u deploy -p %s registry.internal.net"},
	{"openssl-pass-arg", "openssl pkcs12 -export -in cert.pem -inkey key.pem -out cert.p12 -passout pass:%s"},
	{"smbclient-user-pass", "smbclient //fs/share -U admin%%%s -c ls"},
	{"mongosh-password", "mongosh mongodb://db.internal/app -u admin -p %s --authenticationDatabase admin"},
	{"generic-password-flag", "./deploy.sh --env prod --password '%q' --yes"},
}

func init() {
	for _, f := range cliForms {
		form := f.form
		Kinds = append(Kinds, Kind{f.name, "", false, false, func(r *rng) Cred {
			if strings.Contains(form, "%q") {
				q := r.symPassword()
				for strings.ContainsAny(q, "'\"") {
					q = r.symPassword()
				}
				return pw(strings.Replace(form, "%q", q, 1), q)
			}
			p := r.shellPassword()
			return pw(strings.Replace(strings.ReplaceAll(form, "%%", "%"), "%s", p, 1), p)
		}})
	}
}

// Generate makes one credential of kind k.
func Generate(k Kind, r *rng) Cred {
	c := k.gen(r)
	c.Kind = k.Name
	return c
}
