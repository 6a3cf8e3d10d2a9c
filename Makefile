# Person and Authorized Signer Lookup service.
#
#   make run          the whole service on this machine, zero set-up (lookupd dev);
#                     pass flags with RUN_ARGS, e.g. make run RUN_ARGS='--data-dir ./data/dev'
#   make test         unit tests with the race detector (the README's test command), of the
#                     service and of its nested modules (MODULES: the load tool, the
#                     testcontainers module, the example caller, the officer's sign-in,
#                     the CloudEvents SDK's conformance test, the OpenAPI generators' clients)
#   make integration  container images (lookupd tagged dev and its git describe version), then
#                     the black-box suite, the container module's and the example's tests on
#                     them (needs Docker), and the officer's sign-in in a browser (Chromium)
#   make bench        benchmarks of every module (BENCHTIME=1s, BENCH=. by default)
#   make build        bin/lookupd, static
#   make loadtest     bin/lookupd serve holding 1M people and 1M signers (a model built once under
#                     ~/.cache/lookupd-loadtest and reused), random ids, default and ledger-off, HTTP
#                     and HTTPS, each against a bare net/http server with the same bytes, in one run:
#                     wrk (else vegeta) closed loop, vegeta open loop at 10k req/s; prints Markdown.
#                     Flags with LOADTEST_ARGS, e.g. LOADTEST_ARGS='--duration 10s --ids zipf'
#   make soak         memory soak: bin/lookupd serve (default settings) holding 1M people and 1M
#                     signers, 10 minutes of 2,000 lookups/s and 2,000 events/s in a memory cgroup
#                     without a limit, then 10 more within 256 MiB (root, cgroup v1 or v2); OOM
#                     kills, anonymous memory, refaults, p99 against issue 23's criteria; prints
#                     Markdown. Flags with SOAK_ARGS, e.g. SOAK_ARGS='--soak 5m'
#   make lint         golangci-lint (pinned, built into bin/) with .golangci.yml, on every module
#   make ci           what CI runs: .ci/run (lint, test, integration)
#   make compose-up   the secure compose set-up (secrets by deploy/gen-secrets.sh); make images first
#   make compose-officer-up  compose.yaml with the officer's sign-in (officer.yaml: oauth2-proxy and
#                     a stand-in identity provider, dev only); make images officer-images first

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
RUN_ARGS  ?=
BENCH     ?= .
BENCHTIME ?= 1s
LOADTEST_ARGS ?=
SOAK_ARGS     ?=

.PHONY: run test integration bench build lint images clean ci loadtest soak clients

# Built then exec'ed (not go run) so that Ctrl-C reaches lookupd directly and
# it shuts down cleanly (make may still report the interrupt it saw too).
run:
	@$(GO) build -o $(BIN)/lookupd-dev ./cmd/lookupd
	@exec $(BIN)/lookupd-dev dev $(RUN_ARGS)

# Nested Go modules, each with a go.mod of its own so that nobody inherits
# dependencies they do not use: the load tool (pgx, vegeta), the
# testcontainers module, the example caller, the officer's sign-in
# (mockoidc, and oauth2-proxy as a tool), the CloudEvents SDK's
# conformance test (cloudevents/sdk-go) and the generated OpenAPI clients
# (oapi-codegen, ogen, kin-openapi). ./... of the root stops at each,
# hence a go command run in each (go -C). Their tests that need Docker, the
# images or a browser carry the build tag integration (make integration).
LOADTEST_MOD := cmd/loadtest
OFFICER_MOD  := examples/officer-sso
CLIENTS_MOD  := examples/openapi-clients
MODULES      := $(LOADTEST_MOD) lookupdcontainer examples/signercheck $(OFFICER_MOD) examples/cloudevents-sdk $(CLIENTS_MOD)

# The Go clients that oapi-codegen and ogen generate from query/openapi.yaml
# at their defaults (pinned by tool directives in its go.mod), generated
# afresh before that module is built, never committed: a document they
# cannot make a compiling client of fails make test and make lint.
clients:
	$(GO) -C $(CLIENTS_MOD) generate ./...

test: clients
	$(GO) test -race -count=1 ./...
	@set -e; for m in $(MODULES); do echo "$(GO) -C $$m test -race -count=1 ./..."; $(GO) -C $$m test -race -count=1 ./...; done

bench: clients
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem ./...
	@set -e; for m in $(MODULES); do $(GO) -C $$m test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem ./...; done

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/lookupd ./cmd/lookupd

# Not a test: figures from outside, at scale, as ratios to a bare server
# measured in the same run (go -C cmd/loadtest run . --help lists the flags).
loadtest: build
	$(GO) -C $(LOADTEST_MOD) build -o $(abspath $(BIN))/loadtest .
	$(BIN)/loadtest --lookupd $(BIN)/lookupd $(LOADTEST_ARGS)

