# Agent League. `make demo` runs a real local league; `make test` runs every test.
GO ?= go
BIN := bin
PLAYERS ?= 8
REFEREES ?= 3
GAME ?= tic_tac_toe
STRATEGY ?= random
SEED ?= 1
EXTRA ?= 0
DEMO_FLAGS ?=

.PHONY: all build demo test test-long vet fuzz bench bench-league clean deps docs-screenshot

all: build

build:
	$(GO) build -o $(BIN)/league ./cmd/league
	$(GO) build -o $(BIN)/referee ./cmd/referee
	$(GO) build -o $(BIN)/player ./cmd/player

demo: build
	./$(BIN)/league demo --players $(PLAYERS) --referees $(REFEREES) --game $(GAME) --strategy $(STRATEGY) --seed $(SEED) --extra $(EXTRA) $(DEMO_FLAGS)

vet:
	$(GO) vet ./...

# Debian packages the tests need (gcc, chromium, python3-requests, nodejs, npm, pgn-extract, stockfish), installed if missing.
deps:
	./.ci/deps.sh

# Every test with the race detector; long runs are left to test-long.
test: deps vet
	$(GO) test -race -count=1 -timeout 11m ./...

# Long end-to-end runs (e.g. 50 players / 10 referees).
test-long: deps
	$(GO) test -tags long -race -count=1 -timeout 60m -run Long ./...

# docs/live-view.png, the README's picture, taken by the browser test from a real league.
docs-screenshot: deps
	AGENT_LEAGUE_DOCS_SCREENSHOT=$(CURDIR)/docs/live-view.png $(GO) test -count=1 -run '^TestDashboardInABrowser$$' ./internal/e2e

FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) ./.ci/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./league/... ./protocol/...

# A real league of processes, measured (league bench); BENCH_FLAGS e.g. --against /tmp/before --against-config /tmp/before-src/config/league.yaml.
BENCH_FLAGS ?=
bench-league: build
	./$(BIN)/league bench $(BENCH_FLAGS)

clean:
	rm -rf $(BIN)
