package teamlake_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// publishTwo publishes messages 1..6 and 4..9 from two local lakes into
// the shared lake s3://TABLES/NAMESPACE, in two commits, and returns the
// lake and a local lake that holds messages 1..9.
func publishTwo(t *testing.T, s *seaweedtest.Server, namespace string) (*teamlake.Lake, string) {
	t.Helper()
	ctx := context.Background()
	a, b, both := t.TempDir(), t.TempDir(), t.TempDir()
	loadtest.Load(t, a, teamlaketest.Messages(1, 6)...)
	loadtest.Load(t, b, teamlaketest.Messages(4, 9)...)
	loadtest.Load(t, both, teamlaketest.Messages(1, 9)...)
	l, err := teamlake.Open(ctx, teamlake.Options{Lake: "s3://" + s.TableBucket + "/" + namespace, Catalog: s.Catalog, Machine: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, lake := range []string{a, b} {
		if _, err := l.Publish(ctx, lake, layout.TableMessages); err != nil {
			t.Fatal(err)
		}
	}
	return l, both
}

// The duckdb statements, run in a real DuckDB with no extension to
// install, read a local copy of the bucket: the messages view holds the
// rows a local lake of the published records holds, and a table never
// published, or created with no snapshot yet, gets a comment, not a view.
func TestDDLDuckDBReadsLocalCopy(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	l, both := publishTwo(t, s, "team")
	if err := l.CreateEmptyTable(ctx, layout.TableExchanges); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	keys := teamlaketest.CopyBucket(t, s.TableBucket, root)
	t.Logf("copied %d objects of %s", len(keys), s.TableBucket)
	text, err := l.DDL(ctx, "duckdb", teamlake.DDLOptions{Root: root, Tables: []string{layout.TableMessages, layout.TableSessions, layout.TableExchanges}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ddl:\n%s", text)
	if strings.Contains(text, "s3://"+s.TableBucket+"/team/") {
		t.Errorf("with --root, a view still reads s3:// paths")
	}
	if !strings.Contains(text, "-- sessions: no such table") || strings.Contains(text, `VIEW "sessions"`) {
		t.Errorf("the unpublished sessions table: want a comment and no view")
	}
	if !strings.Contains(text, "-- exchanges: the table has no snapshot yet") || strings.Contains(text, `VIEW "exchanges"`) {
		t.Errorf("the empty exchanges table: want a comment and no view")
	}

	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, text); err != nil {
		t.Fatalf("running the ddl: %v", err)
	}
	const q = `SELECT id, session_id, role, text, ts FROM messages ORDER BY id`
	got, want := rows(t, db, q), rows(t, loadtest.Views(t, both), q)
	if got != want {
		t.Errorf("the view's messages:\n%s\nwant those of a local lake of the published records:\n%s", got, want)
	}
	if n := loadtest.One(t, db, "SELECT count(*) FROM messages"); n != "9" {
		t.Errorf("the view holds %s rows, want 9", n)
	}
	if ids := loadtest.One(t, db, "SELECT string_agg(id, ',' ORDER BY id) FROM messages"); ids != strings.Join(teamlaketest.IDs(1, 9), ",") {
		t.Errorf("the view's ids: %s", ids)
	}

	// Without --root the views read the bucket over S3, with a secret that
	// names the endpoint and takes the keys from the credential chain.
	text, err = l.DDL(ctx, "duckdb", teamlake.DDLOptions{Tables: []string{layout.TableMessages}})
	if err != nil {
		t.Fatal(err)
	}
	endpoint := strings.TrimPrefix(s.S3, "http://")
	for _, want := range []string{"'s3://" + s.TableBucket + "/", "CREATE OR REPLACE SECRET pos_s3 (TYPE s3, PROVIDER credential_chain, REGION 'us-east-1', ENDPOINT '" + endpoint + "', URL_STYLE 'path', USE_SSL false);",
		"--   ATTACH 's3://" + s.TableBucket + "' AS pos (TYPE iceberg, ENDPOINT '" + s.Catalog + "', AUTHORIZATION_TYPE 'sigv4', SECRET pos_s3, ACCESS_DELEGATION_MODE 'none');"} {
		if !strings.Contains(text, want) {
			t.Errorf("the s3 ddl lacks %q:\n%s", want, text)
		}
	}
	noSecrets(t, text)
}

// The spark, trino and athena texts name the catalog, the warehouse and
// the namespace, sign with SigV4 for s3, and hold no credential.
func TestDDLEngines(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	l, _ := publishTwo(t, s, "team")
	tbl, err := l.Table(ctx, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	wh := "s3://" + s.TableBucket
	wants := map[string][]string{
		"spark": {
			"--conf spark.sql.catalog.pos=org.apache.iceberg.spark.SparkCatalog \\",
			"--conf spark.sql.catalog.pos.type=rest \\",
			"--conf spark.sql.catalog.pos.uri=" + s.Catalog + " \\",
			"--conf spark.sql.catalog.pos.warehouse=" + wh + " \\",
			"--conf spark.sql.catalog.pos.io-impl=org.apache.iceberg.aws.s3.S3FileIO \\",
			"--conf spark.sql.catalog.pos.s3.endpoint=" + s.S3 + " \\",
			"--conf spark.sql.catalog.pos.s3.path-style-access=true \\",
			"--conf spark.sql.catalog.pos.rest.sigv4-enabled=true \\",
			"--conf spark.sql.catalog.pos.rest.signing-name=s3 \\",
			"--conf spark.sql.catalog.pos.rest.signing-region=us-east-1 \\",
			"FROM pos.team.messages ORDER BY ts DESC LIMIT 10'",
		},
		"trino": {
			"\nconnector.name=iceberg\n", "\niceberg.catalog.type=rest\n",
			"\niceberg.rest-catalog.uri=" + s.Catalog + "\n",
			"\niceberg.rest-catalog.warehouse=" + wh + "\n",
			"\niceberg.rest-catalog.security=SIGV4\n", "\niceberg.rest-catalog.signing-name=s3\n",
			"\nfs.native-s3.enabled=true\n", "\ns3.endpoint=" + s.S3 + "\n", "\ns3.path-style-access=true\n",
			"\ns3.region=us-east-1\n", "FROM pos.team.messages ORDER BY ts DESC LIMIT 10;",
		},
		"athena": {
			`aws glue create-database --region us-east-1 --database-input '{"Name":"team"}'`,
			`aws glue create-table --region us-east-1 --database-name team --table-input '{"Name":"messages",`,
			`"Parameters":{"metadata_location":"` + tbl.MetadataLocation() + `","table_type":"ICEBERG"}`,
			`"TableType":"EXTERNAL_TABLE"`,
			`FROM "team"."messages" ORDER BY ts DESC LIMIT 10;`,
		},
	}
	for engine, lines := range wants {
		text, err := l.DDL(ctx, engine, teamlake.DDLOptions{Tables: []string{layout.TableMessages}})
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		t.Logf("%s:\n%s", engine, text)
		for _, w := range lines {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q", engine, w)
			}
		}
		noSecrets(t, text)
	}
	if _, err := l.DDL(ctx, "hive", teamlake.DDLOptions{}); err == nil || !strings.Contains(err.Error(), "duckdb, spark, trino, athena") {
		t.Errorf("an unknown engine: %v, want an error naming the four", err)
	}
}

func noSecrets(t *testing.T, text string) {
	t.Helper()
	for _, secret := range []string{seaweedtest.SecretKey, seaweedtest.AccessKey} {
		if strings.Contains(text, secret) {
			t.Errorf("the text holds the credential %q", secret)
		}
	}
}
