package teamlake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/load/layout"
)

// Engines are the engines DDL prints statements for.
var Engines = []string{"duckdb", "spark", "trino", "athena"}

// DDLOptions shape what DDL prints.
type DDLOptions struct {
	// Root is a local copy of the warehouse bucket: the DuckDB views read
	// ROOT/KEY for the data file s3://BUCKET/KEY. Empty: they read s3://.
	Root string
	// Tables are the tables to print (none: Tables).
	Tables []string
}

// DDL returns the statements with which engine reads the shared lake:
//   - duckdb: a view a table over the current snapshot's data files, read
//     with read_parquet (the duckdb build pos links has no iceberg or
//     httpfs extension), and, as comments, the iceberg extension's ATTACH;
//   - spark: spark-sql's --conf flags for the REST catalog "pos";
//   - trino: a catalog properties file for the REST catalog;
//   - athena: the Glue tables that register each table's current metadata
//     file, which is how Athena finds Iceberg tables.
//
// No credential is ever printed: the engines take them from their own
// configuration or the AWS SDK's default chain.
func (l *Lake) DDL(ctx context.Context, engine string, opt DDLOptions) (string, error) {
	if len(opt.Tables) == 0 {
		opt.Tables = Tables
	}
	var b strings.Builder
	var err error
	switch engine {
	case "duckdb":
		err = l.duckDDL(ctx, &b, opt)
	case "spark":
		l.sparkDDL(&b)
	case "trino":
		l.trinoDDL(&b)
	case "athena":
		err = l.athenaDDL(ctx, &b, opt)
	default:
		return "", fmt.Errorf("unknown engine %q: want one of %s", engine, strings.Join(Engines, ", "))
	}
	return b.String(), err
}

// sampleQuery is the query each engine's text ends with, on the table
// named by the engine's qualified name q of the messages table.
func sampleQuery(q string) string {
	return "SELECT platform, session_id, role, ts, substr(text, 1, 80) AS text FROM " + q + " ORDER BY ts DESC LIMIT 10"
}

// duckDDL writes DuckDB's views. A table with no data file yet (absent
// from the catalog, or without a snapshot) gets a comment, not a view:
// read_parquet of no file is an error.
func (l *Lake) duckDDL(ctx context.Context, b *strings.Builder, opt DDLOptions) error {
	fmt.Fprintf(b, "-- The shared lake %s (catalog %s), read by DuckDB: one view a table over\n", l.opt.Lake, l.opt.Catalog)
	fmt.Fprintf(b, "-- the data files of its current snapshot. The views pin that snapshot; print\n")
	fmt.Fprintf(b, "-- them again after the next publish.\n")
	if opt.Root != "" {
		fmt.Fprintf(b, "-- The files are read from %s, a local copy of the bucket %s.\n", opt.Root, l.warehouse)
	} else {
		b.WriteString("-- The files are read over S3, with the httpfs extension and the AWS SDK's\n")
		b.WriteString("-- default credentials (environment, profiles; the aws extension):\n")
		b.WriteString("INSTALL httpfs; LOAD httpfs; INSTALL aws; LOAD aws;\n")
		b.WriteString(l.duckSecret() + ";\n")
	}
	b.WriteString(l.duckIcebergComment())
	for _, name := range opt.Tables {
		files, err := l.dataFiles(ctx, name)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			fmt.Fprintf(b, "\n-- %s: no such table in the shared lake yet (nothing published)\n", name)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(files) == 0 {
			fmt.Fprintf(b, "\n-- %s: the table has no snapshot yet (nothing published): no view\n", name)
			continue
		}
		paths := make([]string, len(files))
		for i, f := range files {
			p, err := l.localPath(f, opt.Root)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			paths[i] = sqlString(p)
		}
		fmt.Fprintf(b, "\nCREATE OR REPLACE VIEW %s AS SELECT * FROM read_parquet([\n  %s\n], hive_partitioning = false, union_by_name = true);\n",
			sqlIdent(name), strings.Join(paths, ",\n  "))
	}
	return nil
}

