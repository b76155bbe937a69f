package cmdio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// A --lake of the form s3://BUCKET/NAMESPACE names a shared lake (package
// load/teamlake), which pos-lake publishes to and fetches from. The other
// binaries hand it to pos-lake, so that only pos-lake links the Iceberg
// and AWS libraries: pos-load loads into the local lake and publishes it,
// pos-query and pos-mcp fetch the shared lake into a local cache and read
// that.

// SharedScheme begins the --lake of a shared lake.
const SharedScheme = "s3://"

// CatalogFlag is --catalog, the Iceberg REST catalog a shared lake needs.
func CatalogFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "catalog", EnvVars: []string{"POS_CATALOG"},
		Usage: "the Iceberg REST catalog's `URI`, for a --lake of s3://BUCKET/NAMESPACE (a shared lake)"}
}

// WithCatalog adds CatalogFlag to flags that have --lake.
func WithCatalog(flags []cli.Flag) []cli.Flag {
	if slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "lake") }) {
		return append(flags, CatalogFlag())
	}
	return flags
}

// LocalLake is the local lake that stands for lake: lake itself, or for a
// shared lake $POS_LOCAL_LAKE or DefaultLake.
func LocalLake(lake string) string {
	if !strings.HasPrefix(lake, SharedScheme) {
		return lake
	}
	if l := os.Getenv("POS_LOCAL_LAKE"); l != "" && !strings.HasPrefix(l, SharedScheme) {
		return l
	}
	return DefaultLake()
}

// SharedCache is the default cache of a shared lake:
// $XDG_CACHE_HOME/pos/shared/<hash of the catalog and lake>.
func SharedCache(lake, catalog string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	h := sha256.Sum256([]byte(catalog + "\n" + lake))
	return filepath.Join(dir, "pos", "shared", hex.EncodeToString(h[:8]))
}

// ReadShared, for a command whose --lake names a shared lake, brings the
// lake's cache up to date (pos-lake fetch) and points --lake at it.
func ReadShared(c *cli.Context) error {
	lake, catalog, err := shared(c)
	if err != nil || lake == "" {
		return err
	}
	cache := SharedCache(lake, catalog)
	if err := runLake(c, io.Discard, "fetch", "--lake", lake, "--catalog", catalog, "--cache", cache); err != nil {
		return err
	}
	return c.Set("lake", cache)
}

// LoadShared, for pos-load given a shared lake, points --lake at the local
// lake the records are loaded into and returns the publishing of it to
// run once they are; nil when --lake is a local directory.
func LoadShared(c *cli.Context) (publish func() error, err error) {
	lake, catalog, err := shared(c)
	if err != nil || lake == "" {
		return nil, err
	}
	local := LocalLake(lake)
	if err := c.Set("lake", local); err != nil {
		return nil, err
	}
	return func() error {
		var out bytes.Buffer
		err := runLake(c, &out, "publish", "--lake", lake, "--catalog", catalog, "--local-lake", local)
		if !c.Bool("quiet") {
			Summary(c, "published to %s: %s", lake, publishSummary(out.Bytes()))
		}
		return err
	}, nil
}

// publishSummary is pos-lake publish's report in a line: for each table,
// the rows it added of those it sent ("messages +12 of 40").
func publishSummary(report []byte) string {
	var parts []string
	dec := json.NewDecoder(bytes.NewReader(report))
	for {
		var r struct {
			Table       string `json:"table"`
			Rows, Added int64
		}
		if dec.Decode(&r) != nil {
			break
		}
		parts = append(parts, fmt.Sprintf("%s +%d of %d", r.Table, r.Added, r.Rows))
	}
	if len(parts) == 0 {
		return "nothing new"
	}
	return strings.Join(parts, ", ")
}

// shared returns the shared lake --lake names and its catalog, "" for a
// local lake.
func shared(c *cli.Context) (lake, catalog string, err error) {
	lake = c.String("lake")
	if !strings.HasPrefix(lake, SharedScheme) {
		return "", "", nil
	}
	if catalog = c.String("catalog"); catalog == "" {
		return "", "", Usagef("--lake %s is a shared lake: it needs --catalog URI (or POS_CATALOG)", lake)
	}
	return lake, catalog, nil
}

// runLake runs pos-lake with args, its output to out and its errors to the
// command's.
func runLake(c *cli.Context, out io.Writer, args ...string) error {
	bin, err := Sibling("pos-lake")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(c.Context, bin, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("the shared lake: %s", strings.TrimPrefix(msg, "pos-lake: "))
	}
	return nil
}

// Sibling is the path of the pos binary name: the one beside the running
// binary, or else the one on $PATH.
func Sibling(name string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New(name + " is neither beside this binary nor on $PATH (install it with the other pos binaries)")
	}
	return p, nil
}

// DDLCommand is pos-query ddl: how an engine reads the lake. A shared lake
// is handed to pos-lake ddl; a local lake is read by DuckDB through its
// pos.duckdb.
func DDLCommand(description string) *cli.Command {
	return &cli.Command{
		Name: "ddl", Usage: "print how an engine (duckdb, spark, trino, athena) attaches the lake's tables",
		UsageText: "pos-query ddl --engine duckdb|spark|trino|athena [--lake s3://BUCKET/NAMESPACE --catalog URI] [--root DIR]", Description: description,
		HideHelpCommand: true,
		Flags: []cli.Flag{LakeFlag(), CatalogFlag(),
			&cli.StringFlag{Name: "engine", Usage: "the `ENGINE`: duckdb, spark, trino or athena"},
			&cli.StringFlag{Name: "root", Usage: "duckdb, shared lake: read the data files from `DIR`, a local copy of the bucket"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef("unexpected argument %q", c.Args().First())
			}
			lake, catalog, err := shared(c)
			switch engine := c.String("engine"); {
			case err != nil:
				return err
			case engine == "":
				return Usagef("--engine is required (duckdb, spark, trino, athena)")
			case lake != "":
				args := []string{"ddl", "--lake", lake, "--catalog", catalog, "--engine", engine}
				if r := c.String("root"); r != "" {
					args = append(args, "--root", r)
				}
				return runLake(c, c.App.Writer, args...)
			case engine != "duckdb":
				return Usagef("--engine %s reads a shared lake (--lake s3://BUCKET/NAMESPACE --catalog URI); a local lake is read by DuckDB", engine)
			}
			abs, err := filepath.Abs(c.String("lake"))
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.App.Writer, "ATTACH '%s' AS pos (READ_ONLY);\nUSE pos;\n", strings.ReplaceAll(filepath.Join(abs, "pos.duckdb"), "'", "''"))
			return err
		},
	}
}
