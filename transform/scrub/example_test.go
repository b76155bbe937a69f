package scrub_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/pos-lake/pos/transform/scrub"
)

func ExampleScrub() {
	// A fake token, assembled so that no file holds it whole.
	token := "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"
	in := `{"schema":"pos/1","kind":"message","platform":"codex","text":"export GITHUB_TOKEN=` + token + `"}` + "\n" +
		`{"schema":"pos/1","kind":"raw","platform":"codex","raw":{"note":"nothing to hide"}}` + "\n"
	rep, err := scrub.Scrub(context.Background(), strings.NewReader(in), os.Stdout, scrub.Options{Key: []byte("an example key of 32 bytes or more")})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Records, "records,", rep.Changed, "changed:", rep.Rules)
	// Output:
	// {"schema":"pos/1","kind":"message","platform":"codex","text":"export GITHUB_TOKEN=[REDACTED:github-pat:4e183441]","scrub":"secrets"}
	// {"schema":"pos/1","kind":"raw","platform":"codex","raw":{"note":"nothing to hide"},"scrub":"secrets"}
	// 2 records, 1 changed: map[github-pat:1]
}

func ExampleScrubber_Text() {
	s, err := scrub.New(scrub.Options{Key: []byte("an example key of 32 bytes or more"), PII: true})
	if err != nil {
		panic(err)
	}
	out, n := s.Text("psql postgres://app:" + "Pd8-v!kQ2zWrT9x" + "@db.internal/app # ask jane.roe@acme-corp.io")
	fmt.Println(n, out)
	// Output:
	// 2 psql postgres://app:[REDACTED:secret:5ffb3c03]@db.internal/app # ask [REDACTED:email:502feed0]
}
