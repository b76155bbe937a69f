package teamlake

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// data files
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
)

// Options name a shared lake.
type Options struct {
	// Lake is s3://WAREHOUSE/NAMESPACE: the catalog's warehouse (a bucket)
	// and the Iceberg namespace that holds the tables (dots or slashes
	// separate its levels).
	Lake string
	// Catalog is the Iceberg REST catalog's URI.
	Catalog string
	// Machine names the publishing machine in the commits' summaries.
	Machine string

	// What Publish sends (scope.go). OnlyProjects, when set, are the
	// projects whose rows are published; DenyProjects are never published.
	// Each is a project pattern (MatchProject).
	OnlyProjects, DenyProjects []string
	// PII scrubs every published row's text columns again, with personal
	// data redacted (transform/scrub with PII), under ScrubKey. pos-lake
	// publish turns it on unless --pii=false.
	PII      bool
	ScrubKey []byte
	// Raw publishes the raw table too: the native records, off unless asked.
	Raw bool
}

// Lake is an open shared lake.
type Lake struct {
	opt       Options
	warehouse string
	namespace table.Identifier
	region    string
	cat       *rest.Catalog
}

// ParseLake splits s3://WAREHOUSE/NAMESPACE.
func ParseLake(s string) (warehouse string, namespace table.Identifier, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return "", nil, fmt.Errorf("shared lake %q: want s3://BUCKET/NAMESPACE", s)
	}
	for _, p := range strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' || r == '.' }) {
		namespace = append(namespace, p)
	}
	if len(namespace) == 0 {
		return "", nil, fmt.Errorf("shared lake %q: no namespace after the bucket (s3://BUCKET/NAMESPACE)", s)
	}
	return "s3://" + u.Host, namespace, nil
}

// Open connects to the catalog, signing its requests with SigV4 for the
// service s3 and the credentials of the AWS SDK's standard configuration
// (environment, profiles, shared files).
func Open(ctx context.Context, opt Options) (*Lake, error) {
	wh, ns, err := ParseLake(opt.Lake)
	if err != nil {
		return nil, err
	}
	if opt.Catalog == "" {
		return nil, errors.New("a shared lake needs --catalog, the Iceberg REST catalog's URI")
	}
	awscfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(logging.Nop{}))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if _, err := awscfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("no AWS credentials for the shared lake (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE): %w", err)
	}
	region := awscfg.Region
	if region == "" {
		region = "us-east-1"
	}
	cat, err := rest.NewCatalog(ctx, "pos", opt.Catalog,
		rest.WithAwsConfig(awscfg), rest.WithSigV4RegionSvc(region, "s3"),
		rest.WithWarehouseLocation(wh), rest.WithAdditionalProps(fileIOProps(region)))
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", opt.Catalog, err)
	}
	return &Lake{opt: opt, warehouse: wh, namespace: ns, region: region, cat: cat}, nil
}

// fileIOProps are the data files' S3 settings: the region, and the
// endpoint the AWS SDK's variables name (AWS_ENDPOINT_URL_S3, else
// AWS_ENDPOINT_URL), which iceberg-go's S3 IO addresses path-style.
func fileIOProps(region string) iceberg.Properties {
	p := iceberg.Properties{iceio.S3Region: region}
	if e := s3Endpoint(); e != "" {
		p[iceio.S3EndpointURL] = e
	}
	return p
}

// s3Endpoint is the S3 endpoint the AWS SDK's variables name, "" for
// Amazon S3's own.
func s3Endpoint() string {
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// ident names a table of the lake.
func (l *Lake) ident(name string) table.Identifier {
	return append(append(table.Identifier{}, l.namespace...), name)
}

// ensureNamespace creates the lake's namespace unless it exists.
func (l *Lake) ensureNamespace(ctx context.Context) error {
	ok, err := l.cat.CheckNamespaceExists(ctx, l.namespace)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", strings.Join(l.namespace, "."), err)
	}
	if ok {
		return nil
	}
	err = l.cat.CreateNamespace(ctx, l.namespace, nil)
	if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("creating namespace %s: %w", strings.Join(l.namespace, "."), err)
	}
	return nil
}

// Table loads one of the lake's tables.
func (l *Lake) Table(ctx context.Context, name string) (*table.Table, error) {
	return l.cat.LoadTable(ctx, l.ident(name))
}
