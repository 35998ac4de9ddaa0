# Steward. The two commands you need: `make run` and `make test` (see README.md and docs/DEVELOPMENT.md).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Go toolchain every recipe uses: go.mod requires go1.27.3 (1.26.8 has reachable
# standard-library vulnerabilities), and any installed go command (1.21 or later) fetches
# this one from the Go module proxy once, then runs it. Set it in your shell too (docs/DEVELOPMENT.md).
export GOTOOLCHAIN := go1.27.3

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
# $(shell) does not see exported variables before GNU make 4.4: pass GOTOOLCHAIN explicitly.
GOBIN := $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) env GOBIN)
ifeq ($(GOBIN),)
GOBIN := $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) env GOPATH)/bin
endif

SQLC_VERSION := v1.31.1
SQLC := $(GOBIN)/sqlc
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(GOBIN)/staticcheck
GOCYCLO_VERSION := v0.6.0
GOCYCLO := $(GOBIN)/gocyclo
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE := $(GOBIN)/aws-lambda-rie
GOVULNCHECK_VERSION := v1.9.0
GOVULNCHECK := $(GOBIN)/govulncheck
# The Go vulnerability database as the module proxy serves it (golang.org/x/vulndb: its OSV
# files), indexed into bin/ for govulncheck -db file://…; a snapshot, so bump it now and then.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNDB := bin/vulndb/$(VULNDB_VERSION)
# axe-core, the accessibility engine internal/webapp's TestAccessibility runs inside Chromium,
# and Lighthouse (make lighthouse): npm packages at exact versions, installed into bin/.
AXE_VERSION := 4.14.1
AXE := bin/axe/node_modules/axe-core/axe.min.js
LIGHTHOUSE_VERSION := 12.2.3
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
TESTFLAGS ?=

# load_env exports DATABASE_URL, APP_DATABASE_URL, DOOR_DATABASE_URL and SUPERUSER_DATABASE_URL
# of the dev database into the recipe's shell (scripts/devdb env single-quotes the values).
load_env = eval "$$(scripts/devdb env | sed 's/^/export /')"

.PHONY: help run test testdeps cfn-lint axe lighthouse injection-report bench bench-cycle bench-soak bench-cold bench-load bench-scale bench-extract fuzz bench-recall bench-lambda db migrate build generate generate-check lint vuln lambda rie clean
.PHONY: build-ChatFunction build-ConfirmFunction build-ApiFunction build-WebhookFunction build-SchedulerFunction build-WorkerFunction build-MigrateFunction

# ROOT is the module root (this Makefile's directory), wherever make runs from: `sam build`
# may run the build-<LogicalId> targets from a scratch directory.
ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# built is true when the program $(1) was installed from module $(2) at version $(3) by this
# toolchain: staticcheck and govulncheck type-check this module, so they must be as new as the
# go line of go.mod, and are reinstalled when GOTOOLCHAIN moves.
built = $(GO) version -m "$(1)" 2>/dev/null | awk 'NR == 1 { tc = $$NF == "$(GOTOOLCHAIN)" } \
	$$1 == "mod" { m = $$2 == "$(2)" && $$3 == "$(3)" } END { exit !(tc && m) }'

# lambda_build builds functions/$(1) into $(2)/bootstrap for provided.al2023 on arm64,
# stripped (-s -w), from the module as it is (no overlay: docs/ARCHITECTURE.md §11).
# grpcnotrace is gRPC's own tag (the Gemini SDK's Application Default Credentials link gRPC).
# internal/lambdatest caps each bootstrap at 31 MB (maxBootstrapBytes in template_test.go).
lambda_build = cd "$(ROOT)" && \
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc,grpcnotrace -trimpath \
	-ldflags "-s -w" -o "$(2)/bootstrap" ./functions/$(1)
# sam_build is lambda_build into $(ARTIFACTS_DIR), which `sam build` sets.
sam_build = $(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: sam build sets it; locally, use make lambda))$(call lambda_build,$(1),$(ARTIFACTS_DIR))

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

