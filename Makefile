# The build contract: CI runs `make test` (through .ci/run). The justfile
# wraps these targets for people.
MODULE   := github.com/pos-lake/pos
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X $(MODULE)/cmd/internal/cmdio.Version=$(VERSION)
GO       ?= go
FUZZTIME ?= 30s

.PHONY: all build test bench run demo lint fuzz docs clean

all: build

## build: the pos-* binaries into bin/
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

## test: vet, then every test (real binaries, real Parquet, real DuckDB)
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

## bench: throughput, memory and latency figures on a generated corpus (BENCH_SIZE=500MB)
bench: build
	pipelines/bench/bench.sh

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

## fuzz: run each fuzz target for FUZZTIME (default 30s)
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzRoundTrip$$' -fuzztime=$(FUZZTIME) ./schema
	$(GO) test -run='^$$' -fuzz='^FuzzDecoder$$' -fuzztime=$(FUZZTIME) ./schema
	$(GO) test -run='^$$' -fuzz='^FuzzLine$$' -fuzztime=$(FUZZTIME) ./extract/claudecode

## docs: regenerate the capability matrix in the README from the adapters
docs: build
	pipelines/docs.sh

clean:
	rm -rf bin tmp
