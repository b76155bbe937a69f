# For people: thin wrappers over the Makefile (the build contract) plus
# DuckDB recipes. `just --list` shows them.
set shell := ["bash", "-euo", "pipefail", "-c"]

lake := env_var_or_default("POS_LAKE", env_var_or_default("XDG_DATA_HOME", env_var("HOME") + "/.local/share") + "/pos/lake")

default:
    @just --list

build:
    make build

test:
    make test

bench size="500MB":
    BENCH_SIZE={{size}} make bench

eval:
    make eval

parity:
    make parity

bench-search:
    make bench-search

run:
    make run

demo:
    make demo

lint:
    make lint

fuzz time="30s":
    make fuzz FUZZTIME={{time}}

# ad-hoc SQL over the lake: just sql "select count(*) from messages"
sql query:
    bin/pos-query sql --lake {{lake}} "{{query}}"

# open the lake in the DuckDB CLI, if installed
duckdb:
    duckdb {{lake}}/pos.duckdb