# The address to open is localhost's: passkeys are bound to a host name, never an IP address.
run: migrate ## database up, migrations, a local owner and a secret key on first run, then the server on 127.0.0.1:8080
	@$(load_env); \
	addr=$${STEWARD_ADDR:-127.0.0.1:8080}; open="http://$${addr/#127.0.0.1/localhost}/"; \
	if [ "$$(bin/steward owners list --json)" = "[]" ]; then \
		echo "First run: creating the owner \"local\"."; \
		bin/steward owners add local; \
		echo; echo "Open $$open and sign in with this key."; \
	else \
		echo "Owners already exist; their keys were printed when they were created:"; \
		bin/steward owners list; \
		echo "For a new key: eval \"\$$(scripts/devdb env | sed 's/^/export /')\" && bin/steward keys add --owner <ID>"; \
		echo; echo "Open $$open and sign in with your key."; \
	fi; \
	if [ -z "$${STEWARD_SECRET_KEY:-}" ]; then \
		keyfile=$${STEWARD_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/steward}/secret-key; \
		if [ ! -s "$$keyfile" ]; then \
			mkdir -p "$$(dirname "$$keyfile")"; (umask 077; head -c 32 /dev/urandom | base64 > "$$keyfile"); \
			echo "First run: made STEWARD_SECRET_KEY, which seals mail and channel passwords, in $$keyfile (keep it with the database)."; \
		fi; \
		export STEWARD_SECRET_KEY="$$(cat "$$keyfile")"; \
	fi; \
	STEWARD_LOG_FORMAT=$${STEWARD_LOG_FORMAT:-console} exec bin/steward serve

test: testdeps db rie axe ## the whole suite with -race, against the dev database
	@$(load_env); STEWARD_AXE="$(ROOT)/$(AXE)" $(GO) test -race -timeout 20m $(TESTFLAGS) ./...

testdeps: ## check the machine has what the tests need (bubblewrap, Chromium, Dovecot, Radicale, espeak-ng, sox with MP3…); names what is missing
	@scripts/testdeps

injection-report: db ## run the prompt-injection suite and print its block-rate table
	@$(load_env); $(GO) test -count=1 -run 'TestInjectionSuite' -v ./internal/agent/ | sed -n '/injection suite:/,/^---/p' | grep -v '^---'

bench: db ## the agent benchmarks (turn overhead, suspend, resume) against real PostgreSQL
	@$(load_env); $(GO) test -run '^$$' -bench . -benchmem -benchtime 300x ./internal/agent/

bench-lambda: db rie ## a Lambda cold start under the Runtime Interface Emulator: init and first request, in ms
	@$(load_env); $(GO) test -run '^$$' -bench ColdStart -benchtime 10x ./internal/lambdatest/

# The LangGraph.js peer of bench-cycle: its bench.mjs and package.json are copied into
# bin/peer-langgraph, where npm installs its pinned dependencies once (the source stays clean).
PEER_LANGGRAPH ?= $(abspath $(ROOT)/../shared/peer-langgraph)
CYCLES ?= 300
# CLIENTS: the concurrent phase's clients; OWNERS: how many owners they drive (OWNERS=8: one each)
CLIENTS ?= 8
OWNERS ?= 1
# BENCH_FLAGS: more flags for bin/benchcycle, e.g. "-no-peer -trace FILE" (one line per round trip to PostgreSQL)
BENCH_FLAGS ?=

bench-cycle: build db ## steward serve vs LangGraph.js, suspend → approve over HTTP on the dev PostgreSQL: one table
	@if [ ! -f "$(PEER_LANGGRAPH)/bench.mjs" ]; then echo "bench-cycle: no $(PEER_LANGGRAPH)/bench.mjs; set PEER_LANGGRAPH=dir" >&2; exit 1; fi
	@mkdir -p bin/peer-langgraph
	@if ! cmp -s "$(PEER_LANGGRAPH)/package.json" bin/peer-langgraph/package.json || [ ! -d bin/peer-langgraph/node_modules ]; then \
		cp "$(PEER_LANGGRAPH)/package.json" bin/peer-langgraph/; \
		echo "bench-cycle: npm install (the peer's pinned dependencies) into bin/peer-langgraph"; \
		npm --prefix bin/peer-langgraph install --no-audit --no-fund --silent; \
	fi
	@cp "$(PEER_LANGGRAPH)/bench.mjs" bin/peer-langgraph/
	$(GO) build -trimpath -o bin/benchcycle ./cmd/benchcycle
	@$(load_env); bin/benchcycle -steward bin/steward -peer bin/peer-langgraph -cycles $(CYCLES) -clients $(CLIENTS) -owners $(OWNERS) $(BENCH_FLAGS)