// duckSecret is DuckDB's S3 secret for the lake's bucket: the endpoint
// and URL style from the environment, the keys from the credential chain.
func (l *Lake) duckSecret() string {
	parts := []string{"TYPE s3", "PROVIDER credential_chain", "REGION " + sqlString(l.region)}
	if e := s3Endpoint(); e != "" {
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			parts = append(parts, "ENDPOINT "+sqlString(u.Host+strings.TrimSuffix(u.Path, "/")), "URL_STYLE 'path'")
			if u.Scheme == "http" {
				parts = append(parts, "USE_SSL false")
			}
		}
	}
	return "CREATE OR REPLACE SECRET pos_s3 (" + strings.Join(parts, ", ") + ")"
}

// duckIcebergComment shows, commented out, how a DuckDB that can install
// the iceberg extension attaches the catalog instead.
func (l *Lake) duckIcebergComment() string {
	var b strings.Builder
	b.WriteString("--\n-- A DuckDB that can install the iceberg extension (1.4 or later) can attach\n")
	b.WriteString("-- the catalog instead, signing its requests with SigV4, and always read the\n")
	b.WriteString("-- current snapshot; the data files are read with the S3 secret, not with\n-- credentials the catalog vends:\n")
	for _, s := range []string{
		"INSTALL httpfs; INSTALL aws; INSTALL iceberg; LOAD httpfs; LOAD aws; LOAD iceberg;",
		l.duckSecret() + ";",
		fmt.Sprintf("ATTACH %s AS pos (TYPE iceberg, ENDPOINT %s, AUTHORIZATION_TYPE 'sigv4', SECRET pos_s3, ACCESS_DELEGATION_MODE 'none');",
			sqlString(l.warehouse), sqlString(l.opt.Catalog)),
		sampleQuery("pos."+strings.Join(l.namespace, ".")+"."+layout.TableMessages) + ";",
	} {
		b.WriteString("--   " + s + "\n")
	}
	return b.String()
}

// dataFiles are the data files of a table's current snapshot, from its
// manifests; none when it has no snapshot.
func (l *Lake) dataFiles(ctx context.Context, name string) ([]string, error) {
	tbl, err := l.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tasks {
		if len(t.DeleteFiles) > 0 {
			return nil, fmt.Errorf("%s has delete files, which pos does not write", t.File.FilePath())
		}
		out = append(out, t.File.FilePath())
	}
	slices.Sort(out)
	return out, nil
}

// localPath is where a data file is read from: below root when there is
// one, else where it is.
func (l *Lake) localPath(file, root string) (string, error) {
	if root == "" {
		return file, nil
	}
	key, ok := strings.CutPrefix(file, l.warehouse+"/")
	if !ok {
		return "", fmt.Errorf("data file %s is outside the bucket %s", file, l.warehouse)
	}
	return strings.TrimSuffix(root, "/") + "/" + key, nil
}

