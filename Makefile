# The build contract: CI runs `make test` (through .ci/run). The justfile
# wraps these targets for people.
MODULE   := github.com/pos-lake/pos
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X $(MODULE)/cmd/internal/cmdio.Version=$(VERSION)
# urfave_cli_no_docs leaves out urfave/cli's man-page and Markdown writers,
# and with them blackfriday, whose package initialisation every start of
# every binary would pay. netgo and osusergo use Go's own name resolver and
# user lookup instead of the C library's: a binary that needs no other C
# code (pos-sync-client, which every hook starts) is then linked statically
# and starts without the dynamic loader.
TAGS     := urfave_cli_no_docs netgo osusergo
GO       ?= go
FUZZTIME ?= 30s
BIN      ?= bin
CMDS     ?= ./cmd/...

# DuckDB is C++, and duckdb-go links libstdc++ by name (-lstdc++), which
# picks the shared library: the dynamic loader would then relocate
# libstdc++ and libgcc_s at every start of the binaries that link DuckDB
# (pos-query, pos-load, pos-mcp, pos-embed), a large share of a short
# query's time. The linker takes the first libstdc++ its search path
# offers, so a directory holding only the static archive, searched first,
# links it into the binary; libgcc goes in with -static-libgcc. glibc stays
# shared. Without the archive (no libstdc++ development files), the build
# links the shared library.
CGO_CC     := $(or $(shell $(GO) env CC 2>/dev/null),gcc)
CXX_STATIC := $(shell $(CGO_CC) -print-file-name=libstdc++.a 2>/dev/null)
ifneq ($(filter /%,$(CXX_STATIC)),)
CXX_DIR    := $(abspath $(BIN))/.libstdc++
EXTLDFLAGS := -extldflags '-L$(CXX_DIR) -static-libgcc'
endif

.PHONY: all build test bench bench-search eval parity run demo lint fuzz docs clean

all: build

## build: the pos-* binaries into bin/ (BIN=dir elsewhere)
build:
ifneq ($(CXX_DIR),)
	@mkdir -p $(CXX_DIR) && ln -sf $(CXX_STATIC) $(CXX_DIR)/libstdc++.a
endif
	$(GO) build -trimpath -tags "$(TAGS)" -ldflags "$(LDFLAGS) $(EXTLDFLAGS)" -o $(BIN)/ $(CMDS)

## test: vet, then every test (real binaries, real Parquet, real DuckDB)
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

## bench: pipeline throughput and memory, query latency at ~1M messages, and pos vs ccusage on a generated home (BENCH_SIZE=500MB; 1GB for acceptance)
bench: build
	pipelines/bench/bench.sh

## bench-search: search latency on a synthetic 1M-chunk lake (built once in $$TMPDIR)
bench-search:
	$(GO) test -run '^$$' -bench 'BenchmarkSearch1M' -benchtime 60x -timeout 60m ./query

## eval: retrieval quality of pos-query search on the shared corpus (recall@10, MRR, exchange-tight per mode and kind of query), then how much of each compaction summary a 15k smart context pack carries
eval:
	$(GO) run ./query/eval -v
	$(GO) run ./query/eval/continuity

## parity: pos-query stats against ccusage 20.0.24 (npm) on the corpus's Claude folders
parity: build
	pipelines/ccusage/parity.sh

## run: sync this machine's agent histories into the lake, then report
run: build
	pipelines/sync.sh

## demo: load the bundled synthetic histories into a demo lake and report
demo: build
	pipelines/sync.sh --demo

## lint: formatting and vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## fuzz: run every fuzz target of the module for FUZZTIME (default 30s)
fuzz:
	@GO="$(GO)" FUZZTIME=$(FUZZTIME) pipelines/fuzz.sh

## docs: regenerate the capability matrix in the README from the adapters
docs: build
	pipelines/docs.sh

clean:
	rm -rf bin tmp