SOAK ?= 10000

bench-soak: build db ## RSS of steward serve over $(SOAK) suspend → approve cycles (at half and at the end)
	$(GO) build -trimpath -o bin/benchcycle ./cmd/benchcycle
	@$(load_env); bin/benchcycle -steward bin/steward -soak $(SOAK)

COLD ?= 3
# BASELINE: another steward binary for bench-cold to run in turn with bin/steward (e.g. one built from main)
BASELINE ?=

bench-cold: build db ## the first 100 cycles of a new steward serve (its connections all new), COLD=3 times; BASELINE=binary in turn
	$(GO) build -trimpath -o bin/benchcycle ./cmd/benchcycle
	@$(load_env); bin/benchcycle -steward bin/steward -cold $(COLD) -cycles 100 $(if $(BASELINE),-baseline $(BASELINE))

# LOAD_FLAGS: more flags for bin/benchload, e.g. "-owners 20 -duration 20s -think 1s" (a short run)
LOAD_FLAGS ?=

bench-load: build db ## 200 owners for 5 minutes against steward serve: throughput, p50/p99, statuses, invariants by SQL, RSS
	$(GO) build -trimpath -o bin/benchload ./cmd/benchload
	@$(load_env); bin/benchload -steward bin/steward $(LOAD_FLAGS)

# SCALE_FLAGS: more flags for bin/benchscale, e.g. "-scale 0.05 -samples 50" (a quick run)
SCALE_FLAGS ?=

bench-scale: build db ## a year of 10,000 households (generated, kept between runs) vs empty: cycle and read routes, p50/p99 and CPU per operation
	$(GO) build -trimpath -o bin/benchscale ./cmd/benchscale
	@$(load_env); bin/benchscale -steward bin/steward $(SCALE_FLAGS)

bench-extract: db ## the hostile documents and the largest skill: each reading's time and extra RSS, the 19 MB one that runs to the longest deadline, and another owner's latency meanwhile
	@$(load_env); $(GO) test -run '^$$' -bench 'BenchmarkHostile$$' -benchtime 3x ./internal/doctext/ && \
	$(GO) test -run '^$$' -bench BenchmarkLargeHostile -benchtime 1x ./internal/doctext/ && \
	$(GO) test -run '^$$' -bench BenchmarkNeighbourDuringHostileUploads -benchtime 300x ./internal/httpapi/ && \
	$(GO) test -run '^$$' -bench BenchmarkOtherOwnerDuringLargeReading -benchtime 50x ./internal/httpapi/ && \
	$(GO) test -run '^$$' -bench BenchmarkReadAndScanLargest -benchtime 3x ./internal/skillpack/

FUZZTIME ?= 30s
fuzz: ## each document reader's, the mail parser's, the skill reader's, run_code's and the recording sniffer's fuzz target for $(FUZZTIME) (CI runs it for a bounded time)
	@for pkg in ./internal/doctext/ ./internal/mail/ ./internal/skillpack/ ./internal/script/ ./internal/audio/; do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

bench-recall: db ## memory recall at 100,000 chunks under RLS: p50/p99 ms and recall@10 (data cached in its own database)
	@$(load_env); $(GO) test -run '^$$' -bench BenchmarkRecall100k -benchtime 1000x -timeout 60m ./internal/memory/

db: ## start the dev database (PostgreSQL 17 + pgvector, see scripts/devdb)
	@scripts/devdb start
	@scripts/devdb status

migrate: build db ## bootstrap roles and database (as superuser), then apply migrations
	@$(load_env); bin/steward migrate bootstrap && bin/steward migrate up

build: ## bin/steward
	$(GO) build -tags grpcnotrace -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/steward ./cmd/steward

generate: ## regenerate db/ with sqlc v1.31.1 (installed if missing)
	@if ! "$(SQLC)" version 2>/dev/null | grep -qx '$(SQLC_VERSION)'; then \
		echo "installing sqlc $(SQLC_VERSION) into $(GOBIN)"; \
		CGO_ENABLED=0 $(GO) install github.com/sqlc-dev/sqlc/cmd/sqlc@$(SQLC_VERSION); \
	fi
	"$(SQLC)" generate

