// Package loadtest is what the runs of cmd/loadtest share (its package
// documentation maps it file by file): lookupd started as a process
// ("lookupd serve", StartServe; "lookupd audit serve", StartAuditServe)
// and waited for (WaitCaughtUp), its tokens minted by "lookupd token"
// (MintTokens), the tool run again as a child process (StartChild) such
// as its NATS server (StartBroker; StartNATS, on testkit's options), the
// streams as deploy/streams defines them (DeployedStream), a Population
// (the service's internal/testing/fixtures) published in bulk
// (LoadPopulation), the model of the lookups' run (its body store and
// Manifest), ids drawn at random (Draw, WritePaths), the bare net/http
// server answering the captured bytes (ModelHandler) over HTTP or HTTPS
// (NewCert), the load generators wrk and vegeta, the process's CPU and
// memory read from /proc (ProcessCPU, ReadProcMem), lookupd's /metrics,
// and the machine a report describes (Machine).
//
// Only ratios measured in one run mean anything: the machine is shared.
package loadtest
