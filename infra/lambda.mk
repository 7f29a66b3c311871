# Lambda and API Gateway targets; the Makefile includes this file.
#
#   make build       every function's bootstrap, build/<function>/bootstrap
#   make deploy      build, then sam deploy (samconfig.toml holds the defaults)
#   make events      regenerate events/ (API Gateway events, freshly signed)
#   make local-api   build, then sam local start-api (Docker, DynamoDB Local)
#
# Lambda runs the bootstraps on provided.al2023, arm64 (template.yaml). The
# functions test builds its own host-architecture copies; these are for
# deployment.

LAMBDA_FUNCTIONS := $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go))
LAMBDA_BOOTSTRAPS := $(foreach f,$(LAMBDA_FUNCTIONS),build/$(f)/bootstrap)
LAMBDA_GOOS ?= linux
LAMBDA_GOARCH ?= arm64
SAM ?= sam
SAM_DEPLOY_FLAGS ?=
# sam local reaches DynamoDB Local on the host through this endpoint
# (infra/sam-local-env.json); start DynamoDB Local on port 8000 first.
SAM_LOCAL_FLAGS ?=

.PHONY: build
build: $(LAMBDA_BOOTSTRAPS) ## build every Lambda bootstrap (provided.al2023, arm64) into build/<function>/

# Always hand the build to go, which knows what is up to date; make -j
# builds the functions in parallel.
build/%/bootstrap: FORCE
	@mkdir -p $(@D)
	CGO_ENABLED=0 GOOS=$(LAMBDA_GOOS) GOARCH=$(LAMBDA_GOARCH) $(GO) build -tags lambda.norpc -trimpath -ldflags="-s -w" -o $@ ./functions/$*

.PHONY: FORCE
FORCE:

.PHONY: deploy
deploy: build ## build, then deploy the stack with sam (samconfig.toml; SAM_DEPLOY_FLAGS for more)
	$(SAM) validate --lint
	$(SAM) deploy $(SAM_DEPLOY_FLAGS)

.PHONY: events
events: ## regenerate the API Gateway test events in events/, signed now with the emulator key
	$(GO) run ./cmd/tablebridge events -dir events

.PHONY: local-api
local-api: build ## serve the API with sam local start-api (Docker) against DynamoDB Local on :8000
	$(SAM) local start-api $(SAM_LOCAL_FLAGS)
