package scrub

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

// TestKindsInContexts plants every credential kind of the generated set
// (scrubtest.Kinds: published formats with their checksums) in every
// context it is written in — .env and shell lines, JSON, YAML, TOML,
// Python, JavaScript and Go settings, Authorization headers, URLs,
// command lines, sentences ending in punctuation — in records of every
// platform, and measures recall: a snippet counts as found when no run of
// 20 characters of its credential's random part survives in its record.
func TestKindsInContexts(t *testing.T) {
	seed := uint64(plantSeed)
	if v := os.Getenv("SCRUB_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	snips := scrubtest.Snippets(seed)
	set, err := scrubtest.PlantSnippets("testdata/secrets/templates.ndjson", snips, 2)
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := scrubPlanted(t, set)
	kinds := map[string]bool{}
	missedBy := map[string]int{}
	var missed []string
	for i, inst := range set {
		kind, _, _ := strings.Cut(inst.Type, "/")
		kinds[kind] = true
		if left := inst.RunSurvivors(lines[i]); len(left) > 0 {
			missedBy[inst.Type]++
			if len(missed) < 40 {
				missed = append(missed, fmt.Sprintf("%s in %s/%s: %q", inst.Type, inst.Platform, inst.Slot, inst.Snippet))
			}
		}
	}
	n := len(set)
	found := n
	for _, k := range missedBy {
		found -= k
	}
	recall := float64(found) / float64(n)
	t.Logf("%d kinds, %d snippets, %d records: recall %.2f%% (%d missed)", len(kinds), len(snips), n, 100*recall, n-found)
	for _, k := range slices.Sorted(mapsKeys(missedBy)) {
		t.Logf("  missed %-50s %d", k, missedBy[k])
	}
	for _, m := range missed {
		t.Log("  ", m)
	}
	if len(kinds) < 60 {
		t.Errorf("%d credential kinds, want at least 60", len(kinds))
	}
	if found != n {
		t.Errorf("recall %.2f%%: %d of %d planted credentials survive in part", 100*recall, n-found, n)
	}
}

// TestValueToItsEnd: a value is redacted to its real end — the closing
// quote, a space, the end of the line — whatever symbols it holds, and
// nothing of it stays behind a marker.
func TestValueToItsEnd(t *testing.T) {
	s := newScrubber(t, Options{})
	for _, tc := range []struct{ in, secret string }{
		{"DB_PASSWORD=Xk3pQ9zLmNc&rUbmkLCw2vT8", "Xk3pQ9zLmNc&rUbmkLCw2vT8"},
		{"export DB_PASSWORD=Xk3pQ9zLmNc)rUbmk#LCw2 && ./run", "Xk3pQ9zLmNc)rUbmk#LCw2"},
		{`SECRET_KEY = "django-insecure-k3(x&9)z!q@2%v^w*m+8=y-0l7j#b$n4c(r)e5t6u&i"`, "django-insecure-k3(x&9)z!q@2%v^w*m+8=y-0l7j#b$n4c(r)e5t6u&i"},
		{"SECRET_KEY = 'django-insecure-$(q8uff^$(wr^&%k2#l'", "django-insecure-$(q8uff^$(wr^&%k2#l"},
		{"password: Tr0ub4dor&3xyz(2)", "Tr0ub4dor&3xyz(2)"},
		{`dbPassword := "Xk3pQ9zL&mNc(rUbmk"`, "Xk3pQ9zL&mNc(rUbmk"},
		{"JWT_SECRET=test-jwt-secret-key-32-characters-long-for-testing-only", "test-jwt-secret-key-32-characters-long-for-testing-only"},
		{"DB_PASSWORD=aIB$0UbttuUUhALiMhH((1A", "aIB$0UbttuUUhALiMhH((1A"},
		{"SECRET_KEY=django-insecure-2z&rwjyk42nc=c6j(bppwtace*#cqrn&rp6tdf$lte($il^uw7", "django-insecure-2z&rwjyk42nc=c6j(bppwtace*#cqrn&rp6tdf$lte($il^uw7"},
		{"export DB_PASSWORD=GgJ(_8KU^j6W1kBg", "GgJ(_8KU^j6W1kBg"},
		{"db_password: r(WaGz9trO5R^IU4LIx=Fd", "r(WaGz9trO5R^IU4LIx=Fd"},
		{`{"secret_key": "django-insecure-_z44dyt=apqdr&ve3c(34c=jqqlkfakee&#%uaa+&tqh^dcnvy"}`, "django-insecure-_z44dyt=apqdr&ve3c(34c=jqqlkfakee&#%uaa+&tqh^dcnvy"},
	} {
		out, _ := s.Text(tc.in)
		if strings.Contains(out, tc.secret[len(tc.secret)-6:]) || !strings.Contains(out, "[REDACTED:") {
			t.Errorf("%s\n  -> %s: the end of the value is left", tc.in, out)
		}
	}
	// Calls, references and placeholders are not values.
	for _, in := range []string{"PASSWORD = get_password()", "password = os.getenv(", "TOKEN = secrets.token_hex(32)",
		"api_key: your-api-key-here", "const token = generateToken(user.id, user.email);", "token = ReviewTokenStore.mint(project.id)", "API_KEY=${API_KEY}", "secret = myFakeSecretValue1", "password: <password>"} {
		if out, _ := s.Text(in); out != in {
			t.Errorf("%s -> %s", in, out)
		}
	}
	// A query string ends a value at &, a connection string at ;Name=.
	for _, tc := range []struct{ in, keep string }{
		{"https://api.example.net/v1?api_key=Zq8vN3kLm2xW9pRt4sYb&user=bob", "&user=bob"},
		{"Server=db;Password=Zq8vN3kLm2xW9pRt;Database=app", ";Database=app"},
		{"(password=Zq8vN3kLm2xW9pRt4s) was rotated.", ") was rotated."},
	} {
		if out, _ := s.Text(tc.in); !strings.HasSuffix(out, tc.keep) || !strings.Contains(out, "[REDACTED:") {
			t.Errorf("%s\n  -> %s: want it to end with %q", tc.in, out, tc.keep)
		}
	}
}

// TestMarkerSameWhateverFollows: a secret gets one marker whether a full
// stop, a comma, a colon, a parenthesis or a quote follows it, for every
// rule of the set that finds it alone.
func TestMarkerSameWhateverFollows(t *testing.T) {
	s := newScrubber(t, Options{})
	r := scrubtest.NewRand(7)
	n := 0
	for _, k := range scrubtest.Kinds {
		if !k.Bare {
			continue
		}
		c := scrubtest.Generate(k, r)
		if strings.Contains(c.Value, "://") {
			continue
		}
		var markers []string
		for _, f := range []string{"%s for CI", "%s. Next", "%s, then", "(%s)", "'%s'", `"%s"`, "%s: done", "%s;", "[%s]", "<%s>"} {
			out, _ := s.Text("the token is " + strings.Replace(f, "%s", c.Value, 1))
			markers = append(markers, markerRE.FindString(out))
		}
		if markers[0] == "" || slices.ContainsFunc(markers, func(m string) bool { return m != markers[0] }) {
			t.Errorf("%s: markers differ by what follows the token: %v", k.Name, markers)
		}
		n++
	}
	if n < 60 {
		t.Errorf("%d kinds checked", n)
	}
}

// TestCommandLinePasswords: passwords given on a command line.
func TestCommandLinePasswords(t *testing.T) {
	s := newScrubber(t, Options{})
	const pw = "Zq8vN3kLm2xW9pRt"
	for _, cmd := range []string{
		"mysql -u root -p" + pw + " shop", "mysql -uroot -p'" + pw + "' shop", `mysql --password="` + pw + `" app`,
		"mysqldump --password=" + pw + " db", "sshpass -p '" + pw + "' ssh host", "sshpass -p" + pw + " ssh host",
		"htpasswd -b -c /etc/nginx/.htpasswd admin " + pw, "htpasswd -nb admin " + pw, "PGPASSWORD=" + pw + " psql -h db",
		"redis-cli -a " + pw + " ping", "docker login -u me -p " + pw + " reg.example.net", "smbclient //fs/share -U admin%" + pw,
		"sqlcmd -S db -U sa -P " + pw, "ldapsearch -x -D cn=admin -w " + pw, "mongosh mongodb://db/app -u admin -p " + pw,
	} {
		if out, _ := s.Text("$ " + cmd + "\nok"); strings.Contains(out, pw) {
			t.Errorf("%s\n  -> %s", cmd, out)
		}
	}
	// -p with a space is mysql's prompt: the next word is the database.
	if out, _ := s.Text("mysql -u root -p shop_production"); strings.Contains(out, "REDACTED") {
		t.Errorf("mysql -p shop_production: %s", out)
	}
}

// TestFragmentRule: a rule whose match need not hold its keyword
// (sourcegraph-access-token's 40 hex digits) applies to the whole record
// that holds the keyword, as gitleaks applies it to the whole file.
func TestFragmentRule(t *testing.T) {
	s := newScrubber(t, Options{})
	sha := "0d4b5c0e8a2f9e1b7c3d6a5f4e2b1c0d9e8f7a6b"
	out, _ := s.Text("SRC_ACCESS_TOKEN set for sourcegraph.\n\n$ git log -1\ncommit " + sha)
	if strings.Contains(out, sha) {
		t.Errorf("in a record naming sourcegraph: %s", out)
	}
	if out, _ := s.Text("$ git log -1\ncommit " + sha); !strings.Contains(out, sha) {
		t.Errorf("a commit SHA alone: %s", out)
	}
}
