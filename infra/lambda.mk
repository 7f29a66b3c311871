# Lambda and API Gateway targets; the Makefile includes this file.
#
#   make build       every function's bootstrap, build/<function>/bootstrap
#   make deploy      build, then sam deploy (samconfig.toml holds the defaults)
#   make events      API Gateway events, freshly signed, into build/events/
#   make events-fixtures  regenerate the tracked events/ (signed at a fixed date)
#   make local-api   build, then sam local start-api (Docker, DynamoDB Local)
#   make cost        measure what a million of each operation costs (docs/aws.md)
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

SAM_INSTALL_HINT := install it with 'pip install aws-sam-cli' (or 'brew install aws-sam-cli'), see https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html

# require-sam fails before anything is built when the SAM CLI is missing.
.PHONY: require-sam
require-sam:
	@command -v $(SAM) >/dev/null 2>&1 || { echo "make: the SAM CLI ($(SAM)) is needed: $(SAM_INSTALL_HINT)" >&2; exit 1; }

.PHONY: require-docker
require-docker:
	@command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 || { echo "make: sam local needs Docker, installed and running: see https://docs.docker.com/engine/install/" >&2; exit 1; }

.PHONY: deploy
deploy: require-sam build ## build, then deploy the stack with sam (samconfig.toml; SAM_DEPLOY_FLAGS for more)
	$(SAM) validate --lint
	$(SAM) deploy $(SAM_DEPLOY_FLAGS)

# events writes where git does not look: the signatures expire after 15
# minutes, so these files are for sam local invoke right away, not for the
# repository. events/ holds the same events signed at a fixed date (the
# tests read them); events-fixtures rewrites them byte for byte.
.PHONY: events
events: ## write API Gateway test events into build/events/, signed now with the emulator key (for sam local invoke)
	$(GO) run ./internal/gatewayevent/cmd/events -dir build/events

.PHONY: events-fixtures
events-fixtures: ## regenerate the tracked events/ fixtures (signed at their fixed date: unchanged unless the samples changed)
	$(GO) run ./internal/gatewayevent/cmd/events -dir events -fixture-date

.PHONY: local-api
local-api: require-sam require-docker build ## serve the API with sam local start-api (Docker) against DynamoDB Local on :8000
	$(SAM) local start-api $(SAM_LOCAL_FLAGS)

# cost runs the functions' cost measurement, which make test leaves out:
# the bootstraps under the Lambda RIE against DynamoDB Local (the test
# starts its own unless TABLEBRIDGE_DYNAMODB_ENDPOINT is set), printing
# the table of docs/aws.md, "Profiles and cost".
.PHONY: cost
cost: ## measure billed ms and DynamoDB units per operation under the Lambda RIE; prints docs/aws.md's cost table
	infra/dynamodb-local/install.sh
	infra/lambda/install.sh
	TABLEBRIDGE_MEASURE_COST=1 $(GO) test -count=1 -run '^TestBootstraps$$/^cost$$' -v ./functions/
