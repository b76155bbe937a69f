package catalog

// Names the black-box tests use.
const (
	CatalogStamp = catalogStamp
	DSNOptions   = dsnOptions
)

var SchemaFile = schemaFile