generate-check: generate ## fail if db/ differs from what sqlc generates
	@if ! git diff --quiet -- db/ || [ -n "$$(git status --porcelain -- db/)" ]; then \
		git status --short -- db/; git diff --stat -- db/; \
		echo "generated code in db/ is stale: run make generate and commit db/"; exit 1; \
	fi
	@echo "db/ is current"

# Cyclomatic complexity, a gate for every merge (docs/DEVELOPMENT.md, "make test"). All shipped code
# (not _test.go, not the sqlc output in db/) stays at CYCLO_MAX or less: above it a function has
# more independent paths than a reviewer can walk or a test suite can cover one by one, so it is
# split into named steps. The turn (internal/agent, docs/ARCHITECTURE.md §2 "A turn") and the
# work queue (internal/work, once it exists) keep the stricter CYCLO_CORE.
CYCLO_MAX ?= 20
CYCLO_CORE ?= 15
CYCLO_CORE_DIRS = $(wildcard internal/agent internal/work)

lint: ## gofmt -l, go vet, staticcheck v0.8.2, gocyclo (shipped code, agent/work), docs tests
	@files="$$("$$($(GO) env GOROOT)/bin/gofmt" -l .)"; if [ -n "$$files" ]; then echo "gofmt -l: not formatted:"; echo "$$files"; exit 1; fi
	$(GO) vet ./...
	@if ! $(call built,$(STATICCHECK),honnef.co/go/tools,$(STATICCHECK_VERSION)); then \
		echo "installing staticcheck $(STATICCHECK_VERSION) ($(GOTOOLCHAIN)) into $(GOBIN)"; \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi
	"$(STATICCHECK)" ./...
	@if ! $(call built,$(GOCYCLO),github.com/fzipp/gocyclo,$(GOCYCLO_VERSION)); then \
		echo "installing gocyclo $(GOCYCLO_VERSION) ($(GOTOOLCHAIN)) into $(GOBIN)"; \
		$(GO) install github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION); \
	fi
	@if out="$$("$(GOCYCLO)" -ignore '_test\.go$$|^db/' -over $(CYCLO_MAX) .)"; then :; else \
		echo "gocyclo: shipped functions above cyclomatic $(CYCLO_MAX) (docs/DEVELOPMENT.md, make test):"; echo "$$out"; exit 1; fi
	@if out="$$("$(GOCYCLO)" -ignore '_test\.go$$' -over $(CYCLO_CORE) $(CYCLO_CORE_DIRS))"; then :; else \
		echo "gocyclo: functions of $(CYCLO_CORE_DIRS) above cyclomatic $(CYCLO_CORE) (docs/ARCHITECTURE.md §2):"; echo "$$out"; exit 1; fi
	@echo "gocyclo: shipped code <= $(CYCLO_MAX), $(CYCLO_CORE_DIRS) <= $(CYCLO_CORE)"
	$(GO) test -count=1 -run 'TestDocs|TestArchitecture|TestPorts' ./internal/steward/

# cfn-lint (pip install cfn-lint; .ci/run installs it where missing) with warnings as
# failures, on template.yaml as it is (Database=external) and on a copy whose Database
# defaults to aurora, so that both modes' conditions are linted with their defaults.
CFN_LINT ?= cfn-lint

cfn-lint: ## lint template.yaml with cfn-lint in both Database modes (external, aurora); warnings fail
	@command -v $(CFN_LINT) >/dev/null || { echo "cfn-lint not found: pip install cfn-lint (.ci/run does)" >&2; exit 1; }
	@mkdir -p bin
	@awk '/^  Database:$$/ {d = 1} d && /^    Default: external$$/ {sub(/external/, "aurora"); d = 0} {print}' template.yaml > bin/template-aurora.yaml
	@grep -q '^    Default: aurora$$' bin/template-aurora.yaml || { echo "cfn-lint: no Database parameter defaulting to external in template.yaml" >&2; exit 1; }
	$(CFN_LINT) --non-zero-exit-code warning template.yaml
	$(CFN_LINT) --non-zero-exit-code warning bin/template-aurora.yaml