# Not a test either: issue 23's memory criterion measured from outside (the
# flags --soak-* of cmd/loadtest; SOAK_ARGS after the defaults wins).
soak: build
	$(GO) -C $(LOADTEST_MOD) build -o $(abspath $(BIN))/loadtest .
	$(BIN)/loadtest --lookupd $(BIN)/lookupd --soak 10m $(SOAK_ARGS)

# The linter is built from the module proxy at a pinned version (no binary
# downloads), once, into bin/; .golangci.yml says what it checks.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	GOBIN=$(CURDIR)/$(BIN)/.golangci-$(GOLANGCI_LINT_VERSION) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/.golangci-$(GOLANGCI_LINT_VERSION)/golangci-lint $@ && rmdir $(BIN)/.golangci-$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT) clients
	$(GOLANGCI_LINT) run ./...
	@set -e; for m in $(MODULES); do echo "lint $$m"; (cd $$m && $(abspath $(GOLANGCI_LINT)) run --build-tags integration --config $(CURDIR)/.golangci.yml ./...); done

ci:
	.ci/run

# --- images and the integration suite (owned by deploy/ and integration/) ---

# Image names are variables so real deployments can use upstream images.
# Every image is FROM scratch around a static binary built here: nothing is pulled.
NATS_VERSION   = $(shell $(GO) list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
NATSCLI_VERSION = $(shell cd deploy/natscli && $(GO) list -m -f '{{.Version}}' github.com/nats-io/natscli)
# lookupd is tagged dev (or LOOKUPD_IMAGE) and with its version from git
# describe, the tag lookupdcontainer.DefaultImage names for a released module.
LOOKUPD_REPO  ?= lookup/lookupd
LOOKUPD_IMAGE ?= $(LOOKUPD_REPO):dev
NATS_IMAGE    ?= lookup/nats-server:$(NATS_VERSION)
NATSCLI_IMAGE ?= lookup/natscli:$(NATSCLI_VERSION)
CA_CERTS      ?= /etc/ssl/certs/ca-certificates.crt
CTX           := $(BIN)/ctx
export LOOKUPD_IMAGE NATS_IMAGE NATSCLI_IMAGE

.PHONY: image-lookupd image-nats image-natscli
images: image-lookupd image-nats image-natscli

image-lookupd: build
	@test -r $(CA_CERTS) || { echo "$(CA_CERTS) missing: apt-get install ca-certificates"; exit 1; }
	rm -rf $(CTX)/lookupd && mkdir -p $(CTX)/lookupd/data
	cp $(BIN)/lookupd deploy/image/passwd deploy/image/group $(CTX)/lookupd/
	cp $(CA_CERTS) $(CTX)/lookupd/ca-certificates.crt
	docker build -q -f deploy/lookupd.Dockerfile -t $(LOOKUPD_IMAGE) -t $(LOOKUPD_REPO):$(VERSION) $(CTX)/lookupd

image-nats:
	rm -rf $(CTX)/nats && mkdir -p $(CTX)/nats/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/nats-server github.com/nats-io/nats-server/v2
	cp $(BIN)/nats-server deploy/image/passwd deploy/image/group $(CTX)/nats/
	docker build -q -f deploy/nats.Dockerfile -t $(NATS_IMAGE) $(CTX)/nats

image-natscli:
	rm -rf $(CTX)/natscli && mkdir -p $(CTX)/natscli/streams
	cd deploy/natscli && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(CURDIR)/$(BIN)/nats github.com/nats-io/natscli/nats
	cp $(BIN)/nats deploy/image/passwd deploy/image/group $(CTX)/natscli/
	cp deploy/streams/*.json $(CTX)/natscli/streams/
	docker build -q -f deploy/natscli.Dockerfile -t $(NATSCLI_IMAGE) $(CTX)/natscli

# The secure compose set-up (deploy/README.md): secrets made once by
# deploy/gen-secrets.sh (kept when they exist), a dev signing key and its
# JWKS, then compose.yaml with the secure.yaml overlay. Run `make images` first.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo docker compose || echo docker-compose)
COMPOSE_FILES := -f deploy/compose/compose.yaml -f deploy/compose/secure.yaml
.PHONY: compose-up compose-down
compose-up: build
	deploy/gen-secrets.sh
	@mkdir -p deploy/compose/dev
	@test -f deploy/compose/dev/jwks.json || $(BIN)/lookupd token --key deploy/compose/dev/dev-key.pem --create --print-jwks > deploy/compose/dev/jwks.json
	$(COMPOSE) $(COMPOSE_FILES) up -d

compose-down:
	$(COMPOSE) $(COMPOSE_FILES) down

# The officer's sign-in (docs/audit.md, "Sign-in"): oauth2-proxy built from
# its module at the version examples/officer-sso/go.mod pins (a tool
# directive), and that module's stand-in identity provider (development
# only). Not part of `images`: nothing else needs them.
OAUTH2_PROXY_VERSION = $(shell cd $(OFFICER_MOD) && $(GO) list -m -f '{{.Version}}' github.com/oauth2-proxy/oauth2-proxy/v7)
OFFICER_PROXY_IMAGE ?= lookup/oauth2-proxy:$(OAUTH2_PROXY_VERSION)
OFFICER_IDP_IMAGE   ?= lookup/officer-idp:dev
# Given to compose by its recipes only (exported, the go list above would
# run for every recipe of every target).
OFFICER_COMPOSE = OFFICER_PROXY_IMAGE=$(OFFICER_PROXY_IMAGE) OFFICER_IDP_IMAGE=$(OFFICER_IDP_IMAGE) $(COMPOSE) $(OFFICER_FILES)
.PHONY: officer-images image-oauth2-proxy image-officer-idp compose-officer-up compose-officer-down
officer-images: image-oauth2-proxy image-officer-idp

image-oauth2-proxy:
	@test -r $(CA_CERTS) || { echo "$(CA_CERTS) missing: apt-get install ca-certificates"; exit 1; }
	rm -rf $(CTX)/oauth2-proxy && mkdir -p $(CTX)/oauth2-proxy
	cd $(OFFICER_MOD) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(CURDIR)/$(BIN)/oauth2-proxy github.com/oauth2-proxy/oauth2-proxy/v7
	cp $(BIN)/oauth2-proxy deploy/image/passwd deploy/image/group $(CTX)/oauth2-proxy/
	cp $(CA_CERTS) $(CTX)/oauth2-proxy/ca-certificates.crt
	docker build -q -f deploy/oauth2-proxy.Dockerfile -t $(OFFICER_PROXY_IMAGE) $(CTX)/oauth2-proxy

image-officer-idp:
	rm -rf $(CTX)/officer-idp && mkdir -p $(CTX)/officer-idp
	cd $(OFFICER_MOD) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(CURDIR)/$(BIN)/officer-sso .
	cp $(BIN)/officer-sso deploy/image/passwd deploy/image/group $(CTX)/officer-idp/
	docker build -q -f deploy/officer-idp.Dockerfile -t $(OFFICER_IDP_IMAGE) $(CTX)/officer-idp

# compose.yaml with officer.yaml (open set-up, on localhost): the dev
# signing key's JWKS that compose.yaml mounts, and the proxy's client and
# cookie secrets, random, made once into deploy/compose/dev/officer/
# (git-ignored; readable by the containers' user 65532: dev only).
OFFICER_FILES := -f deploy/compose/compose.yaml -f deploy/compose/officer.yaml
compose-officer-up: build
	@mkdir -p deploy/compose/dev/officer
	@test -f deploy/compose/dev/jwks.json || $(BIN)/lookupd token --key deploy/compose/dev/dev-key.pem --create --print-jwks > deploy/compose/dev/jwks.json
	@set -e; for f in client-secret cookie-secret; do p=deploy/compose/dev/officer/$$f; \
		test -s $$p || { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > $$p; chmod 0644 $$p; }; done
	$(OFFICER_COMPOSE) up -d

compose-officer-down:
	$(OFFICER_COMPOSE) down

# The container module's and the example caller's tests run the same
# images. When the Docker daemon runs in this very container (a docker0
# bridge here), published ports are on the loopback, not on the default
# gateway testcontainers guesses (docs/calling.md). The officer's sign-in
# test runs processes on this machine (it builds lookupd, nats-server and
# oauth2-proxy itself) and headless Chromium, no Docker.
TC_HOST := $(or $(TESTCONTAINERS_HOST_OVERRIDE),$(if $(DOCKER_HOST),,$(if $(wildcard /sys/class/net/docker0),127.0.0.1)))
integration: images
	TESTCONTAINERS_RYUK_DISABLED=true $(GO) test -tags integration -count=1 -timeout 25m -v ./integration/...
	@set -e; for m in lookupdcontainer examples/signercheck; do echo "$(GO) -C $$m test -tags integration ./..."; \
		TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=$(TC_HOST) $(GO) -C $$m test -tags integration -count=1 -timeout 10m -v ./...; done
	$(GO) -C $(OFFICER_MOD) test -tags integration -count=1 -timeout 15m -v ./...

clean:
	rm -rf $(BIN)
