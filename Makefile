# Person and Authorized Signer Lookup service.
#
#   make run          the whole service on this machine, zero set-up (lookupd dev)
#   make test         unit tests with the race detector
#   make integration  black-box suite on containers (needs Docker)
#   make bench        benchmarks
#   make build        bin/lookupd
#   make lint         gofmt and go vet

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: run test integration bench build lint images clean

run:
	$(GO) run ./cmd/lookupd dev

test:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/lookupd ./cmd/lookupd

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...

# --- images and the integration suite (owned by deploy/ and integration/) ---

images:
	@echo "images: not yet defined"

integration:
	$(GO) test -tags integration -count=1 -timeout 25m -v ./integration/...

clean:
	rm -rf $(BIN)
