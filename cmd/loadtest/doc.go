// Command loadtest measures "lookupd serve" from outside, as users run it,
// against a bare net/http server answering the same bytes, in one run. The
// model is a million people, 20,000 of them with five signers each and
// the others one, 1,080,000 signers (--people, --five-signers,
// --signers), built once into --model-dir and reused: the broker's store,
// lookupd's read model and every answer of lookupd, captured once, which
// the bare server answers. The routes are GET person, GET signers with
// expand of a person with one signer and of one with five (one and five
// persons disclosed an answer); each reads ids drawn at random among the
// people it fits (--ids uniform or zipf) with tokens in rotation; lookupd
// runs in its default configuration
// (the audit ledger required) and with the ledger off, over HTTP and
// HTTPS, each paired with the bare server over the same transport: closed
// loop (wrk when installed, else vegeta) in interleaved rounds, then an
// open loop at --rate (vegeta). It sets the ledger against the ledger off,
// route by route, each beside the bare server, and judges the throughput
// goals (scalereport.go's goals). Of the audit ledger it reports the broker
// messages per answer (from lookupd's /metrics) and a lone request's
// latency (one connection, --lone-duration), audited and not, against the
// broker's round trip. Last, --projection-rounds times, it times a raw
// drain of the model's stream and "lookupd project --until-caught-up"
// building a read model from it into an empty directory, in turn, and
// judges the projection's share of the drain (projection.go). It prints
// Markdown tables. "make loadtest"
// runs it; LOADTEST_ARGS passes flags:
//
//	make loadtest LOADTEST_ARGS='--duration 10s --rounds 3'
//
// The machine is shared and noisy: only the ratios of one run mean much.
//
// With --soak it measures memory instead: "lookupd serve" with its default
// settings holding a large read model, under lookups and events at fixed
// rates, run twice on the same model, in a memory cgroup without a limit
// and then in one of --soak-limit, its memory sampled from the cgroup and
// /proc ("make soak", SOAK_ARGS).
//
// # Its module
//
// The tool is a Go module of its own (go.mod here, the service's module
// replaced by the repository's root), so that the service's go.mod does
// not carry its dependencies (pgx, vegeta). It drives the lookupd binary
// as a process ("lookupd serve", "lookupd audit serve", "lookupd token",
// "lookupd audit verify"), creates its streams from the repository's
// deploy/streams as operators do (run it from the repository, as make
// does), and imports of the service only its test support
// (internal/testing: testkit, fixtures) and, for the accounting's checks,
// internal/accounting. Build and test it from this folder (go -C
// cmd/loadtest test ./..., as make test does).
//
// # Map
//
// This package is the lookups' run; the soak, the accounting's load and
// the PostgreSQL yardstick are packages of their own under internal/,
// and what they share is internal/loadtest.
//
// The run (run.go, scale.go; the flags in main.go, modelflags.go): the
// model of a million people and their signers lives in a directory kept
// between runs, named after its shape (model.go; loadtest's manifest.go's
// ModelKey): on the first run the Population (fixtures' population.go, its
// Shape) is published in bulk (loadtest's population.go) to a
// NATS server, the tool run again as a child process (loadtest's
// broker.go, child.go, nats.go, streams.go), the lookupd binary started
// as "lookupd serve" on a read model beside it (env.go; loadtest's
// serve.go), every answer captured once into a sealed body store
// (loadtest's fetch.go, bodystore.go) and a manifest written last
// (loadtest's manifest.go); later runs reuse it. The ids read are drawn at
// random a route, among the people it fits (scale.go's routeDraws;
// loadtest's draws.go); a bare net/http server serves the captured bytes over HTTP
// and HTTPS in a child process (bare.go; loadtest's baremodel.go,
// tlscert.go); tokens are minted with "lookupd token --count"
// (loadtest's tokens.go); lookupd in each configuration and the bare server are
// driven with wrk or vegeta (measure.go; loadtest's wrk.go, vegeta.go,
// scenario.go), profiled on request (profile.go), beside the yardsticks
// (yardsticks.go), and the Markdown of docs/performance.md is written
// (scalereport.go; the machine: loadtest's machine.go). Of the audit
// ledger it reports the broker messages per answer, read from lookupd's
// /metrics around each run (loadtest's ledgercounts.go, metrics.go), and
// a lone request's latency with one connection against the broker's
// publish-ack round trip, measured by the tool run again as a process of
// its own (brokerrtt.go, ledgerrun.go, ledgerreport.go; loadtest's
// brokerrtt.go).
//
// internal/pgyardstick: what a user would build instead (postgres.go: a
// net/http server answering GET person from PostgreSQL with pgx, no
// auth), on Debian's PostgreSQL in a cluster made once and reused
// (pgcluster.go: initdb, settings, start and stop as the user postgres
// when root; pgload.go: the rows copied in with COPY unless already
// there); proctree.go counts the CPU of its backends with the
// postmaster's (/proc read with prometheus/procfs).
//
// internal/soak (--soak, "make soak"): "lookupd serve" with its defaults
// against such a broker, a million people and signers published in bulk,
// lookups and events at fixed rates (soaktargets.go, paced.go), run twice
// on the same read model (its page cache dropped: pagecache.go) in a
// memory cgroup of its own from birth, without a limit and within one
// (cgroup.go, cgroup v1 or v2; cgroupwatch.go; soak.go, soakphase.go),
// the process's memory read from /proc and /metrics (memsample.go;
// loadtest's procmem.go), issue 23's criteria judged on the two runs
// (soakverdict.go, soakreport.go); its flags in soakflags.go.
//
// internal/accountingload (--accounting-records) measures "lookupd audit
// serve" instead (accounting.go): a synthetic audit ledger of valid
// chains (fixtures' ledger.go) published in bulk once into a NATS store
// kept between runs (ledgerfill.go, accountingledger.go), the service
// started on it (loadtest's auditserve.go), killed with SIGKILL halfway
// through its index and restarted (accountingservice.go), searched from
// several connections (accountingclient.go, accountingsearch.go:
// persons' accountings through the FHIR search, and the officer's search
// by recipient, a client's or a subject's month of the six years'
// ledger, its 40 clients skewed), its index compared with a full scan of
// the stream (accountingcheck.go) and the figures written as Markdown
// (accountingreport.go); its flags in accountingflags.go.
package main