vuln: ## govulncheck ./... against the vulnerability database module (no network but the module proxy)
	@if ! $(call built,$(GOVULNCHECK),golang.org/x/vuln,$(GOVULNCHECK_VERSION)); then \
		echo "installing govulncheck $(GOVULNCHECK_VERSION) ($(GOTOOLCHAIN)) into $(GOBIN)"; \
		$(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION); \
	fi
	@if [ ! -f "$(VULNDB)/index/db.json" ]; then \
		echo "indexing golang.org/x/vulndb@$(VULNDB_VERSION) into $(VULNDB)"; \
		$(GO) mod download golang.org/x/vulndb@$(VULNDB_VERSION); \
		rm -rf "$(VULNDB).tmp"; \
		$(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) \
			-vulns "$$($(GO) env GOMODCACHE)/golang.org/x/vulndb@$(VULNDB_VERSION)/data/osv" -out "$(VULNDB).tmp"; \
		rm -rf "$(VULNDB)"; mv "$(VULNDB).tmp" "$(VULNDB)"; \
	fi
	"$(GOVULNCHECK)" -db "file://$(CURDIR)/$(VULNDB)" ./...

lambda: ## build functions/*/ into bin/<name>/bootstrap for provided.al2023 on arm64
	@found=0; \
	for dir in functions/*/; do \
		[ -f "$$dir/main.go" ] || continue; \
		name=$$(basename "$$dir"); found=1; \
		echo "bin/$$name/bootstrap"; \
		$(call lambda_build,$$name,bin/$$name); \
	done; \
	if [ $$found = 0 ]; then echo "lambda: no functions/*/main.go yet, nothing to build"; fi

# sam build (template.yaml: BuildMethod makefile) runs build-<LogicalId> with ARTIFACTS_DIR
# set; one target per function of the template (internal/lambdatest checks they match).
build-ChatFunction:
	$(call sam_build,chat)
build-ConfirmFunction:
	$(call sam_build,confirm)
build-ApiFunction:
	$(call sam_build,api)
build-WebhookFunction:
	$(call sam_build,webhook)
build-SchedulerFunction:
	$(call sam_build,scheduler)
build-WorkerFunction:
	$(call sam_build,worker)
build-MigrateFunction:
	$(call sam_build,migrate)
build-%Function:
	@echo "no build target for $@: add one per function of template.yaml" >&2; exit 1

# npm_pin installs npm package $(1) at version $(2) into bin/$(3) unless that version is there.
npm_pin = if ! grep -qs '"version": "$(2)"' bin/$(3)/node_modules/$(1)/package.json; then \
		command -v npm >/dev/null || { echo "$(1): npm not found: install Node.js and npm (apt-get install npm; .ci/run does)" >&2; exit 1; }; \
		echo "installing $(1)@$(2) into bin/$(3)"; mkdir -p bin/$(3); \
		npm --prefix bin/$(3) install --no-audit --no-fund --silent --save-exact $(1)@$(2); \
	fi

axe: ## axe-core at AXE_VERSION into bin/axe, for the web app's accessibility test (installed if missing)
	@$(call npm_pin,axe-core,$(AXE_VERSION),axe)

# make lighthouse serves its own database of the dev server ($(LIGHTHOUSE_DB)), so that its
# owner and turns stay out of make run's.
LIGHTHOUSE_DB ?= steward_lighthouse

lighthouse: build ## Lighthouse at LIGHTHOUSE_VERSION in Chromium on steward serve: chat and approvals, phone and desktop
	@$(call npm_pin,lighthouse,$(LIGHTHOUSE_VERSION),lighthouse)
	@export STEWARD_DB_NAME=$(LIGHTHOUSE_DB); scripts/devdb start && $(load_env); bin/steward migrate bootstrap >/dev/null && bin/steward migrate up >/dev/null && \
	scripts/lighthouse bin/steward bin/lighthouse/node_modules/.bin/lighthouse

rie: ## the AWS Lambda Runtime Interface Emulator the Lambda tests run under (installed if missing)
	@if ! $(GO) version -m "$(RIE)" 2>/dev/null | grep -qF '$(RIE_VERSION)'; then \
		echo "installing aws-lambda-rie $(RIE_VERSION) into $(GOBIN)"; \
		CGO_ENABLED=0 $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION); \
	fi

clean: ## remove bin/
	rm -rf bin
