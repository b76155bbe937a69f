package seaweedtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/seaweedtest"
)

// The server starts on free loopback ports and its catalog answers the
// Iceberg REST config request for the table bucket.
func TestStart(t *testing.T) {
	s := seaweedtest.Start(t)
	for _, u := range []string{s.S3, s.Catalog} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("endpoint %s is not on loopback", u)
		}
	}
	resp, err := http.Get(s.Catalog + "/v1/config?warehouse=s3://" + s.TableBucket)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("config: %d %s", resp.StatusCode, body)
	if _, ok := s.Requests(t)[""]; ok {
		t.Errorf("a request counter without an action")
	}
}