// sparkDDL writes spark-sql's command line for the REST catalog "pos".
func (l *Lake) sparkDDL(b *strings.Builder) {
	fmt.Fprintf(b, "# Spark: the shared lake %s as the Iceberg REST catalog \"pos\".\n", l.opt.Lake)
	b.WriteString("# Requests are signed with SigV4 for the service s3 with the AWS SDK's default\n")
	b.WriteString("# credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE).\n")
	b.WriteString("# The same --conf flags serve pyspark and spark-submit.\n")
	const c = "spark.sql.catalog.pos"
	confs := [][2]string{
		{"spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"},
		{c, "org.apache.iceberg.spark.SparkCatalog"},
		{c + ".type", "rest"},
		{c + ".uri", l.opt.Catalog},
		{c + ".warehouse", l.warehouse},
		{c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO"},
		{c + ".client.region", l.region},
		{c + ".rest.sigv4-enabled", "true"},
		{c + ".rest.signing-name", "s3"},
		{c + ".rest.signing-region", l.region},
	}
	if e := s3Endpoint(); e != "" {
		confs = append(confs, [2]string{c + ".s3.endpoint", e}, [2]string{c + ".s3.path-style-access", "true"})
	}
	b.WriteString("spark-sql \\\n  --packages org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0,org.apache.iceberg:iceberg-aws-bundle:1.11.0 \\\n")
	for _, kv := range confs {
		fmt.Fprintf(b, "  --conf %s \\\n", shellWord(kv[0]+"="+kv[1]))
	}
	fmt.Fprintf(b, "  -e %s\n", shellWord(sampleQuery("pos."+strings.Join(l.namespace, ".")+"."+layout.TableMessages)))
}

// trinoDDL writes a Trino catalog properties file for the REST catalog.
func (l *Lake) trinoDDL(b *strings.Builder) {
	fmt.Fprintf(b, "# Trino: the shared lake %s as the catalog \"pos\".\n", l.opt.Lake)
	b.WriteString("# Save as etc/catalog/pos.properties. S3 and the catalog's SigV4 signature take\n")
	b.WriteString("# the AWS SDK's default credentials unless s3.aws-access-key and\n# s3.aws-secret-key are added.\n")
	props := [][2]string{
		{"connector.name", "iceberg"},
		{"iceberg.catalog.type", "rest"},
		{"iceberg.rest-catalog.uri", l.opt.Catalog},
		{"iceberg.rest-catalog.warehouse", l.warehouse},
		{"iceberg.rest-catalog.security", "SIGV4"},
		{"iceberg.rest-catalog.signing-name", "s3"},
		{"fs.native-s3.enabled", "true"},
		{"s3.region", l.region},
	}
	schema := strings.Join(l.namespace, ".")
	if len(l.namespace) > 1 {
		props = append(props, [2]string{"iceberg.rest-catalog.nested-namespace-enabled", "true"})
		schema = `"` + schema + `"`
	}
	if e := s3Endpoint(); e != "" {
		props = append(props, [2]string{"s3.endpoint", e}, [2]string{"s3.path-style-access", "true"})
	}
	for _, kv := range props {
		fmt.Fprintf(b, "%s=%s\n", kv[0], kv[1])
	}
	fmt.Fprintf(b, "\n# Then, in the trino CLI:\n# %s;\n", sampleQuery("pos."+schema+"."+layout.TableMessages))
}

// athenaDDL writes the AWS CLI commands that register each table's current
// metadata file in the Glue Data Catalog, where Athena reads Iceberg
// tables from, and an Athena query.
func (l *Lake) athenaDDL(ctx context.Context, b *strings.Builder, opt DDLOptions) error {
	db := strings.Join(l.namespace, "_")
	fmt.Fprintf(b, "# Athena: the shared lake %s registered in the Glue Data Catalog as the\n", l.opt.Lake)
	fmt.Fprintf(b, "# database %s. Athena reads Amazon S3 only, so this serves a lake whose bucket\n", db)
	b.WriteString("# is on Amazon S3. Each Glue table points at the table's current metadata file;\n")
	b.WriteString("# after the next publish, run the commands again with update-table in place of\n# create-table.\n")
	if e := s3Endpoint(); e != "" {
		fmt.Fprintf(b, "# Note: the lake's S3 endpoint is %s, not Amazon S3's.\n", e)
	}
	dbInput, _ := json.Marshal(map[string]string{"Name": db})
	fmt.Fprintf(b, "aws glue create-database --region %s --database-input %s\n", shellWord(l.region), shellWord(string(dbInput)))
	for _, name := range opt.Tables {
		tbl, err := l.Table(ctx, name)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			fmt.Fprintf(b, "# %s: no such table in the shared lake yet (nothing published)\n", name)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(b, "aws glue create-table --region %s --database-name %s --table-input %s\n",
			shellWord(l.region), shellWord(db), shellWord(glueTableInput(name, tbl)))
	}
	fmt.Fprintf(b, "\n# Then, in Athena:\n# %s;\n", sampleQuery(`"`+db+`"."`+layout.TableMessages+`"`))
	return nil
}

// glueTableInput is the Glue TableInput of an Iceberg table: the
// parameters table_type=ICEBERG and metadata_location are what Athena
// reads.
func glueTableInput(name string, tbl *table.Table) string {
	in := map[string]any{
		"Name":      name,
		"TableType": "EXTERNAL_TABLE",
		"Parameters": map[string]string{
			"table_type":        "ICEBERG",
			"metadata_location": tbl.MetadataLocation(),
		},
		"StorageDescriptor": map[string]any{"Location": tbl.Location()},
	}
	b, _ := json.Marshal(in)
	return string(b)
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlIdent quotes s as an SQL identifier.
func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// shellWord quotes s as one word of a POSIX shell.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
